"""The outcomes of a live experiment: rewards recorded, units expired, the outcome window and
its rule, and each arm's resolved prefix (:class:`~banditkit.live.outcomes.recorder.Outcomes`)."""
