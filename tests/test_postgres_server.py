"""The suite's own PostgreSQL server (tests/postgres_support.py): it answers on its unix socket
(libpq's socket URL form) and on 127.0.0.1, and hands out fresh databases and names."""

from __future__ import annotations

import psycopg


def test_server_answers_on_socket_and_tcp(postgres_server):
    for socket in (False, True):
        with psycopg.connect(postgres_server.url(socket=socket)) as conn:
            assert conn.execute("SELECT 1 + 1").fetchone() == (2,)
    assert "?host=/" in postgres_server.url(socket=True)


def test_fresh_databases_and_names(postgres_server, pg_url, pg_experiment):
    other = postgres_server.create_database(socket=True)
    assert pg_url != other
    for url in (pg_url, other):
        with psycopg.connect(url) as conn:  # empty: no table of another test
            assert conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
                                ).fetchone() == (0,)
    assert pg_experiment[1] != postgres_server.new_name()
