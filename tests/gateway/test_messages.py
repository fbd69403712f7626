"""The gateway (generator/gateway) between chat and Messages, over real HTTP: a loopback upstream replays captured
streams (chat and Messages), the gateway bridges them, and the real clients read them
from the gateway: anthropic-sdk-python the Messages it serves from chat, openai-python
the chat it serves from Messages. What each client reads must be what the upstream's
stream says (our accumulators' summary of the capture)."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx
import openai
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from generated.msgspec import chat as chunk_msgspec
from generated.msgspec import messages as messages_msgspec
from generator.gateway.config import Upstream as GatewayUpstream
from generator.gateway.routing import Target
from generator.gateway.translate import translate
from tests.helpers.gateways import LOGGER, ByPath, log_lines, one_upstream_app
from tests.helpers.loopback import StreamApp, StreamSpec, serve
from tests.helpers.messages_judges import meanings_of_sdk_message
from tests.helpers.support import FIXTURE_STREAMS, REPORT
from tests.runtime.messages.test_bridges import chat_body, chat_summary, expected_of, judged
from tests.runtime.messages.test_events import CAPTURES

WAIT = 5.0  # seconds: every wait on the servers and clients is bounded by this
LOSSES = "ignore::generated.msgspec.messages.MessagesLossWarning"
"""What Messages cannot hold of a chat stream (a server's tools, a citation without its
place) is said in a warning, which tests/runtime/messages/test_bridges.py looks at."""


def create_app(
    chat_upstream: str | None,
    messages_upstream: str | None,
    *,
    chat_dialect: str = "openai",
    client: httpx.AsyncClient | None = None,
) -> ByPath:
    """The gateway serving `/v1/messages` from a chat upstream and `/v1/chat/completions`
    from a Messages upstream (base URLs before /v1), every model id passed on."""
    apps: dict[str, Any] = {}
    if chat_upstream is not None:
        apps["/v1/messages"] = one_upstream_app(
            "chat", chat_upstream, dialect=chat_dialect, client=client
        )
    if messages_upstream is not None:
        apps["/v1/chat"] = one_upstream_app("messages", messages_upstream, client=client)
    return ByPath(apps)


def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """The chat request the gateway sends for a Messages request."""
    return translate("messages", Target(CHAT_UPSTREAM, "m"), body, "drop").body


def messages_request(body: dict[str, Any]) -> dict[str, Any]:
    """The Messages request the gateway sends for a chat request."""
    return translate("chat", Target(MESSAGES_UPSTREAM, "m"), body, "drop").body


CHAT_UPSTREAM = GatewayUpstream("chat", "chat", "http://127.0.0.1:9/v1")
MESSAGES_UPSTREAM = GatewayUpstream("messages", "messages", "http://127.0.0.1:9/v1")


def events_of(body: bytes) -> list[bytes]:
    """A body's events, each sent on its own."""
    return [event + b"\n\n" for event in body.replace(b"\r\n", b"\n").split(b"\n\n") if event]


CHATS = {stream.name: chat_body(stream) for stream in FIXTURE_STREAMS}
MESSAGES = {path.stem: path.read_bytes() for path in CAPTURES}
PLAIN = "openai__py-sdk-plain-text-usage"
PLAIN_EVENTS = events_of(CHATS[PLAIN])[:-1]  # without [DONE]


