"""The chat module reads other protocols' events (`iter_events(..., protocol=...)`), and
its `dumps` writes every event it read as it came: another protocol's event is written
by that protocol's module, which knows its keys (issue 41, defect 11: msgspec's chat
encoder left out the keys a Messages event kept, `usage.service_tier` among them)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers.support import TARGETS, payloads

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CAPTURES = [
    (protocol, path)
    for protocol in ("messages", "responses")
    for path in sorted((FIXTURES / protocol).glob("*.sse"))
]


def events_read(module: ModuleType, protocol: str, body: bytes) -> list[object]:
    """The events up to the end, or to an error the stream reports."""
    events: list[object] = []
    with contextlib.suppress(module.StreamError):
        events.extend(module.iter_events([body], protocol=protocol))
    return events


@pytest.mark.parametrize("target", list(TARGETS))
def test_the_chat_module_writes_every_event_it_read_as_it_came(target: str) -> None:
    module = TARGETS[target]
    written = 0
    for protocol, path in CAPTURES:
        body = path.read_bytes()
        data = [json.loads(p) for p in payloads(body) if p.lstrip().startswith("{")]
        for event, expected in zip(events_read(module, protocol, body), data, strict=False):
            assert json.loads(module.dumps(event)) == expected, f"{path.name}: {expected}"
            written += 1
    assert written > 1000, "the captures hold well over a thousand events"
