"""The PostgreSQL server of the tests (tests/helpers/postgres.py): it keeps what was written
across a stop and a start, and refuses connections while stopped, as the fault tests of the
gateway's response store need."""

from __future__ import annotations

import psycopg
import pytest

from tests.helpers.postgres import PostgresServer


def test_a_stopped_server_refuses_connections_and_keeps_its_rows_for_when_it_starts() -> None:
    with PostgresServer() as server:
        with psycopg.connect(server.url, autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (id integer PRIMARY KEY, body text NOT NULL)")
            conn.execute("INSERT INTO kept VALUES (1, 'still here')")
        server.stop()
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(server.url, connect_timeout=5).close()
        server.start()
        with psycopg.connect(server.url) as conn:
            assert conn.execute("SELECT id, body FROM kept").fetchall() == [(1, "still here")]
