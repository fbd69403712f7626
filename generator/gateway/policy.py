"""What a request may lose on its way to the upstream, and what it may not.

`to_request` says everything a target protocol or dialect cannot carry
(`RequestLossWarning.dropped`, as (what, why)). The gateway judges each: dropped and said
(in the `x-chunkspec-dropped` header and the log line) when leaving it out does not
change what the model is asked; refused with a 400 in the client's shape otherwise. The
lists are declared here, once, for every request: nothing is decided per request."""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]


class Refused(ValueError):
    """The request asks for what the gateway cannot carry to its upstream: a 400."""


DROPPABLE = (
    "the assistant's reasoning",
    "a reasoning signature",
    "encrypted reasoning",
    "thinking without its signature",
    "the reasoning effort or budget",
    "reasoning turned on",
    "reasoning turned off",
    "that a tool result is an error",
    "thinking",
    "the default max_tokens 4096",
    "the assistant's refusal",
    "the citations of a text",
    "the annotations of a text",
)
"""Losses that change nothing the model is asked: earlier turns' reasoning the upstream
takes back in no form (or signed by another backend), a reasoning switch it has no place
for (or Anthropic's rules refuse: thinking with a forced tool choice), the output limit
raised above a thinking budget, a tool result's error flag (its text says so), that an
earlier turn was a refusal (its text is carried), an earlier answer's citations (the
text they point into is carried). A document's `context`, a text document's `title` and
a document's citations switch are refused: they change what the model is given or
asked."""

MEDIA_OF_RESULTS = " in a tool result"
"""An image or document a tool returned (Claude Code's Read of a PNG, Codex's
view_image) that the upstream's dialect takes in no form (DeepSeek reads no images):
left out, and the tool message tells the model so, so the agent's turn goes on. A
user's own image is refused instead: leaving it out would change the question."""

CLIENT_ONLY = "it only describes the client"
"""Why `to_request` leaves out a key the spec declares `client_only` (Codex's
`client_metadata`: thread and turn ids): no model reads it."""

DROPPABLE_PREFIXES = (
    "the signature on call ",
    "the signatures of ",
    "the deferred tool ",
    "the cache_control of ",
    "the thinking budget ",
    "the detail ",
    "that the result of call ",
    "a turn of the assistant with nothing ",
    "the key 'name' of a message",
    "the key 'annotations' of a message",
)
"""The same, by what they begin with: a signature of another backend on a call (or of
thinking blocks whose texts came run together), a tool Claude Code marks
`defer_loading` that no `tool_reference` has loaded yet (held back, as Anthropic's API
holds it back from the model), a prompt-cache breakpoint (Claude Code's, on every
request: it changes what is cached, not what is asked), a thinking budget cut below
the client's limit, an image's `detail`, a result's error flag, an assistant turn
of reasoning only that the upstream takes back in no form, a chat message's `name` (who
of a role spoke: a label, not what is asked) and an earlier answer's `annotations` (its
citations: the text is carried)."""

TUNING_KEYS = {
    "messages": (
        "service_tier",
        "top_k",
        "context_management",
        "container",
        "metadata",
        # Interactive Claude Code's server-side classifier of risky tool calls: no chat
        # backend runs it, and refusing the key only makes Claude Code resend without it.
        "safeguards",
    ),
    "chat": (
        "stream_options",  # what is left after include_usage: obfuscation padding
        "n",
        "response_format",
        "logprobs",
        "top_logprobs",
        "seed",
        "frequency_penalty",
        "presence_penalty",
        "logit_bias",
        "store",
        "metadata",
        "prompt_cache_key",
        "safety_identifier",
        "verbosity",
    ),
    "responses": (
        "include",
        "store",
        "metadata",
        "prompt_cache_key",
        "prompt_cache_retention",
        "service_tier",
        "truncation",
        "text",  # its format is checked first (`refusals`): what is left is verbosity
        "safety_identifier",
        "max_tool_calls",
        "top_logprobs",
        "stream_options",
    ),
}
"""Request keys of each client protocol that only tune how the answer is made, kept or
served: dropped and said when the upstream's protocol has no place for them."""