class Upstream:
    """The fake upstream of both protocols: a request naming model M gets the stream M of
    `streams` (which records the request's body in its `deliveries`), or the HTTP error
    `errors[M]`, or for a model of a conversation (`converse`) its next turn's stream;
    `headers[M]` are the headers of the last request for M."""

    def __init__(self) -> None:
        self.streams = StreamApp()
        self.errors: dict[str, tuple[int, Any]] = {}
        self.headers: dict[str, dict[str, str]] = {}
        self.turns: dict[str, list[str]] = {}

    def add(self, name: str, pieces: list[bytes], **options: Any) -> str:
        self.streams.add(name, StreamSpec(pieces, **options))
        return name

    def converse(self, model: str, answers: list[bytes]) -> list[str]:
        """Answer the requests for `model` with `answers` in turn, each event sent on its
        own; returns the names of their streams."""
        names = [self.add(f"{model}#{turn}", events_of(body)) for turn, body in enumerate(answers)]
        self.turns[model] = list(reversed(names))
        return names

    def requests(self, name: str) -> list[Any]:
        """The JSON bodies of the requests for stream `name`, in order."""
        return [json.loads(d.request_body) for d in self.streams.deliveries if d.name == name]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        model = json.loads(body)["model"]
        self.headers[model] = {k.decode(): v.decode() for k, v in scope["headers"]}
        if self.turns.get(model):
            model = self.turns[model].pop()
        if model in self.errors:
            status, error = self.errors[model]
            await JSONResponse(error, status)(scope, receive, send)
            return
        sent = False

        async def replay() -> Message:  # the body once more, then the client's messages
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.streams({**scope, "path": f"/streams/{model}"}, replay, send)


@dataclass(frozen=True)
class Servers:
    upstream: Upstream
    gateway: str
    """The gateway's base URL."""

    def anthropic(self) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            base_url=self.gateway, api_key="key-a", max_retries=0, timeout=WAIT
        )

    def openai(self) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=f"{self.gateway}/v1", api_key="key-o", max_retries=0, timeout=WAIT
        )


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    """The fake upstream, and the gateway in front of it (both protocols' upstream)."""
    upstream = Upstream()
    with serve(upstream) as base:
        # loopback.serve runs no lifespan, so the app never closes its client: let the
        # client keep no idle connection that would outlive the servers.
        limits = httpx.Limits(max_keepalive_connections=0)
        client = httpx.AsyncClient(limits=limits, timeout=WAIT)
        with serve(create_app(base, base, client=client)) as gateway:
            yield Servers(upstream, gateway)


# --- what a client reads, and what the upstream's stream says -------------------------


def read_messages(client: anthropic.Anthropic, model: str, **request: Any) -> dict[str, Any]:
    """anthropic-sdk-python's final message of a streamed request, as JSON data."""
    given: dict[str, Any] = {"max_tokens": 256, "messages": [{"role": "user", "content": "hi"}]}
    with client.messages.stream(model=model, **(given | request)) as stream:
        for _ in stream:
            pass
        message = stream.get_final_message()
    return message.model_dump(mode="json", exclude_unset=True, warnings=False)


def read_chat(client: openai.OpenAI, model: str, **request: Any) -> Any:
    """openai-python's own accumulation of a streamed request (the state its `stream()`
    helper keeps, read as it stands: the helper refuses a `length` finish), with its
    usage (asked for: a chat client gets none unasked)."""
    given: dict[str, Any] = {
        "messages": [{"role": "user", "content": "hi"}],
        "stream_options": {"include_usage": True},
    }
    state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
    with client.chat.completions.create(model=model, stream=True, **(given | request)) as chunks:
        for chunk in chunks:
            state.handle_chunk(chunk)
    return state.current_completion_snapshot


def chat_meanings(completion: Any) -> dict[str, Any]:
    """What openai-python's completion says, in the terms of `summary_meanings`."""
    [choice] = completion.choices
    message, usage = choice.message, completion.usage
    details = usage.prompt_tokens_details if usage else None
    extra: dict[str, Any] = message.model_extra or {}
    calls: list[Any] = message.tool_calls or []
    return {
        "reasoning": extra.get("reasoning_content") or "",
        "text": (message.content or "") + (message.refusal or ""),
        "tool_calls": [(c.id, c.function.name, c.function.arguments) for c in calls],
        "finish_reason": choice.finish_reason,
        "usage": [
            usage.prompt_tokens if usage else 0,
            usage.completion_tokens if usage else 0,
            details.cached_tokens if details else None,
        ],
    }


