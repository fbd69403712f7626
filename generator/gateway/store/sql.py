"""The store's tables and queries, the same for SQLite and PostgreSQL: written once with
`?` placeholders, run by a backend that says how it connects (`SqlStore._transaction`)
in a worker thread, so that the event loop never waits on the database.

JSON is kept as text and the events zlib-compressed: both databases hold them alike, and
nothing queries inside them."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar, cast

from .base import (
    ConversationRecord,
    Json,
    Missing,
    Page,
    Record,
    StoreSettings,
    StoreUnavailable,
    TooLarge,
    Turn,
)

T = TypeVar("T")

THREADS = 16
"""Store calls a gateway process has in flight at once, each on a thread of the store's
own: while the database is away every call waits its connect timeout, and on asyncio's
shared default (6 threads on 2 cores) the next ones would queue behind those waits."""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE responses (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            previous_id TEXT,
            conversation_id TEXT,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            input TEXT NOT NULL,
            output TEXT NOT NULL,
            body TEXT NOT NULL,
            events {blob} NOT NULL,
            size BIGINT NOT NULL
        )""",
        "CREATE INDEX responses_expiry ON responses (expires_at)",
        """CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            metadata TEXT NOT NULL
        )""",
        "CREATE INDEX conversations_expiry ON conversations (expires_at)",
        """CREATE TABLE conversation_items (
            conversation_id TEXT NOT NULL,
            position BIGINT NOT NULL,
            item_id TEXT NOT NULL,
            item TEXT NOT NULL,
            PRIMARY KEY (conversation_id, position)
        )""",
        "CREATE UNIQUE INDEX conversation_item_ids ON conversation_items"
        " (conversation_id, item_id)",
    ),
)
"""The schema, one tuple of statements per version: version N is the first N applied.
A new version is a tuple added at the end; an old one is never edited (the databases
out there have run it)."""

SCHEMA_TABLE = "chunkspec_schema"
"""The table that holds the schema's version (one row)."""

_CHAIN = """
WITH RECURSIVE chain(id, previous_id, input, output, depth) AS (
    SELECT id, previous_id, input, output, 0 FROM responses
     WHERE id = ? AND owner = ? AND expires_at > ?
    UNION ALL
    SELECT r.id, r.previous_id, r.input, r.output, chain.depth + 1
      FROM responses r JOIN chain ON r.id = chain.previous_id
     WHERE r.owner = ? AND r.expires_at > ?
)
SELECT id, previous_id, input, output FROM chain ORDER BY depth DESC
"""
"""A response and every response before it, first to last, in one query."""


class Cursor(Protocol):
    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    @property
    def rowcount(self) -> int: ...


class Transaction(Protocol):
    """One transaction: statements with `?` placeholders."""

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> Cursor: ...


