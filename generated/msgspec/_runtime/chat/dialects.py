"""Writing a stream in a dialect, the same in every target: each meaning moves to where
the dialect writes it (reasoning to its key, or into the text between tags; usage to
OpenAI's places), and every other key stays as it came."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, cast

from ..inline_reasoning import _cut_tag, _ThinkTags
from ..json_text import _json_text
from ..parts import _TEXTS, Part, UsageSummary
from ..spellings import _texts_in
from .reader import _Reader
from .readings import (
    _Entry,
    _Head,
    _index_of,
    _inside,
    _Readings,
    _reported,
    _reporting,
    _usage,
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
        "_blocks",
        "_called",
        "_dialect",
        "_free",
        "_harmony",
        "_head",
        "_key",
        "_last",
        "_moved",
        "_moving",
        "_objects",
        "_plain",
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
        self._blocks = _ThinkBlocks()
        self._harmony = think_tags == "harmony"
        self._called: dict[tuple[int, int], int] = {}
        """(choice, number) of each call in Harmony markup written so far, and the
        index it was written with."""
        self._free: dict[int, int] = {}
        """Of each choice, the first tool-call index its own `tool_calls` left free:
        the calls in markup are numbered from there."""
        self._last: dict[str, Any] = {}
        """The keys of the last chunk but its choices and usage, for the chunk that
        carries what the reader held back at the end."""
        spelled = [h.spelled for h in readings.heads if h.key == head]
        self._plain = {
            key: _plain_shapes(what.nested)
            for key, what in (spelled[0] if spelled else {}).items()
            if key in self._moved and what.nested
        }
        """Of each key of the delta whose value may be a list of parts: the parts its
        text is written as when the list is made text (the others keep the list)."""
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
        if self._moving is None or self._blocks.busy:
            return None
        tags = self._dialect.tags
        if tags is not None and tags[0][:1] in text:
            return None  # the text may hold the open tag: written broken (`_broken`)
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
        if _reported(r, data):
            return None
        for choice in data.get("choices") or ():
            if choice.__class__ is not dict:
                continue
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
        out = dict(data)
        choices: Any = data.get("choices")
        if choices.__class__ is list:
            # Entry by entry: two entries of one index each keep their own texts.
            out["choices"] = [self._choice(choice) for choice in choices]
        readings = self._reader.readings
        if _reported(readings, data):
            report = _usage(data, readings.by_meaning, readings.choice_report_keys)
            out["usage"] = _openai_usage(_report_keys(readings, data), report)
            if "choices" in out:
                out["choices"] = [_without_usage(choice) for choice in out["choices"]]
        self._last = {k: v for k, v in data.items() if k not in ("choices", "usage")}
        return out

    def end(self) -> dict[str, Any] | None:
        """The JSON data of one more chunk, with what the reader held back at the end
        of the stream (a tag cut off: text after all), or None when it held nothing."""
        parts: list[Part] = []
        self._reader.end(None, parts)
        indexes = dict.fromkeys(p.choice for p in parts if p.choice is not None)
        if not indexes:
            return None
        choices = [
            {
                "index": i,
                self._head: self._delta({}, i, [p for p in parts if p.choice == i]),
            }
            for i in indexes
        ]
        return {**self._last, "choices": choices}

    def _choice(self, choice: Any) -> Any:
        if choice.__class__ is not dict:
            return choice
        parts: list[Part] = []
        self._reader.read_choice(choice, parts)
        delta: Any = choice.get(self._head)
        if delta.__class__ is not dict:
            return choice
        return {**choice, self._head: self._delta(delta, _index_of(choice), parts)}

    def _delta(self, delta: dict[str, Any], index: int, parts: list[Part]) -> Any:
        """The delta of a choice in the dialect, from its `parts`."""
        texts = {m: "".join(p.text for p in parts if p.kind == m) for m in _TEXTS}
        ends = any(p.kind in ("tool_call", "finish") for p in parts)
        # A key of a text that holds none (null, "") stays as it came, and so does a
        # list of parts that holds more than its texts (Mistral's references).
        moved, kept = self._moved, ""
        written: dict[str, Any] = {}
        for key, value in delta.items():
            if key not in moved or not value:
                written[key] = value
            elif value.__class__ is list and not self._flattens(key, value):
                written[key] = value
                kept = key
        if kept:
            # The list carries its own texts: they are not written again, and a
            # think block must close before its text.
            listed = _listed_texts(delta[kept], self._reader.readings, self._head, kept)
            for meaning, text in listed.items():
                if texts[meaning] == text:
                    texts[meaning] = ""
            ends = ends or (kept == self._key and "text" in listed)
        text = self._write(written, index, texts, ends)
        if text and kept == self._key:  # before the list's parts, as a text part
            tag, key = self._plain[kept].text_part
            written[kept] = [{**tag, key: text}, *delta[kept]]
        elif text:
            written[self._key] = text
        if self._harmony:
            self._markup_calls(written, delta, index, parts)
        return written

    def _flattens(self, key: str, value: list[Any]) -> bool:
        """Whether a list of parts is its texts and nothing more."""
        shapes = self._plain.get(key)
        return shapes is not None and all(_is_plain(part, shapes) for part in value)

    def _markup_calls(
        self,
        written: dict[str, Any],
        delta: dict[str, Any],
        index: int,
        parts: list[Part],
    ) -> None:
        """The calls in Harmony markup written as `tool_calls` entries after any the
        delta has (a gateway may send `"tool_calls": null` or `[]` on every delta)."""
        own: Any = delta.get("tool_calls")
        own = (
            [item for item in own if item.__class__ is dict]
            if own.__class__ is list
            else []
        )
        for item in own:
            at: Any = item.get("index")
            if at.__class__ is int:
                self._free[index] = max(self._free.get(index, 0), at + 1)
        # The reader gives a choice's parts in this order: the texts (with the calls in
        # markup), then one part per entry of its own `tool_calls`.
        calls = [p for p in parts if p.kind == "tool_call"]
        markup = calls[: len(calls) - len(own)] if own else calls
        if markup:
            written["tool_calls"] = [*own, *(self._call(index, p) for p in markup)]

    def _call(self, index: int, part: Part) -> dict[str, Any]:
        """A piece of a call in Harmony markup as a `tool_calls` entry; its first piece
        says the function's name."""
        assert part.tool_call is not None and part.tool_call.index is not None
        number = part.tool_call.index
        at = self._called.get((index, number))
        if at is not None:
            return {"index": at, "function": {"arguments": part.text}}
        at = self._called[(index, number)] = self._free.get(index, 0) + number
        function = {"name": part.tool_call.name, "arguments": part.text}
        return {"index": at, "type": "function", "function": function}

    def _write(
        self,
        written: dict[str, Any],
        index: int,
        texts: dict[str, str],
        ends: bool,
    ) -> str:
        """Write reasoning and refusal where the dialect does; the text of the text's
        own key is returned (with reasoning between tags in a think-tags dialect)."""
        reasoning, text = texts["reasoning"], texts["text"]
        tags = self._dialect.tags
        if tags is None:
            if reasoning:
                written[self._dialect.reasoning] = reasoning
        else:
            text = self._blocks.tagged(index, reasoning, text, ends, tags)
        if texts["refusal"]:
            written["refusal"] = texts["refusal"]
        return text


