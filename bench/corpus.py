"""Deterministic corpora of streamed chunks, one JSON text per chunk, for the benchmarks.

Four shapes, as perf-anchors.md measured them: plain text, parallel tool calls with
small argument fragments, logprobs with five alternatives per token, and a vendor-heavy
stream (vLLM's prompt_token_ids, reasoning deltas, Dynamo's nvext). The same seed gives
the same bytes on every machine.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

CORPORA = ("text", "tools", "logprobs", "vendor")
WORDS = [
    "the",
    "of",
    "and",
    "a",
    "to",
    "in",
    "is",
    "you",
    "that",
    "it",
    "he",
    "was",
    "for",
    "on",
    "are",
    "as",
    "with",
    "his",
    "they",
    "I",
    "at",
    "be",
]


def corpus(name: str, chunks: int, seed: int = 7) -> list[str]:
    """`chunks` JSON texts of the named corpus: a role chunk, deltas, a finish and usage."""
    rng = random.Random(f"{name}:{seed}")
    head: dict[str, Any] = {
        "id": "chatcmpl-"
        + "".join(rng.choices("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789", k=29)),
        "object": "chat.completion.chunk",
        "created": 1_764_000_000 + rng.randrange(10_000),
        "model": "gpt-4.1-mini-2025-04-14",
        "service_tier": "default",
        "system_fingerprint": "fp_" + "".join(rng.choices("0123456789abcdef", k=10)),
    }
    make = _SHAPES[name]
    out = []
    for n in range(chunks - 2):
        choice = {"index": 0, "delta": make(rng, n), "logprobs": None, "finish_reason": None}
        if name == "logprobs":
            choice["logprobs"] = {"content": [_token(rng)], "refusal": None}
        payload = {**head, "choices": [choice]}
        if name == "vendor":
            payload = _vendor_extras(rng, n, payload)
        out.append(json.dumps(payload, ensure_ascii=False, separators=(",", ":")))
    finish = {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}
    out.append(json.dumps({**head, "choices": [finish]}, separators=(",", ":")))
    usage = {
        "prompt_tokens": 812,
        "completion_tokens": chunks,
        "total_tokens": 812 + chunks,
        "prompt_tokens_details": {"cached_tokens": 512, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }
    out.append(json.dumps({**head, "choices": [], "usage": usage}, separators=(",", ":")))
    return out


def _text(rng: random.Random, n: int) -> dict[str, Any]:
    delta: dict[str, Any] = {"content": " " + rng.choice(WORDS)}
    if n == 0:
        delta = {"role": "assistant", "content": "", "refusal": None}
    return delta


def _tools(rng: random.Random, n: int) -> dict[str, Any]:
    index = n % 3
    call: dict[str, Any] = {"index": index, "function": {"arguments": rng.choice(WORDS)[:3]}}
    if n < 3:
        call = {
            "index": index,
            "id": f"call_{rng.randrange(10**12):012d}",
            "type": "function",
            "function": {"name": ("get_weather", "search", "lookup")[index], "arguments": ""},
        }
    return {"tool_calls": [call]}


def _token(rng: random.Random) -> dict[str, Any]:
    def one() -> dict[str, Any]:
        word = " " + rng.choice(WORDS)
        return {"token": word, "bytes": list(word.encode()), "logprob": -rng.random() * 8}

    return {**one(), "top_logprobs": [one() for _ in range(5)]}


def _vendor_extras(rng: random.Random, n: int, payload: dict[str, Any]) -> dict[str, Any]:
    if n == 0:
        payload["prompt_token_ids"] = [rng.randrange(150_000) for _ in range(64)]
    payload["choices"][0]["stop_reason"] = None
    payload["nvext"] = {"completion_token_ids": [rng.randrange(150_000)]}
    if n % 50 == 0:
        payload["nvext"]["timing"] = {"ttft_ms": 41.5, "total_time_ms": 900.25 + n}
    return payload


def _vendor(rng: random.Random, n: int) -> dict[str, Any]:
    word = " " + rng.choice(WORDS)
    return {"reasoning_content": word} if n % 5 < 2 else {"content": word}


_SHAPES: dict[str, Callable[[random.Random, int], dict[str, Any]]] = {
    "text": _text,
    "tools": _tools,
    "logprobs": _text,
    "vendor": _vendor,
}
