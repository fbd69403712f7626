"""Responses state for a chat or Messages upstream, which keeps none: a request that names
`previous_response_id` or a `conversation` is sent with every earlier turn in order, then
its own input (`prepare`); a response asked to be kept (`store`, true unless said) is kept
with its input, output and events once it has ended (`kept`, `keep`), before the client
hears that it ended, so that the next turn can name it at once.

The earlier turns are replayed as the client would have resent them: its items, and the
items the gateway wrote it (reasoning with its encrypted content), which `to_request`
writes in the upstream's dialect (DeepSeek's `reasoning_content`, Gemini's signatures…)
as it does for a client that resends them itself."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any, cast

from starlette.datastructures import Headers

from .errors import Answer, ErrorInfo
from .relay import EVENT_END
from .shapes import invalid_type
from .store import Json, Missing, Record, Store, StoreUnavailable, TooLarge, Turn, owner_of

STATE_KEYS = ("previous_response_id", "conversation", "store")
"""The request keys the gateway answers itself: never sent upstream."""

ITEM_PREFIXES = {"message": "msg", "function_call_output": "fco", "reasoning": "rs"}
"""The id prefix of an item of each type that came without an id (OpenAI's spellings)."""

RESPONSE_ID = re.compile(r"resp_[0-9a-f]{32}")
CONVERSATION_ID = re.compile(r"conv_[0-9a-f]{32}")
"""The ids the gateway gives: any other names nothing it keeps (and is not looked up)."""

OUR_ITEM = re.compile(r"[a-z]+_([0-9a-f]{32})_(?:in)?[0-9]+")
"""The id of an item of a response the gateway kept: its response's id (`resp_` and the
hex digits) is in it, so a reference to the item is one lookup."""

TERMINAL = re.compile(rb"(?:^|\n\n)(event: response\.(?:completed|incomplete|failed)\n)")
"""Where the event that ends a Responses stream starts, in the gateway's own writing."""


def client_key(headers: Headers) -> str | None:
    """The API key the client sent, however it sent it."""
    bearer = headers.get("authorization", "")
    if bearer.lower().startswith("bearer "):
        return bearer[7:]
    return headers.get("x-api-key")


def owner(headers: Headers) -> str:
    return owner_of(client_key(headers))


@dataclass
class Prepared:
    """What `prepare` made of a request: the upstream's request, and what `keep` needs."""

    body: Json
    """The request to translate: the earlier turns and the input, the state keys out."""
    owner: str
    response_id: str
    input: list[Json]
    """This turn's own input, as items, each with its id."""
    store: bool
    previous_id: str | None = None
    conversation_id: str | None = None
    continued: list[str] = field(default_factory=list[str])
    """The stored responses this turn continues (kept as long as it)."""


def stateful(given: Json) -> bool:
    """Whether the gateway has state to read or keep for a request (`store` is true by
    default)."""
    return bool(
        given.get("previous_response_id") or given.get("conversation") or given.get("store", True)
    )


async def prepare(store: Store, owner_id: str, given: Json, max_bytes: int) -> Prepared:
    """The request `given` with its conversation expanded; raises `Answer` with OpenAI's
    error for a response or conversation that is not there (or not this key's)."""
    previous = given.get("previous_response_id")
    conversation = _conversation_id(given.get("conversation"))
    if previous is not None and not isinstance(previous, str):
        raise Answer(invalid_type("previous_response_id", "a string", previous))
    if not isinstance(given.get("store", True), bool):
        raise Answer(invalid_type("store", "a boolean", given["store"]))
    if previous and conversation:
        raise Answer(
            ErrorInfo(
                400,
                "Mutually exclusive parameters: Ensure you are only providing one of: "
                "'previous_response_id' or 'conversation'.",
                "invalid_request_error",
                "mutually_exclusive_parameters",
                "conversation",
            )
        )
    base = uuid.uuid4().hex
    items = with_ids(input_items(given.get("input")), base)
    keeps = given.get("store", True) is not False
    if keeps and len(json.dumps(items)) > max_bytes:
        raise Answer(
            ErrorInfo(
                413,
                f"the input is above the store's limit of {max_bytes} bytes a response "
                "(max_response_mb): send it with store false, or raise the limit",
                "invalid_request_error",
                "response_too_large",
                "input",
            )
        )
    history: list[Json] = []
    continued: list[str] = []
    try:
        items = await _resolved(store, owner_id, items)
        if previous:
            if not RESPONSE_ID.fullmatch(previous):
                raise Missing(previous)
            turns = await store.chain(owner_id, previous)
            history = _replayed(turns)
            continued = [turn.id for turn in turns]
        elif conversation:
            found = CONVERSATION_ID.fullmatch(conversation)
            page = await store.items(owner_id, conversation) if found else None
            if page is None:
                raise Answer(_not_found_conversation(conversation))
            history = page.items
    except Missing as missing:
        raise Answer(_not_found_previous(missing.response_id, previous)) from None
    except StoreUnavailable as error:
        raise Answer(unavailable(error)) from None
    body = {k: v for k, v in given.items() if k not in STATE_KEYS}
    body["input"] = [*history, *items]
    return Prepared(
        body,
        owner_id,
        f"resp_{base}",
        items,
        keeps,
        previous or None,
        conversation,
        continued,
    )


def told(turn: Prepared) -> Json:
    """What the response says of its state, as OpenAI's does: whether it is kept, and
    what it continues."""
    return {
        "previous_response_id": turn.previous_id,
        "store": turn.store,
        "conversation": {"id": turn.conversation_id} if turn.conversation_id else None,
    }


def stated(events: bytes, turn: Prepared) -> bytes:
    """`events` (whole events of the gateway's Responses stream) with the response each
    carries saying its state (`told`)."""
    if b'"response":' not in events:
        return events
    out: list[bytes] = []
    for event in EVENT_END.split(events):
        if not event.strip():
            continue
        lines = event.split(b"\n")
        for at, line in enumerate(lines):
            if line.startswith(b"data: ") and b'"response":' in line:
                data = json.loads(line[6:])
                if isinstance(data.get("response"), dict):
                    data["response"].update(told(turn))
                    lines[at] = b"data: " + json.dumps(data, separators=(",", ":")).encode()
        out.append(b"\n".join(lines) + b"\n\n")
    return b"".join(out)


async def keep(store: Store, turn: Prepared, response: Json, events: bytes) -> None:
    """Keep `response` (the final response object of its stream) as `turn`'s, or only
    add its items to its conversation when it is not to be kept; raises
    `StoreUnavailable`, `TooLarge` or `Missing` (its conversation was deleted)."""
    output = [cast(Json, item) for item in response.get("output") or [] if isinstance(item, dict)]
    if not turn.store:
        if turn.conversation_id is not None:
            added = [*turn.input, *output]
            if not await store.add_items(turn.owner, turn.conversation_id, added):
                raise Missing(turn.conversation_id)
        return
    body: Json = {**response, **told(turn)}
    record = Record(
        id=str(response.get("id") or turn.response_id),
        owner=turn.owner,
        previous_id=turn.previous_id,
        conversation_id=turn.conversation_id,
        created_at=int(response.get("created_at") or time.time()),
        input=turn.input,
        output=output,
        body=body,
        events=events,
    )
    await store.save(record, turn.continued)


async def kept(
    events: AsyncIterator[bytes], store: Store, turn: Prepared
) -> AsyncGenerator[bytes, None]:
    """`events` (the gateway's Responses stream), each response in it saying its state
    (`told`), and the response kept (`keep`) before its last event goes out; if it
    cannot be kept, an `error` event ends the stream instead, so the client never
    continues from a response that is not there."""
    sent: list[bytes] = []
    try:
        async for given in events:
            data = stated(given, turn)
            found = TERMINAL.search(data)
            if found is None:
                sent.append(data)
                yield data
                continue
            head, tail = data[: found.start(1)], data[found.start(1) :]
            if head:
                sent.append(head)
                yield head
            try:
                await keep(store, turn, _response_of(tail), b"".join(sent) + tail)
            except (StoreUnavailable, TooLarge, Missing) as error:
                yield _error_event(failure(error), tail)
                return
            yield tail
    finally:  # closed with this one (a client that left), not when collected
        if isinstance(events, AsyncGenerator):
            await events.aclose()


def failure(error: Exception) -> ErrorInfo:
    """The answer to a response the store could not keep."""
    if isinstance(error, TooLarge):
        return ErrorInfo(
            413,
            f"the response was not kept: {error}",
            "invalid_request_error",
            "response_too_large",
        )
    if isinstance(error, Missing):  # deleted or expired while the model answered
        if error.response_id.startswith("conv_"):
            return _not_found_conversation(error.response_id)
        return _not_found_previous(error.response_id, None)
    return unavailable(error)


def unavailable(error: Exception) -> ErrorInfo:
    return ErrorInfo(
        503,
        f"the gateway's response store is unavailable: {error}",
        "server_error",
        "store_unavailable",
    )


def _error_event(info: ErrorInfo, terminal: bytes) -> bytes:
    number = event_data(terminal).get("sequence_number")
    data = {
        "type": "error",
        "code": info.code or "server_error",
        "message": info.message,
        "param": None,
        "sequence_number": number,
    }
    return f"event: error\ndata: {json.dumps(data)}\n\n".encode()


def event_data(event: bytes) -> Json:
    """The JSON data of one server-sent event."""
    text = b"\n".join(
        line[5:].lstrip(b" ") for line in event.splitlines() if line.startswith(b"data:")
    )
    return cast(Json, json.loads(text))


def _response_of(event: bytes) -> Json:
    return cast(Json, event_data(event)["response"])


# --- items ---------------------------------------------------------------------------


def input_items(given: object) -> list[Json]:
    """A request's `input` as items: a text is one user message."""
    if given is None:
        return []
    if isinstance(given, str):
        return [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": given}]}
        ]
    return [cast(Json, item) for item in cast(list[Any], given)]  # its shape is checked before


def with_ids(items: list[Json], base: str) -> list[Json]:
    """`items` as OpenAI lists them, each with an id: those that came without one get one
    of this response's, by position; a message's text written as a string is its one
    text part (`{"role": "user", "content": "hi"}` as `input_text`), which the upstream
    is sent alike."""
    out: list[Json] = []
    for index, item in enumerate(items):
        kind = str(item.get("type") or "message")
        item = {"type": kind, **item}
        if kind == "message" and isinstance(item.get("content"), str):
            text = "output_text" if item.get("role") == "assistant" else "input_text"
            item["content"] = [{"type": text, "text": item["content"]}]
        ident = item.get("id")
        if not isinstance(ident, str) or not ident or "\0" in ident:
            prefix = ITEM_PREFIXES.get(kind, "item")
            rest = {k: v for k, v in item.items() if k != "id"}
            item = {"id": f"{prefix}_{base}_in{index}", **rest}
        out.append(item)
    return out


async def _resolved(store: Store, owner_id: str, items: list[Json]) -> list[Json]:
    """`items` with each `item_reference` replaced by the item it names, from the
    response that holds it (the Vercel AI SDK sends its earlier steps' reasoning, text
    and calls so while `store` is true); raises `Answer` for one that is not there."""
    if not any(item.get("type") == "item_reference" for item in items):
        return items
    held: dict[str, Json] = {}
    out: list[Json] = []
    for at, item in enumerate(items):
        if item.get("type") != "item_reference":
            out.append(item)
            continue
        ident = item.get("id")
        if not isinstance(ident, str):
            raise Answer(
                ErrorInfo(
                    400,
                    f"Missing required parameter: 'input[{at}].id'.",
                    "invalid_request_error",
                    "missing_required_parameter",
                    f"input[{at}].id",
                )
            )
        if ident not in held:
            held.update(await _items_beside(store, owner_id, ident))
        if ident not in held:
            raise Answer(
                ErrorInfo(
                    404,
                    f"Item with id '{ident}' not found.",
                    "invalid_request_error",
                    None,
                    "input",
                )
            )
        out.append(held[ident])
    return out


async def _items_beside(store: Store, owner_id: str, ident: str) -> dict[str, Json]:
    """Every item, by id, of the kept response an item id names (none for another id)."""
    found = OUR_ITEM.fullmatch(ident)
    record = await store.get(owner_id, f"resp_{found.group(1)}") if found else None
    if record is None:
        return {}
    return {str(item.get("id")): item for item in (*record.input, *record.output)}


def _replayed(turns: list[Turn]) -> list[Json]:
    return [item for turn in turns for item in (*turn.input, *turn.output)]


def _conversation_id(given: object) -> str | None:
    if given is None:
        return None
    ident = cast(Json, given).get("id") if isinstance(given, dict) else given
    if not isinstance(ident, str) or not ident:
        raise Answer(invalid_type("conversation", "a string or an object with an id", given))
    return ident


# --- OpenAI's errors -----------------------------------------------------------------


def _not_found_previous(missing: str, asked: str | None) -> ErrorInfo:
    if asked is not None and missing != asked:  # an earlier turn was deleted
        return ErrorInfo(
            404,
            f"Previous response with id '{asked}' continues '{missing}', which was deleted "
            "or has expired: the conversation cannot be replayed whole.",
            "invalid_request_error",
            "previous_response_not_found",
            "previous_response_id",
        )
    return ErrorInfo(
        404,
        f"Previous response with id '{missing}' not found.",
        "invalid_request_error",
        "previous_response_not_found",
        "previous_response_id",
    )


def _not_found_conversation(conversation: str) -> ErrorInfo:
    return ErrorInfo(
        404,
        f"Conversation with id '{conversation}' not found.",
        "invalid_request_error",
        "conversation_not_found",
        "conversation",
    )


def not_found(kind: str, ident: str) -> ErrorInfo:
    return ErrorInfo(404, f"{kind} with id '{ident}' not found.", "invalid_request_error")


class Opened:
    """The configured store, opened (its tables made) by the first request that needs it,
    or at start-up (`chunkspec serve`, to fail before serving)."""

    def __init__(self, store: Store, max_bytes: int) -> None:
        self.store = store
        self.max_bytes = max_bytes
        """The largest response (or items added at once) the store keeps."""
        self._lock = asyncio.Lock()
        self._open = False

    async def __call__(self) -> Store:
        if not self._open:
            async with self._lock:
                if not self._open:
                    await self.store.open()
                    self._open = True
        return self.store

    async def close(self) -> None:
        if self._open:
            self._open = False
            await self.store.close()
