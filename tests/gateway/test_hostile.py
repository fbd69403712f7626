"""The gateway against clients that ask for less, leave early or send what no protocol
reads (issue 41, defects 22-25), over real HTTP on 127.0.0.1: usage only for a chat
client that asked for it; an upstream request closed when its client leaves before the
answer starts; a request nested too deep, or without a conversation of its protocol's
shape, refused with a 400 in the client protocol's shape before anything goes
upstream."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest
from starlette.types import Receive, Scope, Send

from generator.gateway.app import create_app
from generator.gateway.config import Upstream
from tests.gateway.test_gateway import HELLO, Answer, Scripted, written
from tests.helpers.gateways import LOGGER, config, log_lines, one_upstream_app
from tests.helpers.loopback import StreamApp, StreamSpec, serve

WAIT = 5.0
LEFT = 2.0
"""Seconds within which the upstream must see its connection closed after the client
left (the gateway's own read timeout is ten minutes)."""
PROTOCOLS = ("chat", "messages", "responses")
PATHS = {"chat": "/v1/chat/completions", "messages": "/v1/messages", "responses": "/v1/responses"}
HI: list[Any] = [{"role": "user", "content": "hi"}]


def request_of(client: str, model: str, **extra: Any) -> dict[str, Any]:
    """A small valid request of the `client` protocol."""
    if client == "responses":
        return {"model": model, "input": "hi", **extra}
    if client == "messages":
        return {"model": model, "max_tokens": 9, "messages": HI, **extra}
    return {"model": model, "messages": HI, **extra}


@dataclass
class Servers:
    upstream: Scripted
    gateway: str


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    """A scripted upstream of each protocol (`Hello there`, 7 and 4 tokens), and the
    gateway in front of them: a model `PROTOCOL-…` goes to the upstream of PROTOCOL."""
    upstream = Scripted()
    for protocol in PROTOCOLS:
        upstream.answers[protocol] = Answer(written(protocol, HELLO))
    with serve(upstream.app) as base:
        upstreams = {p: Upstream(p, p, f"{base}/v1") for p in PROTOCOLS}
        routes = {f"{p}-*": f"{p}/{p}" for p in PROTOCOLS}
        client = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0), timeout=WAIT)
        with serve(create_app(config(upstreams, routes), client=client)) as gateway:
            yield Servers(upstream, gateway)


# --- 22: chat's usage chunk only when asked --------------------------------------------


