"""The gateway (generator/gateway) serving Responses from chat, over real HTTP: a loopback chat upstream replays the
captured chat streams, the gateway serves them as Responses, and openai-python reads them
from the gateway with `client.responses.stream(...)` (and `create`, unstreamed). What it
reads must be what the chat stream says (our accumulator's summary of the capture), the
stream must hold every invariant of tests/helpers/responses_invariants.py, and the upstream must
receive the chat request the Responses request asks for."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest

from generated.msgspec import chat as chunk_msgspec
from generator.gateway.config import Upstream as GatewayUpstream
from generator.gateway.routing import Target
from generator.gateway.translate import translate
from tests.gateway.test_messages import (
    CHAT_ERROR,
    CHATS,
    LOCATION_SCHEMA,
    PLAIN,
    PLAIN_EVENTS,
    REASONING_CALL,
    REASONING_TEXT,
    WAIT,
    WEATHER_SCHEMA,
    Upstream,
    events_of,
    parsed_arguments,
)
from tests.helpers.gateways import one_upstream_app
from tests.helpers.loopback import serve
from tests.helpers.responses_invariants import check_responses
from tests.helpers.responses_judges import (
    meanings_of_ai_sdk_reading,
    meanings_of_response,
    read_urls_with_ai_sdk,
)
from tests.helpers.support import REPORT
from tests.runtime.messages.test_bridges import chat_summary
from tests.runtime.responses.test_bridges import expected_of, judged

LOSSES = "ignore::generated.msgspec.responses.ResponsesLossWarning"
"""What Responses cannot hold of a chat stream (choices after the first) is said in a
warning, which tests/runtime/responses/test_bridges.py looks at."""
TERMINALS = ("response.completed", "response.incomplete", "response.failed")
TOOLS = "openai__py-sdk-parallel-tool-calls"


@dataclass(frozen=True)
class Servers:
    upstream: Upstream
    gateway: str
    """The gateway's base URL."""

    def openai(self) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=f"{self.gateway}/v1", api_key="key-o", max_retries=0, timeout=WAIT
        )

    def raw(self, model: str, **request: Any) -> bytes:
        """The gateway's stream for a request, as bytes."""
        body = {"model": model, "input": "hi", "stream": True} | request
        answer = httpx.post(f"{self.gateway}/v1/responses", json=body, timeout=WAIT)
        assert answer.status_code == 200, answer.text
        return answer.content


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    """The fake chat upstream, and the gateway in front of it."""
    upstream = Upstream()
    with serve(upstream) as base:
        # loopback.serve runs no lifespan, so the app never closes its client: let the
        # client keep no idle connection that would outlive the servers.
        limits = httpx.Limits(max_keepalive_connections=0)
        client = httpx.AsyncClient(limits=limits, timeout=WAIT)
        with serve(one_upstream_app("chat", base, client=client)) as gateway:
            yield Servers(upstream, gateway)


def read_response(client: openai.OpenAI, model: str, **request: Any) -> dict[str, Any]:
    """The response of the terminal event openai-python's `responses.stream(...)` yielded,
    as JSON data (`get_final_response()` raises for any end but `response.completed`)."""
    given: dict[str, Any] = {"input": "hi"}
    terminal: Any = None
    with client.responses.stream(model=model, **(given | request)) as stream:
        for event in stream:
            if event.type in TERMINALS:
                terminal = getattr(event, "response", None)
    assert terminal is not None, "no terminal event"
    dumped: dict[str, Any] = terminal.model_dump(mode="json", exclude_unset=True, warnings=False)
    return dumped


# --- every captured chat stream, read by openai-python --------------------------------


@pytest.mark.filterwarnings(LOSSES)
def test_every_chat_capture_reaches_openai_python_as_responses_with_its_meanings(
    servers: Servers,
) -> None:
    for name, body in CHATS.items():
        servers.upstream.add(name, [body])
    completed = 0
    with servers.openai() as client:
        for name, body in CHATS.items():
            want = expected_of(chat_summary(chunk_msgspec, body))
            assert judged(meanings_of_response(read_response(client, name))) == want, name
            checked = check_responses(servers.raw(name))
            assert checked.terminal in ("response.completed", "response.incomplete"), name
            if checked.terminal == "response.completed":
                with client.responses.stream(model=name, input="hi") as stream:
                    final = stream.get_final_response()  # openai-python's own checks
                assert final.status == "completed", name
                completed += 1
            sent = servers.upstream.requests(name)
            assert {(r["stream"], json.dumps(r["stream_options"])) for r in sent} == {
                (True, '{"include_usage": true}')
            }, name
    assert completed >= len(CHATS) - 3
    REPORT["Responses gateway from chat"] = (
        f"{len(CHATS)}/{len(CHATS)} captured chat streams read by openai-python's"
        " responses.stream through the gateway with their meanings"
    )


