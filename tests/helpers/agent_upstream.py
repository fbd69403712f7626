"""A scripted chat-completions upstream for the agent tests: it records every request body
and answers each turn from a script, streaming as a real backend does.

    upstream = ScriptedUpstream(Script(style="deepseek", calls=[Call("Bash", {...})]))
    with serve(upstream.app()) as base_url:   # tests.helpers.loopback.serve: 127.0.0.1, a free port
        ...                                   # the gateway's upstream: f"{base_url}/v1"
    upstream.requests                         # every POST /v1/chat/completions body

A turn: while the request holds no tool result after the assistant's last tool calls, the
upstream calls the script's tools (if the agent offered them: matched by name, or by a name
ending in `__NAME`, `.NAME` or `_NAME` for a namespace flattened by the gateway), each
call's arguments split across several chunks, the call id and name only in the first;
once tool results are there (tool messages after the assistant's calls), it answers text
quoting them. A script without calls answers text at once.

Streaming styles (`Style`), as the backends send them:
- "deepseek": `reasoning_content` deltas; usage on the finish chunk, with DeepSeek's
  `prompt_cache_hit_tokens` / `prompt_cache_miss_tokens`.
- "openrouter": `reasoning` plus `reasoning_details` (`reasoning.text`) deltas; usage in a
  last chunk of its own with `choices: []` (OpenRouter sends it always).
- "think": the reasoning inline in `content` between `<think>` and `</think>` (vLLM or
  llama.cpp serving Qwen or DeepSeek-R1 without a reasoning parser); usage in a chunk of
  its own, only when `stream_options.include_usage` asks for it.
- "gemini": Gemini's OpenAI-compatible endpoint: no reasoning text, a thought signature on
  the first call in `extra_content.google.thought_signature`; usage on the finish chunk.
- "openai": neither reasoning nor signatures; usage as "think".
Each stream ends with `data: [DONE]`.

Faults (`Fault`), one per request from the first, in order: a 429 with `retry-after`, a
500, an error event mid-stream (OpenRouter's shape: `{"error": {"message", "code"}}` after
some deltas, then the body ends) and a cut connection (some deltas, then the connection
aborted without the body's last chunk).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.helpers.loopback import DroppedStream

JSON = dict[str, Any]
Style = Literal["deepseek", "openrouter", "think", "gemini", "openai"]
FaultKind = Literal["429", "500", "error_midstream", "cut"]

SIGNATURE = "CiQBScripted-Gemini-Thought-Signature-0001"
"""The thought signature the "gemini" style puts on its first call."""


@dataclass(frozen=True)
class Call:
    """A call the upstream makes of a tool the agent offered."""

    name: str
    arguments: JSON


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    retry_after: str = "1"
    """The 429's `retry-after` header (seconds)."""


@dataclass
class Script:
    style: Style = "deepseek"
    calls: Sequence[Call] = ()
    """Called on the first turn (all in one assistant turn: parallel calls when several)."""
    reasoning: str = "The user wants a marker printed. I will run the command and report it."
    """The reasoning of each turn (split into `reasoning_deltas` pieces)."""
    reasoning_deltas: int = 8
    text: str = "Hello from the scripted upstream."
    """The answer of a turn with no calls to make and no tool result to quote."""
    answer_prefix: str = "The tool printed: "
    faults: Sequence[Fault | None] = ()
    """Applied to the requests in order, one each (None: no fault)."""
    model: str = "scripted-model"


@dataclass
class Turn:
    """What the upstream did for one request."""

    kind: Literal["calls", "answer", "text", "fault", "not_offered"]
    detail: str = ""
    call_ids: list[str] = field(default_factory=list[str])
    usage: JSON = field(default_factory=dict[str, Any])
    """The usage the stream carried (wherever the style puts it)."""