class SqlStore(ABC):
    """`Store` on a SQL database: the backends say how a transaction is had and which of
    the driver's exceptions mean the database failed."""

    blob = "BLOB"
    """The type of a column of bytes."""

    def __init__(self, settings: StoreSettings) -> None:
        self.settings = settings
        self._threads = ThreadPoolExecutor(THREADS, thread_name_prefix="chunkspec-store")

    # --- what a backend provides ---------------------------------------------------------

    @abstractmethod
    def _transaction(self, write: bool) -> AbstractContextManager[Transaction]:
        """A transaction, committed when the block ends without an error (a `write` one
        takes the write lock at once, where the database has one)."""

    @abstractmethod
    def _failure(self, error: Exception) -> str | None:
        """What `error` says when it is the database's failure, else None."""

    @abstractmethod
    def _lock_schema(self, tx: Transaction) -> None:
        """Keep other processes from migrating at the same time."""

    @abstractmethod
    def _connect(self) -> None:
        """Make the connections (before the tables are made)."""

    @abstractmethod
    def _disconnect(self) -> None: ...

    # --- running -----------------------------------------------------------------------

    async def _run(self, work: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, self._guarded, work)

    def _guarded(self, work: Callable[[], T]) -> T:
        try:
            return work()
        except (Missing, TooLarge, StoreUnavailable):
            raise
        except Exception as error:
            said = self._failure(error)
            if said is None:
                raise
            raise StoreUnavailable(said) from None

    async def open(self) -> None:
        await self._run(self._open)

    def _open(self) -> None:
        self._connect()
        with self._transaction(write=True) as tx:
            self._lock_schema(tx)
            migrate(tx, self.blob)

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._threads, self._disconnect)
        self._threads.shutdown(wait=False)

    # --- responses -----------------------------------------------------------------------

    async def chain(self, owner: str, response_id: str) -> list[Turn]:
        return await self._run(lambda: self._chain(owner, response_id))

    def _chain(self, owner: str, response_id: str) -> list[Turn]:
        now = _now()
        with self._transaction(write=False) as tx:
            rows = tx.execute(_CHAIN, (response_id, owner, now, owner, now)).fetchall()
        if not rows:
            raise Missing(response_id)
        if rows[0][1] is not None:  # the first turn continues one that is gone
            raise Missing(rows[0][1])
        return [Turn(row[0], json.loads(row[2]), json.loads(row[3])) for row in rows]

    async def save(self, record: Record, continued: list[str]) -> None:
        await self._run(lambda: self._save(record, continued))

    def _save(self, record: Record, continued: list[str]) -> None:
        texts = [json.dumps(value) for value in (record.input, record.output, record.body)]
        events = zlib.compress(record.events, 1)
        size = sum(len(text) for text in texts) + len(events)
        if size > self.settings.max_bytes:
            raise TooLarge(
                f"the response is {size} bytes to keep, above the store's limit of "
                f"{self.settings.max_bytes} (max_response_mb)"
            )
        expires = _now() + int(self.settings.ttl)
        with self._transaction(write=True) as tx:
            # The turn it continues may have expired while the model answered: kept, it
            # would name a conversation that cannot be replayed.
            if record.previous_id is not None and not _kept(tx, record.owner, record.previous_id):
                raise Missing(record.previous_id)
            tx.execute(
                "INSERT INTO responses (id, owner, previous_id, conversation_id, created_at,"
                " expires_at, input, output, body, events, size)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.owner,
                    record.previous_id,
                    record.conversation_id,
                    record.created_at,
                    expires,
                    *texts,
                    events,
                    size,
                ),
            )
            if continued:  # a conversation in use does not expire under it
                # Rewritten once per half a time to live, not on every turn: a turn's
                # writes do not grow with its conversation.
                marks = ", ".join("?" * len(continued))
                tx.execute(
                    "UPDATE responses SET expires_at = ? WHERE owner = ? AND expires_at < ?"
                    f" AND id IN ({marks})",
                    (expires, record.owner, expires - int(self.settings.ttl) // 2, *continued),
                )
            if record.conversation_id is not None:
                items = [*record.input, *record.output]
                added = _append(tx, record.owner, record.conversation_id, items, self.settings.ttl)
                if not added:
                    raise Missing(record.conversation_id)

    async def get(self, owner: str, response_id: str) -> Record | None:
        return await self._run(lambda: self._get(owner, response_id))

    def _get(self, owner: str, response_id: str) -> Record | None:
        with self._transaction(write=False) as tx:
            row = tx.execute(
                "SELECT id, owner, previous_id, conversation_id, created_at, input, output,"
                " body, events FROM responses WHERE id = ? AND owner = ? AND expires_at > ?",
                (response_id, owner, _now()),
            ).fetchone()
        if row is None:
            return None
        return Record(
            row[0],
            row[1],
            row[2],
            row[3],
            int(row[4]),
            json.loads(row[5]),
            json.loads(row[6]),
            json.loads(row[7]),
            zlib.decompress(bytes(row[8])),
        )

    async def delete(self, owner: str, response_id: str) -> bool:
        return await self._run(lambda: self._delete(owner, response_id))

    def _delete(self, owner: str, response_id: str) -> bool:
        with self._transaction(write=True) as tx:
            cursor = tx.execute(
                "DELETE FROM responses WHERE id = ? AND owner = ? AND expires_at > ?",
                (response_id, owner, _now()),
            )
            return cursor.rowcount > 0

    # --- conversations -----------------------------------------------------------------

    async def create_conversation(
        self, owner: str, conversation: ConversationRecord, items: list[Json]
    ) -> None:
        await self._run(lambda: self._create_conversation(owner, conversation, items))

    def _create_conversation(
        self, owner: str, conversation: ConversationRecord, items: list[Json]
    ) -> None:
        with self._transaction(write=True) as tx:
            tx.execute(
                "INSERT INTO conversations (id, owner, created_at, expires_at, metadata)"
                " VALUES (?, ?, ?, ?, ?)",
                (
                    conversation.id,
                    owner,
                    conversation.created_at,
                    _now() + int(self.settings.ttl),
                    json.dumps(conversation.metadata),
                ),
            )
            _append(tx, owner, conversation.id, items, self.settings.ttl)

    async def conversation(self, owner: str, conversation_id: str) -> ConversationRecord | None:
        return await self._run(lambda: self._conversation(owner, conversation_id))

    def _conversation(self, owner: str, conversation_id: str) -> ConversationRecord | None:
        with self._transaction(write=False) as tx:
            row = _conversation_row(tx, owner, conversation_id)
        return None if row is None else ConversationRecord(row[0], int(row[1]), json.loads(row[2]))

    async def update_conversation(
        self, owner: str, conversation_id: str, metadata: Json
    ) -> ConversationRecord | None:
        return await self._run(lambda: self._update_conversation(owner, conversation_id, metadata))

    def _update_conversation(
        self, owner: str, conversation_id: str, metadata: Json
    ) -> ConversationRecord | None:
        with self._transaction(write=True) as tx:
            tx.execute(
                "UPDATE conversations SET metadata = ? WHERE id = ? AND owner = ? AND expires_at > ?",
                (json.dumps(metadata), conversation_id, owner, _now()),
            )
            row = _conversation_row(tx, owner, conversation_id)
        return None if row is None else ConversationRecord(row[0], int(row[1]), json.loads(row[2]))

    async def delete_conversation(self, owner: str, conversation_id: str) -> bool:
        return await self._run(lambda: self._delete_conversation(owner, conversation_id))

    def _delete_conversation(self, owner: str, conversation_id: str) -> bool:
        with self._transaction(write=True) as tx:
            cursor = tx.execute(
                "DELETE FROM conversations WHERE id = ? AND owner = ? AND expires_at > ?",
                (conversation_id, owner, _now()),
            )
            if cursor.rowcount == 0:
                return False
            tx.execute(
                "DELETE FROM conversation_items WHERE conversation_id = ?", (conversation_id,)
            )
            return True

    async def add_items(self, owner: str, conversation_id: str, items: list[Json]) -> bool:
        return await self._run(lambda: self._add_items(owner, conversation_id, items))

    def _add_items(self, owner: str, conversation_id: str, items: list[Json]) -> bool:
        with self._transaction(write=True) as tx:
            return _append(tx, owner, conversation_id, items, self.settings.ttl)

    async def items(
        self,
        owner: str,
        conversation_id: str,
        *,
        after: str | None = None,
        limit: int | None = None,
        descending: bool = False,
    ) -> Page | None:
        return await self._run(
            lambda: self._items(owner, conversation_id, after, limit, descending)
        )

    def _items(
        self,
        owner: str,
        conversation_id: str,
        after: str | None,
        limit: int | None,
        descending: bool,
    ) -> Page | None:
        order, beyond = ("DESC", "<") if descending else ("ASC", ">")
        sql = "SELECT item FROM conversation_items WHERE conversation_id = ?"
        params: list[Any] = [conversation_id]
        if after is not None:
            sql += (
                f" AND position {beyond} (SELECT position FROM conversation_items"
                " WHERE conversation_id = ? AND item_id = ?)"
            )
            params += [conversation_id, after]
        sql += f" ORDER BY position {order}"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit + 1)
        with self._transaction(write=False) as tx:
            if _conversation_row(tx, owner, conversation_id) is None:
                return None
            rows = tx.execute(sql, tuple(params)).fetchall()
        items = [cast(Json, json.loads(row[0])) for row in rows]
        more = limit is not None and len(items) > limit
        return Page(items[:limit] if limit is not None else items, more)

    async def item(self, owner: str, conversation_id: str, item_id: str) -> Json | None:
        return await self._run(lambda: self._item(owner, conversation_id, item_id))

    def _item(self, owner: str, conversation_id: str, item_id: str) -> Json | None:
        with self._transaction(write=False) as tx:
            if _conversation_row(tx, owner, conversation_id) is None:
                return None
            row = tx.execute(
                "SELECT item FROM conversation_items WHERE conversation_id = ? AND item_id = ?",
                (conversation_id, item_id),
            ).fetchone()
        return None if row is None else cast(Json, json.loads(row[0]))

    async def delete_item(self, owner: str, conversation_id: str, item_id: str) -> bool:
        return await self._run(lambda: self._delete_item(owner, conversation_id, item_id))

    def _delete_item(self, owner: str, conversation_id: str, item_id: str) -> bool:
        with self._transaction(write=True) as tx:
            if _conversation_row(tx, owner, conversation_id) is None:
                return False
            cursor = tx.execute(
                "DELETE FROM conversation_items WHERE conversation_id = ? AND item_id = ?",
                (conversation_id, item_id),
            )
            return cursor.rowcount > 0

    # --- expiry --------------------------------------------------------------------------

    async def sweep(self) -> int:
        return await self._run(self._sweep)

    def _sweep(self) -> int:
        now = _now()
        with self._transaction(write=True) as tx:
            tx.execute(
                "DELETE FROM conversation_items WHERE conversation_id IN"
                " (SELECT id FROM conversations WHERE expires_at <= ?)",
                (now,),
            )
            gone = tx.execute("DELETE FROM conversations WHERE expires_at <= ?", (now,)).rowcount
            gone += tx.execute("DELETE FROM responses WHERE expires_at <= ?", (now,)).rowcount
        return gone


