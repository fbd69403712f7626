"""The store in one SQLite file (the standard library's sqlite3), in WAL mode: readers
never wait on the writer, and the worker processes of one machine share the file (each
write takes the file's one write lock, waited on up to `BUSY_SECONDS`)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .base import StoreSettings
from .sql import SqlStore, Transaction

BUSY_SECONDS = 5.0
"""How long a write waits for another process's before the store is unavailable."""


class SqliteStore(SqlStore):
    """A connection per thread of the gateway's worker pool, kept open (opening one per
    query costs a WAL checkpoint when it closes)."""

    def __init__(self, path: str, settings: StoreSettings) -> None:
        super().__init__(settings)
        self.path = Path(path)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def _connect(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._connection().execute("PRAGMA journal_mode=WAL")

    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(
                self.path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints
            self._local.connection = connection
            with self._lock:
                self._all.append(connection)
        return connection

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Transaction]:
        connection = self._connection()
        try:
            connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        except sqlite3.Error:
            self._forget(connection)  # opened again, as the file now is, next time
            raise
        try:
            yield connection
        except BaseException:
            connection.rollback()
            raise
        connection.commit()

    def _forget(self, connection: sqlite3.Connection) -> None:
        self._local.connection = None
        with self._lock:
            if connection in self._all:
                self._all.remove(connection)
        connection.close()

    def _lock_schema(self, tx: Transaction) -> None:
        pass  # the write transaction holds the file's one write lock already

    def _failure(self, error: Exception) -> str | None:
        if isinstance(error, sqlite3.Error | OSError):  # the folder cannot be made, too
            return f"SQLite at {self.path}: {error}"
        return None

    def _disconnect(self) -> None:
        with self._lock:
            connections, self._all = self._all, []
        for connection in connections:
            connection.close()
