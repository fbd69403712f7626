"""Chat's accumulator, the same in every target: the chunks of a stream merge as JSON
data by the spec's rules (`merge.py`), the result is decoded by the target's own
decoder, and `summary()` reads the meanings from the completion (`_Summarised`), the
texts from the reader that read them chunk by chunk."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ..inline_reasoning import _checked_tags, _ThinkTags
from ..merge import _finish, _Kept, _merge, _Merged, _Plan
from ..parts import (
    _CHOICE_MEANINGS,
    _OPAQUE,
    _TEXTS,
    ChoiceSummary,
    Summary,
    _Completion,
    _StreamAccumulator,
)
from ..spellings import (
    _by_meaning,
    _citations,
    _first_value,
    _reasoning_items,
    _server_tools,
    _Spelling,
    _Step,
    _texts_in,
    _tool_calls,
)
from ..sse import _Chunk
from .reader import _Reader
from .readings import _index_of, _Readings, _report_keys_in_choices, _usage


class _Accumulator(_StreamAccumulator[_Chunk, _Completion]):
    """What every `ChatCompletionAccumulator` does (see `_StreamAccumulator`); each
    target says how a chunk reads as JSON data (`_json_of`) and how the merged data
    reads as a completion (`_completion`)."""

    __slots__ = ("_merged", "_reader", "chunks")
    _plans: ClassVar[dict[str, _Plan]]
    """The merge plan of each chunk type, by name."""
    _root: ClassVar[str]
    """The chunk type of the stream."""
    _summarised: ClassVar[_Summarised]
    """What `summary()` reads from the completion."""
    _readings: ClassVar[_Readings]
    """What is read from the JSON data of each chunk: the texts, chunk by chunk."""

    def __init__(self, *, think_tags: _ThinkTags = None) -> None:
        """`think_tags`: (open, close), to read reasoning written inline in the text
        between them, as `("<think>", "</think>")` (an empty open tag: the text starts
        inside reasoning), or "harmony", to read raw Harmony markup (gpt-oss); off by
        default, since an answer may hold the tags for what they say."""
        self._merged = _Merged(self._root, self._plans)
        tags = _checked_tags(think_tags)
        self._reader = _Reader(self._readings, tags, watches=tags is None)
        self.chunks = 0
        """How many chunks were added."""

    def add(self, chunk: _Chunk) -> None:
        """Merge the next chunk of the stream: a chunk of this module, as `loads` and
        `iter_chunks` give. Anything else is a `TypeError` saying so."""
        if chunk.__class__ not in self._takes:
            self._check(chunk)
        data = self._json_of(chunk)
        if self._reader.watches:
            self._reader.watch(data, self._texts_so_far)
        else:
            self._reader.read(data)
        _merge(self._merged, data)
        self.chunks += 1

    def snapshot(self) -> _Completion:
        """The completion the chunks added so far make (an empty one before the
        first)."""
        return self._completion(_finish(self._merged))

    def result(self) -> _Completion:
        """The whole completion; call it once the stream has ended (it calls
        `end()`)."""
        self.end()
        return self.snapshot()

    def end(self) -> None:
        """Say that the stream has ended: a tag cut off at the end of its text (read
        with `think_tags`) was text after all, and `summary()` shows it. `result()`
        calls it."""
        self._reader.end()

    def summary(self) -> Summary:
        """What the chunks added so far say, whichever backend spelled it: each
        choice's text, reasoning, refusal, finish reason, tool calls and the tools the
        server ran, the usage and cost, and the citations. Valid mid-stream, as
        `snapshot()` is."""
        kept = self._summarised.kept
        return _summary(_finish(self._merged, kept), self._summarised, self._reader)

    def _said(self) -> tuple[str, Any]:
        """What the stream added up to, as chat's JSON data (`assistant_message`)."""
        return "chat", _finish(self._merged)

    def _texts_so_far(self, index: int) -> dict[str, str]:
        """The texts of a choice in the completion so far."""
        summarised = self._summarised
        data = _finish(self._merged, summarised.kept)
        for choice in data.get("choices") or ():
            if choice.__class__ is dict and _index_of(choice) == index:
                return _texts_in(choice, summarised.by_meaning)
        return dict.fromkeys(_TEXTS, "")

    def _json_of(self, chunk: _Chunk) -> Mapping[str, Any]:
        raise NotImplementedError

    def _completion(self, data: dict[str, Any]) -> _Completion:
        raise NotImplementedError


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