def summary_meanings(capture: bytes) -> dict[str, Any]:
    """What a Messages capture says, by our accumulator's summary, in chat's terms."""
    accumulator = messages_msgspec.MessageAccumulator()
    for event in messages_msgspec.iter_events(capture):
        accumulator.add(event)
    summary = accumulator.summary()
    [choice] = summary.choices
    usage = summary.usage
    return {
        "reasoning": choice.reasoning,
        "text": choice.text + choice.refusal,
        "tool_calls": [(c.id, c.name, c.arguments) for c in choice.tool_calls],
        "finish_reason": choice.finish_reason,
        "usage": [
            usage.prompt_tokens or 0,
            usage.completion_tokens or 0,
            usage.cached_prompt_tokens,
        ],
    }


def complete(capture: bytes) -> bool:
    """Whether a Messages capture ends as a complete stream (no error, not cut off)."""
    events = messages_msgspec.iter_events(capture)
    try:
        for _ in events:
            pass
    except chunk_msgspec.StreamError:
        return False
    return bool(events.done)


# --- (a) Messages from chat, (b) chat from Messages -----------------------------------


@pytest.mark.filterwarnings(LOSSES)
def test_every_chat_capture_reaches_anthropic_sdk_python_with_its_meanings(
    servers: Servers,
) -> None:
    for name, body in CHATS.items():
        servers.upstream.add(name, [body])
    with servers.anthropic() as client:
        for name, body in CHATS.items():
            message = read_messages(client, name)
            want = expected_of(chat_summary(chunk_msgspec, body))
            assert judged(meanings_of_sdk_message(message)) == want, name
            [sent] = servers.upstream.requests(name)
            assert (sent["stream"], sent["stream_options"]) == (True, {"include_usage": True})
    REPORT["Messages gateway from chat"] = (
        f"{len(CHATS)}/{len(CHATS)} captured chat streams read by anthropic-sdk-python through"
        " the gateway with their meanings"
    )


def test_every_messages_capture_reaches_openai_python_with_its_meanings(servers: Servers) -> None:
    """A capture that ends in an error, or is cut off, ends in an error for the client."""
    for name, body in MESSAGES.items():
        servers.upstream.add(name, events_of(body))
    same = failed = several = 0
    with servers.openai() as client:
        for name, body in MESSAGES.items():
            if not complete(body):
                with pytest.raises(openai.APIError):
                    read_chat(client, name)
                failed += 1
                continue
            got = chat_meanings(read_chat(client, name))
            if body.count(b'"message_start"') > 1:
                # One body, several messages: the accumulator (as the SDK does) keeps the
                # first message's blocks and puts later deltas in them by index; the
                # bridge writes every message's, in order, as the parts say them.
                parts = list(messages_msgspec.iter_parts(body))
                assert got["text"] == "".join(p.text for p in parts if p.kind == "text"), name
                several += 1
                continue
            assert got == summary_meanings(body), name
            same += 1
    assert same >= 20 and failed >= 1 and several >= 1
    REPORT["chat gateway from Messages"] = (
        f"{same} captured Messages streams read by openai-python through"
        f" the gateway with their meanings, {several} of several messages"
        f" with every message's text, {failed} ending in its error"
    )


# --- tool use, both ways: the request the upstream receives ---------------------------

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
    "required": ["city"],
}


def parsed_arguments(request: dict[str, Any]) -> dict[str, Any]:
    """A chat request with its tool calls' arguments read as JSON (their spelling is the
    gateway's to choose)."""
    for message in request["messages"]:
        calls: list[dict[str, Any]] = message.get("tool_calls") or []
        for call in calls:
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    return request