class _ThinkBlocks:
    """Where each choice is in a think-tags dialect: inside a think block or not, and
    the end of its text written so far, to break a tag the next piece would complete."""

    __slots__ = ("_inside", "_tails")

    def __init__(self) -> None:
        self._inside: set[int] = set()
        self._tails: dict[int, str] = {}

    @property
    def busy(self) -> bool:
        """Whether a block is open, or a text may end in the start of a tag."""
        return bool(self._inside or self._tails)

    def tagged(
        self,
        index: int,
        reasoning: str,
        text: str,
        ends: bool,
        tags: tuple[str, str],
    ) -> str:
        """The text key's value in a think-tags dialect: reasoning in a block opened
        once and closed where the answer, a call or the finish comes. A tag the texts
        themselves would complete is broken (`_broken`), so that reading them back
        between tags gives the same meanings."""
        open_tag, close_tag = tags
        pieces: list[str] = []
        tail = self._tails.pop(index, "")
        if reasoning:
            if index not in self._inside:
                self._inside.add(index)
                pieces.append(open_tag)
                tail = open_tag
            reasoning = _broken(tail, reasoning, close_tag)
            pieces.append(reasoning)
            tail = (tail + reasoning)[-len(close_tag) :]
        if index in self._inside and (text or ends):
            self._inside.discard(index)
            pieces.append(close_tag)
            tail = close_tag
        if text:
            text = _broken(tail, text, open_tag)
            pieces.append(text)
            tail = (tail + text)[-len(open_tag) :]
        cut = close_tag if index in self._inside else open_tag
        if _cut_tag(tail, cut):
            self._tails[index] = tail
        return "".join(pieces)