@pytest.mark.parametrize("upstream", PROTOCOLS)
def test_a_chat_client_gets_the_usage_chunk_only_when_it_asks(
    servers: Servers, upstream: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    model = f"{upstream}-unasked"
    with openai.OpenAI(
        base_url=f"{servers.gateway}/v1", api_key="k", max_retries=0, timeout=WAIT
    ) as client:
        unasked = list(client.chat.completions.create(model=model, messages=HI, stream=True))
        # The loop every chat example writes: it reads choices[0] of every chunk.
        text = "".join(chunk.choices[0].delta.content or "" for chunk in unasked)
        asked = list(
            client.chat.completions.create(
                model=f"{upstream}-asked",
                messages=HI,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        whole = client.chat.completions.create(model=f"{upstream}-whole", messages=HI)
    assert text == "Hello there"
    assert all(chunk.usage is None for chunk in unasked)
    [report] = [chunk for chunk in asked if not chunk.choices]
    assert report.usage is not None
    assert (report.usage.prompt_tokens, report.usage.completion_tokens) == (7, 4)
    assert whole.usage is not None and whole.usage.completion_tokens == 4, "unstreamed: always"
    lines = {line["model"]: line for line in log_lines(caplog, 3)}
    said = lines[model]
    assert (said["input_tokens"], said["output_tokens"]) == (7, 4), "the log line still has it"
    assert "dropped" not in said, "what was not asked for is no loss"


# --- 23: an upstream request closed when its client leaves -----------------------------


class Hanging:
    """An upstream of every protocol that never answers a request (or, for a model
    that ends in `-headers`, sends its headers and then nothing), and records when it
    arrived and when its connection closed, by model."""

    def __init__(self) -> None:
        self.arrived: dict[str, threading.Event] = {}
        self.left: dict[str, threading.Event] = {}

    def expect(self, model: str) -> None:
        self.arrived[model] = threading.Event()
        self.left[model] = threading.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        model: str = json.loads(body)["model"]
        self.arrived[model].set()
        if model.endswith("-headers"):
            headers = [(b"content-type", b"text/event-stream")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
        while (await receive())["type"] != "http.disconnect":
            pass
        self.left[model].set()


@dataclass
class HangingServers:
    upstream: Hanging
    gateway: str


@pytest.fixture(scope="module")
def hanging() -> Iterator[HangingServers]:
    upstream = Hanging()
    with serve(upstream) as base:
        upstreams = {p: Upstream(p, p, f"{base}/v1") for p in PROTOCOLS}
        routes = {f"{p}-*": f"{p}/*" for p in PROTOCOLS}
        # The gateway's own client, with its ten minutes' read timeout.
        with serve(create_app(config(upstreams, routes))) as gateway:
            yield HangingServers(upstream, gateway)


def leave_after_sending(gateway: str, path: str, body: dict[str, Any], arrived: Any) -> None:
    """Send `body` to `path` on a plain socket, wait until the upstream has the request,
    and close the connection without reading an answer."""
    host, port = gateway.removeprefix("http://").split(":")
    payload = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
        f"anthropic-version: 2023-06-01\r\ncontent-length: {len(payload)}\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=WAIT) as sock:
        sock.sendall(head.encode() + payload)
        assert arrived.wait(WAIT), "the request never reached the upstream"


# A streamed answer that has started is watched by its own loop (a client that leaves
# then: tests/gateway/test_messages.py); here the gateway has sent nothing yet.
@pytest.mark.parametrize("client", PROTOCOLS)
@pytest.mark.parametrize(
    ("stream", "hang"),
    [(True, "before-headers"), (False, "before-headers"), (False, "after-headers")],
    ids=["streamed-before-headers", "unstreamed-before-headers", "unstreamed-after-headers"],
)
def test_a_client_that_leaves_before_the_answer_closes_the_upstream_request(
    hanging: HangingServers, client: str, stream: bool, hang: str
) -> None:
    upstream = {"chat": "messages", "messages": "responses", "responses": "chat"}[client]
    model = f"{upstream}-{client}-{stream}" + ("-headers" if hang == "after-headers" else "")
    hanging.upstream.expect(model)
    body = request_of(client, model, stream=stream)
    leave_after_sending(hanging.gateway, PATHS[client], body, hanging.upstream.arrived[model])
    assert hanging.upstream.left[model].wait(LEFT), "the upstream request is still open"


def test_a_count_that_the_client_leaves_closes_the_upstream_request(
    hanging: HangingServers,
) -> None:
    model = "messages-count"
    hanging.upstream.expect(model)
    body = request_of("messages", model)
    path = "/v1/messages/count_tokens"
    leave_after_sending(hanging.gateway, path, body, hanging.upstream.arrived[model])
    assert hanging.upstream.left[model].wait(LEFT), "the upstream request is still open"


# --- 24: a request nested too deep -----------------------------------------------------


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("path", [*PATHS.values(), "/v1/messages/count_tokens"])
@pytest.mark.parametrize("where", ["body", "key"])
def test_a_request_nested_too_deep_is_a_400_in_the_protocols_shape(
    servers: Servers, path: str, where: str
) -> None:
    client = next(p for p, known in PATHS.items() if path.startswith(known))
    before = len(servers.upstream.requests)
    text = nested(100_000)
    if where == "key":  # a request object, nested deep in a key no reader looks into
        text = json.dumps(request_of(client, "chat-deep"))[:-1] + f', "metadata": {text}}}'
    answer = httpx.post(
        f"{servers.gateway}{path}",
        content=text.encode(),
        headers={"content-type": "application/json"},
        timeout=WAIT,
    )
    assert answer.status_code == 400, answer.text
    error = answer.json()
    if client == "messages":
        assert error["type"] == "error"
        assert error["error"]["type"] == "invalid_request_error"
    else:
        assert error["error"]["type"] == "invalid_request_error"
    assert len(servers.upstream.requests) == before, "nothing went upstream"


# --- 25: no conversation, or one of the wrong shape ------------------------------------

MESSAGES_BAD: list[tuple[dict[str, Any], str]] = [
    ({"messages": [1, 2]}, "messages.0: Input should be a valid dictionary"),
    ({"messages": [{"content": "hi"}]}, "messages.0.role: Field required"),
    ({"messages": None}, "messages: Input should be a valid list"),
    ({}, "messages: Field required"),
    ({"messages": [{"role": "bot", "content": "x"}]}, "messages.0.role: Input should be"),
    ({"messages": [{"role": "user"}]}, "messages.0.content: Field required"),
    ({"messages": [{"role": "user", "content": 5}]}, "messages.0.content: Input should be"),
    ({"messages": []}, "messages: at least one message is required"),
]
CHAT_BAD: list[tuple[dict[str, Any], tuple[str, str]]] = [
    ({}, ("messages", "missing_required_parameter")),
    ({"messages": None}, ("messages", "missing_required_parameter")),
    ({"messages": "hi"}, ("messages", "invalid_type")),
    ({"messages": []}, ("messages", "empty_array")),
    ({"messages": [1]}, ("messages[0]", "invalid_type")),
    ({"messages": [{"content": "x"}]}, ("messages[0].role", "missing_required_parameter")),
    ({"messages": [{"role": "bot", "content": "x"}]}, ("messages[0].role", "invalid_value")),
]
RESPONSES_BAD: list[tuple[dict[str, Any], tuple[str, str]]] = [
    ({"input": 5}, ("input", "invalid_type")),
    ({"input": {"role": "user", "content": "hi"}}, ("input", "invalid_type")),
    ({"input": [1, 2]}, ("input[0]", "invalid_type")),
    ({"input": [{}]}, ("input[0].role", "missing_required_parameter")),
]


def without_conversation(client: str, model: str, bad: dict[str, Any]) -> dict[str, Any]:
    body = request_of(client, model)
    body.pop("messages" if client != "responses" else "input")
    return body | bad


@pytest.mark.parametrize("upstream", PROTOCOLS)
@pytest.mark.parametrize(("bad", "said"), MESSAGES_BAD)
def test_a_messages_request_without_its_conversation_is_refused_as_anthropic_does(
    servers: Servers, upstream: str, bad: dict[str, Any], said: str
) -> None:
    before = len(servers.upstream.requests)
    body = without_conversation("messages", f"{upstream}-bad", bad)
    for path in ("/v1/messages", "/v1/messages/count_tokens"):
        answer = httpx.post(f"{servers.gateway}{path}", json=body, timeout=WAIT)
        assert answer.status_code == 400, (path, answer.text)
        error = answer.json()
        assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
        assert error["error"]["message"].startswith(said), error
    assert len(servers.upstream.requests) == before, "nothing went upstream"


@pytest.mark.parametrize("upstream", PROTOCOLS)
@pytest.mark.parametrize(
    ("client", "bad", "said"),
    [("chat", *case) for case in CHAT_BAD] + [("responses", *case) for case in RESPONSES_BAD],
)
def test_an_openai_request_without_its_conversation_is_refused_as_openai_does(
    servers: Servers, upstream: str, client: str, bad: dict[str, Any], said: tuple[str, str]
) -> None:
    before = len(servers.upstream.requests)
    body = without_conversation(client, f"{upstream}-bad", bad)
    with (
        openai.OpenAI(
            base_url=f"{servers.gateway}/v1", api_key="k", max_retries=0, timeout=WAIT
        ) as sdk,
        pytest.raises(openai.BadRequestError) as refused,
    ):
        sdk.post(PATHS[client].removeprefix("/v1"), body=body, cast_to=object)
    assert refused.value.type == "invalid_request_error"
    assert (refused.value.param, refused.value.code) == said
    assert len(servers.upstream.requests) == before, "nothing went upstream"


def test_a_good_request_of_each_protocol_still_goes_upstream(servers: Servers) -> None:
    before = len(servers.upstream.requests)
    for client in PROTOCOLS:
        for upstream in PROTOCOLS:
            body = request_of(client, f"{upstream}-good")
            answer = httpx.post(f"{servers.gateway}{PATHS[client]}", json=body, timeout=WAIT)
            assert answer.status_code == 200, answer.text
    assert len(servers.upstream.requests) == before + 9


@pytest.mark.parametrize("upstream", PROTOCOLS)
def test_a_system_message_in_the_conversation_goes_upstream(
    servers: Servers, upstream: str
) -> None:
    """Claude Code sends a system message after the first user message (see
    tests/fixtures/agents/README.md): not a shape the gateway refuses."""
    before = len(servers.upstream.requests)
    body = request_of("messages", f"{upstream}-system")
    body["messages"] = [
        body["messages"][0],
        {"role": "system", "content": [{"type": "text", "text": "# Environment"}]},
    ]
    answer = httpx.post(f"{servers.gateway}{PATHS['messages']}", json=body, timeout=WAIT)
    assert answer.status_code == 200, answer.text
    assert len(servers.upstream.requests) == before + 1


# --- found on the way: a gzipped upstream stream passed through -----------------------


@pytest.mark.parametrize("client", ["chat", "messages"])
def test_a_gzipped_upstream_stream_passes_through_decoded(client: str) -> None:
    """Within one protocol the upstream's bytes pass unchanged: its content, not its
    encoding, which the client is not told of."""
    pieces = written(client, HELLO)
    app = StreamApp()
    asked = {"stream_options": {"include_usage": True}} if client == "chat" else {}
    body = request_of(client, "m", stream=True, **asked)
    answers: list[bytes] = []
    with serve(app) as base:
        for name, gzip in (("plain", False), ("gzipped", True)):
            app.add(name, StreamSpec(pieces, gzip=gzip))
            with serve(one_upstream_app(client, f"{base}/streams/{name}")) as gateway:
                answer = httpx.post(f"{gateway}{PATHS[client]}", json=body, timeout=WAIT)
            answers.append(answer.content)
    assert answers == [b"".join(pieces)] * 2