@pytest.mark.filterwarnings(LOSSES)
def test_a_tool_use_round_trip_from_anthropic_sdk_reaches_the_chat_upstream_translated(
    servers: Servers,
) -> None:
    name = servers.upstream.add("tools-a", [CHATS["openai__py-sdk-parallel-tool-calls"]])
    question = {"role": "user", "content": "Weather in Edinburgh and New York?"}
    request: dict[str, Any] = {
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "tools": [
            {
                "name": "GetWeatherArgs",
                "description": "A city's weather",
                "input_schema": WEATHER_SCHEMA,
            }
        ],
        "tool_choice": {"type": "any"},
        "stop_sequences": ["###"],
        "extra_body": {"temperature": 0.2},  # this SDK's methods no longer take it
        "max_tokens": 300,
    }
    with servers.anthropic() as client:
        first = read_messages(client, name, messages=[question], **request)
        uses = [b for b in first["content"] if b["type"] == "tool_use"]
        summary = chat_summary(chunk_msgspec, CHATS["openai__py-sdk-parallel-tool-calls"])
        calls = summary.choices[0].tool_calls
        assert [(u["id"], u["name"], u["input"]) for u in uses] == [
            (c.id, c.name, json.loads(c.arguments)) for c in calls
        ]
        assert first["stop_reason"] == "tool_use"
        thinking = {"type": "thinking", "thinking": "Two cities.", "signature": "sig"}
        results: list[dict[str, Any]] = [
            {"type": "tool_result", "tool_use_id": uses[0]["id"], "content": "12 C"},
            {
                "type": "tool_result",
                "tool_use_id": uses[1]["id"],
                "content": [{"type": "text", "text": "25 C"}],
                "is_error": False,
            },
            {"type": "text", "text": "Which is warmer?"},
        ]
        turns = [
            question,
            {"role": "assistant", "content": [thinking, *first["content"]]},
            {"role": "user", "content": results},
        ]
        read_messages(client, name, messages=turns, **request)
    asked = {
        "model": name,
        "max_completion_tokens": 300,  # the "openai" dialect's limit
        "temperature": 0.2,
        "stop": ["###"],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "GetWeatherArgs",
                    "description": "A city's weather",
                    "parameters": WEATHER_SCHEMA,
                },
            }
        ],
        "tool_choice": "required",
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    system = {"role": "system", "content": "Be brief."}
    first_sent, second_sent = servers.upstream.requests(name)
    assert servers.upstream.headers[name]["authorization"] == "Bearer key-a"
    assert first_sent == asked | {"messages": [system, question]}
    calls_sent = [
        {
            "id": u["id"],
            "type": "function",
            "function": {"name": u["name"], "arguments": u["input"]},
        }
        for u in uses
    ]
    assert parsed_arguments(second_sent) == asked | {
        "messages": [
            system,
            question,
            {"role": "assistant", "content": None, "tool_calls": calls_sent},
            {"role": "tool", "tool_call_id": uses[0]["id"], "content": "12 C"},
            {"role": "tool", "tool_call_id": uses[1]["id"], "content": "25 C"},
            {"role": "user", "content": "Which is warmer?"},
        ]
    }


