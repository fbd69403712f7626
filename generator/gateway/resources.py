"""The stored responses and conversations as OpenAI serves them: `GET` and `DELETE
/v1/responses/{id}` (`?stream=true` replays the response's events), its
`/input_items`, and `/v1/conversations` with their items, each list paged as OpenAI
pages (`limit`, `order`, `after`; `first_id`, `last_id`, `has_more`). Every route reads
and writes only the caller's rows (a hash of its API key)."""

from __future__ import annotations

import json
import re
import time
import uuid
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from . import errors, shapes, state
from .errors import Answer, ErrorInfo
from .relay import EVENT_END, Exchange
from .state import Opened
from .store import ConversationRecord, Json, Page, StoreUnavailable
from .wire import responses

Handler = Callable[[Opened, Request], Awaitable[Response]]

DEFAULT_LIMIT, MAX_LIMIT = 20, 100
"""OpenAI's page size, and the largest it takes."""


def routes(opened: Opened) -> list[Route]:
    def bound(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            return await _answered(handler, opened, request)

        return handle

    one = "/v1/responses/{response_id}"
    conv = "/v1/conversations/{conversation_id}"
    return [
        Route(one, bound(_get_response), methods=["GET"]),
        Route(one, bound(_delete_response), methods=["DELETE"]),
        Route(f"{one}/input_items", bound(_input_items), methods=["GET"]),
        Route("/v1/conversations", bound(_create_conversation), methods=["POST"]),
        Route(conv, bound(_get_conversation), methods=["GET"]),
        Route(conv, bound(_update_conversation), methods=["POST"]),
        Route(conv, bound(_delete_conversation), methods=["DELETE"]),
        Route(f"{conv}/items", bound(_list_items), methods=["GET"]),
        Route(f"{conv}/items", bound(_add_items), methods=["POST"]),
        Route(f"{conv}/items/{{item_id}}", bound(_get_item), methods=["GET"]),
        Route(f"{conv}/items/{{item_id}}", bound(_delete_item), methods=["DELETE"]),
    ]


async def _answered(handler: Handler, opened: Opened, request: Request) -> Response:
    """`handler`'s answer, or its error in OpenAI's shape; logged as one line."""
    exchange = Exchange("responses", request.url.path)
    try:
        response = await handler(opened, request)
    except Answer as answer:
        response = _error(answer.info)
    except StoreUnavailable as error:
        response = _error(state.unavailable(error))
    except RecursionError:
        response = _error(ErrorInfo(400, "a request nested too deep to read"))
    except (ValueError, TypeError, KeyError) as error:  # a malformed body
        response = _error(ErrorInfo(400, f"a request this gateway cannot read: {error!r}"))
    exchange.status = response.status_code
    exchange.log()
    return response


def _error(info: ErrorInfo) -> Response:
    return Response(errors.encoded("responses", info), info.status, media_type="application/json")


# --- responses -----------------------------------------------------------------------


def _record_id(request: Request, name: str, form: re.Pattern[str], kind: str) -> str:
    """The id a path names, when it is of the form the gateway gives (else nothing it
    keeps: a 404 without a lookup)."""
    ident: str = request.path_params[name]
    if not form.fullmatch(ident):
        raise Answer(state.not_found(kind, ident))
    return ident


async def _get_response(opened: Opened, request: Request) -> Response:
    response_id = _record_id(request, "response_id", state.RESPONSE_ID, "Response")
    record = await (await opened()).get(state.owner(request.headers), response_id)
    if record is None:
        raise Answer(state.not_found("Response", response_id))
    if request.query_params.get("stream") in ("true", "1"):
        after = _int(request, "starting_after", None, -1, None)
        events = record.events if after is None else _events_after(record.events, after)
        return Response(events, media_type="text/event-stream")
    return JSONResponse(record.body)


async def _delete_response(opened: Opened, request: Request) -> Response:
    response_id = _record_id(request, "response_id", state.RESPONSE_ID, "Response")
    if not await (await opened()).delete(state.owner(request.headers), response_id):
        raise Answer(state.not_found("Response", response_id))
    return JSONResponse({"id": response_id, "object": "response", "deleted": True})


async def _input_items(opened: Opened, request: Request) -> Response:
    response_id = _record_id(request, "response_id", state.RESPONSE_ID, "Response")
    record = await (await opened()).get(state.owner(request.headers), response_id)
    if record is None:
        raise Answer(state.not_found("Response", response_id))
    limit, descending, after = _paging(request)
    return JSONResponse(_listed(_pages(record.input, after, limit, descending)))


def _events_after(events: bytes, number: int) -> bytes:
    """The events after the one of sequence number `number`."""
    kept: list[bytes] = []
    for event in (e for e in EVENT_END.split(events) if e.strip()):
        if state.event_data(event).get("sequence_number", 0) > number:
            kept.append(event + b"\n\n")
    return b"".join(kept)


# --- conversations -------------------------------------------------------------------


def _item_id(request: Request) -> str:
    ident: str = request.path_params["item_id"]
    if "\0" in ident:  # in no item's id (`state.with_ids`), and no database's text
        raise Answer(state.not_found("Item", ident))
    return ident


def _items(given: object, limit: int) -> list[Json]:
    """Items a client adds to a conversation, as a turn would send them: each of a shape
    the gateway reads (else the conversation's next turn could not be sent), and no more
    than the store keeps of a response."""
    if not isinstance(given, list):
        raise Answer(shapes.invalid_type("items", "an array of items", given))
    problem = shapes.problem("responses", {"input": given})
    if problem is not None:
        raise Answer(replace(problem, message=problem.message.replace("'input", "'items")))
    items = state.with_ids(state.input_items(given), uuid.uuid4().hex)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # what is lost is judged when a turn is sent
            responses.to_request({"model": "m", "input": items}, protocol="chat")
    except (ValueError, TypeError, AttributeError, KeyError) as error:
        raise Answer(ErrorInfo(400, f"an item this gateway cannot read: {error!r}")) from None
    if len(json.dumps(items)) > limit:
        raise Answer(
            ErrorInfo(
                413,
                f"the items are above the store's limit of {limit} bytes",
                "invalid_request_error",
                "response_too_large",
                "items",
            )
        )
    return items


async def _create_conversation(opened: Opened, request: Request) -> Response:
    body = await _body(request)
    base = uuid.uuid4().hex
    items = _items(body.get("items") or [], opened.max_bytes)
    conversation = ConversationRecord(f"conv_{base}", int(time.time()), _metadata(body))
    await (await opened()).create_conversation(state.owner(request.headers), conversation, items)
    return JSONResponse(_conversation(conversation))


async def _get_conversation(opened: Opened, request: Request) -> Response:
    ident = _record_id(request, "conversation_id", state.CONVERSATION_ID, "Conversation")
    found = await (await opened()).conversation(state.owner(request.headers), ident)
    if found is None:
        raise Answer(state.not_found("Conversation", ident))
    return JSONResponse(_conversation(found))


async def _update_conversation(opened: Opened, request: Request) -> Response:
    ident = _record_id(request, "conversation_id", state.CONVERSATION_ID, "Conversation")
    metadata = _metadata(await _body(request))
    found = await (await opened()).update_conversation(
        state.owner(request.headers), ident, metadata
    )
    if found is None:
        raise Answer(state.not_found("Conversation", ident))
    return JSONResponse(_conversation(found))


async def _delete_conversation(opened: Opened, request: Request) -> Response:
    ident = _record_id(request, "conversation_id", state.CONVERSATION_ID, "Conversation")
    if not await (await opened()).delete_conversation(state.owner(request.headers), ident):
        raise Answer(state.not_found("Conversation", ident))
    return JSONResponse({"id": ident, "object": "conversation.deleted", "deleted": True})


async def _list_items(opened: Opened, request: Request) -> Response:
    ident = _record_id(request, "conversation_id", state.CONVERSATION_ID, "Conversation")
    limit, descending, after = _paging(request)
    page = await (await opened()).items(
        state.owner(request.headers), ident, after=after, limit=limit, descending=descending
    )
    if page is None:
        raise Answer(state.not_found("Conversation", ident))
    return JSONResponse(_listed(page))


async def _add_items(opened: Opened, request: Request) -> Response:
    ident = _record_id(request, "conversation_id", state.CONVERSATION_ID, "Conversation")
    given = (await _body(request)).get("items")
    if not given:
        raise Answer(ErrorInfo(400, "Missing required parameter: 'items'.", param="items"))
    items = _items(given, opened.max_bytes)
    if not await (await opened()).add_items(state.owner(request.headers), ident, items):
        raise Answer(state.not_found("Conversation", ident))
    return JSONResponse(_listed(Page(items, False)))


async def _get_item(opened: Opened, request: Request) -> Response:
    ident = _record_id(request, "conversation_id", state.CONVERSATION_ID, "Conversation")
    item_id = _item_id(request)
    item = await (await opened()).item(state.owner(request.headers), ident, item_id)
    if item is None:
        raise Answer(state.not_found("Item", item_id))
    return JSONResponse(item)


async def _delete_item(opened: Opened, request: Request) -> Response:
    ident = _record_id(request, "conversation_id", state.CONVERSATION_ID, "Conversation")
    item_id = _item_id(request)
    store, owner = await opened(), state.owner(request.headers)
    if not await store.delete_item(owner, ident, item_id):
        raise Answer(state.not_found("Item", item_id))
    found = await store.conversation(owner, ident)
    if found is None:
        raise Answer(state.not_found("Conversation", ident))
    return JSONResponse(_conversation(found))


def _conversation(conversation: ConversationRecord) -> Json:
    return {
        "id": conversation.id,
        "object": "conversation",
        "created_at": conversation.created_at,
        "metadata": conversation.metadata,
    }


# --- the parameters ------------------------------------------------------------------


async def _body(request: Request) -> Json:
    given: object = json.loads(await request.body() or b"{}")
    if not isinstance(given, dict):
        raise Answer(ErrorInfo(400, "a request body that is no JSON object"))
    return cast(Json, given)


def _metadata(body: Json) -> Json:
    metadata: Any = body.get("metadata") or {}
    if not isinstance(metadata, dict) or not all(
        isinstance(v, str) for v in cast(Json, metadata).values()
    ):
        raise Answer(
            ErrorInfo(
                400, "metadata must map keys to strings", "invalid_request_error", None, "metadata"
            )
        )
    return cast(Json, metadata)


def _paging(request: Request) -> tuple[int, bool, str | None]:
    """A list's `limit`, whether its `order` is descending (OpenAI's default), and
    `after`."""
    limit = _int(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    order = request.query_params.get("order", "desc")
    if order not in ("asc", "desc"):
        raise Answer(
            ErrorInfo(
                400,
                f"Invalid value: '{order}'. Supported values are: 'asc' and 'desc'.",
                "invalid_request_error",
                "invalid_value",
                "order",
            )
        )
    after = request.query_params.get("after")
    if after is not None and "\0" in after:  # in no item's id: nothing comes after it
        after = "\0"
    return cast(int, limit), order == "desc", after


def _int(
    request: Request, name: str, default: int | None, lowest: int, highest: int | None
) -> int | None:
    text = request.query_params.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = lowest - 1
    if value < lowest or (highest is not None and value > highest):
        top = f" and at most {highest}" if highest is not None else ""
        raise Answer(
            ErrorInfo(
                400,
                f"Invalid '{name}': expected an integer of at least {lowest}{top}, got {text!r}.",
                "invalid_request_error",
                "invalid_value",
                name,
            )
        )
    return value


def _listed(page: Page) -> Json:
    data = page.items
    return {
        "object": "list",
        "data": data,
        "first_id": data[0].get("id") if data else None,
        "last_id": data[-1].get("id") if data else None,
        "has_more": page.has_more,
    }


def _pages(items: list[Json], after: str | None, limit: int, descending: bool) -> Page:
    """A page of a list held whole (a response's input items), as the endpoints page."""
    ordered = list(reversed(items)) if descending else items
    if after is not None:
        ids = [item.get("id") for item in ordered]
        ordered = ordered[ids.index(after) + 1 :] if after in ids else []
    return Page(ordered[:limit], len(ordered) > limit)