def _openai_usage(current: dict[str, Any], report: UsageSummary) -> dict[str, Any]:
    """A usage report where OpenAI writes it, the keys it already had kept."""
    usage = current
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = getattr(report, key)
        if value is not None:
            usage[key] = value
    for detail, key, value in (
        ("prompt_tokens_details", "cached_tokens", report.cached_prompt_tokens),
        ("prompt_tokens_details", "cache_write_tokens", report.cache_write_tokens),
        ("completion_tokens_details", "reasoning_tokens", report.reasoning_tokens),
    ):
        if value is not None:
            inner: Any = usage.get(detail)
            usage[detail] = {**(inner if inner.__class__ is dict else {}), key: value}
    return usage


def _report_keys(readings: _Readings, data: Mapping[str, Any]) -> dict[str, Any]:
    """Every key of the usage objects of a chunk's JSON data, the top-level one's
    first: a report moved to the top keeps its cost and every other key."""
    keys: dict[str, Any] = {}
    objects = [_inside(data.get(key), rest) for key, rest in readings.report_places]
    in_choices = readings.choice_report_keys
    for choice in _reporting(data.get("choices") or [], in_choices):
        objects += [choice.get(key) for key in in_choices]
    for found in objects:
        if found.__class__ is dict:
            for key, value in found.items():
                keys.setdefault(key, value)
    return keys


class _Shapes(NamedTuple):
    """The parts a list's texts are read from: their tags (`{"type": "text"}`) and the
    keys their texts are under (`text`, `thinking`); and the tag and key of a text
    part, for text written into the list."""

    tags: tuple[dict[str, Any], ...]
    keys: frozenset[str]
    text_part: tuple[dict[str, Any], str]


def _plain_shapes(nested: tuple[_Entry, ...]) -> _Shapes:
    tags: list[dict[str, Any]] = []
    keys: set[str] = set()
    text_part: tuple[dict[str, Any], str] = ({"type": "text"}, "text")
    for meaning, _, rest in nested:
        for step in rest:
            if isinstance(step, tuple):
                if {step[0]: step[1]} not in tags:
                    tags.append({step[0]: step[1]})
            elif step is not None:
                keys.add(step)
        first, last = rest[0], rest[-1]
        if meaning == "text" and len(rest) == 2 and isinstance(first, tuple):
            text_part = ({first[0]: first[1]}, cast(str, last))
    return _Shapes(tuple(tags), frozenset(keys), text_part)


def _is_plain(part: Any, shapes: _Shapes) -> bool:
    """Whether a part holds its tag and its texts only, so that writing it as text
    loses nothing: texts are strings, or lists of such parts (Mistral's thinking part
    holds text parts)."""
    if part.__class__ is not dict or not shapes.tags:
        return False
    [tag] = shapes.tags[0]  # the key of the tags: "type"
    if {tag: part.get(tag)} not in shapes.tags:
        return False
    for key, value in part.items():
        if key == tag:
            continue
        if key not in shapes.keys:
            return False
        if value.__class__ is list:
            if not all(_is_plain(v, shapes) for v in value):
                return False
        elif value.__class__ is not str:
            return False
    return True


def _listed_texts(
    value: list[Any], readings: _Readings, head: str, key: str
) -> dict[str, str]:
    """The texts of a list of parts, as the reader reads them (no tags)."""
    texts: dict[str, str] = {}
    inner = {head: {key: value}}
    for meaning, tiers in readings.by_meaning.items():
        if meaning in _TEXTS:
            found = _texts_in(inner, {meaning: tiers})[meaning]
            if found:
                texts[meaning] = found
    return texts


def _broken(tail: str, text: str, tag: str) -> str:
    """`text`, written after `tail`, with every `tag` they would make together broken
    by a zero-width space after its first character that `text` holds: a reader of
    tags must not read a tag that the text holds for what it says."""
    whole = tail + text
    at = whole.find(tag) if tag else -1
    if at < 0:
        return text
    out: list[str] = []
    done = len(tail)
    while at >= 0:
        cut = max(at + 1, len(tail))
        out += (whole[done:cut], "\u200b")
        done = cut
        at = whole.find(tag, at + 1)
    out.append(whole[done:])
    return "".join(out)


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
