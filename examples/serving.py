"""A minimal OpenAI-compatible streaming endpoint: it streams a model's tokens as
`chat.completion.chunk` events written by `TokenFrames`, a frame per token at the cost
of writing the token as JSON (docs/serving.md).

    uvicorn examples.serving:app

Clients post to `/v1/chat/completions` as they would to OpenAI, with `stream: true`.
The model here is a stand-in that says the last message back, word by word; a real
server puts its decoding loop in `tokens()`.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from generated.msgspec.chat import (
    SSE_DONE,
    ChatCompletionChunk,
    Choice,
    ChoiceDelta,
    CompletionUsage,
    TokenFrames,
)


def tokens(prompt: str) -> Iterator[str]:
    """The model: the prompt back, a word (and the space before it) at a time."""
    words = prompt.split(" ")
    yield words[0]
    for word in words[1:]:
        yield " " + word


async def events(model: str, prompt: str) -> AsyncIterator[bytes]:
    probe = ChatCompletionChunk(  # what every chunk of the stream repeats
        id=f"chatcmpl-{uuid.uuid4().hex}",
        object="chat.completion.chunk",
        created=int(time.time()),
        model=model,
        choices=[Choice(index=0, delta=ChoiceDelta(content=""), finish_reason=None)],
    )
    frames = TokenFrames(probe)
    yield frames.first()
    count = 0
    for token in tokens(prompt):
        yield frames.frame(token)  # the hot path: one string written as JSON
        count += 1
    asked = len(prompt.split())
    usage = CompletionUsage(
        prompt_tokens=asked, completion_tokens=count, total_tokens=asked + count
    )
    yield frames.finish("stop", usage=usage)
    yield SSE_DONE


async def chat_completions(request: Request) -> Response:
    body = json.loads(await request.body())
    if not body.get("stream"):
        return JSONResponse({"error": {"message": "this example only streams"}}, 400)
    prompt = str(body["messages"][-1]["content"])
    return StreamingResponse(events(body["model"], prompt), media_type="text/event-stream")


app = Starlette(routes=[Route("/v1/chat/completions", chat_completions, methods=["POST"])])
