"""Writing a stream in a dialect, the same in every target: each meaning moves to where
the dialect writes it (reasoning to its key, or into the text between tags; usage to
OpenAI's places), and every other key stays as it came."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, cast

from .json_text import _json_text
from .meanings import (
    _TEXTS,
    Part,
    UsageSummary,
    _Head,
    _index_of,
    _Reader,
    _Readings,
    _reported,
    _ThinkTags,
    _values_getter,
)


class _Dialect(NamedTuple):
    """Where a dialect writes reasoning: a key of the delta, between `tags` when the key
    is the text's own."""

    name: str
    reasoning: str
    tags: tuple[str, str] | None = None


def _dialect_named(name: object, dialects: tuple[_Dialect, ...]) -> _Dialect:
    for dialect in dialects:
        if dialect.name == name:
            return dialect
    known = ", ".join(repr(d.name) for d in dialects)
    raise ValueError(f"unknown dialect {name!r} (known: {known})")


class _Respeller:
    """Re-spells the chunks of one stream, as JSON data: a think block opened in one
    chunk is closed in the chunk where the answer, a tool call or the finish comes."""

    __slots__ = (
        "_called",
        "_dialect",
        "_harmony",
        "_head",
        "_inside",
        "_key",
        "_moved",
        "_moving",
        "_objects",
        "_reader",
        "_renames",
    )

    def __init__(
        self,
        dialect: _Dialect,
        readings: _Readings,
        think_tags: _ThinkTags,
        objects: _Readings | None = None,
    ) -> None:
        """`readings` read a chunk's JSON data, `objects` the module's chunk objects
        (the same, for a module whose chunks are JSON data)."""
        self._dialect = dialect
        self._objects = objects or readings
        self._reader = _Reader(readings, think_tags, keeps=False)  # parts, not texts
        spellings = [
            s for tier in readings.by_meaning.values() for t in tier for s in t
        ]
        text = next(s.path for s in spellings if s.meaning == "text")
        head, key = text[0], text[-1]
        assert isinstance(head, str) and isinstance(key, str), "the generator checks it"
        self._head, self._key = head, key
        """The key of a choice that holds the texts (`delta`), and the text's own."""
        self._moved = frozenset(
            cast(str, s.path[1])
            for s in spellings
            if s.meaning in _TEXTS and len(s.path) == 2 and s.path[0] == head
        )
        """The keys of the delta whose whole value is a text: they are written anew."""
        self._inside: set[int] = set()
        self._harmony = think_tags == "harmony"
        self._called: set[tuple[int, int]] = set()
        """(choice, number) of the calls in Harmony markup written so far."""
        self._renames = {
            cast(str, s.path[1]): (_mark(s.path[1]), _mark(dialect.reasoning))
            for s in spellings
            if s.meaning == "reasoning"
            and dialect.tags is None
            and s.path[:1] == (head,)
            and len(s.path) == 2
            and s.path[1] != dialect.reasoning
        }
        """Each key whose text only changes its name in the dialect, with its mark in
        JSON text (its quoted name, a colon and the quote that opens a string) and the
        mark it takes."""
        self._moving: list[_Moving] | None = None
        """What may move in a chunk, head by head; None when every chunk is re-spelled
        (inline reasoning is read)."""
        if think_tags is None:
            self._moving = [
                _moving(self._objects, h, dialect, head, key)
                for h in self._objects.heads
            ]

    def written(self, chunk: Any, text: str) -> str | None:
        """The JSON text of a chunk in the dialect, without reading it whole: `text`
        (the module's `dumps`) as it is when nothing in it moves, or with one key
        renamed when all that moves is a text to the dialect's key (`reasoning` to
        `reasoning_content`). None when it must be re-spelled (`respell`)."""
        if self._moving is None or self._inside:
            return None
        found = (
            self._moved_in_data(chunk)
            if self._objects.mapped
            else self._moved_in_objects(chunk)
        )
        if found is None:
            return None
        if not found:
            return text
        if len(found) > 1:
            return None
        key, value = found[0]
        renamed = self._renames.get(key)
        if renamed is None or value.__class__ is not str:
            return None
        mark, new = renamed
        # Said once, the key's mark is the head's key: a JSON string escapes quotes.
        at = text.find(mark)
        if text.find(mark, at + 1) >= 0 or new[:-1] in text:
            return None  # the dialect's key is there too (null): more than a rename
        return text[:at] + new + text[at + len(mark) :]

    def _moved_in_data(self, data: Any) -> list[tuple[str, Any]] | None:
        """(key, value) of what moves in a chunk's JSON data; None when more than a
        head's texts does (a usage report, Mistral's parts)."""
        r = self._objects
        found: list[tuple[str, Any]] = []
        for key in r.report_keys:
            if data.get(key) is not None:
                return None
        for choice in data.get("choices") or ():
            if choice.__class__ is not dict:
                continue
            for key in r.choice_report_keys:
                if choice.get(key) is not None:
                    return None
            for moving in cast(list[_Moving], self._moving):
                inner = choice.get(moving.key)
                if inner.__class__ is not dict:
                    continue
                for key in moving.shaped:
                    value = inner.get(key)
                    if value and value.__class__ is not str:
                        return None  # parts, written as text
                if moving.names.isdisjoint(inner):
                    continue  # most chunks: nothing to move
                for key in moving.keys[: len(moving.keys) - len(moving.shaped)]:
                    value = inner.get(key)
                    if value:
                        found.append((key, value))
        return found

    def _moved_in_objects(self, chunk: Any) -> list[tuple[str, Any]] | None:
        """`_moved_in_data` for the module's chunk objects."""
        r = self._objects
        found: list[tuple[str, Any]] = []
        if _reported(r, chunk):
            return None
        for choice in r.choices(chunk) or ():
            for moving in cast(list[_Moving], self._moving):
                inner: Any = moving.head(choice)
                if inner:
                    values = moving.values(inner)
                    if any(values) and not _taken(moving, values, found):
                        return None
        return found

    def respell(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """A chunk's JSON data in the dialect; `data` is left as it is."""
        parts: list[Part] = []
        self._reader.read(data, None, parts)
        out = dict(data)
        choices: Any = data.get("choices")
        if choices.__class__ is list:
            out["choices"] = [self._choice(choice, parts) for choice in choices]
        report = next((p.usage for p in parts if p.kind == "usage"), None)
        if report is not None:
            out["usage"] = _openai_usage(data.get("usage"), report)
            if "choices" in out:
                out["choices"] = [_without_usage(choice) for choice in out["choices"]]
        return out

    def _choice(self, choice: Any, parts: list[Part]) -> Any:
        if choice.__class__ is not dict:
            return choice
        index = _index_of(choice)
        delta: Any = choice.get(self._head)
        if delta.__class__ is not dict:
            return choice
        mine = [p for p in parts if p.choice == index]
        texts = {m: "".join(p.text for p in mine if p.kind == m) for m in _TEXTS}
        ends = any(p.kind in ("tool_call", "finish") for p in mine)
        # A key of a text that holds none (null, "") stays as it came.
        moved = self._moved
        written: dict[str, Any] = {
            k: v for k, v in delta.items() if k not in moved or not v
        }
        self._write(written, delta, index, texts, ends)
        if self._harmony and "tool_calls" not in delta:
            calls = [self._call(index, p) for p in mine if p.kind == "tool_call"]
            if calls:
                written["tool_calls"] = calls
        return {**choice, self._head: written}

    def _call(self, index: int, part: Part) -> dict[str, Any]:
        """A piece of a call in Harmony markup as a `tool_calls` entry; its first piece
        says the function's name."""
        assert part.tool_call is not None and part.tool_call.index is not None
        number = part.tool_call.index
        if (index, number) in self._called:
            return {"index": number, "function": {"arguments": part.text}}
        self._called.add((index, number))
        function = {"name": part.tool_call.name, "arguments": part.text}
        return {"index": number, "type": "function", "function": function}

    def _write(
        self,
        written: dict[str, Any],
        delta: dict[str, Any],
        index: int,
        texts: dict[str, str],
        ends: bool,
    ) -> None:
        text_key = self._key
        reasoning, text = texts["reasoning"], texts["text"]
        tags = self._dialect.tags
        if tags is None:
            if reasoning:
                written[self._dialect.reasoning] = reasoning
        else:
            open_tag, close_tag = tags
            if reasoning and index not in self._inside:
                reasoning = open_tag + reasoning
                self._inside.add(index)
            if index in self._inside and (text or ends):
                text = close_tag + text
                self._inside.discard(index)
            text = reasoning + text
        if text:
            written[text_key] = text
        if texts["refusal"]:
            written["refusal"] = texts["refusal"]


def _openai_usage(current: Any, report: UsageSummary) -> dict[str, Any]:
    """A usage report where OpenAI writes it, the keys it already had kept."""
    usage: dict[str, Any] = dict(current) if current.__class__ is dict else {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = getattr(report, key)
        if value is not None:
            usage[key] = value
    for detail, key, value in (
        ("prompt_tokens_details", "cached_tokens", report.cached_prompt_tokens),
        ("completion_tokens_details", "reasoning_tokens", report.reasoning_tokens),
    ):
        if value is not None:
            inner: Any = usage.get(detail)
            usage[detail] = {**(inner if inner.__class__ is dict else {}), key: value}
    return usage


def _without_usage(choice: Any) -> Any:
    """A choice without the usage report it carried (Moonshot): it is written once, at
    the top."""
    if choice.__class__ is dict and "usage" in choice:
        return {k: v for k, v in choice.items() if k != "usage"}
    return choice


class _Moving(NamedTuple):
    """What a dialect may move under one head of a choice (the delta)."""

    key: str
    head: Callable[[Any], Any]
    keys: tuple[str, ...]
    """Keys whose value moves whenever there is one: a text's spelling other than
    the dialect's own place, or a list that holds texts (`reasoning_details`); then
    the keys in their place that move when they are not a string (Mistral's parts in
    `content`)."""
    shaped: tuple[str, ...]
    """The keys of the second kind, the last of `keys`."""
    names: frozenset[str]
    """The keys of the first kind, to look up."""
    values: Callable[[Any], tuple[Any, ...]]
    """The values of `keys`, at once."""


def _taken(
    moving: _Moving, values: tuple[Any, ...], found: list[tuple[str, Any]]
) -> bool:
    """Add to `found` the values that move under a head; False when one is parts
    (written as text: more than a rename)."""
    for at, value in enumerate(values):
        if value:
            if at < len(moving.keys) - len(moving.shaped):
                found.append((moving.keys[at], value))
            elif value.__class__ is not str:
                return False
    return True


def _moving(
    readings: _Readings, head: _Head, dialect: _Dialect, text_head: str, text_key: str
) -> _Moving:
    own = {"text": text_key, "refusal": "refusal"}
    if dialect.tags is None:
        own["reasoning"] = dialect.reasoning
    keys: list[str] = []
    shaped: list[str] = []
    for key, what in head.spelled.items():
        in_place = head.key == text_head and all(
            own.get(m) == key for m, _ in what.plain
        )
        if what.plain and in_place:
            if what.nested:
                shaped.append(key)
        elif what.plain or what.nested:
            keys.append(key)
    every = (*keys, *shaped)
    values = _values_getter(readings, head.key, every)
    return _Moving(head.key, head.get, every, (*shaped,), frozenset(keys), values)


def _mark(key: object) -> str:
    """A key's quoted name, a colon, and the quote that opens its string value."""
    assert isinstance(key, str), "the generator checks it"
    return f'{_json_text(key)}:"'
