"""What the real agents send: Claude Code and Codex run against a recording server on
127.0.0.1 that stores every request and answers a minimal valid stream in the agent's own
protocol (Claude Code: POST /v1/messages, Anthropic SSE; Codex: POST /v1/responses,
Responses SSE), one scripted turn per request: a call of the tool the scenario names while
no tool result is in the request, then a text answer.

    .venv/bin/python -m tests.helpers.agent_capture OUT_DIR [SCENARIO ...]
    .venv/bin/python -m tests.helpers.agent_capture trim OUT_DIR tests/fixtures/agents

writes OUT_DIR/SCENARIO.jsonl (every request: method, path, headers, body) and
OUT_DIR/SCENARIO.events.jsonl (what the agent printed); `trim` cuts the fixtures in
tests/fixtures/agents/ from them (long strings shortened, the cut said).
"""

from __future__ import annotations

import base64
import json
import os
import re
import struct
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.helpers import agent_clis
from tests.helpers.loopback import serve

JSON = dict[str, Any]


def sse(event: str, data: JSON) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


# -- Anthropic Messages -------------------------------------------------------------------


def messages_stream(model: str, blocks: list[JSON], stop_reason: str) -> Iterator[bytes]:
    """A minimal Messages stream: each block is {"type": "text", "text": ...} or
    {"type": "tool_use", "id", "name", "input"}."""
    yield sse(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_capture",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
    )
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start: JSON = {"type": "text", "text": ""}
            delta: JSON = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        yield sse(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )
        yield sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield sse("message_stop", {"type": "message_stop"})


def messages_has_tool_result(body: JSON) -> bool:
    last = body["messages"][-1]
    content = last.get("content")
    return (
        last["role"] == "user"
        and isinstance(content, list)
        and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


# -- OpenAI Responses ---------------------------------------------------------------------


def responses_stream(model: str, items: list[JSON]) -> Iterator[bytes]:
    """A minimal Responses stream: each item is {"type": "message", "text": ...} or
    {"type": "function_call", "call_id", "name", "arguments", ["namespace"]}."""
    base: JSON = {
        "id": "resp_capture",
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "in_progress",
        "output": [],
    }
    yield sse("response.created", {"type": "response.created", "response": base})
    output: list[JSON] = []
    for index, spec in enumerate(items):
        if spec["type"] == "message":
            item: JSON = {
                "type": "message",
                "id": f"msg_{index}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": spec["text"], "annotations": []}],
            }
            yield sse(
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "content": []},
                },
            )
            yield sse(
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": spec["text"],
                },
            )
        else:
            item = {"id": f"fc_{index}", "status": "completed", **spec}
            yield sse(
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": index, "item": item},
            )
        yield sse(
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": index, "item": item},
        )
        output.append(item)
    done = {
        **base,
        "status": "completed",
        "output": output,
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        },
    }
    yield sse("response.completed", {"type": "response.completed", "response": done})


def responses_has_tool_result(body: JSON) -> bool:
    items = body.get("input")
    if not isinstance(items, list) or not items:
        return False
    return any(
        isinstance(i, dict) and str(i.get("type", "")).endswith("_output") for i in items[-3:]
    )


# -- The recording server ------------------------------------------------------------------


@dataclass
class Recorder:
    """Stores every request; answers POSTs with `answer(body)` (a byte stream)."""

    answer: Callable[[JSON], Iterator[bytes]]
    requests: list[JSON] = field(default_factory=list)

    def app(self) -> Starlette:
        async def handle(request: Request) -> Response:
            raw = await request.body()
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode(errors="replace")
            self.requests.append(
                {
                    "method": request.method,
                    "path": request.url.path,
                    "headers": {
                        k: v
                        for k, v in request.headers.items()
                        if k.lower() not in {"authorization", "x-api-key"}
                    },
                    "body": body,
                }
            )
            if request.method != "POST" or not isinstance(body, dict):
                if request.url.path.endswith("/models"):
                    return JSONResponse({"object": "list", "data": []})
                return JSONResponse({"error": {"message": "not here"}}, status_code=404)
            return StreamingResponse(self.answer(body), media_type="text/event-stream")

        return Starlette(
            routes=[Route("/{path:path}", handle, methods=["GET", "POST", "HEAD", "DELETE"])]
        )


def claude_answer(call: JSON | None) -> Callable[[JSON], Iterator[bytes]]:
    def answer(body: JSON) -> Iterator[bytes]:
        model = str(body.get("model", "m"))
        if call is None or not body.get("tools") or messages_has_tool_result(body):
            return messages_stream(model, [{"type": "text", "text": "Done: captured."}], "end_turn")
        return messages_stream(model, [{"type": "tool_use", **call}], "tool_use")

    return answer


def codex_answer(call: JSON | None) -> Callable[[JSON], Iterator[bytes]]:
    def answer(body: JSON) -> Iterator[bytes]:
        model = str(body.get("model", "m"))
        if call is None or responses_has_tool_result(body):
            return responses_stream(model, [{"type": "message", "text": "Done: captured."}])
        return responses_stream(model, [{"type": "function_call", **call}])

    return answer


