"""Captured streams, read for `inspect` and `new-vendor --from`: server-sent events as
`curl -N` saves them, or JSON Lines (one chunk per line, as tests/fixtures/chat/streams/).

The events are read by the runtime's own stream reader (runtime/sse.py), the one every
generated module uses, so a capture is read as a module would read it.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..runtime.chat.events import _ChatEvents
from ..runtime.errors import ErrorReport, StreamDecodeError
from ..runtime.sse import ChunkStream, StreamError

SSE_FIELDS = ("data:", "event:", "id:", "retry:", ":")


class CaptureError(ValueError):
    """A capture that cannot be read, and why."""


@dataclass
class Capture:
    name: str
    kind: str
    """"sse" or "jsonl"."""
    chunks: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    """(number, payload): the n-th event (SSE) or line (JSON Lines), counted from 1."""
    done: bool | None = None
    """Whether `data: [DONE]` ended it (None for JSON Lines, which have no such event)."""
    errors: list[str] = field(default_factory=list)
    """The data of every error the server sent instead of a chunk."""
    other_events: list[str] = field(default_factory=list)
    """The type of every other event (`event: ping`)."""


def read_capture(name: str, data: bytes) -> Capture:
    """Read one capture; raises CaptureError saying why it cannot be read."""
    nul = data.find(b"\0")
    if nul >= 0:
        raise CaptureError(f"{name}: binary data (a NUL byte at offset {nul})")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CaptureError(f"{name}: not UTF-8 text (byte {exc.start})") from None
    first = next((line.strip() for line in text.splitlines() if line.strip()), None)
    if first is None:
        raise CaptureError(f"{name}: empty")
    if first.startswith("{"):
        return _json_lines(name, text)
    if first.startswith(SSE_FIELDS):
        return _events(name, data)
    raise CaptureError(
        f"{name}: neither server-sent events nor JSON Lines: its first line starts"
        f" {first[:40]!r}"
    )


def _json_lines(name: str, text: str) -> Capture:
    capture = Capture(name, "jsonl")
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            capture.chunks.append((number, _payload(line.encode())))
        except ErrorReport:
            capture.errors.append(line.strip())
        except StreamDecodeError as exc:
            raise CaptureError(f"{name}:{number}: {exc.message}") from None
    return capture


def _payload(data: bytes) -> dict[str, Any]:
    """A chunk's JSON object, as `loads` of a module gives one; the same errors."""
    try:
        payload = json.loads(data)
    except ValueError as exc:
        raise StreamDecodeError(f"not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise StreamDecodeError(f"a JSON {type(payload).__name__}, not an object")
    if "error" in payload and "choices" not in payload:
        raise ErrorReport("the payload reports an error instead of a chunk")
    return payload


def _events(name: str, data: bytes) -> Capture:
    capture = Capture(name, "sse")
    stream = ChunkStream([data], _ChatEvents(_payload), len(data) + 1)
    number = 0
    for event in stream.raw_events():
        if event.event is None and event.chunk is None:
            continue  # comments and blank lines
        number += 1
        if isinstance(event.error, StreamError):
            capture.errors.append(event.error.payload)
        elif event.error is not None:
            raise CaptureError(f"{name}: event {number}: {event.error.message}")
        elif event.chunk is not None:
            capture.chunks.append((number, event.chunk))
    capture.done = stream.done
    if "message" in stream.other_event_counts:  # data that is neither JSON nor [DONE]
        text = next((e.data for e in stream.other_events if e.event == "message"), "")
        raise CaptureError(f"{name}: an event's data is not JSON: {text[:40]!r}")
    # In order, as far as the stream keeps them (the first of a flood); then the rest,
    # which it counts.
    capture.other_events = [other.event for other in stream.other_events]
    unkept = Counter(stream.other_event_counts)
    unkept.subtract(capture.other_events)
    capture.other_events += unkept.elements()
    if not capture.chunks and not capture.errors:
        raise CaptureError(f"{name}: no chunk in it")
    return capture
