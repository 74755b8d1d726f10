"""The comparison shared by the tests of LinGapE's drivers (blocks, lock-step) against simulate."""

import numpy as np


def assert_same_trial(a, b):
    """Same decisions (pulls, batches, counts, stopping, recommendation, pairs met); B and C_t
    to round-off, since the drivers evaluate the same formulas in another order."""
    assert a.n_pulls == b.n_pulls
    assert a.decisions.same_as(b.decisions)
    np.testing.assert_array_equal(a.decisions.batch_sizes(), b.decisions.batch_sizes())
    assert a.decisions.n_batches == b.decisions.n_batches == a.n_batches == b.n_batches
    np.testing.assert_array_equal(a.counts, b.counts)
    assert a.counts.dtype == b.counts.dtype
    assert a.stopped == b.stopped
    assert a.recommendation == b.recommendation and a.correct == b.correct
    np.testing.assert_array_equal(a.checkpoints, b.checkpoints)
    assert a.regret is None and b.regret is None
    assert a.violation is None and b.violation is None
    assert a.info.keys() == b.info.keys()
    for key in ("steps", "init_pulls", "pairs_solved"):
        assert a.info[key] == b.info[key], key
    # B(t) at stopping is a difference of O(1) terms that nearly cancel: round-off of 1e-14
    # in the terms is 1e-10 relative to a B of 1e-4, hence the absolute floor.
    np.testing.assert_allclose(a.info["B"], b.info["B"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.info["confidence_radius"], b.info["confidence_radius"],
                               rtol=1e-9)
