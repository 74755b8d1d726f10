"""``banditkit serve``: live experiments over HTTP, a thin layer above
:class:`banditkit.Experiment`.

Modules: :mod:`.folder` (a folder of SQLite experiments, one worker thread per server process
that owns their connections), :mod:`.bodies` (the JSON bodies a route accepts), :mod:`.jsonable`
(results as JSON), :mod:`.app` (the routes, errors and access), :mod:`.openapi` (the API's
description), and :mod:`.page` (the HTML page to watch an experiment). The command that starts it is
:mod:`banditkit.cli.serve`. Only :mod:`.app` (and the command) need the ``serve`` extra
(Starlette, uvicorn); the page is also written offline by ``banditkit experiment report
--html``. Nothing here imports :mod:`banditkit.cli`.
"""