# --- the request the upstream receives ------------------------------------------------


def test_a_function_call_round_trip_reaches_the_chat_upstream_translated(
    servers: Servers,
) -> None:
    name = servers.upstream.add("r-tools", [CHATS[TOOLS]])
    question = {"role": "user", "content": "Weather in Edinburgh and New York?"}
    tool = {
        "type": "function",
        "name": "GetWeatherArgs",
        "description": "A city's weather",
        "parameters": WEATHER_SCHEMA,
        "strict": False,
    }
    request: dict[str, Any] = {
        "instructions": "Be brief.",
        "tools": [tool],
        "tool_choice": "required",
        "max_output_tokens": 300,
        "reasoning": {"effort": "low", "summary": "auto"},
        "temperature": 0.2,
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    with servers.openai() as client:
        first = read_response(client, name, input=[question], **request)
        calls = [item for item in first["output"] if item["type"] == "function_call"]
        summary = chat_summary(chunk_msgspec, CHATS[TOOLS])
        assert [(c["call_id"], c["name"], json.loads(c["arguments"])) for c in calls] == [
            (t.id, t.name, json.loads(t.arguments)) for t in summary.choices[0].tool_calls
        ]
        said = {"type": "output_text", "text": "Checking both.", "annotations": []}
        turns: list[dict[str, Any]] = [
            question,
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
            {"type": "message", "role": "assistant", "content": [said], "status": "completed"},
            *calls,  # as openai-python read them: ids, status and all
            {"type": "function_call_output", "call_id": calls[0]["call_id"], "output": "12 C"},
            {
                "type": "function_call_output",
                "call_id": calls[1]["call_id"],
                "output": [{"type": "input_text", "text": "25 C"}],
            },
            {"role": "user", "content": [{"type": "input_text", "text": "Which is warmer?"}]},
        ]
        read_response(client, name, input=turns, **request)
    asked = {
        "model": name,
        "max_completion_tokens": 300,  # the "openai" dialect's limit
        "temperature": 0.2,
        "reasoning_effort": "low",
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "GetWeatherArgs",
                    "description": "A city's weather",
                    "parameters": WEATHER_SCHEMA,
                    "strict": False,
                },
            }
        ],
        "tool_choice": "required",
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    system = {"role": "system", "content": "Be brief."}
    first_sent, second_sent = servers.upstream.requests(name)
    assert servers.upstream.headers[name]["authorization"] == "Bearer key-o"
    assert first_sent == asked | {"messages": [system, question]}
    calls_sent = [
        {
            "id": c["call_id"],
            "type": "function",
            "function": {"name": c["name"], "arguments": json.loads(c["arguments"])},
        }
        for c in calls
    ]
    assert parsed_arguments(second_sent) == asked | {
        "messages": [
            system,
            question,
            {"role": "assistant", "content": "Checking both.", "tool_calls": calls_sent},
            {"role": "tool", "tool_call_id": calls[0]["call_id"], "content": "12 C"},
            {"role": "tool", "tool_call_id": calls[1]["call_id"], "content": "25 C"},
            {"role": "user", "content": "Which is warmer?"},
        ]
    }


@pytest.fixture(scope="module")
def deepseek() -> Iterator[Servers]:
    """A fake chat upstream, and a gateway that writes its requests in DeepSeek's dialect."""
    upstream = Upstream()
    with serve(upstream) as base:
        limits = httpx.Limits(max_keepalive_connections=0)
        client = httpx.AsyncClient(limits=limits, timeout=WAIT)
        with serve(one_upstream_app("chat", base, dialect="deepseek", client=client)) as gateway:
            yield Servers(upstream, gateway)


