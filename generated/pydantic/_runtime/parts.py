"""The vocabulary every protocol is read into, the same in every target: the `Part`s of
a stream (`iter_parts`, any protocol's), the `Summary` a stream adds up to, and the
meanings (`MEANINGS`) the spec's `means:` may name. `_summary_of_parts` adds any
protocol's parts up to a summary; `_StreamAccumulator` is what every protocol's
accumulator is."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Generic, TypeVar

from .json_text import _paired
from .sse import _Chunk

_Completion = TypeVar("_Completion")


@dataclass(frozen=True, slots=True)
class ToolCallSummary:
    """A tool call: a function's `arguments` as JSON text (arguments sent as an object
    become their JSON text), or a custom tool's input text."""

    id: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True, slots=True)
class ReasoningItem:
    """Reasoning the backend wants back unchanged on the next turn: a `signature` or
    `encrypted` reasoning, with the whole item that carried it (`source`)."""

    kind: str
    value: Any
    source: Any


@dataclass(frozen=True, slots=True)
class ServerToolSummary:
    """A tool the backend ran itself (a web search, code execution), not one for the
    client to run: its `arguments` as JSON text, its `output` (None until it comes;
    an output sent as an object is its JSON text), and the whole item that carried it
    (`source`), which holds the backend's own results (Groq's `search_results`)."""

    index: int | None
    """Which run of the choice it is, as the backend numbers them (None: no number)."""
    name: str | None
    arguments: str
    output: str | None
    source: Any


@dataclass(frozen=True, slots=True)
class ChoiceSummary:
    """What one choice says. Texts are "" when the stream sent none."""

    index: int
    text: str
    reasoning: str
    refusal: str
    finish_reason: str | None
    tool_calls: tuple[ToolCallSummary, ...]
    reasoning_items: tuple[ReasoningItem, ...]
    """The opaque reasoning (signatures, encrypted reasoning), in order."""
    server_tools: tuple[ServerToolSummary, ...] = ()
    """The tools the backend ran itself, in order: not calls for the client to run."""