def migrate(tx: Transaction, blob: str) -> int:
    """Bring the schema to the last version (in the caller's transaction); its version."""
    tx.execute(f"CREATE TABLE IF NOT EXISTS {SCHEMA_TABLE} (version INTEGER NOT NULL)")
    row = tx.execute(f"SELECT version FROM {SCHEMA_TABLE}").fetchone()
    if row is None:
        tx.execute(f"INSERT INTO {SCHEMA_TABLE} (version) VALUES (0)")
        version = 0
    else:
        version = int(row[0])
    if version > len(MIGRATIONS):
        raise StoreUnavailable(
            f"the store's schema is version {version}, made by a newer chunkspec: this one "
            f"knows versions up to {len(MIGRATIONS)} (upgrade it, or give it another store)"
        )
    for statements in MIGRATIONS[version:]:
        for statement in statements:
            tx.execute(statement.format(blob=blob))
    tx.execute(f"UPDATE {SCHEMA_TABLE} SET version = ?", (len(MIGRATIONS),))
    return len(MIGRATIONS)


def _append(
    tx: Transaction, owner: str, conversation_id: str, items: list[Json], ttl: float
) -> bool:
    """Append `items` to a conversation of `owner`, and keep it `ttl` seconds more; False
    when there is none. An item whose id the conversation holds already (a client that
    sends an item again, a reference resolved) is added under an id of its own: a
    conversation's item ids name one item each, for its pages and its routes."""
    now = _now()
    # The conversation's row first: its lock makes appends to one conversation (and its
    # deletion) wait for each other, so that positions are read after the last append.
    kept = tx.execute(
        "UPDATE conversations SET expires_at = ? WHERE id = ? AND owner = ? AND expires_at > ?",
        (now + int(ttl), conversation_id, owner, now),
    )
    if kept.rowcount == 0:
        return False
    last = tx.execute(
        "SELECT COALESCE(MAX(position), 0) FROM conversation_items WHERE conversation_id = ?",
        (conversation_id,),
    ).fetchone()
    position = int(last[0])
    taken: set[str] = set()
    for offset, item in enumerate(items, 1):
        ident = str(item["id"])
        if ident in taken or _held(tx, conversation_id, ident):
            ident = f"{ident.split('_', 1)[0]}_{uuid.uuid4().hex}"
            item = {**item, "id": ident}
        taken.add(ident)
        tx.execute(
            "INSERT INTO conversation_items (conversation_id, position, item_id, item)"
            " VALUES (?, ?, ?, ?)",
            (conversation_id, position + offset, ident, json.dumps(item)),
        )
    return True


def _kept(tx: Transaction, owner: str, response_id: str) -> bool:
    found = tx.execute(
        "SELECT 1 FROM responses WHERE id = ? AND owner = ? AND expires_at > ?",
        (response_id, owner, _now()),
    )
    return found.fetchone() is not None


def _held(tx: Transaction, conversation_id: str, item_id: str) -> bool:
    return (
        tx.execute(
            "SELECT 1 FROM conversation_items WHERE conversation_id = ? AND item_id = ?",
            (conversation_id, item_id),
        ).fetchone()
        is not None
    )


def _conversation_row(tx: Transaction, owner: str, conversation_id: str) -> Any:
    return tx.execute(
        "SELECT id, created_at, metadata FROM conversations"
        " WHERE id = ? AND owner = ? AND expires_at > ?",
        (conversation_id, owner, _now()),
    ).fetchone()


def _now() -> int:
    return int(time.time())
