"""A client's request as its upstream's: the model routed, hosted tools the upstream
cannot run left out (or refused), the body written by the client module's `to_request`
in the upstream's protocol and dialect, and every loss judged by `policy`."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, cast

from . import policy
from .policy import Json, Refused
from .routing import Target
from .wire import chat, messages, responses

MODULES = {"chat": chat, "messages": messages, "responses": responses}
"""The module that reads each client protocol's requests (`to_request`)."""

PATHS = {"chat": "/chat/completions", "messages": "/messages", "responses": "/responses"}
"""Each upstream protocol's path after its base URL."""


@dataclass
class Translated:
    """The upstream's request, and what the client's lost on the way (said)."""

    body: Json
    dropped: list[str] = field(default_factory=list[str])
    tool_names: dict[str, tuple[str, str]] | None = None
    """For a Responses client whose namespace tools went upstream flat: each flat name's
    (namespace, name), so that the upstream's calls go back as Codex runs them."""


def translate(client: str, target: Target, given: Json, hosted_tools: str) -> Translated:
    """`given`, a request of the `client` protocol, as the request `target`'s upstream
    reads, always streamed. Raises `Refused` for what cannot go."""
    upstream = target.upstream
    body = dict(given)
    dropped: list[str] = []
    if upstream.protocol != client or upstream.protocol == "chat":
        policy.refusals(client, body, upstream.protocol)
    if upstream.protocol == "chat" and client != "chat":
        dropped += _without_hosted_tools(client, body, hosted_tools)
    body["model"] = target.model
    if upstream.protocol == client and client != "chat":
        out = body  # the upstream reads it as it is
    else:
        dialect = upstream.dialect if upstream.protocol == "chat" else None
        out, said = _to_request(client, body, upstream.protocol, dialect)
        dropped += said
    out["model"] = target.model
    out["stream"] = True  # an unstreamed client request is added up by the gateway
    if upstream.protocol == "chat":
        out["stream_options"] = {"include_usage": True}
    names = None
    if client == "responses" and upstream.protocol != "responses":
        names = responses.tool_names(given) or None
    return Translated(out, dropped, names)


def _without_hosted_tools(client: str, body: Json, setting: str) -> list[str]:
    """Leave out the tools the client's protocol's own servers would run (a chat
    upstream runs none), or refuse them when `setting` is "refuse"."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return []
    kept: list[Any] = []
    left: list[str] = []
    for tool in tools:
        kind = policy.hosted(client, cast(Json, tool)) if isinstance(tool, dict) else None
        if kind is None:
            kept.append(tool)
        else:
            left.append(kind)
    if left and setting == "refuse":
        raise Refused(
            f"hosted tools the upstream cannot run: {', '.join(left)} "
            '(the gateway\'s hosted_tools = "refuse")'
        )
    if left:
        body["tools"] = kept
        if not kept:
            del body["tools"]
            if body.get("tool_choice") in ("auto", "required", "any"):
                body.pop("tool_choice")
    return [f"the hosted tool {kind!r}" for kind in left]


def _to_request(
    client: str, body: Json, protocol: str, dialect: str | None
) -> tuple[Json, list[str]]:
    """`to_request`, its losses judged: said, or refused (`Refused`)."""
    module: Any = MODULES[client]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", chat.RequestLossWarning)
        out = cast(Json, module.to_request(body, protocol=protocol, dialect=dialect))
    lost: list[tuple[str, str]] = []
    for warning in caught:
        if isinstance(warning.message, chat.RequestLossWarning):
            lost += warning.message.dropped
        else:  # not ours to judge: shown as it would have been
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    said, refused = policy.judge(client, lost)
    if refused:
        raise Refused("; ".join(refused))
    return out, said