@dataclass(frozen=True, slots=True)
class UsageSummary:
    """Token counts in OpenAI's sense (`completion_tokens` includes reasoning tokens),
    the cost in US dollars and the tool runs the backend made itself (web searches,
    code execution); each None where the stream did not say."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cached_prompt_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    server_tool_calls: int | None = None
    cache_write_tokens: int | None = None
    """Prompt tokens written to the prompt cache (Anthropic's
    `cache_creation_input_tokens`, billed above plain input), within `prompt_tokens`
    as the cache reads are (last, so that positional arguments keep their places)."""


@dataclass(frozen=True, slots=True)
class Citation:
    """A source the answer cites: a web page (`url`), or a document or file the
    request gave (Messages' `char_location`, Responses' `file_citation`: no `url`),
    with the citation as it came (`source`), which a writer of its own protocol
    carries whole."""

    url: str | None
    title: str | None = None
    source: Any = None


@dataclass(frozen=True, slots=True)
class Summary:
    """What a stream said, whichever backend spelled it and however."""

    choices: tuple[ChoiceSummary, ...]
    usage: UsageSummary
    citations: tuple[Citation, ...]


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """Which tool call a `tool_call` part continues, as its chunk says."""

    index: int | None
    id: str | None
    name: str | None


@dataclass(frozen=True, slots=True)
class Identity:
    """Which response a stream is: its id, the model that made it and when it was made
    (Unix seconds), each None where the stream did not say."""

    id: str | None
    model: str | None
    created: int | None


@dataclass(slots=True)
class Part:
    """One piece of what a stream says, in stream order, in any protocol's terms.

    `kind` is one of:

    - "start": the first part of a stream; `identity` says which response it is, and
      `usage` the usage its first event said, if any (a Messages `message_start`'s
      input tokens; a Responses `response.created`'s usage; a chat first chunk's
      report), so a writer can write its opening events (`message_start`) as the start
      comes, with that usage in them. A "usage" part with the same report follows.
    - "text", "reasoning", "refusal": `text` is the piece.
    - "signature": `text` is a signature over the reasoning before it (Anthropic's
      `signature_delta`), to send back unchanged; `block` says which reasoning block,
      and `tool_call` the call it rides on, when it came on one (Gemini's
      `extra_content.google.thought_signature` in chat; before that call's pieces).
    - "redacted_reasoning": `text` is reasoning the backend keeps opaque (encrypted),
      to send back unchanged (Anthropic's `redacted_thinking.data`).
    - "tool_call": `text` is a piece of the arguments, `tool_call` says which call (for
      a call in Harmony markup, its number there).
    - "server_tool": a tool the backend ran itself: `server_tool` is one entry as it
      came, its arguments or its output; `text` is "".
    - "citation": `citation` is a source the answer cites; `text` is "".
    - "finish": `text` is the finish reason, in chat's terms (`stop`, `length`,
      `tool_calls`, `content_filter`, or the backend's own).
    - "usage": `usage` is the report so far (in chat, `choice` None); the last one is
      the stream's.
    - "error": the upstream reported an error, or was cut off before its end: `text`
      is the message, `error` the error as JSON data.

    `choice` is the choice's index (None for what belongs to no choice); `block` which
    block of the message the part belongs to (Anthropic's content block index; None in
    chat), so a writer closes one block and opens the next where it changes. `chunk`
    is the chunk (or event) it came from, so nothing is lost. The texts of one choice's
    parts add up to that choice's texts in the summary (`_summary_of_parts`)."""

    kind: str
    choice: int | None
    text: str
    chunk: Any
    tool_call: ToolCallPart | None = None
    usage: UsageSummary | None = None
    server_tool: ServerToolSummary | None = None
    identity: Identity | None = None
    block: int | None = None
    error: Any = None
    citation: Citation | None = None


_TEXTS: Final = ("text", "reasoning", "refusal")


_REASONING_SEPARATOR: Final = "\n\n"
"""What joins the parts of one reasoning (Responses' summary or reasoning-text parts)
where a protocol holds it as one text: a request's reasoning, a stream's reasoning
pieces (a "reasoning" part of this text between two parts of one item)."""


_MARK: Final = "chunkspec:"
"""The start of a signature carried in another protocol's place for it, marked with the
scheme that made it: `chunkspec:<scheme>:<signature>` (a Gemini thought signature in a
Messages thinking block's `signature` or a Responses reasoning item's
`encrypted_content`, which agents send back unchanged). Anthropic's signatures and
OpenAI's encrypted content are base64, which has no ':', so a marked value is never
taken for theirs."""

_CALL_SCHEME: Final = "gemini"
"""The scheme of a signature that rides on a chat tool call: Gemini's (Vertex's
spelling is read back by the same rule: `gemini` and `vertex` read each other's)."""

_ANTHROPIC_FORMAT: Final = "anthropic-claude-v1"
"""OpenRouter's `format` of a `reasoning_details` entry that holds an Anthropic
thinking block's signature: a chat writer marks a Messages signature with it, and the
request reader reads it back as one."""


def _marked(scheme: str, value: str) -> str:
    """`value`, a signature made by `scheme`, marked as such (see `_MARK`)."""
    return f"{_MARK}{scheme}:{value}"


def _unmarked(value: Any) -> tuple[str, str] | None:
    """The scheme and the signature of a marked value (see `_MARK`); None for any
    other."""
    if not isinstance(value, str) or not value.startswith(_MARK):
        return None
    scheme, colon, signature = value[len(_MARK) :].partition(":")
    return (scheme, signature) if colon and scheme else None


_COUNTS: Final = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cached_prompt_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "server_tool_calls",
)


_OPAQUE: Final = {
    "reasoning_signature": "signature",
    "reasoning_encrypted": "encrypted",
}


_REPORTED: Final = frozenset((*_COUNTS, "cost_usd"))
"""The meanings of a usage report."""


_CHOICE_MEANINGS: Final = frozenset(
    (*_TEXTS, *_OPAQUE, "finish_reason", "tool_calls", "server_tools")
)


MEANINGS: Final = (
    *_TEXTS,
    *_OPAQUE,
    "tool_calls",
    "server_tools",
    "finish_reason",
    *_COUNTS,
    "cost_usd",
    "citations",
)
"""Every meaning a module reads, in the order docs/meanings.md lists them."""


def _summary_of_parts(parts: Iterable[Part]) -> Summary:
    """The summary any protocol's parts add up to: each choice's texts joined, its tool
    calls by their index (or, without one, their id), the arguments joined, its last
    finish reason, its signatures and opaque reasoning in order, the tools the server
    ran by their index; the last usage report; every cited source once."""
    choices: dict[int, _PartsOfChoice] = {}
    usage: UsageSummary | None = None
    cited: dict[object, Citation] = {}
    for part in parts:
        kind = part.kind
        if kind == "usage":
            if part.usage is not None:
                usage = part.usage
            continue
        if kind == "citation":
            _cite(cited, part.citation)
            continue
        index = part.choice
        if index is None:
            continue
        state = choices.get(index)
        if state is None:
            state = choices[index] = _PartsOfChoice()
        if kind in _TEXTS:
            state.texts[kind].append(part.text)
        elif kind == "tool_call":
            state.call(part)
        elif kind == "finish":
            if part.text:
                state.finish = part.text
        elif kind in _PART_ITEMS:
            state.items.append(ReasoningItem(_PART_ITEMS[kind], part.text, part.chunk))
        elif kind == "server_tool" and part.server_tool is not None:
            state.server_tool(part.server_tool)
    return Summary(
        choices=tuple(choices[i].summary(i) for i in sorted(choices)),
        usage=usage or UsageSummary(),
        citations=tuple(cited.values()),
    )


def _run_order(tool: ServerToolSummary) -> tuple[bool, int]:
    """Runs by their index; those without one after them, as they came (a stable
    sort)."""
    return (tool.index is None, tool.index or 0)


_PART_ITEMS: Final = {"signature": "signature", "redacted_reasoning": "encrypted"}
"""The parts that are opaque reasoning, and the kind of `ReasoningItem` each makes."""


def _cite(cited: dict[object, Citation], citation: Citation | None) -> None:
    """Add a source to those cited: once per URL, the first title found kept; a
    citation without a URL (of a document the request gave) once per source."""
    if citation is None:
        return
    key: object = citation.url or _json_key(citation.source)
    if key:
        _cite_once(cited, citation, key)


def _cite_once(
    seen: dict[object, Citation], cited: Citation, key: object = None
) -> bool:
    """Add a source to those `seen`, by `key` (its URL when None): once, the first
    title found kept. Whether it was added (new, or with a title it did not have)."""
    key = cited.url if key is None else key
    known = seen.get(key)
    if known is not None and (known.title is not None or cited.title is None):
        return False
    seen[key] = cited
    return True


def _json_key(value: Any) -> str:
    """A citation's JSON text, to know it again (`source` may be any JSON data)."""
    return "" if value is None else json.dumps(value, sort_keys=True, default=repr)


def _name_joined(name: str | None, piece: str | None) -> str | None:
    """A tool call's name so far with the next part's piece of it: chat may split a
    name across chunks (`get_`, `weather`); a piece that repeats the whole name (as
    some servers send it on every chunk) is no piece."""
    if not name:
        return piece
    if piece and piece != name:
        return name + piece
    return name


class _PartsOfChoice:
    """What the parts of one choice have said so far (see `_summary_of_parts`)."""

    __slots__ = ("calls", "finish", "items", "latest", "servers", "texts")

    def __init__(self) -> None:
        self.texts: dict[str, list[str]] = {meaning: [] for meaning in _TEXTS}
        self.calls: dict[int, tuple[str | None, str | None, list[str]]] = {}
        """The tool calls by index: id, name and the pieces of the arguments."""
        self.latest = 0
        """The index of the call a piece went to last."""
        self.finish: str | None = None
        self.items: list[ReasoningItem] = []
        self.servers: dict[object, ServerToolSummary] = {}

    def call(self, part: Part) -> None:
        """Add a piece of a tool call, as chunks merge them: by index, and a call
        without one by its id (a new call for a new id), else the latest call."""
        which = part.tool_call or ToolCallPart(None, None, None)
        index = which.index if which.index is not None else self._place(which.id)
        self.latest = index
        known = self.calls.get(index)
        if known is None:
            self.calls[index] = (which.id, which.name, [part.text])
            return
        ident, name, pieces = known
        if not ident:
            ident = which.id
        name = _name_joined(name, which.name)
        pieces.append(part.text)
        self.calls[index] = (ident, name, pieces)

    def _place(self, ident: str | None) -> int:
        if not self.calls:
            return 0
        if ident:
            for index, (known, _, _) in self.calls.items():
                if known == ident:
                    return index
            if self.calls[self.latest][0]:
                return max(self.calls) + 1
        return self.latest

    def server_tool(self, tool: ServerToolSummary) -> None:
        """Add one entry of a tool the server ran: one run per index (its arguments,
        then its output); an entry without an index is a run of its own."""
        key: object = tool.index if tool.index is not None else object()
        known = self.servers.get(key)
        if known is None:
            self.servers[key] = tool
            return
        self.servers[key] = ServerToolSummary(
            tool.index,
            known.name or tool.name,
            known.arguments or tool.arguments,
            tool.output if tool.output is not None else known.output,
            tool.source,
        )

    def summary(self, index: int) -> ChoiceSummary:
        texts = {m: _paired("".join(pieces)) for m, pieces in self.texts.items()}
        return ChoiceSummary(
            index=index,
            text=texts["text"],
            reasoning=texts["reasoning"],
            refusal=texts["refusal"],
            finish_reason=self.finish,
            tool_calls=tuple(
                ToolCallSummary(ident, name, "".join(pieces))
                for ident, name, pieces in (self.calls[i] for i in sorted(self.calls))
            ),
            reasoning_items=tuple(self.items),
            server_tools=tuple(sorted(self.servers.values(), key=_run_order)),
        )


class _StreamAccumulator(Generic[_Chunk, _Completion]):
    """What every protocol's accumulator is (`ChatCompletionAccumulator`,
    `MessageAccumulator`, `ResponseAccumulator`): `add` each chunk or event of its
    module as it arrives; `snapshot()` for what they make so far, valid mid-stream and
    never None (before the first, an empty one); `end()` to say that the stream has
    ended (what was held back for what might follow is final); `result()` once it has
    (it calls `end()`); `summary()` for what they say, in every protocol's terms. `add`
    refuses anything else with the same `TypeError`, saying what it takes."""

    __slots__ = ()
    _takes: ClassVar[frozenset[type[Any]]]
    """The classes of the module's chunks or events (`dict` for TypedDicts): what `add`
    takes, each at the cost of a look-up."""
    _named: ClassVar[str]
    """What `add` takes, as its error names it: the chunk's type, or the union of the
    events' (`dict` for TypedDicts)."""
    _noun: ClassVar[str] = "chunk"
    """What `add` takes, in words: "chunk" or "event"."""

    def add(self, chunk: _Chunk) -> None:
        raise NotImplementedError

    def snapshot(self) -> _Completion:
        raise NotImplementedError

    def end(self) -> None:
        raise NotImplementedError

    def result(self) -> _Completion:
        raise NotImplementedError

    def summary(self) -> Summary:
        raise NotImplementedError

    def _said(self) -> tuple[str, Any]:
        """What the stream added up to, as its protocol's JSON data (the protocol, the
        data), as `assistant_message` takes it."""
        raise NotImplementedError

    def _check(self, value: object) -> None:
        """Raise `add`'s `TypeError` for what is not a chunk or an event of the module
        (a dict where they are objects, another protocol's, a JSON text), saying how to
        make one; an instance of a subclass of one of `_takes` passes."""
        if isinstance(value, tuple(self._takes)):
            return
        noun = self._noun
        one = f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"
        how = f"{one}'s JSON text becomes one by loads(text)"
        if dict not in self._takes:  # TypedDicts: a JSON object is one
            how += ", its JSON object by loads(json.dumps(data))"
        raise TypeError(
            f"{type(self).__name__}.add takes {one} of its module (a {self._named}, as "
            f"loads and iter_{noun}s give), not a {type(value).__name__}: {how}"
        )
