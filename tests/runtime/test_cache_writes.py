"""Cache writes (Anthropic's `cache_creation_input_tokens`, billed above plain input)
are a count of their own, `UsageSummary.cache_write_tokens`, carried by every bridge
where the target has a place for them (issue 41, defect 4: every bridge folded them
into plain input tokens, silently): Messages' `cache_creation_input_tokens`, Responses'
`input_tokens_details.cache_write_tokens`, chat's
`prompt_tokens_details.cache_write_tokens` (OpenRouter's)."""

from __future__ import annotations

import json
import warnings
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.support import TARGETS, runtime

USAGE = {"input_tokens": 10, "cache_creation_input_tokens": 200,
         "cache_read_input_tokens": 30, "output_tokens": 5}  # fmt: skip
MESSAGES: list[dict[str, Any]] = [
    {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
     "model": "claude", "content": [], "usage": USAGE}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": USAGE},
    {"type": "message_stop"},
]  # fmt: skip
BODY = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in MESSAGES).encode()


def usage_through(module: ModuleType, protocols: list[str]) -> Any:
    """The usage of the Messages stream, bridged through each protocol in turn."""
    body, source = BODY, "messages"
    for protocol in protocols:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nothing of the usage may be said lost
            parts = module.iter_parts([body], protocol=source)
            body = b"".join(module.write_parts(parts, protocol=protocol))
        source = protocol
    return runtime(module, "_summary_of_parts")(module.iter_parts([body], protocol=source)).usage


@pytest.mark.parametrize("module", TARGETS.values(), ids=list(TARGETS))
@pytest.mark.parametrize(
    "protocols", [[], ["chat"], ["responses"], ["messages"], ["chat", "responses", "messages"]]
)
def test_cache_writes_are_carried_by_every_bridge(module: ModuleType, protocols: list[str]) -> None:
    usage = usage_through(module, protocols)
    assert usage.cache_write_tokens == 200
    assert usage.cached_prompt_tokens == 30
    assert usage.prompt_tokens == 240, "within the prompt, as the cache reads are"
