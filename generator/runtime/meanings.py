"""Meanings, the same in every target: what a completion says (reasoning, answer text,
refusal, tool calls, the tools the server ran, finish reason, usage, cost, citations),
read from wherever the backend spelled it.

The spec says which field means what (`means:` in its files); the generator turns that
into the `_Spelling`s of a module, each a path into JSON data: the completion's, for
`summary()`, and a chunk's, for the texts (read chunk by chunk by `_Reader`, which also
finds inline reasoning) and for `iter_parts`. For one meaning, the spelling of highest
precedence that has a value wins: two spellings of one text (OpenRouter's `reasoning`
and `reasoning_details`) are never added together, and a usage report found in two
places (Groq's `x_groq.usage`) is one report."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import re
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, methodcaller
from typing import Any, Final, Literal, NamedTuple, TypeAlias, cast

from .json_text import _SURROGATE, _json_text
from .sse import _INCOMPLETE_STREAM

_Step: TypeAlias = "str | tuple[str, str] | None"
"""A key; a (key, value) filter, for the items of a list whose `key` is `value`; or
None, for every item of a list."""


_ThinkTags: TypeAlias = "tuple[str, str] | Literal['harmony'] | None"
"""Reasoning inline in the text: between (open, close) tags, or in Harmony markup."""


class _Spelling(NamedTuple):
    """Where one meaning is spelled: a path from a choice of the completion (for the
    meanings of a choice) or from the completion (for usage, cost and citations)."""

    meaning: str
    path: tuple[_Step, ...]
    precedence: int = 0
    """Of the spellings that have a value, the highest wins."""
    scale: float = 1.0
    """What one unit of the value is in the meaning's unit (1e-10 for ticks to USD)."""
    items: tuple[tuple[str, tuple[_Step, ...]], ...] = ()
    """For tool calls, server tools and citations: the path of each part (`id`, `url`)
    in an item."""


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


