"""The fenced blocks of a Markdown doc, and running one: shared by tests/docs/test_examples.py
and tests/docs/test_streams.py.

A fence is a line of three or more backticks, indented or not, with an info string (its
first word is the block's kind: `python`, `text`, `console`, ...); it ends at a line of at
least as many backticks and nothing else. The block's lines lose the fence's indentation.
The HTML comments on the lines right before a fence, one per line (`<!-- excerpt: PATH
-->`), are its markers.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import re
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository root."""

_OPEN = re.compile(r"^(?P<indent> *)(?P<ticks>`{3,})(?P<info>[^`]*)$")
_MARKER = re.compile(r"^ *<!--(?P<marker>.*?)-->\s*$")


@dataclass(frozen=True)
class Fence:
    """One fenced block of a doc."""

    kind: str
    """The first word of the info string ("" when there is none)."""
    body: str
    """The block's text, without the fence's indentation; every line ends with a newline."""
    line: int
    """The line of the opening fence, counted from 1; the block's text starts on the next."""
    end: int
    """The line of the closing fence."""
    markers: tuple[str, ...]
    """The HTML comments on the lines right before the opening fence, stripped, in order."""


def fences(text: str, where: str = "the doc") -> list[Fence]:
    """The fenced blocks of `text`, in order; an unclosed fence is an error."""
    lines = text.splitlines(keepends=True)
    found: list[Fence] = []
    at = 0
    while at < len(lines):
        opening = _OPEN.match(lines[at].rstrip("\n"))
        if not opening:
            at += 1
            continue
        indent, ticks = len(opening["indent"]), opening["ticks"]
        markers: list[str] = []
        before = at - 1
        while before >= 0 and (marker := _MARKER.match(lines[before])):
            markers.insert(0, marker["marker"].strip())
            before -= 1
        body: list[str] = []
        end = at + 1
        while end < len(lines) and not _closes(lines[end], ticks):
            line = lines[end]
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[strip:] if line.endswith("\n") else line[strip:] + "\n")
            end += 1
        if end == len(lines):
            raise ValueError(f"{where}:{at + 1}: the fence opened here is never closed")
        kind = opening["info"].split()[0] if opening["info"].strip() else ""
        found.append(Fence(kind, "".join(body), at + 1, end + 1, tuple(markers)))
        at = end + 1
    return found


def _closes(line: str, ticks: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(ticks) and set(stripped) == {"`"}


def output_after(fence: Fence, all_fences: list[Fence], text: str) -> Fence | None:
    """The ```text block right after `fence`, with nothing but blank lines between."""
    following = [f for f in all_fences if f.line > fence.end]
    if not following or following[0].kind != "text":
        return None
    between = text.splitlines()[fence.end : following[0].line - 1]
    return following[0] if not "".join(between).strip() else None


def run_code(code: str, line: int, filename: str, name: str = "__docs__") -> str:
    """What `code` prints, run in a fresh namespace; an exception it raises is printed as
    its traceback, with the doc's line numbers (`line`: the line of the code's first line).
    """
    compiled = compile("\n" * (line - 1) + code, filename, "exec")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compiled, {"__name__": name})
        except Exception as exc:  # printed from the block's own frame on
            block_frames = exc.__traceback__.tb_next if exc.__traceback__ else None
            traceback.print_exception(type(exc), exc, block_frames, file=out)
    return out.getvalue()


def difference(where: str, shown: str, printed: str) -> str | None:
    """None if `printed` is what the doc shows, else a message with the unified diff."""
    if printed == shown:
        return None
    diff = difflib.unified_diff(
        shown.splitlines(keepends=True),
        printed.splitlines(keepends=True),
        f"{where} (shown in the doc)",
        f"{where} (printed when run)",
    )
    return f"the block printed other than the doc shows:\n{''.join(diff)}"
