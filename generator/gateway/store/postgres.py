"""The store in PostgreSQL (psycopg 3 and its connection pool), for gateways on several
machines, or processes that must not share a file: every gateway that names the same
database sees the same responses and conversations."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from .base import StoreSettings, StoreUnavailable
from .sql import SqlStore, Transaction

POOL_SIZE = 10
"""Connections a gateway process keeps at most (one per store call in flight)."""
CONNECT_SECONDS = 5.0
"""How long a call waits for a connection before the store is unavailable."""
RECONNECT_SECONDS = 5.0
"""How long the pool keeps trying a connection it lost, waiting longer each time, before
it gives up until a request asks again: a database back after an outage is used again
within about this long, whatever the outage lasted."""
LOCK_KEY = 0x63686B73  # "chks": the advisory lock the migrating process holds


class PostgresStore(SqlStore):
    blob = "BYTEA"

    def __init__(self, url: str, settings: StoreSettings) -> None:
        super().__init__(settings)
        self.url = url
        self._pool: Any = None

    def _connect(self) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise StoreUnavailable(
                "a postgresql:// store needs psycopg: pip install 'chunkspec[postgres]'"
            ) from None
        # Once, alone: a server that cannot be reached says why (the pool only times out).
        psycopg.connect(self.url, connect_timeout=int(CONNECT_SECONDS)).close()
        self._pool = ConnectionPool(
            self.url,
            min_size=1,
            max_size=POOL_SIZE,
            timeout=CONNECT_SECONDS,
            reconnect_timeout=RECONNECT_SECONDS,
            # A connection the server dropped (a restart) is found out and replaced
            # before it is handed out, not failed on.
            check=ConnectionPool.check_connection,
            # No server-side prepared statements: psycopg prepares a query after its
            # fifth run, and PostgreSQL then keeps a generic plan made while the table
            # was small (a sequential scan at every step of the chain's recursion, its
            # cost growing with the table: bench/state.md). Planned each time, the chain
            # is read by its primary key. A pooler in transaction mode (PgBouncer) needs
            # this too.
            kwargs={"prepare_threshold": None},
            open=False,
        )
        self._pool.open(wait=True, timeout=CONNECT_SECONDS)

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Transaction]:
        with self._pool.connection() as connection:  # commits, or rolls back on error
            yield _Placeholders(connection)

    def _lock_schema(self, tx: Transaction) -> None:
        tx.execute("SELECT pg_advisory_xact_lock(?)", (LOCK_KEY,))

    def _failure(self, error: Exception) -> str | None:
        import psycopg
        from psycopg_pool import PoolTimeout

        if isinstance(error, PoolTimeout):
            return f"PostgreSQL: no connection within {CONNECT_SECONDS} s ({error})"
        if isinstance(error, psycopg.Error):
            first = str(error).strip().splitlines()
            return f"PostgreSQL: {first[0] if first else type(error).__name__}"
        return None

    def _disconnect(self) -> None:
        if self._pool is not None:
            self._pool.close()


class _Placeholders:
    """A psycopg connection that takes the store's `?` placeholders."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return self.connection.execute(_psycopg(sql), params)


@cache
def _psycopg(sql: str) -> str:
    return sql.replace("?", "%s")