def test_a_tool_calling_conversation_with_reasoning_gives_deepseek_its_reasoning_back(
    deepseek: Servers,
) -> None:
    """Codex's loop with openai-python: turn 1 streams reasoning and a function call, the
    client sends the output items back as input (the reasoning item, the function_call)
    with a function_call_output, as Codex does (`store: false`, encrypted reasoning
    asked for), and the DeepSeek upstream receives the reasoning of turn 1 as
    `reasoning_content` of the assistant message with the call, the call as it made it,
    and the result as a `tool` message."""
    first, second = deepseek.upstream.converse(
        "deepseek-chat", [CHATS[REASONING_CALL], CHATS[REASONING_TEXT]]
    )
    called = chat_summary(chunk_msgspec, CHATS[REASONING_CALL]).choices[0]
    [call] = called.tool_calls
    answered = chat_summary(chunk_msgspec, CHATS[REASONING_TEXT]).choices[0]
    question: Any = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Weather in San Francisco?"}],
    }
    tool = {
        "type": "function",
        "name": "weather",
        "description": "A city's weather",
        "parameters": LOCATION_SCHEMA,
        "strict": False,
    }
    request: dict[str, Any] = {
        "model": "deepseek-chat",
        "instructions": "You are a coding agent.",
        "tools": [tool],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": {"effort": "high", "summary": "auto"},
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    with deepseek.openai() as client:
        with client.responses.stream(input=[question], **request) as stream:
            turn = stream.get_final_response()
        reasoning, function_call = turn.output
        assert reasoning.type == "reasoning"
        assert [s.text for s in reasoning.summary] == [called.reasoning]
        assert function_call.type == "function_call"
        assert (function_call.call_id, function_call.name, function_call.arguments) == (
            call.id,
            call.name,
            call.arguments,
        )
        output = {"type": "function_call_output", "call_id": call.id, "output": "18 C, fog"}
        items: list[Any] = [question, *turn.output, output]  # the output items as they came
        answer = client.responses.create(input=items, **request)
    assert answer.output_text == answered.text
    assert [i.type for i in answer.output] == ["reasoning", "message"]
    [asked] = deepseek.upstream.requests(first)
    [asked_again] = deepseek.upstream.requests(second)
    common = {
        "model": "deepseek-chat",
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "weather",
                    "description": "A city's weather",
                    "parameters": LOCATION_SCHEMA,
                    "strict": False,
                },
            }
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "thinking": {"type": "enabled"},
        "reasoning_effort": "high",
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    system = {"role": "system", "content": "You are a coding agent."}
    user = {"role": "user", "content": "Weather in San Francisco?"}
    assert asked == common | {"messages": [system, user]}
    assert parsed_arguments(asked_again) == common | {
        "messages": [
            system,
            user,
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


def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """The chat request the gateway sends for a Responses request."""
    upstream = GatewayUpstream("chat", "chat", "http://127.0.0.1:9/v1")
    return translate("responses", Target(upstream, "m"), body, "drop").body


def test_a_string_input_a_named_tool_choice_and_developer_messages_translate() -> None:
    sent = chat_request(
        {
            "model": "m",
            "input": "hi",
            "tool_choice": {"type": "function", "name": "f"},
            "parallel_tool_calls": False,
            "text": {"format": {"type": "text"}, "verbosity": "low"},
        }
    )
    assert sent == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "parallel_tool_calls": False,
        "tool_choice": {"type": "function", "function": {"name": "f"}},
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    developer = {"role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]}
    calls = [
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "1"},
        {"type": "function_call", "call_id": "c2", "name": "f", "arguments": '{"a":1}'},
    ]
    assert chat_request({"model": "m", "input": [developer, *calls]})["messages"] == [
        {"role": "developer", "content": "Be brief."},  # as the "openai" dialect reads it
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "1"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
            ],
        },
    ]