STATE_KEYS = ("previous_response_id", "conversation", "prompt", "background")
"""Responses keys that ask for state kept on the server that this gateway does not keep
(a prompt template, a background run; a conversation when its store is "none"):
refused (leaving them out would change what the model is asked). With a store, the
gateway answers `previous_response_id` and `conversation` itself (`state`)."""

MESSAGES_REFUSED_KEYS = ("mcp_servers",)
"""Messages keys that give the model what no chat request can (MCP servers' tools)."""

HOSTED_MESSAGES_TOOLS = (
    "web_search",
    "web_fetch",
    "code_execution",
    "tool_search_tool",
    "mcp_toolset",
)
"""The Messages tool types (their prefixes: `web_search_20250305`) that Anthropic's
servers run: a chat upstream cannot run them."""

CLIENT_RESPONSES_TOOLS = ("function", "namespace", "custom")
"""The Responses tool types the client runs; every other type (`web_search`,
`file_search`, `code_interpreter`, `image_generation`, `mcp`…) is run by OpenAI's
servers, which a chat upstream is not."""


def hosted(protocol: str, tool: Json) -> str | None:
    """The type of `tool` when the client's upstream protocol's servers would run it
    (a hosted tool), else None."""
    kind = tool.get("type")
    if not isinstance(kind, str):
        return None
    if protocol == "messages":
        return kind if kind.startswith(HOSTED_MESSAGES_TOOLS) else None
    if protocol == "responses":
        return None if kind in CLIENT_RESPONSES_TOOLS else kind
    return None


def judge(client: str, dropped: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """`to_request`'s losses, as (dropped and said, refused)."""
    keys = set(TUNING_KEYS[client])
    said: list[str] = []
    refused: list[str] = []
    for what, why in dropped:
        key = what.removeprefix("the key ").strip("'")
        if (
            (what.startswith("the key ") and key in keys)
            or why == CLIENT_ONLY  # declared in the spec (`client_only`)
            or what in DROPPABLE
            or what.startswith(DROPPABLE_PREFIXES)
            or what.endswith(MEDIA_OF_RESULTS)
        ):
            said.append(what)
        else:
            refused.append(f"{what} ({why})")
    return said, refused


def refusals(client: str, body: Json, upstream: str) -> None:
    """Refuse what `to_request` leaves out without a word, which would change the
    answer: raises `Refused`."""
    if client == "responses" and upstream != "responses":
        for key in STATE_KEYS:
            if body.get(key):
                raise Refused(f'{key}: this gateway keeps no state ([store] url = "none")')
        text = body.get("text")
        form = text.get("format") if isinstance(text, dict) else None
        kind: Any = form.get("type", "text") if isinstance(form, dict) else "text"
        if kind != "text":
            raise Refused(f"a text.format of type {kind!r}")
        choice = body.get("tool_choice")
        if not (
            choice in (None, "auto", "none", "required")
            or (isinstance(choice, dict) and choice.get("type") == "function")
        ):
            raise Refused(f"a tool_choice of {choice!r}")
    if client == "messages" and upstream != "messages":
        for key in MESSAGES_REFUSED_KEYS:
            if body.get(key):
                raise Refused(f"{key}: a {upstream} request has no place for them")
    if client == "chat" and upstream == "messages":
        if body.get("n") not in (None, 1):
            raise Refused("n above 1: a message is one answer")
        if body.get("response_format") not in (None, {"type": "text"}):
            raise Refused("a response_format other than text")
        if body.get("logprobs"):
            raise Refused("logprobs")
        if body.get("audio") or "audio" in (body.get("modalities") or []):
            raise Refused("audio")
