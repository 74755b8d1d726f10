"""The journal of a live experiment: the algorithm rebuilt from its name, parameters and seed
and replayed over the stored batches, the pending batch asked and stored, and the order of its
slots (:class:`~banditkit.live.journal.replay.Journal`)."""
