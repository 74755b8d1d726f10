"""``banditkit serve``: live experiments over HTTP, a thin layer above
:class:`banditkit.Experiment`.

Modules: :mod:`.folder` (a folder of SQLite experiments, one worker thread per server process
that owns their connections), :mod:`.bodies` (the JSON bodies a route accepts), :mod:`.jsonable`
(results as JSON), :mod:`.app` (the routes, errors and access), :mod:`.openapi` (the API's
description), :mod:`.page` (the HTML page to watch an experiment) and :mod:`.server` (the
command). Only :mod:`.app` and :mod:`.server` need the ``serve`` extra (Starlette, uvicorn);
the page is also written offline by ``banditkit experiment report --html``.
"""