def tiny_png() -> bytes:
    """A valid 2x2 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


TINY_PDF = base64.b64decode(
    "JVBERi0xLjQKMSAwIG9iago8PC9UeXBlL0NhdGFsb2cvUGFnZXMgMiAwIFI+PgplbmRvYmoKMiAwIG9iago8"
    "PC9UeXBlL1BhZ2VzL0tpZHNbMyAwIFJdL0NvdW50IDE+PgplbmRvYmoKMyAwIG9iago8PC9UeXBlL1BhZ2Uv"
    "UGFyZW50IDIgMCBSL01lZGlhQm94WzAgMCAyMDAgMjAwXT4+CmVuZG9iagp0cmFpbGVyCjw8L1Jvb3QgMSAw"
    "IFI+PgolJUVPRgo="
)


def scenarios(work: Path) -> Mapping[str, tuple[str, JSON | None, str]]:
    """name -> (agent, the call the first turn makes, prompt)."""
    png = work / "red.png"
    pdf = work / "doc.pdf"
    return {
        "claude_text": ("claude", None, "Say hello."),
        "claude_bash": (
            "claude",
            {
                "id": "toolu_capture_1",
                "name": "Bash",
                "input": {"command": "echo captured-marker", "description": "Print a marker"},
            },
            "Run echo captured-marker.",
        ),
        "claude_toolsearch": (
            "claude",
            {
                "id": "toolu_capture_2",
                "name": "ToolSearch",
                "input": {"query": "select:WebFetch", "max_results": 5},
            },
            "Fetch https://example.com for me.",
        ),
        "claude_read_image": (
            "claude",
            {"id": "toolu_capture_3", "name": "Read", "input": {"file_path": str(png)}},
            f"Look at {png}.",
        ),
        "claude_read_pdf": (
            "claude",
            {"id": "toolu_capture_4", "name": "Read", "input": {"file_path": str(pdf)}},
            f"Read {pdf}.",
        ),
        "codex_text": ("codex", None, "Say hello."),
        "codex_exec": (
            "codex",
            {
                "call_id": "call_capture_1",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "echo captured-marker"}),
            },
            "Run echo captured-marker.",
        ),
        "codex_view_image": (
            "codex",
            {
                "call_id": "call_capture_2",
                "name": "view_image",
                "arguments": json.dumps({"path": str(png)}),
            },
            f"Look at {png}.",
        ),
        # A call of a tool inside Codex's `multi_agent_v1` namespace tool: Codex runs it
        # only when the item names the namespace in its own key (a bare, dotted or
        # `__`-joined name gets "unsupported call: NAME" as the output).
        "codex_namespace_call": (
            "codex",
            {
                "call_id": "call_capture_3",
                "name": "close_agent",
                "namespace": "multi_agent_v1",
                "arguments": json.dumps({"target": "nonexistent-agent"}),
            },
            "Close the agent.",
        ),
    }


def run(out: Path, names: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="agent-capture-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        (work / "red.png").write_bytes(tiny_png())
        (work / "doc.pdf").write_bytes(TINY_PDF)
        table = scenarios(work)
        for name in names or list(table):
            agent, call, prompt = table[name]
            recorder = Recorder(claude_answer(call) if agent == "claude" else codex_answer(call))
            with serve(recorder.app()) as base_url:
                if agent == "claude":
                    result = agent_clis.run_claude(
                        base_url, prompt, model="capture-model", cwd=work, timeout=60
                    )
                else:
                    result = agent_clis.run_codex(
                        f"{base_url}/v1", prompt, model="capture-model", cwd=work, timeout=60
                    )
            (out / f"{name}.jsonl").write_text(
                "".join(json.dumps(r) + "\n" for r in recorder.requests)
            )
            (out / f"{name}.events.jsonl").write_text(
                "".join(json.dumps(e) + "\n" for e in result.events)
            )
            print(
                f"{name}: exit {result.returncode}, {len(recorder.requests)} requests, "
                f"{len(result.events)} events, {result.seconds:.1f} s",
                file=sys.stderr,
            )
            if result.stderr.strip():
                print("  stderr: " + result.stderr.strip()[-800:], file=sys.stderr)


def trim(value: Any, limit: int = 400) -> Any:
    """Long strings (prompts, tool descriptions) cut to `limit` characters, with the cut
    said; base64 data kept whole (the images and documents are tiny)."""
    if isinstance(value, str):
        if (
            len(value) <= limit
            or value.startswith("data:")
            or re.fullmatch(r"[A-Za-z0-9+/=]+", value)
        ):
            return value
        return value[:limit] + f"…[trimmed: {len(value)} characters in all]"
    if isinstance(value, list):
        return [trim(v, limit) for v in value]
    if isinstance(value, dict):
        return {k: trim(v, limit) for k, v in value.items()}
    return value


# fixture name -> (capture record, index of the request)
FIXTURES = {
    "claude_code_first_request": ("claude_bash", 0),
    "claude_code_tool_result_request": ("claude_bash", 1),
    "claude_code_tool_search_result_request": ("claude_toolsearch", 1),
    "claude_code_read_image_request": ("claude_read_image", 1),
    "claude_code_read_pdf_request": ("claude_read_pdf", 1),
    "codex_first_request": ("codex_exec", 0),
    "codex_tool_result_request": ("codex_exec", 1),
    "codex_view_image_request": ("codex_view_image", 1),
    "codex_namespace_call_request": ("codex_namespace_call", 1),
}


def write_fixtures(records: Path, fixtures: Path) -> None:
    fixtures.mkdir(parents=True, exist_ok=True)
    for name, (record, index) in FIXTURES.items():
        requests = [json.loads(line) for line in (records / f"{record}.jsonl").open()]
        request = requests[index]
        kept = {"method": request["method"], "path": request["path"]}
        headers = {
            k: v
            for k, v in request["headers"].items()
            if k in {"user-agent", "anthropic-beta", "anthropic-version", "originator", "x-app"}
        }
        fixture = {**kept, "headers": headers, "body": trim(request["body"])}
        (fixtures / f"{name}.json").write_text(
            json.dumps(fixture, indent=1, ensure_ascii=False) + "\n"
        )


if __name__ == "__main__":
    if sys.argv[1] == "trim":
        write_fixtures(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        run(Path(sys.argv[1]), sys.argv[2:])
    os._exit(0)
