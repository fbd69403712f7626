"""Reasoning written inside the text, found across pieces whatever protocol carries
them: between think tags (`<think>`...`</think>`, `_Splitter`) or in raw Harmony markup
(gpt-oss, `_Harmony`); the `think_tags` option that chooses one."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import re
from typing import Final, Literal, TypeAlias, cast

_ThinkTags: TypeAlias = "tuple[str, str] | Literal['harmony'] | None"
"""Reasoning inline in the text: between (open, close) tags, or in Harmony markup."""


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


def _cut_tag(text: str, tag: str) -> int:
    """The length of the longest start of `tag` that `text` ends with."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0