class ScriptedUpstream:
    """The upstream's app and its records: `requests` (each request body, in order) and
    `turns` (what was answered)."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[JSON] = []
        self.headers: list[dict[str, str]] = []
        self.turns: list[Turn] = []
        self.times: list[float] = []
        """When each request came (time.monotonic())."""
        self._lock = threading.Lock()
        logging.getLogger("uvicorn.error").addFilter(_QUIET_DROPS)  # idempotent

    def reset(self, script: Script) -> None:
        """A new script, the records cleared (between scenarios)."""
        with self._lock:
            self.script = script
            self.requests.clear()
            self.headers.clear()
            self.turns.clear()
            self.times.clear()

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    async def _models(self, request: Request) -> Response:
        return JSONResponse(
            {"object": "list", "data": [{"id": self.script.model, "object": "model"}]}
        )

    async def _chat(self, request: Request) -> Response:
        body: JSON = json.loads(await request.body())
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
            self.headers.append(dict(request.headers))
            self.times.append(time.monotonic())
        fault = self.script.faults[index] if index < len(self.script.faults) else None
        if fault is not None and fault.kind in ("429", "500"):
            self.turns.append(Turn("fault", fault.kind))
            return _error_response(fault)
        turn, events = self._answer(body, index)
        turn.usage = next((e["usage"] for e in events if e.get("usage")), {})
        self.turns.append(turn if fault is None else Turn("fault", fault.kind))
        return StreamingResponse(
            _stream(events, fault),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache"},
        )

    # -- the script --------------------------------------------------------------------

    def _answer(self, body: JSON, index: int) -> tuple[Turn, list[JSON]]:
        s = self.script
        results = tool_results(body)
        if results is not None:
            text = s.answer_prefix + " | ".join(results)
            return Turn("answer", text), self._chunks(index, body, text=text, calls=[])
        if not s.calls:
            return Turn("text", s.text), self._chunks(index, body, text=s.text, calls=[])
        offered = offered_tools(body)
        chosen: list[tuple[str, str, JSON]] = []
        for number, call in enumerate(s.calls):
            name = match_tool(call.name, offered)
            if name is None:
                text = f"tool {call.name!r} not offered (offered: {sorted(offered)})"
                return Turn("not_offered", text), self._chunks(index, body, text=text, calls=[])
            chosen.append((f"call_{index}_{number}_scripted", name, call.arguments))
        turn = Turn("calls", ", ".join(n for _, n, _ in chosen), [i for i, _, _ in chosen])
        return turn, self._chunks(index, body, text=None, calls=chosen)

    def _chunks(
        self, index: int, body: JSON, *, text: str | None, calls: list[tuple[str, str, JSON]]
    ) -> list[JSON]:
        """The chunks of one answer (before `[DONE]`)."""
        s = self.script
        style = s.style
        chunk_id = f"chatcmpl-scripted-{index}"

        def chunk(delta: JSON, finish: str | None = None, **extra: Any) -> JSON:
            return {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": 1_700_000_000 + index,
                "model": s.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }

        out: list[JSON] = [chunk({"role": "assistant", "content": ""})]
        pieces = split(s.reasoning, s.reasoning_deltas)
        if style == "deepseek":
            out += [chunk({"reasoning_content": p}) for p in pieces]
        elif style == "openrouter":
            out += [
                chunk(
                    {
                        "content": "",
                        "reasoning": p,
                        "reasoning_details": [
                            {"type": "reasoning.text", "text": p, "format": "unknown", "index": 0}
                        ],
                    }
                )
                for p in pieces
            ]
        elif style == "think":
            out.append(chunk({"content": "<think>"}))
            out += [chunk({"content": p}) for p in pieces]
            out.append(chunk({"content": "</think>\n\n"}))
        for number, (call_id, name, arguments) in enumerate(calls):
            first: JSON = {
                "index": number,
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }
            if style == "gemini" and number == 0:
                first["extra_content"] = {"google": {"thought_signature": SIGNATURE}}
            out.append(chunk({"tool_calls": [first]}))
            for piece in split(json.dumps(arguments), 4):
                out.append(
                    chunk({"tool_calls": [{"index": number, "function": {"arguments": piece}}]})
                )
        if text is not None:
            out += [chunk({"content": p}) for p in split(text, 3)]
        finish = "tool_calls" if calls else "stop"
        completion = len(s.reasoning) // 4 + len(text or "") // 4 + 10 * len(calls) + 1
        prompt = len(json.dumps(body)) // 4
        usage: JSON = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if style == "deepseek":
            usage |= {
                "prompt_cache_hit_tokens": 0,
                "prompt_cache_miss_tokens": prompt,
                "completion_tokens_details": {"reasoning_tokens": len(s.reasoning) // 4},
            }
            out.append(chunk({"content": ""}, finish, usage=usage))
        elif style == "gemini":
            out.append(chunk({}, finish, usage=usage))
        else:
            out.append(chunk({}, finish))
            wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            if style == "openrouter" or wants_usage:
                last = chunk({})
                last["choices"] = []
                last["usage"] = usage
                out.append(last)
        return out


# -- helpers the tests use too -------------------------------------------------------------


def split(text: str, pieces: int) -> list[str]:
    """`text` in `pieces` nearly equal parts (fewer when it is shorter), in order."""
    if not text:
        return []
    pieces = max(1, min(pieces, len(text)))
    size, extra = divmod(len(text), pieces)
    out: list[str] = []
    start = 0
    for number in range(pieces):
        end = start + size + (1 if number < extra else 0)
        out.append(text[start:end])
        start = end
    return out


def offered_tools(body: JSON) -> set[str]:
    return {
        str(t["function"]["name"])
        for t in body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    }


def match_tool(name: str, offered: set[str]) -> str | None:
    """`name` if offered, else the one offered tool named `<namespace><sep>name`."""
    if name in offered:
        return name
    found = [o for o in offered if any(o.endswith(sep + name) for sep in ("__", ".", "_", "-"))]
    return found[0] if len(found) == 1 else None


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def tool_results(body: JSON) -> list[str] | None:
    """The tool results after the assistant's last tool calls (their text), or None when
    the request has none there."""
    messages: list[JSON] = body.get("messages") or []
    last_calls = max(
        (i for i, m in enumerate(messages) if m.get("role") == "assistant" and m.get("tool_calls")),
        default=None,
    )
    if last_calls is None:
        return None
    results = [
        content_text(m.get("content"))
        for m in messages[last_calls + 1 :]
        if m.get("role") == "tool"
    ]
    return results or None


def usage_totals(turns: Sequence[Turn]) -> tuple[int, int]:
    """The prompt and completion tokens the answered turns' streams carried, summed."""
    prompt = sum(int(t.usage.get("prompt_tokens", 0)) for t in turns)
    completion = sum(int(t.usage.get("completion_tokens", 0)) for t in turns)
    return prompt, completion


