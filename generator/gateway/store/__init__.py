"""Where the gateway keeps Responses state: the responses it answered (`store: true`) and
the conversations clients make, so that a chat or Messages backend serves a client that
names `previous_response_id` or a `conversation` instead of resending its history.

One small interface (`Store`), two backends chosen by the configuration's URL:

- `sqlite:///PATH`: the standard library's sqlite3, one file in WAL mode, shared by the
  worker processes of one machine (the default: nothing to install);
- `postgresql://…`: PostgreSQL through psycopg 3, shared by gateways on several
  machines (`pip install 'chunkspec[postgres]'`);
- `none`: nothing kept, and the state keys refused (as before the store existed).

Both create their tables and migrate them (`schema`), drop what outlived its time to live
(`sweep`), refuse a response larger than the limit, and raise `StoreUnavailable` for any
failure of the database itself: the gateway answers it with a 503 in the client's shape,
never a traceback. Every row belongs to an owner, a hash of the caller's API key
(`owner_of`): another key's response is as missing as one that never was."""

from __future__ import annotations

from .base import (
    DEFAULT_MAX_BYTES,
    ConversationRecord,
    Json,
    Missing,
    Page,
    Record,
    Store,
    StoreSettings,
    StoreUnavailable,
    TooLarge,
    Turn,
    owner_of,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ConversationRecord",
    "Json",
    "Missing",
    "Page",
    "Record",
    "Store",
    "StoreSettings",
    "StoreUnavailable",
    "TooLarge",
    "Turn",
    "open_store",
    "owner_of",
]


def open_store(settings: StoreSettings) -> Store | None:
    """The store `settings.url` names (not yet opened), or None for `none`."""
    url = settings.url
    if url == "none":
        return None
    if url.startswith("sqlite:///"):
        from .sqlite import SqliteStore

        return SqliteStore(url.removeprefix("sqlite:///"), settings)
    if url.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStore

        return PostgresStore(url, settings)
    raise ValueError(f"a store URL must be sqlite:///PATH, postgresql://… or none, not {url!r}")
