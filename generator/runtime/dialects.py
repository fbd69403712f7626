"""Writing a stream in a dialect, the same in every target: each meaning moves to where
the dialect writes it (reasoning to its key, or into the text between tags; usage to
OpenAI's places), and every other key stays as it came."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .meanings import (
    _TEXTS,
    Part,
    UsageSummary,
    _index_of,
    _Reader,
    _Spelling,
    _ThinkTags,
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
        "_reader",
    )

    def __init__(
        self,
        dialect: _Dialect,
        spellings: tuple[_Spelling, ...],
        think_tags: _ThinkTags,
    ) -> None:
        self._dialect = dialect
        self._reader = _Reader(spellings, think_tags)
        text = next(s.path for s in spellings if s.meaning == "text")
        head, key = text[0], text[-1]
        assert isinstance(head, str) and isinstance(key, str), "the generator checks it"
        self._head, self._key = head, key
        """The key of a choice that holds the texts (`delta`), and the text's own."""
        self._moved = frozenset(
            s.path[1]
            for s in spellings
            if s.meaning in _TEXTS and len(s.path) == 2 and s.path[0] == head
        )
        """The keys of the delta whose whole value is a text: they are written anew."""
        self._inside: set[int] = set()
        self._harmony = think_tags == "harmony"
        self._called: set[tuple[int, int]] = set()
        """(choice, number) of the calls in Harmony markup written so far."""

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
        written = {k: v for k, v in delta.items() if k not in self._moved}
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
        elif text_key in delta and delta[text_key] in ("", None):
            written[text_key] = delta[text_key]  # as it came
        if texts["refusal"]:
            written["refusal"] = texts["refusal"]
        elif "refusal" in delta and delta["refusal"] in ("", None):
            written["refusal"] = delta["refusal"]


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
