"""Limits of the service that its command line shows before the app (and Starlette) is
imported: ``banditkit serve --help`` and every other CLI call stay light
(tests/test_startup.py)."""

__all__ = ["DEFAULT_MAX_BODY"]

#: Largest request body accepted by default (bytes); larger bodies get 413.
DEFAULT_MAX_BODY = 16 * 2**20