def assistant_call_turns(body: JSON) -> list[JSON]:
    """The assistant messages with tool calls, in order."""
    return [
        m
        for m in body.get("messages") or []
        if m.get("role") == "assistant" and m.get("tool_calls")
    ]


# -- the wire ------------------------------------------------------------------------------


def _error_response(fault: Fault) -> Response:
    if fault.kind == "429":
        return JSONResponse(
            {
                "error": {
                    "message": "Rate limit reached for requests",
                    "type": "rate_limit_error",
                    "param": None,
                    "code": "rate_limit_exceeded",
                }
            },
            status_code=429,
            headers={"retry-after": fault.retry_after},
        )
    return JSONResponse(
        {
            "error": {
                "message": "The server had an error while processing your request",
                "type": "server_error",
                "param": None,
                "code": "internal_error",
            }
        },
        status_code=500,
    )


async def _stream(events: list[JSON], fault: Fault | None) -> AsyncIterator[bytes]:
    if fault is not None:  # a mid-stream fault: part of the answer, then the fault
        keep = max(2, min(len(events) // 2, 6))
        for event in events[:keep]:
            yield b"data: " + json.dumps(event).encode() + b"\n\n"
            await asyncio.sleep(0)
        if fault.kind == "error_midstream":
            error = {"error": {"message": "Provider returned error", "code": 502}}
            yield b"data: " + json.dumps(error).encode() + b"\n\n"
            return
        raise DroppedStream("cut connection (scripted)")
    for event in events:
        yield b"data: " + json.dumps(event).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


class _QuietDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], DroppedStream))


_QUIET_DROPS = _QuietDrops()
