"""Assigning visitors inside an application, without a round trip: the standard library only.

An application downloads an experiment's *allocation* (arms, weights, a salt, a version:
``GET /experiments/{name}/allocation`` or :meth:`banditkit.Experiment.allocation`), assigns each
visitor with :class:`Assigner` by a stable hash of the salt and the visitor's key, and sends
the exposures and outcomes later, in bulk (``POST /experiments/{name}/events``,
:meth:`banditkit.Experiment.ingest`). Importing this package imports neither numpy nor pandas
nor the server: a web application does not pull in the scientific stack to assign a user.

The hash (:func:`uniform`), documented so that another language reproduces it exactly (the
JavaScript client in ``clients/js/`` does, checked on shared test vectors):

1. ``digest = SHA-256(UTF-8(salt + ":" + key))``, the key as text (an integer key as its
   decimal digits);
2. ``u = int(first 13 hex digits of digest, 16) / 16**13``: a 52-bit number, exactly
   representable as a double, uniform in [0, 1);
3. with the weights w_0..w_{K-1} (≥ 0) and their running sums c_i = w_0 + ... + w_i, added
   left to right in double precision, the arm is the first i with w_i > 0 and u·c_{K-1} < c_i;
   if rounding leaves none, the last arm with w_i > 0.
"""

from .assigner import Assigner, CookieStore, DictStore, FunctionStore, uniform
from .poller import Poller

__all__ = ["Assigner", "CookieStore", "DictStore", "FunctionStore", "Poller", "uniform"]
