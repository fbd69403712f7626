"""Hand-written msgspec Structs of the core chunk: the raw msgspec anchor of the benchmark.

They know OpenAI's keys only and drop every other key, as perf-anchors.md measured
msgspec; absent keys stay absent (UNSET) so the output is comparable.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, Struct, UnsetType


class Function(Struct, omit_defaults=True):
    name: str | UnsetType | None = UNSET
    arguments: str | UnsetType | None = UNSET


class ToolCall(Struct, omit_defaults=True):
    index: int
    id: str | UnsetType | None = UNSET
    type: str | UnsetType | None = UNSET
    function: Function | UnsetType | None = UNSET


class Delta(Struct, omit_defaults=True):
    role: str | UnsetType | None = UNSET
    content: str | UnsetType | None = UNSET
    refusal: str | UnsetType | None = UNSET
    tool_calls: list[ToolCall] | UnsetType | None = UNSET


class TopLogprob(Struct):
    token: str
    bytes: list[int] | None
    logprob: float


class TokenLogprob(Struct):
    token: str
    bytes: list[int] | None
    logprob: float
    top_logprobs: list[TopLogprob]


class Logprobs(Struct, omit_defaults=True):
    content: list[TokenLogprob] | UnsetType | None = UNSET
    refusal: list[TokenLogprob] | UnsetType | None = UNSET


class Choice(Struct, omit_defaults=True):
    index: int
    delta: Delta
    finish_reason: str | UnsetType | None = UNSET
    logprobs: Logprobs | UnsetType | None = UNSET


class Usage(Struct, omit_defaults=True):
    completion_tokens: int
    prompt_tokens: int
    total_tokens: int
    completion_tokens_details: dict[str, Any] | UnsetType | None = UNSET
    prompt_tokens_details: dict[str, Any] | UnsetType | None = UNSET


class Chunk(Struct, omit_defaults=True):
    id: str
    choices: list[Choice]
    created: int
    model: str
    object: str
    service_tier: str | UnsetType | None = UNSET
    system_fingerprint: str | UnsetType | None = UNSET
    usage: Usage | UnsetType | None = UNSET


DECODER = msgspec.json.Decoder(Chunk)
ENCODER = msgspec.json.Encoder()