def test_a_tool_use_round_trip_from_openai_python_reaches_the_messages_upstream_translated(
    servers: Servers,
) -> None:
    capture = MESSAGES["anthropic__sdk-text-then-tool-use"]
    name = servers.upstream.add("tools-b", events_of(capture))
    tool = {
        "type": "function",
        "function": {"name": "get_weather", "description": "Weather", "parameters": WEATHER_SCHEMA},
    }
    request: dict[str, Any] = {
        "tools": [tool],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "parallel_tool_calls": False,
        "stop": "END",
        "temperature": 0.5,
        "max_completion_tokens": 200,
    }
    question = {"role": "user", "content": "Weather in Paris?"}
    developer = {"role": "developer", "content": "Be brief."}
    with servers.openai() as client:
        first = read_chat(client, name, messages=[developer, question], **request)
        want = summary_meanings(capture)
        assert chat_meanings(first) == want
        [(call_id, call_name, arguments)] = want["tool_calls"]
        message = first.choices[0].message
        answer = {
            "role": "assistant",
            "content": message.content,
            "tool_calls": [c.model_dump(exclude_none=True) for c in message.tool_calls],
        }
        result = {"role": "tool", "tool_call_id": call_id, "content": "18 C, sunny"}
        thanks = {"role": "user", "content": "Thanks"}
        turns = [developer, question, answer, result, thanks]
        read_chat(client, name, messages=turns, **request)
    asked = {
        "model": name,
        "max_tokens": 200,
        "system": "Be brief.",
        "temperature": 0.5,
        "stop_sequences": ["END"],
        "tools": [
            {"name": "get_weather", "description": "Weather", "input_schema": WEATHER_SCHEMA}
        ],
        "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True},
        "stream": True,
    }
    user = {"role": "user", "content": "Weather in Paris?"}
    first_sent, second_sent = servers.upstream.requests(name)
    headers = servers.upstream.headers[name]
    assert (headers["x-api-key"], headers["anthropic-version"]) == ("key-o", "2023-06-01")
    assert first_sent == asked | {"messages": [user]}
    use = {"type": "tool_use", "id": call_id, "name": call_name, "input": json.loads(arguments)}
    assert second_sent == asked | {
        "messages": [
            user,
            {"role": "assistant", "content": [{"type": "text", "text": want["text"]}, use]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call_id, "content": "18 C, sunny"},
                    {"type": "text", "text": "Thanks"},
                ],
            },
        ]
    }


# --- a conversation with reasoning and tools, to a DeepSeek upstream ------------------

REASONING_CALL = "deepseek__reasoner-reasoning-then-tool-call"
"""Turn 1, as DeepSeek answered it: reasoning, then a call of `weather`."""
REASONING_TEXT = "deepseek__reasoner-thinking-cache-hit-miss"
"""Turn 2: reasoning, then text."""
LOCATION_SCHEMA = {
    "type": "object",
    "properties": {"location": {"type": "string"}},
    "required": ["location"],
}


@pytest.fixture(scope="module")
def deepseek() -> Iterator[Servers]:
    """A fake chat upstream, and a gateway that writes its requests in DeepSeek's dialect."""
    upstream = Upstream()
    with serve(upstream) as base:
        limits = httpx.Limits(max_keepalive_connections=0)
        client = httpx.AsyncClient(limits=limits, timeout=WAIT)
        with serve(create_app(base, None, chat_dialect="deepseek", client=client)) as gateway:
            yield Servers(upstream, gateway)


