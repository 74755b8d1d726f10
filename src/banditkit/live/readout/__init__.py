"""What a live experiment reports: per-arm statistics, confidence sequences (anytime, adjusted,
CUPED), verdicts, guardrails, status, plans and the leader
(:class:`~banditkit.live.readout.reader.Readout`)."""