def test_a_request_it_does_not_translate_is_refused_before_the_upstream(
    servers: Servers,
) -> None:
    before = len(servers.upstream.streams.deliveries)
    image = {"type": "input_image", "file_id": "file_1", "detail": "auto"}
    allowed = {
        "type": "allowed_tools",
        "mode": "auto",
        "tools": [{"type": "function", "name": "f"}],
    }
    refusals: list[tuple[dict[str, Any], str]] = [
        (
            {"input": [{"role": "user", "content": [image]}]},
            "an image by file id (chat has no place for it)",
        ),
        ({"tool_choice": allowed}, f"a tool_choice of {allowed!r}"),
        (
            {"text": {"format": {"type": "json_object"}}},
            "a text.format of type 'json_object'",
        ),
    ]
    with servers.openai() as client:
        for request, message in refusals:
            with pytest.raises(openai.BadRequestError) as refused:
                read_response(client, PLAIN, **request)
            assert refused.value.body == {
                "message": f"not translated: {message}",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
    assert len(servers.upstream.streams.deliveries) == before, "nothing was sent upstream"

    # A tool OpenAI's servers run is left out for a chat upstream, and said.
    name = servers.upstream.add("r-searching", events_of(CHATS[PLAIN]))
    body = {"model": name, "input": "hi", "tools": [{"type": "web_search"}]}
    answer = httpx.post(f"{servers.gateway}/v1/responses", json=body, timeout=WAIT)
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-chunkspec-dropped"] == "the hosted tool 'web_search'"
    assert "tools" not in servers.upstream.requests(name)[0]


# --- errors ---------------------------------------------------------------------------


def test_an_upstream_http_error_keeps_its_status_in_openais_error_shape(
    servers: Servers,
) -> None:
    error = {"message": "Rate limit reached", "type": "requests", "code": "rate_limit"}
    servers.upstream.errors["r-limited"] = (429, {"error": error})
    with servers.openai() as client, pytest.raises(openai.RateLimitError) as limited:
        read_response(client, "r-limited")
    assert limited.value.status_code == 429
    assert limited.value.body == {
        "message": "Rate limit reached",
        "type": "requests",
        "param": None,
        "code": "rate_limit",
    }


def test_an_unreachable_upstream_is_a_bad_gateway() -> None:
    with socket.socket() as closed:  # a port nothing listens on once it is closed
        closed.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{closed.getsockname()[1]}"
    with (
        serve(one_upstream_app("chat", nowhere)) as gateway,
        openai.OpenAI(base_url=f"{gateway}/v1", api_key="x", max_retries=0) as client,
        pytest.raises(openai.InternalServerError) as raised,
    ):
        read_response(client, "m")
    assert raised.value.status_code == 502


def test_an_upstream_that_fails_mid_stream_ends_in_response_failed(servers: Servers) -> None:
    said = chat_summary(chunk_msgspec, b"".join(PLAIN_EVENTS[:3])).choices[0].text
    assert said
    servers.upstream.add("r-cut", PLAIN_EVENTS, drop_after=3)  # the connection breaks
    chat = [*PLAIN_EVENTS[:3], CHAT_ERROR, b"data: [DONE]\n\n"]  # as vLLM ends a failed stream
    servers.upstream.add("r-broken", chat)
    messages = {
        "r-cut": "RemoteProtocolError: peer closed connection without sending complete"
        " message body (incomplete chunked read)",
        "r-broken": "overloaded",
    }
    with servers.openai() as client:
        for name, message in messages.items():
            texts: list[str] = []
            with (
                pytest.raises(openai.APIError) as failed,
                client.responses.stream(model=name, input="hi") as stream,
            ):
                for event in stream:
                    if event.type == "response.output_text.delta":
                        texts.append(event.delta)
            assert "".join(texts) == said, name
            assert failed.value.message == message, name
            checked = check_responses(servers.raw(name))
            assert checked.terminal == "response.failed", name
            failure = json.loads(servers.raw(name).split(b"data: ")[-1])
            assert failure["response"]["error"]["message"] == message, name


# --- unstreamed -----------------------------------------------------------------------


def test_an_unstreamed_request_gets_the_stream_added_up(servers: Servers) -> None:
    for name in (PLAIN, TOOLS):
        servers.upstream.add(name, [CHATS[name]])
    servers.upstream.add("r-cut-whole", PLAIN_EVENTS, drop_after=3)
    with servers.openai() as client:
        for name in (PLAIN, TOOLS):
            response = client.responses.create(model=name, input="hi")
            whole = response.model_dump(mode="json", exclude_unset=True, warnings=False)
            want = expected_of(chat_summary(chunk_msgspec, CHATS[name]))
            assert judged(meanings_of_response(whole)) == want, name
            assert servers.upstream.requests(name)[-1]["stream"] is True
        with pytest.raises(openai.InternalServerError) as failed:
            client.responses.create(model="r-cut-whole", input="hi")
    assert failed.value.status_code == 502
    assert failed.value.body == {
        "message": "RemoteProtocolError: peer closed connection without sending complete"
        " message body (incomplete chunked read)",
        "type": "server_error",
        "param": None,
        "code": None,
    }


# --- the Vercel AI SDK ----------------------------------------------------------------

AI_SDK_CAPTURES = (PLAIN, TOOLS, "deepseek__reasoner-thinking-cache-hit-miss")


def test_the_vercel_ai_sdk_reads_chat_captures_through_the_gateway(servers: Servers) -> None:
    """The AI SDK's Responses model (it asks for model "m"), declaring no hosted tool: the
    gateway refuses those."""
    for name in AI_SDK_CAPTURES:
        servers.upstream.add("m", [CHATS[name]])
        [seen] = read_urls_with_ai_sdk([f"{servers.gateway}/v1"], hosted_tools=False)
        got = meanings_of_ai_sdk_reading(seen)
        want = expected_of(chat_summary(chunk_msgspec, CHATS[name]))
        assert got["errors"] == [], (name, got["errors"])
        assert (got["reasoning"], got["text"]) == (want["reasoning"], want["text"]), name
        assert [(n, a) for _, n, a in got["tool_calls"]] == want["tool_calls"], name
        assert got["finish_reason"] == ("tool-calls" if want["tool_calls"] else "stop"), name
        assert got["usage"] == want["usage"], name
        assert "tools" not in servers.upstream.requests("m")[-1], name