def test_a_tool_calling_conversation_with_reasoning_gives_deepseek_its_reasoning_back(
    deepseek: Servers,
) -> None:
    """Claude Code's loop with anthropic-sdk-python: turn 1 streams reasoning and a call,
    the client sends the turn back as the SDK gives it (thinking block, tool_use) with
    the tool's result, and the DeepSeek upstream receives the reasoning of turn 1 as
    `reasoning_content` of the assistant message with the call (DeepSeek refuses a
    tool-calling turn without it), the call as it made it, and the result."""
    first, second = deepseek.upstream.converse(
        "deepseek-reasoner", [CHATS[REASONING_CALL], CHATS[REASONING_TEXT]]
    )
    called = chat_summary(chunk_msgspec, CHATS[REASONING_CALL]).choices[0]
    [call] = called.tool_calls
    answered = chat_summary(chunk_msgspec, CHATS[REASONING_TEXT]).choices[0]
    question: Any = {"role": "user", "content": "Weather in San Francisco?"}
    tool = {"name": "weather", "description": "A city's weather", "input_schema": LOCATION_SCHEMA}
    request: dict[str, Any] = {
        "model": "deepseek-reasoner",
        "max_tokens": 2000,
        "system": "Use the tools.",
        "tools": [tool],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    with deepseek.anthropic() as client:
        with client.messages.stream(messages=[question], **request) as stream:
            turn = stream.get_final_message()
        assert turn.stop_reason == "tool_use"
        thinking, use = turn.content
        assert thinking.type == "thinking" and thinking.thinking == called.reasoning
        assert use.type == "tool_use"
        assert (use.id, use.name, use.input) == (call.id, call.name, json.loads(call.arguments))
        result = {"type": "tool_result", "tool_use_id": use.id, "content": "18 C, fog"}
        messages: list[Any] = [
            question,
            {"role": "assistant", "content": turn.content},
            {"role": "user", "content": [result]},
        ]
        answer = client.messages.create(messages=messages, **request)
    said = {block.type: getattr(block, block.type) for block in answer.content}
    assert said == {"thinking": answered.reasoning, "text": answered.text}
    assert answer.stop_reason == "end_turn"
    [asked] = deepseek.upstream.requests(first)
    [asked_again] = deepseek.upstream.requests(second)
    common = {
        "model": "deepseek-reasoner",
        "max_tokens": 2000,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "weather",
                    "description": "A city's weather",
                    "parameters": LOCATION_SCHEMA,
                },
            }
        ],
        "thinking": {"type": "enabled"},
        "reasoning_effort": "minimal",  # the effort a budget of 1024 tokens reaches
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    system = {"role": "system", "content": "Use the tools."}
    assert asked == common | {"messages": [system, question]}
    assert parsed_arguments(asked_again) == common | {
        "messages": [
            system,
            question,
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": called.reasoning,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.loads(call.arguments)},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call.id, "content": "18 C, fog"},
        ]
    }


def test_the_basic_tool_choices_translate_both_ways() -> None:
    pairs: list[tuple[dict[str, Any], Any]] = [
        ({"type": "auto"}, "auto"),
        ({"type": "any"}, "required"),
        ({"type": "none"}, "none"),
        ({"type": "tool", "name": "f"}, {"type": "function", "function": {"name": "f"}}),
    ]
    for anthropic_choice, chat_choice in pairs:
        chat = chat_request({"messages": [], "tool_choice": anthropic_choice})
        assert chat["tool_choice"] == chat_choice
        messages = messages_request({"messages": [], "tool_choice": chat_choice})
        assert messages["tool_choice"] == anthropic_choice
    no_parallel = {"type": "auto", "disable_parallel_tool_use": True}
    chat = chat_request({"messages": [], "tool_choice": no_parallel})
    assert (chat["tool_choice"], chat["parallel_tool_calls"]) == ("auto", False)
    messages = messages_request({"messages": [], "parallel_tool_calls": False})
    assert messages["tool_choice"] == no_parallel


# --- errors ---------------------------------------------------------------------------

CHAT_ERROR = b'event: error\ndata: {"error":{"message":"overloaded","code":529}}\n\n'


