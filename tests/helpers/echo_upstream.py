"""A chat upstream that answers with what it was sent, for the tests of Responses state: a
turn sees its whole history exactly when the answer lists every earlier message.

Each answer streams, as DeepSeek's reasoner does, `reasoning_content` first
(`thought N`, N the number of assistant turns before it), then either a call of the
tool `lookup` (when the last message is a user's that starts with "use the tool") or a
text: the JSON of what the request held (`Seen`). The request bodies are kept
(`requests`, in-process) so that a test can read what the gateway replayed.

    python -m tests.helpers.echo_upstream --port 0   # prints "port N", serves until killed
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
from typing import Any, cast

import uvicorn
from starlette.types import Receive, Scope, Send

HOST = "127.0.0.1"
TOOL = "lookup"
TOOL_TRIGGER = "use the tool"


def seen(body: dict[str, Any]) -> dict[str, Any]:
    """What a chat request held, as the answer's text says it: the user texts, the
    assistant texts, the reasoning replayed on assistant turns, and the tool results."""
    messages = cast(list[dict[str, Any]], body.get("messages") or [])
    return {
        "users": [_text(m) for m in messages if m.get("role") == "user"],
        "assistants": [_text(m) for m in messages if m.get("role") == "assistant"],
        "reasoning": [m.get("reasoning_content") for m in messages if m.get("role") == "assistant"],
        "tools": [_text(m) for m in messages if m.get("role") == "tool"],
        "system": [_text(m) for m in messages if m.get("role") in ("system", "developer")],
    }


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        parts = cast(list[dict[str, Any]], content)
        return "".join(str(p.get("text", "")) for p in parts)
    return "" if content is None else str(content)


def answer(body: dict[str, Any]) -> list[bytes]:
    """The chat stream that answers `body`."""
    messages = cast(list[dict[str, Any]], body.get("messages") or [])
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    base = {"id": f"chatcmpl-echo{turns}", "object": "chat.completion.chunk", "created": 1}
    base["model"] = body.get("model", "echo")
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
        {"choices": [{"index": 0, "delta": {"reasoning_content": f"thought {turns}"}}]},
    ]
    last = messages[-1] if messages else {}
    if last.get("role") == "user" and _text(last).startswith(TOOL_TRIGGER):
        call = {
            "index": 0,
            "id": f"call_{turns}",
            "type": "function",
            "function": {"name": TOOL, "arguments": json.dumps({"q": _text(last)})},
        }
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
        finish = "tool_calls"
    else:
        text = json.dumps(seen(body))
        chunks.append({"choices": [{"index": 0, "delta": {"content": text}}]})
        finish = "stop"
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    usage = {"prompt_tokens": 10 * len(messages), "completion_tokens": 5, "total_tokens": 0}
    usage["total_tokens"] = usage["prompt_tokens"] + 5
    chunks.append({"choices": [], "usage": usage})
    events = [f"data: {json.dumps(base | chunk)}\n\n".encode() for chunk in chunks]
    return [*events, b"data: [DONE]\n\n"]


class EchoUpstream:
    """The ASGI app: POST …/chat/completions answered by `answer`; GET /health."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "GET":
            await _send(send, 200, b'{"status": "ok"}', b"application/json")
            return
        data, more = b"", True
        while more:
            message = await receive()
            data, more = data + message.get("body", b""), message.get("more_body", False)
        body = cast(dict[str, Any], json.loads(data))
        self.requests.append(body)
        await _send(send, 200, b"".join(answer(body)), b"text/event-stream")


async def _send(send: Send, status: int, body: bytes, kind: bytes) -> None:
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, args.port))
    print(f"port {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(
        EchoUpstream(), log_level="warning", access_log=False, lifespan="off", http="h11"
    )
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