@dataclass(frozen=True, slots=True)
class Citation:
    """A source the answer cites."""

    url: str
    title: str | None = None


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

    - "start": the first part of a stream; `identity` says which response it is.
    - "text", "reasoning", "refusal": `text` is the piece.
    - "signature": `text` is a signature over the reasoning before it (Anthropic's
      `signature_delta`), to send back unchanged; `block` says which reasoning block.
    - "redacted_reasoning": `text` is reasoning the backend keeps opaque (encrypted),
      to send back unchanged (Anthropic's `redacted_thinking.data`).
    - "tool_call": `text` is a piece of the arguments, `tool_call` says which call (for
      a call in Harmony markup, its number there).
    - "server_tool": a tool the backend ran itself: `server_tool` is one entry as it
      came, its arguments or its output; `text` is "".
    - "citation": `citation` is a source the answer cites; `text` is "".
    - "finish": `text` is the finish reason, in chat's terms (`stop`, `length`,
      `tool_calls`, `content_filter`, or the backend's own).
    - "usage": `usage` is the report (in chat, `choice` None).
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
_COUNTS: Final = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cached_prompt_tokens",
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


def _found(
    value: Any, path: tuple[_Step, ...]
) -> list[tuple[Any, Any, tuple[int, ...]]]:
    """The values at `path` under `value`, in order, each with the list item it came
    from (None: none) and its place (the indexes of the items passed through)."""
    for at, step in enumerate(path):  # keys, the most of a path, are looked up fast
        if step.__class__ is not str:
            return _found_in_lists(value, path[at:])
        if value.__class__ is not dict:
            return []
        value = value.get(step)
        if value is None:
            return []
    return [(value, None, ())]


def _found_in_lists(
    value: Any, path: tuple[_Step, ...]
) -> list[tuple[Any, Any, tuple[int, ...]]]:
    found: list[tuple[Any, Any, tuple[int, ...]]] = [(value, None, ())]
    for step in path:
        stepped: list[tuple[Any, Any, tuple[int, ...]]] = []
        for current, item, place in found:
            kind = current.__class__
            if step.__class__ is str:
                if kind is dict:
                    inner = current.get(step)
                    if inner is not None:
                        stepped.append((inner, item, place))
            elif kind is list:
                items = enumerate(cast(list[Any], current))
                if step is None:
                    stepped.extend(
                        (v, v, (*place, i)) for i, v in items if v is not None
                    )
                else:
                    key, wanted = cast("tuple[str, str]", step)
                    stepped.extend(
                        (v, v, (*place, i))
                        for i, v in items
                        if v.__class__ is dict and v.get(key) == wanted
                    )
        found = stepped
        if not found:
            break
    return found


def _by_meaning(spellings: tuple[_Spelling, ...]) -> dict[str, list[list[_Spelling]]]:
    """Each meaning's spellings in tiers, highest precedence first."""
    tiers: dict[str, dict[int, list[_Spelling]]] = {}
    for spelling in spellings:
        tier = tiers.setdefault(spelling.meaning, {})
        tier.setdefault(spelling.precedence, []).append(spelling)
    return {
        meaning: [tier[p] for p in sorted(tier, reverse=True)]
        for meaning, tier in tiers.items()
    }


def _first_value(
    data: Any, tiers: list[list[_Spelling]], kinds: tuple[type, ...]
) -> Any:
    for tier in tiers:
        for spelling in tier:
            path = spelling.path
            if data.get(path[0]) is None:
                continue  # most places are not there: no walk
            for value, _, _ in _found(data, path):
                if value.__class__ in kinds:
                    if spelling.scale == 1.0:
                        return value
                    return cast(float, value) * spelling.scale
    return None


def _parts(item: Any, spelling: _Spelling) -> dict[str, Any]:
    parts: dict[str, Any] = {}
    for name, path in spelling.items:  # of a part's spellings, the first found wins
        if parts.get(name) is None:
            values = _found(item, path)
            parts[name] = values[0][0] if values else None
    return parts


def _tool_calls(data: Any, tiers: list[list[_Spelling]]) -> tuple[ToolCallSummary, ...]:
    for tier in tiers:
        calls = [
            _tool_call(_parts(item, spelling))
            for spelling in tier
            for item, _, _ in _found(data, spelling.path)
            if item.__class__ is dict
        ]
        if calls:
            return tuple(calls)
    return ()


def _tool_call(parts: dict[str, Any]) -> ToolCallSummary:
    arguments = parts.get("arguments")
    if arguments is None:
        arguments = ""
    elif arguments.__class__ is not str:
        arguments = _json_text(arguments)
    ident, name = parts.get("id"), parts.get("name")
    return ToolCallSummary(
        ident if ident.__class__ is str else None,
        name if name.__class__ is str else None,
        arguments,
    )


def _server_tools(
    data: Any, tiers: list[list[_Spelling]]
) -> tuple[ServerToolSummary, ...]:
    """The tools the backend ran, from the best tier of spellings that has any."""
    for tier in tiers:
        tools = [
            _server_tool(_parts(value, spelling), value if item is None else item)
            for spelling in tier
            for value, item, _ in _found(data, spelling.path)
            if value.__class__ is dict
        ]
        if tools:
            return tuple(tools)
    return ()


def _server_tool(parts: dict[str, Any], source: Any) -> ServerToolSummary:
    index, name = parts.get("index"), parts.get("name")
    arguments, output = parts.get("arguments"), parts.get("output")
    if arguments is None:
        arguments = ""
    elif arguments.__class__ is not str:
        arguments = _json_text(arguments)
    if output is not None and output.__class__ is not str:
        output = _json_text(output)
    return ServerToolSummary(
        index if index.__class__ is int else None,
        name if name.__class__ is str else None,
        arguments,
        output,
        source,
    )


def _reasoning_items(
    data: Any, spellings: list[_Spelling]
) -> tuple[ReasoningItem, ...]:
    found: list[tuple[tuple[int, ...], int, ReasoningItem]] = []
    for order, spelling in enumerate(spellings):
        for value, item, place in _found(data, spelling.path):
            if value == "" or value == []:
                continue  # an empty signature opens a block; the real one comes later
            kind = _OPAQUE[spelling.meaning]
            found.append((place, order, ReasoningItem(kind, value, item)))
    return tuple(entry for _, _, entry in sorted(found, key=lambda e: (e[0], e[1])))


def _citations(data: Any, tiers: list[list[_Spelling]]) -> tuple[Citation, ...]:
    """Every cited source once, by URL, the best spelling's title first."""
    seen: dict[str, Citation] = {}
    for tier in tiers:
        for spelling in tier:
            for value, _, _ in _found(data, spelling.path):
                parts = _parts(value, spelling) if spelling.items else {"url": value}
                url, title = parts.get("url"), parts.get("title")
                if url.__class__ is not str or not url:
                    continue
                known = seen.get(url)
                if known is None or (known.title is None and title.__class__ is str):
                    seen[url] = Citation(url, title if title.__class__ is str else None)
    return tuple(seen.values())


def _usage(
    data: Any,
    meanings: dict[str, list[list[_Spelling]]],
    in_choices: tuple[str, ...] = (),
) -> UsageSummary:
    """The usage report of a completion or a chunk, read by its rules; `in_choices`
    are the keys of a choice that may hold one."""
    choices: Any = data.get("choices")
    if choices:
        # No report there: no walk through them. Of two entries of one choice that
        # hold one (a repeated index), the later is the report, as it is merged.
        data = {**data, "choices": _reporting(choices, in_choices) or None}
    counts = {
        meaning: _first_value(data, meanings.get(meaning, []), (int,))
        for meaning in _COUNTS
    }
    prompt, completion = counts["prompt_tokens"], counts["completion_tokens"]
    total, reasoning = counts["total_tokens"], counts["reasoning_tokens"]
    if (
        None not in (prompt, completion, total)
        and reasoning
        and total == prompt + completion + reasoning
    ):
        # Reasoning counted apart from the completion (xAI): OpenAI's sense includes it.
        counts["completion_tokens"] = completion + reasoning
    cost = _first_value(data, meanings.get("cost_usd", []), (int, float))
    return UsageSummary(**counts, cost_usd=None if cost is None else float(cost))


def _reporting(choices: list[Any], in_choices: tuple[str, ...]) -> list[Any]:
    """The entries of a chunk's choices that hold a usage report (at `in_choices`), in
    the order of their indexes, as a completion holds them: of two entries of one
    choice (a repeated index), the later, as they are merged."""
    reporting = {
        _index_of(choice): choice
        for choice in choices
        if choice.__class__ is dict
        and any(choice.get(key) is not None for key in in_choices)
    }
    return [reporting[index] for index in sorted(reporting)]


def _index_of(choice: dict[str, Any]) -> int:
    """A choice's index (0 when it sends none, as Azure's filter chunks may not)."""
    index: Any = choice.get("index")
    return index if index.__class__ is int else 0


_Kept: TypeAlias = "dict[str, _Kept | None]"
"""The keys of an object to keep: None for a key's whole value, else which of its keys
(through the items of a list)."""


class _Summarised:
    """What `summary()` reads from the completion, compiled once per module: each
    meaning's spellings by precedence, and the keys their paths pass through, where the
    completion needs finishing."""

    __slots__ = ("by_meaning", "in_choices", "kept")

    def __init__(self, spellings: tuple[_Spelling, ...]) -> None:
        self.by_meaning = _by_meaning(spellings)
        self.in_choices = _report_keys_in_choices(spellings)
        """The keys of a choice that may hold a usage report (Moonshot's)."""
        self.kept: _Kept = {}
        _keep(self.kept, ("choices", None, "index"))  # which choice it is
        for s in spellings:
            choice = s.meaning in _CHOICE_MEANINGS
            _keep(self.kept, ("choices", None, *s.path) if choice else s.path)


def _report_keys_in_choices(spellings: tuple[_Spelling, ...]) -> tuple[str, ...]:
    """The keys of a choice that may hold a usage report."""
    paths = [s.path for s in spellings if s.meaning in _REPORTED]
    keys = (p[2] for p in paths if p[:2] == ("choices", None) and len(p) > 2)
    return tuple(key for key in dict.fromkeys(keys) if isinstance(key, str))


def _keep(kept: _Kept, path: tuple[_Step, ...]) -> None:
    """Keep what `path` reaches: its keys up to the first filter of a list's items,
    whose lists are kept whole (their items' tags with them)."""
    keys = [step for step in path if step is not None]
    filtered = next(
        (i for i, step in enumerate(keys) if not isinstance(step, str)), None
    )
    keys = keys[:filtered]
    for at, key in enumerate(keys):
        assert isinstance(key, str)
        if key in kept and kept[key] is None:
            return  # kept whole already
        if at == len(keys) - 1:
            kept[key] = None
            return
        inner: _Kept = kept.get(key) or {}
        kept[key] = inner
        kept = inner


def _summary(data: dict[str, Any], summarised: _Summarised, reader: _Reader) -> Summary:
    """The summary of a completion's JSON data (of its keys `summarised.kept`, at
    least); the texts are the `reader`'s, which read them chunk by chunk."""
    meanings = summarised.by_meaning
    choices: list[Any] = data.get("choices") or []
    last = {key: data[key] for key in reader.last_report if key in data}
    if "choices" in last:
        last["choices"] = [
            c
            for c in choices
            if c.__class__ is dict and _index_of(c) in reader.report_choices
        ]
    return Summary(
        choices=tuple(
            _choice(choice, meanings, reader)
            for choice in choices
            if choice.__class__ is dict
        ),
        usage=_usage(last, meanings, summarised.in_choices),
        citations=_citations(data, meanings.get("citations", [])),
    )


def _choice(
    choice: dict[str, Any], meanings: dict[str, list[list[_Spelling]]], reader: _Reader
) -> ChoiceSummary:
    index = _index_of(choice)
    texts = reader.texts(index)
    if texts is None:
        texts = _texts_in(choice, meanings)
    opaque = [s for m in _OPAQUE for tier in meanings.get(m, []) for s in tier]
    return ChoiceSummary(
        index=index,
        text=texts["text"],
        reasoning=texts["reasoning"],
        refusal=texts["refusal"],
        finish_reason=_first_value(choice, meanings.get("finish_reason", []), (str,))
        or None,
        tool_calls=_tool_calls(choice, meanings.get("tool_calls", []))
        + reader.calls(index),
        reasoning_items=_reasoning_items(choice, opaque),
        server_tools=_server_tools(choice, meanings.get("server_tools", [])),
    )


def _texts_in(
    choice: dict[str, Any], meanings: dict[str, list[list[_Spelling]]]
) -> dict[str, str]:
    """The texts of a choice of the completion, where each meaning came in one key:
    the first tier of its spellings that has text, joined."""
    texts: dict[str, str] = dict.fromkeys(_TEXTS, "")
    for meaning in _TEXTS:
        for tier in meanings.get(meaning, []):
            found = [
                (place, value)
                for spelling in tier
                for value, _, place in _found(choice, spelling.path)
                if value.__class__ is str
            ]
            if any(value for _, value in found):
                found.sort(key=_place)  # two spellings of one list: in its order
                texts[meaning] = "".join(value for _, value in found)
                break
    return texts


def _place(found: tuple[tuple[int, ...], str]) -> tuple[int, ...]:
    return found[0]


def _checked_tags(tags: object) -> _ThinkTags:
    """The `think_tags` option, refused at the call when it is not two tags."""
    if tags is None or tags == "harmony":
        return cast(_ThinkTags, tags)
    pair = cast("tuple[object, ...]", tags)
    if (
        not isinstance(tags, tuple)
        or len(pair) != 2
        or not all(isinstance(t, str) for t in pair)
        or not pair[1]
    ):
        raise ValueError(
            "think_tags is (open, close), two strings such as ('<think>', '</think>'),"
            " the open one empty when the text starts inside reasoning, or 'harmony';"
            f" not {tags!r}"
        )
    return cast("tuple[str, str]", tags)


class _Splitter:
    """Reasoning written inline between two tags, found across chunks: a tag cut off
    at the end of a piece is held back until the next piece says what it is."""

    __slots__ = ("close_tag", "held", "inside", "open_tag")

    def __init__(self, tags: tuple[str, str]) -> None:
        self.open_tag, self.close_tag = tags
        self.inside = not self.open_tag  # no open tag: the text starts inside
        self.held = ""

    def split(self, piece: str) -> list[tuple[str, str]]:
        """The (meaning, text) pieces of the next piece of text."""
        out: list[tuple[str, str]] = []
        rest = self.held + piece
        self.held = ""
        while rest:
            tag = self.close_tag if self.inside else self.open_tag
            meaning = "reasoning" if self.inside else "text"
            at = rest.find(tag) if tag else -1
            if at < 0:
                cut = _cut_tag(rest, tag) if tag else 0
                if len(rest) > cut:
                    out.append((meaning, rest[: len(rest) - cut]))
                self.held = rest[len(rest) - cut :]
                break
            if at:
                out.append((meaning, rest[:at]))
            rest = rest[at + len(tag) :]
            self.inside = not self.inside
        return out

    def flush(self) -> list[tuple[str, str]]:
        """What was held back, once the text has ended: it was no tag."""
        held, self.held = self.held, ""
        return [("reasoning" if self.inside else "text", held)] if held else []


_HARMONY_TOKENS: Final = (
    "<|start|>",
    "<|channel|>",
    "<|constrain|>",
    "<|message|>",
    "<|end|>",
    "<|call|>",
    "<|return|>",
)
_RECIPIENT: Final = re.compile(r"to=(?:functions\.)?([^\s<]+)")


class _Harmony:
    """Raw Harmony markup (gpt-oss served without a reasoning parser), found across
    chunks as `_Splitter` finds tags: the `analysis` channel is reasoning, a message to
    a function (`to=functions.NAME`) is a tool call, and every other message (the
    `final` channel) is text. A token cut off at the end of a piece is held back."""

    __slots__ = ("calls", "header", "held", "meaning")

    def __init__(self) -> None:
        self.held = ""
        self.header: str | None = None
        """The header being read (between `<|start|>` or `<|channel|>` and
        `<|message|>`), or None inside a message."""
        self.meaning = "text"  # text before any markup is text
        self.calls: list[tuple[str, list[str]]] = []
        """The tool calls: (name, pieces of the arguments)."""

    def split(self, piece: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        rest = self.held + piece
        self.held = ""
        while rest:
            found = [(rest.find(t), t) for t in _HARMONY_TOKENS if t in rest]
            if not found:
                cut = max(_cut_tag(rest, t) for t in _HARMONY_TOKENS)
                self._take(rest[: len(rest) - cut], out)
                self.held = rest[len(rest) - cut :]
                break
            at, token = min(found)
            self._take(rest[:at], out)
            rest = rest[at + len(token) :]
            self._token(token)
            if token == "<|message|>" and self.meaning == "tool_call":
                # The call is made here, whether or not arguments follow.
                out.append((f"tool_call:{len(self.calls) - 1}", ""))
        return out

    def flush(self) -> list[tuple[str, str]]:
        held, self.held = self.held, ""
        out: list[tuple[str, str]] = []
        self._take(held, out)
        return out

    def _take(self, text: str, out: list[tuple[str, str]]) -> None:
        if not text:
            return
        if self.header is not None:
            self.header += text
        elif self.meaning == "tool_call":
            self.calls[-1][1].append(text)
            out.append((f"tool_call:{len(self.calls) - 1}", text))
        else:
            out.append((self.meaning, text))

    def _token(self, token: str) -> None:
        if token == "<|message|>":
            header = self.header or ""
            recipient = _RECIPIENT.search(header)
            channel = header.rpartition("<|channel|>")[2].split()
            if recipient:
                self.meaning = "tool_call"
                self.calls.append((recipient.group(1), []))
            else:
                analysis = bool(channel) and channel[0] == "analysis"
                self.meaning = "reasoning" if analysis else "text"
            self.header = None
        elif token in ("<|end|>", "<|call|>", "<|return|>"):
            self.header = ""  # what follows is the next message's header
        else:
            self.header = (self.header or "") + token


class _ChoiceTexts:
    __slots__ = ("from_field", "read", "seen", "spelled", "splitter", "texts")

    def __init__(self, think_tags: _ThinkTags) -> None:
        self.texts: dict[str, list[str]] = {meaning: [] for meaning in _TEXTS}
        self.read = True
        """Whether the texts are read chunk by chunk (else a watching reader's
        completion has them, see `_Reader.watch`)."""
        self.seen: set[str | tuple[str]] = set()
        """Watching: the keys of the head seen (a key as `(key,)` once seen holding
        parts, when it spells other meanings then)."""
        self.spelled: dict[str, set[str]] = {}
        """Watching: the keys seen that may spell each meaning."""
        self.splitter: _Splitter | _Harmony | None = None
        if think_tags == "harmony":
            self.splitter = _Harmony()
        elif think_tags is not None:
            self.splitter = _Splitter(think_tags)
        self.from_field = False
        """Whether a field carried reasoning in the entry being read: then reasoning
        between tags there is the same text again (llama.cpp sends both), and not
        read. Per entry: a stream re-spelled in tags keeps a field that holds more
        than the text (`reasoning_details`) beside its copy in tags, and a later piece
        in tags alone is read."""


_READ_ORDER: Final = ("reasoning", "text", "refusal")
"""The texts of a chunk in the order they are read: reasoning before the answer."""


class _Typed(NamedTuple):
    """How a target's own chunk objects are read, where they are not JSON data: the
    attribute of each key read, by where the key sits ("" in the chunk, "choices" in
    a choice, "choices.delta" in its delta), a key not listed being one the module
    does not declare; the attribute that holds the keys it does not declare (None:
    none are kept); and how a value reads as JSON data."""

    names: dict[str, dict[str, str]]
    extra: str | None
    json_of: Callable[[Any], Any]
    unset: object
    """What an absent key reads as (`UNSET`; None in pydantic)."""


class _InExtra:
    """Gets a key the module does not declare from an object's undeclared keys."""

    __slots__ = ("attribute", "key")

    def __init__(self, attribute: str, key: str) -> None:
        self.attribute, self.key = attribute, key

    def __call__(self, obj: Any) -> Any:
        return getattr(obj, self.attribute).get(self.key)


def _nothing(obj: Any) -> None:
    """A key that is never there (a module that keeps no undeclared key)."""


def _getter(typed: _Typed | None, where: str, key: str) -> Callable[[Any], Any]:
    """How the key `key` of an object at `where` is read: `dict.get` on JSON data, an
    attribute on a typed object. Absent, it reads as None, or UNSET (both false)."""
    if typed is None:
        return methodcaller("get", key)
    name = typed.names.get(where, {}).get(key)
    if name is not None:
        return attrgetter(name)
    return _nothing if typed.extra is None else _InExtra(typed.extra, key)


def _values_of(
    typed: _Typed, where: str, keys: tuple[str, ...]
) -> Callable[[Any], tuple[Any, ...]]:
    """The values of several keys of a typed object, in order: in one call when the
    module declares them all."""
    names = typed.names.get(where, {})
    if keys and all(key in names for key in keys):
        if len(keys) == 1:
            get = attrgetter(names[keys[0]])
            return lambda obj: (get(obj),)
        return cast(
            "Callable[[Any], tuple[Any, ...]]",
            attrgetter(*[names[key] for key in keys]),
        )
    getters = [_getter(typed, where, key) for key in keys]
    return lambda obj: tuple(get(obj) for get in getters)


def _as_is(value: Any) -> Any:
    return value


_Entry: TypeAlias = "tuple[str, int, tuple[_Step, ...]]"
"""A spelling of a text under a key: (meaning, precedence, path in the key's value)."""
_ServerPlaces: TypeAlias = "tuple[tuple[tuple[_Step, ...], _Spelling], ...]"
"""Spellings of the tools the backend ran in a value: (path in the value, spelling)."""


class _Head(NamedTuple):
    """A key of a choice that holds texts (`delta`): the spellings under each of its
    keys, and how its keys are read."""

    key: str
    get: Callable[[Any], Any]
    spelled: dict[str, _Spelled]
    """Its keys that hold a text or the tool calls, and what each holds."""
    values: Callable[[Any], tuple[Any, ...]] | None
    """Typed: the values of the keys of `spelled`, in order, at once."""
    mixed: tuple[str, ...]
    """Keys whose whole value spells other meanings than their parts (`content`)."""
    whats: tuple[_Spelled, ...]
    """What each key of `spelled` holds, in order (read beside `values`)."""


class _Spelled(NamedTuple):
    """What a key of a choice's head holds."""

    plain: tuple[tuple[str, int], ...]
    """(meaning, precedence) of the texts that are its whole value."""
    nested: tuple[_Entry, ...]
    """The spellings of a text inside its value (a list of parts)."""
    calls: bool
    """Whether it holds the tool calls."""
    servers: _ServerPlaces = ()
    """The spellings of the tools the backend ran in its value."""


class _Readings:
    """What `_Reader` looks up on every chunk, compiled once per module from the
    spellings of a chunk: the keys that hold texts, the finish reason, tool calls and
    usage reports, and how each is read (from JSON data, or from the target's objects
    by `_Typed`). Only these keys of a chunk are looked at."""

    __slots__ = (
        "any_choice_report",
        "any_report",
        "by_meaning",
        "call_spelling",
        "calls_elsewhere",
        "choice_report_keys",
        "choice_reports",
        "choices",
        "finish",
        "finish_key",
        "heads",
        "index",
        "json_of",
        "mapped",
        "report_places",
        "reports",
        "servers_elsewhere",
        "typed",
        "unset",
    )

    def __init__(self, spellings: tuple[_Spelling, ...], typed: _Typed | None) -> None:
        self.by_meaning = _by_meaning(spellings)
        self.typed = typed
        self.mapped = typed is None
        """Whether chunks are read as JSON data."""
        self.json_of: Callable[[Any], Any] = _as_is if typed is None else typed.json_of
        self.unset = None if typed is None else typed.unset
        self.choices = _getter(typed, "", "choices")
        self.index = _getter(typed, "choices", "index")
        tiers = self.by_meaning.get("tool_calls", [])
        self.call_spelling = tiers[0][0] if tiers else None
        calls = self.call_spelling.path if self.call_spelling else ()
        self.calls_elsewhere: tuple[_Step, ...] | None = None
        """The path of the tool calls from a choice, when they are not the items of a
        list under a head (`delta.tool_calls`): read from the choice's JSON data."""
        if calls and not (len(calls) == 3 and calls[2] is None):
            self.calls_elsewhere, calls = calls, ()
        under: dict[str, dict[str, list[_Entry]]] = {}
        for s in spellings:
            path = s.path
            if s.meaning in _TEXTS and len(path) >= 2:
                head, key, *rest = path
                if isinstance(head, str) and isinstance(key, str):
                    entry = (s.meaning, s.precedence, tuple(rest))
                    under.setdefault(head, {}).setdefault(key, []).append(entry)
        if calls:
            under.setdefault(cast(str, calls[0]), {})
        servers: dict[str, dict[str, _ServerPlaces]] = {}
        self.servers_elsewhere: tuple[_Spelling, ...] = ()
        """The spellings of the tools the backend ran that are not in a key of a
        head (as `delta.executed_tools` is): read from the choice's JSON data."""
        for s in spellings:
            if s.meaning != "server_tools":
                continue
            head, key = s.path[0], s.path[1] if len(s.path) > 1 else None
            if isinstance(head, str) and isinstance(key, str):
                at = servers.setdefault(head, {})
                at[key] = (*at.get(key, ()), (s.path[2:], s))
                under.setdefault(head, {})  # read in the head's pass over its keys
            else:
                self.servers_elsewhere += (s,)
        self.heads = tuple(
            _head(typed, head, keys, calls, servers.get(head, {}))
            for head, keys in under.items()
        )

        finish = [s.path for s in spellings if s.meaning == "finish_reason"]
        key = finish[0][0] if finish and len(finish[0]) == 1 else None
        self.finish_key = key if isinstance(key, str) else None
        self.finish = (
            None
            if self.finish_key is None
            else _getter(typed, "choices", self.finish_key)
        )
        places = [p for p in _report_places(spellings) if p[0] != "choices"]
        self.report_places = tuple(
            (cast(str, p[0]), cast(tuple[str, ...], p[1:])) for p in places
        )
        """Where a chunk holds a usage report, out of its choices: (key, path in its
        value) of the object (`usage`; `x_groq`, `usage`)."""
        self.reports = tuple(
            (key, _getter(typed, "", key), rest) for key, rest in self.report_places
        )
        self.choice_report_keys = _report_keys_in_choices(spellings)
        self.choice_reports = tuple(
            _getter(typed, "choices", key) for key in self.choice_report_keys
        )
        """... and those of a choice (Moonshot)."""
        self.any_report: Callable[[Any], tuple[Any, ...]] | None = None
        """Typed: the values of the keys that may hold a report, at once: most chunks
        hold none (a present object is true, absent and null are false)."""
        self.any_choice_report: Callable[[Any], tuple[Any, ...]] | None = None
        if typed is not None:
            keys = tuple(key for key, _ in self.report_places)
            self.any_report = _values_of(typed, "", keys)
            self.any_choice_report = _values_of(
                typed, "choices", self.choice_report_keys
            )


def _values_getter(
    readings: _Readings, head: str, keys: tuple[str, ...]
) -> Callable[[Any], tuple[Any, ...]]:
    """The values of some keys of a choice's head, in order, at once."""
    if readings.typed is None:
        return lambda inner: tuple(map(inner.get, keys))
    return _values_of(readings.typed, f"choices.{head}", keys)


def _reported(readings: _Readings, data: Any) -> tuple[str, ...]:
    """The keys of a chunk under which it holds a usage report, a usage object at a
    place reports are spelled (`usage`, `x_groq.usage`, `choices[].usage`): () when it
    holds none. A key alone is no report (Groq's first `x_groq` holds only an id)."""
    r = readings
    found: tuple[str, ...] = ()
    if r.mapped:  # `dict.get` itself: a third of the cost of a getter
        for key, rest in r.report_places:
            value = data.get(key)
            if value is not None and _inside(value, rest).__class__ is dict:
                found += (key,)
        for choice in data.get("choices") or ():
            if choice.__class__ is dict:
                for key in r.choice_report_keys:
                    if choice.get(key).__class__ is dict:
                        return (*found, "choices")
        return found
    assert r.any_report is not None and r.any_choice_report is not None
    unset = r.unset
    if any(r.any_report(data)):
        for key, get, rest in r.reports:
            value = get(data)
            if value is None or value is unset:
                continue
            if not rest or _inside(r.json_of(value), rest).__class__ is dict:
                found += (key,)
    any_choice_report = r.any_choice_report
    for choice in r.choices(data) or ():
        if any(any_choice_report(choice)):
            return (*found, "choices")
    return found


def _inside(value: Any, keys: tuple[str, ...]) -> Any:
    """The value at `keys` in JSON data (None: not there)."""
    for key in keys:
        if value.__class__ is not dict:
            return None
        value = value.get(key)
    return value


def _report_places(spellings: tuple[_Spelling, ...]) -> tuple[tuple[_Step, ...], ...]:
    """Where a usage report is an object: the objects that hold the counts."""
    counts = ("prompt_tokens", "completion_tokens", "total_tokens")
    return tuple(dict.fromkeys(s.path[:-1] for s in spellings if s.meaning in counts))


def _head(
    typed: _Typed | None,
    key: str,
    keys: dict[str, list[_Entry]],
    calls: tuple[_Step, ...],
    servers: dict[str, _ServerPlaces] | None = None,
) -> _Head:
    spelled = {
        k: _Spelled(
            tuple((m, p) for m, p, rest in v if not rest),
            tuple(e for e in v if e[2]),
            calls == (key, k, None),
        )
        for k, v in keys.items()
    }
    if calls[:1] == (key,) and calls[1] not in spelled:
        spelled[cast(str, calls[1])] = _Spelled((), (), True)
    for k, places in (servers or {}).items():
        spelled[k] = (spelled.get(k) or _Spelled((), (), False))._replace(
            servers=places
        )
    where = f"choices.{key}"
    values = None if typed is None else _values_of(typed, where, (*spelled,))
    mixed = tuple(
        k
        for k, what in spelled.items()
        if {m for m, _ in what.plain} != {m for m, _, _ in what.nested}
        and what.plain
        and what.nested
    )
    whats = tuple(spelled.values())
    return _Head(key, _getter(typed, "choices", key), spelled, values, mixed, whats)


def _spells_anew(state: _ChoiceTexts, head: _Head, inner: dict[str, Any]) -> bool:
    """Whether a head's keys now seen may spell one meaning twice. A key whose whole
    value and parts spell different meanings (`content`: text, or Mistral's thinking
    parts) counts for its parts' once it holds some."""
    seen = state.seen
    fresh = not seen.issuperset(inner)
    for key in head.mixed:
        value = inner.get(key)
        if value and value.__class__ is not str and (key,) not in seen:
            seen.add((key,))
            fresh = True
            for meaning, _, _ in head.spelled[key].nested:
                state.spelled.setdefault(meaning, set()).add(key)
    if not fresh:
        return False
    for key in inner:
        if key in seen:
            continue
        seen.add(key)
        what = head.spelled.get(key)
        if what is not None:
            meanings = {m for m, _ in what.plain}
            if key not in head.mixed:
                meanings |= {m for m, _, _ in what.nested}
            for meaning in meanings:
                state.spelled.setdefault(meaning, set()).add(key)
    return any(len(keys) > 1 for keys in state.spelled.values())


class _Reader:
    """The texts of a stream, read chunk by chunk (as parts, for `iter_parts`), by the
    `_Readings` of its module: only the keys spelled there are looked at.

    It keeps each choice's texts when `keeps` (for a summary); without that and without
    inline reasoning to find, a choice needs no state at all."""

    __slots__ = (
        "_choices",
        "_servers",
        "_stateless",
        "_think_tags",
        "last_report",
        "readings",
        "report_choices",
        "watches",
    )

    def __init__(
        self,
        readings: _Readings,
        think_tags: _ThinkTags,
        keeps: bool = True,
        watches: bool = False,
    ) -> None:
        """`keeps`: the texts are kept, for a summary; `watches`: chunks are given to
        `watch` (an accumulator's, without think tags)."""
        self.readings = readings
        self._think_tags: _ThinkTags = think_tags
        self._choices: dict[int, _ChoiceTexts] = {}
        self._stateless = not keeps and think_tags is None
        self.watches = watches
        self.last_report: tuple[str, ...] = ()
        """The keys under which the last chunk that held a usage report held it: the
        last report wins, wherever it is."""
        self.report_choices: frozenset[int] = frozenset()
        """... and, when they include `choices`, the indexes of the choices."""
        self._servers: list[tuple[Any, _ServerPlaces]] = []
        """The values of the choice being read that hold the tools the backend ran,
        each with its spellings, as `_texts_of` finds them (see `_server_tools`)."""

    def _report(self, reported: tuple[str, ...], data: Any) -> None:
        self.last_report = reported
        if "choices" in reported:  # once a stream, or so
            r = self.readings
            choices: Any = r.json_of(data).get("choices") or []
            found = _reporting(choices, r.choice_report_keys)
            self.report_choices = frozenset(_index_of(c) for c in found)

    def read(self, data: Any, chunk: Any = None, out: list[Part] | None = None) -> None:
        """Read one chunk (JSON data, or the target's object, as the readings say); add
        its parts to `out`, when given, each with `chunk`."""
        # JSON data is read by `dict.get` itself, a third of the cost of a getter.
        r = self.readings
        mapped = r.mapped
        choices: Any = data.get("choices") if mapped else r.choices(data)
        if choices:
            for choice in choices:
                if not mapped or choice.__class__ is dict:
                    self._choice(choice, chunk, out)
        reported = _reported(r, data)
        if reported:
            self._report(reported, data)
            if out is not None:
                # Once a stream, or so: the whole chunk is read as JSON data.
                usage = _usage(r.json_of(data), r.by_meaning, r.choice_report_keys)
                out.append(Part("usage", None, "", chunk, usage=usage))

    def read_choice(self, choice: Any, out: list[Part]) -> None:
        """Read one entry of a chunk's choices (JSON data); add its parts to `out`."""
        self._choice(choice, None, out)

    def _choice(self, choice: Any, chunk: Any, out: list[Part] | None) -> None:
        r = self.readings
        mapped = r.mapped
        index: Any = choice.get("index") if mapped else r.index(choice)
        if index.__class__ is not int:
            index = 0  # Azure's filter chunks may send none
        state = None
        if not self._stateless:
            state = self._choices.get(index)
            if state is None:
                state = self._choices[index] = _ChoiceTexts(self._think_tags)
            state.from_field = False
        for head in r.heads:
            inner: Any = choice.get(head.key) if mapped else head.get(choice)
            if not inner or (mapped and inner.__class__ is not dict):
                continue
            pieces, calls = self._texts_of(head, inner)
            if state is None:
                assert out is not None, "a reader without state gives parts"
                for meaning, piece in pieces:
                    out.append(Part(meaning, index, piece, chunk))
            else:
                for meaning, piece in pieces:
                    if meaning == "text" and state.splitter is not None:
                        self._add(state, index, state.splitter.split(piece), chunk, out)
                        continue
                    if meaning == "reasoning":
                        state.from_field = True
                    state.texts[meaning].append(piece)
                    if out is not None:
                        out.append(Part(meaning, index, piece, chunk))
            if calls is not None and out is not None:
                self._tool_calls(calls, index, chunk, out)
        if r.calls_elsewhere is not None and out is not None:
            found = _found(r.json_of(choice), r.calls_elsewhere)
            self._tool_calls([item for item, _, _ in found], index, chunk, out)
        if r.servers_elsewhere:
            self._servers.append(
                (choice, tuple((s.path, s) for s in r.servers_elsewhere))
            )
        if self._servers:  # the tools the backend ran: few chunks
            if out is not None:
                self._server_tools(index, chunk, out)
            self._servers.clear()
        if r.finish is not None:
            finish: Any = choice.get(r.finish_key) if mapped else r.finish(choice)
            if finish.__class__ is str and finish:  # "" is no finish (B1)
                if state is not None and state.splitter is not None:
                    self._add(state, index, state.splitter.flush(), chunk, out)
                if out is not None:
                    out.append(Part("finish", index, finish, chunk))

    def _texts_of(self, head: _Head, inner: Any) -> tuple[list[tuple[str, str]], Any]:
        """(meaning, text) of the texts under a choice's head in this chunk, reasoning
        first: of each meaning, the spellings of the highest precedence that have text,
        joined; and its tool calls (None: none)."""
        spelled = head.spelled
        found_values: list[tuple[_Spelled, Any]]
        if head.values is None:
            found_values = [
                (spelled[key], value)
                for key, value in inner.items()
                if value and key in spelled
            ]
        else:  # those with a value, at C speed (most chunks: one)
            values = head.values(inner)
            found_values = list(
                zip(compress(head.whats, values), compress(values, values), strict=True)
            )
        if len(found_values) == 1:
            what, value = found_values[0]
            if value.__class__ is str and len(what.plain) == 1:
                return [(what.plain[0][0], value)], None  # a text in one key
        hits: list[tuple[str, int, list[str]]] = []
        calls: Any = None
        for what, value in found_values:
            if value.__class__ is str:
                for meaning, precedence in what.plain:
                    hits.append((meaning, precedence, [value]))
            elif what.nested:
                self._nested(what.nested, value, hits)
            elif what.calls:
                calls = value
            elif what.servers:
                self._servers.append((value, what.servers))
        if not hits:
            found: list[tuple[str, str]] = []
        elif len(hits) == 1:
            meaning, _, texts = hits[0]
            found = [(meaning, texts[0] if len(texts) == 1 else "".join(texts))]
        else:
            best: dict[str, tuple[int, list[str]]] = {}
            for meaning, precedence, texts in hits:
                known = best.get(meaning)
                if known is None or known[0] < precedence:
                    best[meaning] = (precedence, list(texts))
                elif known[0] == precedence:
                    known[1].extend(texts)
            found = [(m, "".join(best[m][1])) for m in _READ_ORDER if m in best]
        return found, calls

    def _nested(
        self,
        spelled: tuple[_Entry, ...],
        value: Any,
        hits: list[tuple[str, int, list[str]]],
    ) -> None:
        """The texts inside a key's value (a list of parts), by each of its spellings
        that has any."""
        data: Any = self.readings.json_of(value)
        found: dict[tuple[str, int], list[tuple[tuple[int, ...], str]]] = {}
        for meaning, precedence, rest in spelled:
            if data.__class__ is not (dict if rest[0].__class__ is str else list):
                continue  # the other shape of the field
            for v, _, place in _found(data, rest):
                if v.__class__ is str and v:
                    found.setdefault((meaning, precedence), []).append((place, v))
        for (meaning, precedence), texts in found.items():
            texts.sort(key=_place)  # two spellings of one list: in the list's order
            hits.append((meaning, precedence, [v for _, v in texts]))

    def _add(
        self,
        state: _ChoiceTexts,
        index: int,
        pieces: list[tuple[str, str]],
        chunk: Any,
        out: list[Part] | None,
        from_tags: bool = True,
    ) -> None:
        for meaning, text in pieces:
            if from_tags and meaning == "reasoning" and state.from_field:
                continue  # the same reasoning as the field's, again between tags
            if meaning.startswith("tool_call:"):  # a call in Harmony markup
                if out is not None and isinstance(state.splitter, _Harmony):
                    number = int(meaning.partition(":")[2])
                    name = state.splitter.calls[number][0]
                    which = ToolCallPart(number, None, name)
                    out.append(Part("tool_call", index, text, chunk, tool_call=which))
                continue
            state.texts[meaning].append(text)
            if out is not None:
                out.append(Part(meaning, index, text, chunk))

    def _tool_calls(self, calls: Any, index: int, chunk: Any, out: list[Part]) -> None:
        """Parts of the tool calls of a choice, from their list."""
        spelling = self.readings.call_spelling
        assert spelling is not None, "read only where tool calls are spelled"
        items: Any = self.readings.json_of(calls)
        for item in items if items.__class__ is list else ():
            if item.__class__ is dict:
                call = _tool_call(_parts(item, spelling))
                at: Any = item.get("index")
                which = ToolCallPart(
                    at if at.__class__ is int else None, call.id, call.name
                )
                out.append(
                    Part("tool_call", index, call.arguments, chunk, tool_call=which)
                )

    def _server_tools(self, index: int, chunk: Any, out: list[Part]) -> None:
        """Parts of the tools the backend ran, one per entry of the choice as it came
        (its arguments, or its output), from the values `_texts_of` noted: of the
        spellings that have entries, those of the highest precedence."""
        by_precedence: dict[int, list[Part]] = {}
        json_of = self.readings.json_of
        for value, places in self._servers:
            data: Any = json_of(value)
            for rest, spelling in places:
                for item, listed, _ in _found(data, rest):
                    if item.__class__ is dict:
                        source = item if listed is None else listed
                        tool = _server_tool(_parts(item, spelling), source)
                        part = Part("server_tool", index, "", chunk, server_tool=tool)
                        by_precedence.setdefault(spelling.precedence, []).append(part)
        if by_precedence:
            out.extend(by_precedence[max(by_precedence)])

    def texts(self, index: int) -> dict[str, str] | None:
        """The texts of a choice so far (a tag cut off at the end is not in them); None
        when a watching reader left them to the completion."""
        state = self._choices.get(index)
        if state is None:
            return None if self.watches else dict.fromkeys(_TEXTS, "")
        if not state.read:
            return None
        return {m: _paired("".join(pieces)) for m, pieces in state.texts.items()}

    def watch(self, data: Any, so_far: Callable[[int], dict[str, str]]) -> None:
        """Read a chunk's JSON data for an accumulator, whose completion holds the
        texts: while each meaning of a choice has come in one key (the most streams),
        its texts are the completion's, and the chunk is only looked at for a key it
        has not seen. Once a second key may spell a meaning (a rename, two spellings of
        one text), the choice is read chunk by chunk, from its texts `so_far` (the
        completion's before this chunk, one spelling's each)."""
        r = self.readings
        reported = _reported(r, data)
        if reported:
            self._report(reported, data)
        choices: Any = data.get("choices") or ()
        for at, choice in enumerate(choices):
            if choice.__class__ is not dict:
                continue
            index: Any = choice.get("index")
            if index.__class__ is not int:
                index = 0
            state = self._choices.get(index)
            if state is None:
                state = self._choices[index] = _ChoiceTexts(None)
                state.read = False
            elif state.read:
                self._choice(choice, None, None)
                continue
            for head in r.heads:
                inner: Any = choice.get(head.key)
                if inner.__class__ is dict and _spells_anew(state, head, inner):
                    texts = so_far(index)
                    state.texts = {m: [texts[m]] if texts[m] else [] for m in _TEXTS}
                    state.read = True
                    # The completion does not hold this chunk yet: its entries of
                    # this choice so far are read too (a repeated index).
                    for entry in choices[: at + 1]:
                        if entry.__class__ is dict and _index_of(entry) == index:
                            self._choice(entry, None, None)
                    break

    def calls(self, index: int) -> tuple[ToolCallSummary, ...]:
        """The tool calls a choice made in Harmony markup."""
        state = self._choices.get(index)
        if state is None or not isinstance(state.splitter, _Harmony):
            return ()
        return tuple(
            ToolCallSummary(None, name, "".join(pieces))
            for name, pieces in state.splitter.calls
        )

    def end(self, chunk: Any = None, out: list[Part] | None = None) -> None:
        """The stream has ended: what was held back is text after all."""
        for index, state in self._choices.items():
            if state.splitter is not None:
                self._add(state, index, state.splitter.flush(), chunk, out)


def _parts_of(
    chunks: Iterable[Any], readings: _Readings, think_tags: _ThinkTags
) -> Iterator[Part]:
    """The parts of a stream of chunks: a "start" part first, from the first chunk;
    what the reader held back, at the end; and an "error" part last when `chunks` is a
    stream cut off before its end (a `StreamError` it raises is raised)."""
    reader = _Reader(readings, think_tags)
    chunk: Any = None
    started = False
    for chunk in chunks:
        out: list[Part] = []
        if not started:
            started = True
            out.append(_start(chunk, readings.mapped))
        reader.read(chunk, chunk, out)
        yield from out
    out = []
    reader.end(chunk, out)
    if getattr(chunks, "done", True) is False:
        out.append(_cut_off(chunk))
    yield from out


async def _aparts_of(
    chunks: AsyncIterable[Any], readings: _Readings, think_tags: _ThinkTags
) -> AsyncIterator[Part]:
    """`_parts_of` for chunks that arrive asynchronously."""
    reader = _Reader(readings, think_tags)
    chunk: Any = None
    started = False
    async for chunk in chunks:
        out: list[Part] = []
        if not started:
            started = True
            out.append(_start(chunk, readings.mapped))
        reader.read(chunk, chunk, out)
        for part in out:
            yield part
    out = []
    reader.end(chunk, out)
    if getattr(chunks, "done", True) is False:
        out.append(_cut_off(chunk))
    for part in out:
        yield part


def _start(chunk: Any, mapped: bool) -> Part:
    """The "start" part of a stream of chunks, from its first chunk (JSON data when
    `mapped`, else a target's object, read by attribute): its id, model and created
    time; an empty id or model (Azure's first chunk) is none."""
    keys = ("id", "model", "created")
    values: list[Any]
    if not mapped:
        values = [getattr(chunk, key, None) for key in keys]
    elif chunk.__class__ is dict:
        values = [chunk.get(key) for key in keys]
    else:
        values = [None, None, None]
    ident, model, created = values
    if created.__class__ is float and created.is_integer():
        created = int(created)
    identity = Identity(
        ident if ident.__class__ is str and ident else None,
        model if model.__class__ is str and model else None,
        created if created.__class__ is int else None,
    )
    return Part("start", None, "", chunk, identity=identity)


def _cut_off(chunk: Any) -> Part:
    """The "error" part of a stream that ended before its end (`[DONE]`)."""
    error = dict(_INCOMPLETE_STREAM)
    return Part("error", None, str(error["message"]), chunk, error=error)


def _summary_of_parts(parts: Iterable[Part]) -> Summary:
    """The summary any protocol's parts add up to: each choice's texts joined, its tool
    calls by their index (or, without one, their id), the arguments joined, its last
    finish reason, its signatures and opaque reasoning in order, the tools the server
    ran by their index; the last usage report; every cited source once."""
    choices: dict[int, _PartsOfChoice] = {}
    usage: UsageSummary | None = None
    cited: dict[str, Citation] = {}
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


_PART_ITEMS: Final = {"signature": "signature", "redacted_reasoning": "encrypted"}
"""The parts that are opaque reasoning, and the kind of `ReasoningItem` each makes."""


def _cite(cited: dict[str, Citation], citation: Citation | None) -> None:
    """Add a source to those cited: once per URL, the first title found kept."""
    if citation is None or not citation.url:
        return
    known = cited.get(citation.url)
    if known is None or (known.title is None and citation.title is not None):
        cited[citation.url] = citation


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
        if name is None or not name:
            name = which.name
        elif which.name and which.name != name:
            name += which.name  # a name split across chunks; a repeat is no piece
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
            server_tools=tuple(self.servers.values()),
        )


def _paired(text: str) -> str:
    """The text with UTF-16 surrogate halves that arrived in separate chunks (as JSON
    escapes) joined into one character; a lone half is kept as it is."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode(
        "utf-16-le", "surrogatepass"
    )


def _cut_tag(text: str, tag: str) -> int:
    """The length of the longest start of `tag` that `text` ends with."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0