def test_an_upstream_error_mid_stream_reaches_each_client_as_its_protocols_error(
    servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    chat = [*PLAIN_EVENTS[:3], CHAT_ERROR, b"data: [DONE]\n\n"]  # as vLLM ends a failed stream
    servers.upstream.add("broken-chat", chat)
    texts: list[str] = []
    with (
        servers.anthropic() as client,
        pytest.raises(anthropic.APIStatusError) as raised,
        # The beta API, as Claude Code calls it: `POST /v1/messages?beta=true`.
        client.beta.messages.stream(
            model="broken-chat", max_tokens=9, messages=[{"role": "user", "content": "hi"}]
        ) as stream,
    ):
        texts.extend(event.text for event in stream if event.type == "text")
    said = chat_summary(chunk_msgspec, b"".join(PLAIN_EVENTS[:3])).choices[0].text
    assert said and "".join(texts) == said
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "api_error", "message": "overloaded"},
    }

    capture = MESSAGES["anthropic__midstream-api-error-tail"]
    servers.upstream.add("broken-messages", events_of(capture))
    pieces: list[str] = []
    with (
        servers.openai() as chat_client,
        pytest.raises(openai.APIError) as failed,
        chat_client.chat.completions.create(
            model="broken-messages", messages=[{"role": "user", "content": "hi"}], stream=True
        ) as chunks,
    ):
        pieces.extend(c.choices[0].delta.content or "" for c in chunks if c.choices)
    said = ""
    with pytest.raises(chunk_msgspec.StreamError):  # the parts end in the upstream's error
        for part in messages_msgspec.iter_parts(capture):
            said += part.text if part.kind == "text" else ""
    assert said and "".join(pieces) == said
    assert failed.value.message == "Internal server error"
    error = {"details": None, "type": "api_error", "message": "Internal server error"}
    assert failed.value.body == error, "the upstream's error object, as it came"

    servers.upstream.add("cut-chat", PLAIN_EVENTS, drop_after=3)  # the connection breaks
    with servers.anthropic() as client, pytest.raises(anthropic.APIStatusError) as cut:
        read_messages(client, "cut-chat")
    broke = "RemoteProtocolError: peer closed connection without sending complete message body"
    assert cut.value.body == {
        "type": "error",
        "error": {"type": "api_error", "message": f"{broke} (incomplete chunked read)"},
    }

    lines = log_lines(caplog, 3)
    assert [(line["protocol"], line["model"], line["status"]) for line in lines] == [
        ("messages", "broken-chat", 200),
        ("chat", "broken-messages", 200),
        ("messages", "cut-chat", 200),
    ]
    assert "finish" not in lines[0]
    assert lines[0]["error"] == "the stream reported an error: 'overloaded' (code 529)"
    assert lines[1]["error"] == "the stream reported an error: 'Internal server error' (code None)"
    assert lines[2]["error"].endswith(
        "peer closed connection without sending complete message body (incomplete chunked read)"
    )
    assert all(line["duration_ms"] >= line["ttfb_ms"] > 0 for line in lines)


