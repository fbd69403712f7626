"""What the store is made of, which every backend and the gateway share: its settings,
its records, its errors and the interface a backend implements (`Store`)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

Json = dict[str, Any]

DEFAULT_TTL = 30 * 24 * 3600.0
"""How long a response and a conversation are kept after their last use: OpenAI's 30
days."""
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
"""The largest response kept (its input, output and events together)."""


class StoreUnavailable(Exception):
    """The store's database failed (stopped, unreachable, read-only, locked): what it
    said, without a traceback."""


class TooLarge(ValueError):
    """A response larger than the store's limit."""


@dataclass(frozen=True)
class StoreSettings:
    """The `[store]` table: where state is kept, how long, and how large a response may
    be."""

    url: str = field(default_factory=lambda: default_url())
    ttl: float = DEFAULT_TTL
    """Seconds a response or conversation is kept after it was last written or
    continued."""
    max_bytes: int = DEFAULT_MAX_BYTES


def default_url() -> str:
    """A SQLite file in the user's state folder (XDG's, `~/.local/state` by default)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return f"sqlite:///{Path(base) / 'chunkspec' / 'gateway.sqlite3'}"


def owner_of(key: str | None) -> str:
    """Whose rows a caller reads and writes: a hash of its API key (never the key);
    callers without a key share one owner."""
    return hashlib.sha256(b"chunkspec-owner\0" + (key or "").encode()).hexdigest()


@dataclass(frozen=True)
class Turn:
    """One stored response as a turn of a conversation: the items its request added and
    the items it answered."""

    id: str
    input: list[Json]
    output: list[Json]


@dataclass(frozen=True)
class Record:
    """A response as stored."""

    id: str
    owner: str
    previous_id: str | None
    conversation_id: str | None
    created_at: int
    input: list[Json]
    """The items this turn's request added, in order (its `input`, as items)."""
    output: list[Json]
    body: Json
    """The response object, as `GET /v1/responses/{id}` returns it."""
    events: bytes
    """The server-sent events the client was sent, for `GET …?stream=true`."""


@dataclass(frozen=True)
class ConversationRecord:
    id: str
    created_at: int
    metadata: Json


@dataclass(frozen=True)
class Page:
    """Items of a list endpoint, and whether more follow."""

    items: list[Json]
    has_more: bool


class Store(Protocol):
    """What the gateway asks of a store. Every method raises `StoreUnavailable` when the
    database fails; `owner` scopes every read and write."""

    async def open(self) -> None:
        """Connect, and create or migrate the tables."""

    async def close(self) -> None: ...

    async def chain(self, owner: str, response_id: str) -> list[Turn]:
        """The turns that end with `response_id`, first to last; raises `Missing` with
        the id that is not there (the one asked for, or an earlier one deleted)."""
        ...

    async def save(self, record: Record, continued: list[str]) -> None:
        """Keep `record` (and append its turn to its conversation), and keep the
        responses it `continued` as long as it: one transaction. Raises `TooLarge`, and
        `Missing` when the response it continues, or its conversation, is gone."""

    async def get(self, owner: str, response_id: str) -> Record | None: ...

    async def delete(self, owner: str, response_id: str) -> bool: ...

    async def create_conversation(
        self, owner: str, conversation: ConversationRecord, items: list[Json]
    ) -> None: ...

    async def conversation(self, owner: str, conversation_id: str) -> ConversationRecord | None: ...

    async def update_conversation(
        self, owner: str, conversation_id: str, metadata: Json
    ) -> ConversationRecord | None: ...

    async def delete_conversation(self, owner: str, conversation_id: str) -> bool: ...

    async def add_items(self, owner: str, conversation_id: str, items: list[Json]) -> bool:
        """Append `items` (each with its `id`); False when there is no such
        conversation."""
        ...

    async def items(
        self,
        owner: str,
        conversation_id: str,
        *,
        after: str | None = None,
        limit: int | None = None,
        descending: bool = False,
    ) -> Page | None:
        """The conversation's items in order (all of them without a `limit`), or None
        when there is no such conversation."""
        ...

    async def item(self, owner: str, conversation_id: str, item_id: str) -> Json | None: ...

    async def delete_item(self, owner: str, conversation_id: str, item_id: str) -> bool: ...

    async def sweep(self) -> int:
        """Remove what expired; how many responses and conversations went."""
        ...


class Missing(LookupError):
    """A response a request names is not in the store (or not the caller's)."""

    def __init__(self, response_id: str) -> None:
        super().__init__(response_id)
        self.response_id = response_id