def test_an_upstream_http_error_keeps_its_status_in_the_clients_error_shape(
    servers: Servers,
) -> None:
    servers.upstream.errors["limited"] = (
        429,
        {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit"}},
    )
    with servers.anthropic() as client, pytest.raises(anthropic.RateLimitError) as limited:
        read_messages(client, "limited")
    assert limited.value.status_code == 429
    assert limited.value.body == {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "Rate limit reached",
            "code": "rate_limit",
        },
    }

    servers.upstream.errors["too-long"] = (
        400,
        {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt too long"}},
    )
    with servers.openai() as client, pytest.raises(openai.BadRequestError) as refused:
        read_chat(client, "too-long")
    assert refused.value.status_code == 400
    assert refused.value.body == {
        "message": "prompt too long",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }


def test_a_request_it_does_not_translate_is_refused_before_the_upstream(
    servers: Servers,
) -> None:
    before = len(servers.upstream.streams.deliveries)
    search = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
    image = {"type": "image", "source": {"type": "file", "file_id": "file_1"}}
    refusals: list[tuple[dict[str, Any], str]] = [
        (
            {"messages": [{"role": "user", "content": [image]}]},
            "an image by file id (chat has no place for it)",
        ),
    ]
    with servers.anthropic() as client:
        for request, message in refusals:
            with pytest.raises(anthropic.BadRequestError) as refused:
                read_messages(client, PLAIN, **request)
            assert refused.value.body == {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": f"not translated: {message}"},
            }
    with servers.openai() as chat, pytest.raises(openai.BadRequestError) as refused_chat:
        read_chat(chat, PLAIN, n=2)
    message = "not translated: n above 1: a message is one answer"
    assert refused_chat.value.body == {
        "message": message,
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    assert len(servers.upstream.streams.deliveries) == before, "nothing was sent upstream"

    # A tool Anthropic's servers run is left out for a chat upstream, and said.
    servers.upstream.add("searching", events_of(CHATS[PLAIN]))
    body = {"model": "searching", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
    answer = httpx.post(
        f"{servers.gateway}/v1/messages", json={**body, "tools": [search]}, timeout=WAIT
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-chunkspec-dropped"] == "the hosted tool 'web_search_20250305'"
    assert "tools" not in servers.upstream.requests("searching")[0]


def test_an_unreachable_upstream_is_a_bad_gateway_in_the_clients_shape() -> None:
    with socket.socket() as closed:  # a port nothing listens on once it is closed
        closed.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{closed.getsockname()[1]}"
    with (
        serve(create_app(nowhere, nowhere)) as gateway,
        anthropic.Anthropic(base_url=gateway, api_key="x", max_retries=0) as client,
        pytest.raises(anthropic.InternalServerError) as raised,
    ):
        read_messages(client, "m")
    assert raised.value.status_code == 502
    message = "upstream unreachable: ConnectError('All connection attempts failed')"
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "api_error", "message": message},
    }


# --- a client that leaves, and unstreamed requests -----------------------------------


def test_a_client_that_leaves_closes_the_upstream(servers: Servers) -> None:
    # A few events, then a minute's wait: only a closed connection ends them sooner.
    servers.upstream.add("left-a", [*PLAIN_EVENTS[:4]], stall_after=4, stall=60.0)
    with servers.anthropic() as client:
        with client.messages.stream(
            model="left-a", max_tokens=9, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            first = next(event for event in stream if event.type == "text")
        assert first.text
    delivery = servers.upstream.streams.wait_delivery("left-a", timeout=WAIT)
    assert (delivery.outcome, delivery.sent) == ("closed", 4)

    events = events_of(MESSAGES["anthropic__sdk-text-then-tool-use"])
    servers.upstream.add("left-b", events[:5], stall_after=5, stall=60.0)
    with (
        servers.openai() as chat,
        chat.chat.completions.create(
            model="left-b", messages=[{"role": "user", "content": "hi"}], stream=True
        ) as chunks,
    ):
        assert next(c for c in chunks if c.choices and c.choices[0].delta.content)
    delivery = servers.upstream.streams.wait_delivery("left-b", timeout=WAIT)
    assert (delivery.outcome, delivery.sent) == ("closed", 5)


def test_an_unstreamed_request_gets_the_stream_added_up(servers: Servers) -> None:
    servers.upstream.add(PLAIN, [CHATS[PLAIN]])
    for name in ("anthropic__sdk-text-then-tool-use", "anthropic__midstream-api-error-tail"):
        servers.upstream.add(name, events_of(MESSAGES[name]))
    with servers.anthropic() as client:
        streamed = read_messages(client, PLAIN)
        message = client.messages.create(
            model=PLAIN, max_tokens=9, messages=[{"role": "user", "content": "hi"}]
        )
    whole = message.model_dump(mode="json", exclude_unset=True, warnings=False)
    assert meanings_of_sdk_message(whole) == meanings_of_sdk_message(streamed)
    assert [r["stream"] for r in servers.upstream.requests(PLAIN)[-2:]] == [True, True]

    name = "anthropic__sdk-text-then-tool-use"
    with servers.openai() as client:
        completion = client.chat.completions.create(
            model=name, messages=[{"role": "user", "content": "hi"}]
        )
        assert chat_meanings(completion) == summary_meanings(MESSAGES[name])
        with pytest.raises(openai.InternalServerError) as failed:
            client.chat.completions.create(
                model="anthropic__midstream-api-error-tail",
                messages=[{"role": "user", "content": "hi"}],
            )
    assert failed.value.status_code == 500
    assert failed.value.body == {
        "message": "Internal server error",
        "type": "api_error",
        "param": None,
        "code": None,
    }
