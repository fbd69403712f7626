"""The gateway as a product (generator/gateway, `chunkspec serve`): its configuration and
the line of each problem, the command with several workers, routes by model, the model
list, token counting, hosted tools, upstream errors with their code and retry headers,
the client-only keys, think tags, passthrough within a protocol, and its log line. The
real agents' runs are in tests/agents/; the SDKs' reads of every captured stream
through it in tests/gateway/test_messages.py and tests/gateway/test_responses.py."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from generator.gateway.app import create_app
from generator.gateway.config import ConfigError, Upstream, load
from generator.gateway.store import StoreSettings
from tests.helpers.gateways import LOGGER, config, free_port, log_lines, wait_healthy
from tests.helpers.loopback import serve

WAIT = 5.0
ROOT = Path(__file__).resolve().parents[2]


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    data = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "up-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return f"data: {json.dumps(data)}\n\n".encode()


USAGE = b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":4,"total_tokens":11}}\n\n'
DONE = b"data: [DONE]\n\n"
HELLO = [
    chunk({"role": "assistant", "content": "Hello"}),
    chunk({"content": " there"}, "stop"),
    USAGE,
    DONE,
]
THINK_TAGS = [
    chunk({"role": "assistant", "content": "<think>Let me"}),
    chunk({"content": " see.</think>"}),
    chunk({"content": "Four."}, "stop"),
    USAGE,
    DONE,
]
MESSAGES_STREAM = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
    b'"role":"assistant","model":"claude-up","content":[],"stop_reason":null,"stop_sequence":null,'
    b'"usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


@dataclass
class Answer:
    pieces: list[bytes] = field(default_factory=list[bytes])
    status: int = 200
    error: Any = None
    headers: dict[str, str] = field(default_factory=dict[str, str])


class Scripted:
    """A scripted upstream of every protocol: the answer for a model (`answers`), and a
    record of each request (path, headers, body)."""

    def __init__(self) -> None:
        self.answers: dict[str, Answer] = {}
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        paths = (
            "/v1/chat/completions",
            "/v1/messages",
            "/v1/responses",
            "/v1/messages/count_tokens",
        )
        self.app = Starlette(routes=[Route(p, self.respond, methods=["POST"]) for p in paths])

    def bodies(self, model: str) -> list[Any]:
        return [body for _, _, body in self.requests if body.get("model") == model]

    async def respond(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self.requests.append((request.url.path, dict(request.headers), body))
        if request.url.path.endswith("count_tokens"):
            return JSONResponse({"input_tokens": 1234})
        answer = self.answers.get(body["model"], Answer(HELLO))
        if answer.status != 200:
            return JSONResponse(answer.error, answer.status, headers=answer.headers)

        async def pieces() -> Any:
            for piece in answer.pieces:
                yield piece

        return StreamingResponse(pieces(), media_type="text/event-stream")


@dataclass
class Servers:
    upstream: Scripted
    base: str
    gateway: str


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    upstream = Scripted()
    with serve(upstream.app) as base:
        upstreams = {
            "chat": Upstream("chat", "chat", f"{base}/v1", dialect="deepseek", key_env="CHAT_KEY"),
            "tags": Upstream("tags", "chat", f"{base}/v1", think_tags=("<think>", "</think>")),
            "anthropic": Upstream("anthropic", "messages", f"{base}/v1"),
        }
        routes = {
            "claude-*haiku*": "chat/small-model",
            "tagged": "tags/qwen3",
            "claude-up": "anthropic/claude-up",
            "chat-*": "chat/*",
            "claude-*": "chat/big-model",
            "gpt-*": "chat/big-model",
        }
        client = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0), timeout=WAIT)
        app = create_app(config(upstreams, routes), client=client, environ={"CHAT_KEY": "sk-up"})
        with serve(app) as gateway:
            yield Servers(upstream, base, gateway)


def messages_body(model: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": model,
        "max_tokens": 50,
        "messages": [{"role": "user", "content": "hi"}],
        **extra,
    }


# --- routes, keys, the model list, token counts ---------------------------------------


def test_models_route_to_their_upstream_models_with_the_gateways_key(servers: Servers) -> None:
    with anthropic.Anthropic(
        base_url=servers.gateway, api_key="client-key", max_retries=0
    ) as client:
        big = client.messages.create(**messages_body("claude-sonnet-4-5"))
        small = client.messages.create(**messages_body("claude-haiku-4-5-20251001"))
    assert [b.text for b in big.content if b.type == "text"] == ["Hello there"]
    assert big.usage.input_tokens == 7 and big.usage.output_tokens == 4
    assert small.content[0].type == "text"
    sent = servers.upstream.bodies("small-model")[-1]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["max_tokens"] == 50, "the deepseek dialect's limit key"
    path, headers, _ = [r for r in servers.upstream.requests if r[2]["model"] == "small-model"][-1]
    assert path == "/v1/chat/completions"
    assert headers["authorization"] == "Bearer sk-up", "the upstream's key, not the client's"
    assert servers.upstream.bodies("big-model")


def test_a_route_to_upstream_star_passes_the_model_on(servers: Servers) -> None:
    answer = httpx.post(
        f"{servers.gateway}/v1/chat/completions",
        json={"model": "chat-x", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
        timeout=WAIT,
    )
    assert answer.status_code == 200
    assert servers.upstream.bodies("chat-x"), "passed on as the client named it"


def test_a_model_no_route_takes_is_a_404_in_the_clients_shape(servers: Servers) -> None:
    with (
        anthropic.Anthropic(base_url=servers.gateway, api_key="k", max_retries=0) as client,
        pytest.raises(anthropic.NotFoundError) as missing,
    ):
        client.messages.create(**messages_body("llama-3"))
    assert missing.value.body == {
        "type": "error",
        "error": {
            "type": "not_found_error",
            "message": "the model 'llama-3' is not served here (the gateway's [models]: "
            "claude-*haiku*, tagged, claude-up, chat-*, claude-*, gpt-*)",
            "code": "model_not_found",
        },
    }
    with (
        openai.OpenAI(base_url=f"{servers.gateway}/v1", api_key="k", max_retries=0) as chat,
        pytest.raises(openai.NotFoundError) as missing_chat,
    ):
        chat.responses.create(model="llama-3", input="hi")
    assert missing_chat.value.code == "model_not_found"


def test_the_model_list_in_each_protocols_shape(servers: Servers) -> None:
    with openai.OpenAI(base_url=f"{servers.gateway}/v1", api_key="k", max_retries=0) as client:
        ids = [model.id for model in client.models.list()]
    assert ids == ["tagged", "claude-up", "small-model", "qwen3", "big-model"]
    with anthropic.Anthropic(base_url=servers.gateway, api_key="k", max_retries=0) as claude:
        listed = [model.id for model in claude.models.list()]
    assert listed == ids


def test_token_counts_are_the_upstreams_or_said_to_be_estimates(servers: Servers) -> None:
    with anthropic.Anthropic(base_url=servers.gateway, api_key="k", max_retries=0) as client:
        counted = client.messages.count_tokens(
            model="claude-up", messages=[{"role": "user", "content": "hi"}]
        )
        assert counted.input_tokens == 1234, "a Messages upstream counts"
        raw = client.messages.with_raw_response.count_tokens(
            model="claude-sonnet-4-5", messages=[{"role": "user", "content": "hello " * 100}]
        )
    assert raw.headers["x-chunkspec-estimated"] == "4 characters a token"
    assert 150 <= raw.parse().input_tokens <= 250


# --- what a request loses, and errors -------------------------------------------------


def test_client_metadata_and_hosted_tools_are_dropped_and_said(
    servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    body = {
        "model": "gpt-5-codex",
        "input": "hi",
        "stream": True,
        "client_metadata": {"thread": "t1"},
        "tools": [
            {"type": "web_search"},
            {"type": "function", "name": "f", "parameters": {"type": "object", "properties": {}}},
        ],
    }
    answer = httpx.post(f"{servers.gateway}/v1/responses", json=body, timeout=WAIT)
    assert answer.status_code == 200
    assert (
        answer.headers["x-chunkspec-dropped"]
        == "the hosted tool 'web_search'; the key 'client_metadata'"
    )
    sent = servers.upstream.bodies("big-model")[-1]
    assert "client_metadata" not in sent
    assert [tool["function"]["name"] for tool in sent["tools"]] == ["f"]
    [line] = [seen for seen in log_lines(caplog, 1) if seen["protocol"] == "responses"]
    assert line["dropped"] == ["the hosted tool 'web_search'", "the key 'client_metadata'"]
    assert (line["upstream"], line["upstream_model"], line["status"]) == ("chat", "big-model", 200)
    assert (line["input_tokens"], line["output_tokens"], line["finish"]) == (7, 4, "stop")


def test_hosted_tools_refused_when_the_setting_says_so(servers: Servers) -> None:
    upstream = Upstream("chat", "chat", f"{servers.base}/v1")
    app = create_app(config({"chat": upstream}, {"*": "chat/refusing"}, hosted_tools="refuse"))
    with (
        serve(app) as gateway,
        openai.OpenAI(base_url=f"{gateway}/v1", api_key="k", max_retries=0) as client,
        pytest.raises(openai.BadRequestError) as refused,
    ):
        client.responses.create(model="m", input="hi", tools=[{"type": "web_search"}])
    assert refused.value.body["message"] == (  # type: ignore[index]
        "not translated: hosted tools the upstream cannot run: web_search "
        '(the gateway\'s hosted_tools = "refuse")'
    )
    assert not servers.upstream.bodies("refusing")


def test_an_upstream_error_keeps_its_status_code_and_retry_headers(servers: Servers) -> None:
    error = {"error": {"message": "slow down", "type": "rate_limit", "code": "rate_limit_exceeded"}}
    retry = {"retry-after": "7", "retry-after-ms": "7000", "x-should-retry": "true"}
    servers.upstream.answers["big-model"] = Answer(status=429, error=error, headers=retry)
    try:
        for path, body in (
            ("/v1/messages", messages_body("claude-opus-4")),
            ("/v1/responses", {"model": "gpt-5", "input": "hi", "stream": True}),
        ):
            answer = httpx.post(f"{servers.gateway}{path}", json=body, timeout=WAIT)
            assert answer.status_code == 429
            assert {k: answer.headers.get(k) for k in retry} == retry
            said = answer.json()["error"]
            assert (said["message"], said["code"]) == ("slow down", "rate_limit_exceeded")
        assert answer.json()["error"]["type"] == "rate_limit"
    finally:
        del servers.upstream.answers["big-model"]


# --- what a stream becomes ------------------------------------------------------------


def test_think_tags_become_thinking_never_text(servers: Servers) -> None:
    servers.upstream.answers["qwen3"] = Answer(THINK_TAGS)
    with anthropic.Anthropic(base_url=servers.gateway, api_key="k", max_retries=0) as client:
        message = client.messages.create(**messages_body("tagged"))
    assert [
        (b.type, getattr(b, "thinking", None) or getattr(b, "text", None)) for b in message.content
    ] == [
        ("thinking", "Let me see."),
        ("text", "Four."),
    ]
    with openai.OpenAI(base_url=f"{servers.gateway}/v1", api_key="k", max_retries=0) as chat:
        completion = chat.chat.completions.create(
            model="tagged", messages=[{"role": "user", "content": "hi"}]
        )
    assert completion.choices[0].message.content == "Four."
    assert (completion.choices[0].message.model_extra or {})["reasoning_content"] == "Let me see."


def test_within_one_protocol_the_upstreams_bytes_pass_unchanged(servers: Servers) -> None:
    servers.upstream.answers["claude-up"] = Answer([MESSAGES_STREAM])
    body = messages_body("claude-up", stream=True)
    answer = httpx.post(f"{servers.gateway}/v1/messages", json=body, timeout=WAIT)
    assert answer.content == MESSAGES_STREAM
    servers.upstream.answers["chat-pass"] = Answer(HELLO)
    chat = {"model": "chat-pass", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    asked = {**chat, "stream_options": {"include_usage": True}}
    answer = httpx.post(f"{servers.gateway}/v1/chat/completions", json=asked, timeout=WAIT)
    assert answer.content == b"".join(HELLO)
    # Unasked, the usage chunk is left out (as OpenAI leaves it out), and nothing else.
    answer = httpx.post(f"{servers.gateway}/v1/chat/completions", json=chat, timeout=WAIT)
    assert answer.content == b"".join(piece for piece in HELLO if piece != USAGE)


# --- the configuration ----------------------------------------------------------------

GOOD = """\
[gateway]
port = 4100

[upstreams.deepseek]
protocol = "chat"
base_url = "https://api.deepseek.com/v1"
dialect = "deepseek"

[models]
"*" = "deepseek/deepseek-reasoner"
"""


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ('dialect = "deepseek"', 'dialect = "deepsek"', ":7: chat request dialect must be one of"),
        (
            'protocol = "chat"',
            'protocol = "grpc"',
            ":5: protocol must be one of chat, messages, responses, not 'grpc'",
        ),
        ("port = 4100", "prot = 4100", ":2: unknown key 'gateway.prot' (did you mean 'port'?)"),
        ("port = 4100", 'port = "x"', ":2: port must be a int, not 'x'"),
        (
            '"*" = "deepseek/deepseek-reasoner"',
            '"*" = "deepsek/r1"',
            ":10: no upstream named 'deepsek' (did you mean 'deepseek'?)",
        ),
        (
            '"*" = "deepseek/deepseek-reasoner"',
            '"*" = "deepseek"',
            ':10: models."*" must be "UPSTREAM/MODEL"',
        ),
        (
            'base_url = "https://api.deepseek.com/v1"',
            'base_url = "api.deepseek.com"',
            ":6: base_url must start with http:// or https://",
        ),
        (
            'base_url = "https://api.deepseek.com/v1"',
            "",
            ":4: upstreams.deepseek.base_url is required",
        ),
        (
            'dialect = "deepseek"',
            'dialect = "deepseek"\nthink_tags = ["<think>"]',
            ":8: think_tags must be two tags",
        ),
        ("[models]", "[model]", ":9: unknown key 'model' (did you mean 'models'?)"),
        ("port = 4100", "port = 4100\n[[x", ": not TOML: "),
    ],
)
def test_a_bad_configuration_stops_at_its_line(
    tmp_path: Path, old: str, new: str, said: str
) -> None:
    path = tmp_path / "gateway.toml"
    assert old in GOOD
    path.write_text(GOOD.replace(old, new))
    with pytest.raises(ConfigError) as raised:
        load(path)
    assert str(raised.value).startswith(f"{path}{said}")


def test_serve_checks_its_configuration_and_says_what_it_runs(tmp_path: Path) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(
        GOOD.replace('dialect = "deepseek"', 'dialect = "deepseek"\nkey_env = "DS_KEY"')
    )
    command = [sys.executable, "-m", "generator", "serve", "--config", str(path), "--check"]
    env = {k: v for k, v in os.environ.items() if k != "DS_KEY"}
    missing = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert missing.returncode == 2
    assert missing.stderr == (
        "chunkspec serve: upstreams.deepseek.key_env: the variable DS_KEY is not set"
        " (it holds the upstream's key)\n"
    )
    ok = subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, env={**env, "DS_KEY": "k"}, timeout=60
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stderr == (
        "chunkspec gateway on http://127.0.0.1:4100 (1 worker(s))\n"
        "  upstream deepseek: chat at https://api.deepseek.com/v1, dialect deepseek\n"
        "  model * -> deepseek/deepseek-reasoner\n"
        f"  store {StoreSettings().url}\n"
    )
    flags = [
        sys.executable,
        "-m",
        "generator",
        "serve",
        "--check",
        "--upstream",
        "http://127.0.0.1:8000/v1",
        "--dialect",
        "vllm",
        "--model",
        "qwen3",
        "--small-model",
        "qwen3-small",
        "--port",
        "4200",
    ]
    quick = subprocess.run(flags, capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert quick.returncode == 0, quick.stderr
    assert quick.stderr.splitlines()[1:] == [
        "  upstream upstream: chat at http://127.0.0.1:8000/v1, dialect vllm",
        "  model claude-*haiku* -> upstream/qwen3-small",
        "  model * -> upstream/qwen3",
        "  store sqlite:///" + os.environ["XDG_STATE_HOME"] + "/chunkspec/gateway.sqlite3",
    ]


def test_serve_runs_several_workers_and_logs_a_json_line_per_request(
    servers: Servers, tmp_path: Path
) -> None:
    port = free_port()
    path = tmp_path / "gateway.toml"
    path.write_text(
        f'[upstreams.up]\nprotocol = "chat"\nbase_url = "{servers.base}/v1"\n\n[models]\n"*" = "up/served"\n'
    )
    command = [
        sys.executable,
        "-m",
        "generator",
        "serve",
        "--config",
        str(path),
        "--port",
        str(port),
        "--workers",
        "2",
    ]
    process = subprocess.Popen(
        command, cwd=ROOT, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", process)
        with anthropic.Anthropic(
            base_url=f"http://127.0.0.1:{port}", api_key="k", max_retries=0
        ) as client:
            for _ in range(4):
                message = client.messages.create(**messages_body("claude-sonnet-4-5"))
                assert message.content[0].type == "text"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert stderr.count("Started server process") == 2, stderr
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    assert len(lines) == 4, stderr
    for line in lines:
        assert line["protocol"] == "messages" and line["status"] == 200
        assert (line["model"], line["upstream"], line["upstream_model"]) == (
            "claude-sonnet-4-5",
            "up",
            "served",
        )
        assert (line["input_tokens"], line["output_tokens"]) == (7, 4)
        assert 0 < line["ttfb_ms"] <= line["duration_ms"]


def test_the_configuration_docs_gateway_md_shows_loads_as_it_says(tmp_path: Path) -> None:
    from tests.helpers.docs_blocks import fences

    text = (ROOT / "docs/gateway.md").read_text(encoding="utf-8")
    [shown] = [fence.body for fence in fences(text) if fence.kind == "toml"]
    path = tmp_path / "gateway.toml"
    path.write_text(shown)
    loaded = load(path)
    assert [(u.name, u.protocol, u.dialect, u.think_tags) for u in loaded.upstreams] == [
        ("deepseek", "chat", "deepseek", None),
        ("local", "chat", "vllm", ("<think>", "</think>")),
    ]
    assert (loaded.port, loaded.workers, loaded.upstreams[1].headers) == (
        4000,
        2,
        {"X-Title": "my gateway"},
    )
    # The error the doc shows is the one a misspelt dialect gives.
    [error] = [f.body for f in fences(text) if f.kind == "text" and "serve:" in f.body]
    bad = tmp_path / "bad" / "gateway.toml"
    bad.parent.mkdir()
    bad.write_text(GOOD.replace('dialect = "deepseek"', 'dialect = "deepsek"'))
    with pytest.raises(ConfigError) as raised:
        load(bad)
    assert f"chunkspec serve: {raised.value}".replace(str(bad), "gateway.toml") + "\n" == error


# --- every client protocol from every upstream protocol --------------------------------


def written(protocol: str, pieces: list[bytes]) -> list[bytes]:
    """A chat stream written in `protocol` (the gateway's own writers: an upstream of that
    protocol streams the same)."""
    from generated.msgspec import chat as chunk_msgspec

    if protocol == "chat":
        return pieces
    return list(
        chunk_msgspec.write_parts(chunk_msgspec.iter_parts(b"".join(pieces)), protocol=protocol)
    )


@pytest.mark.parametrize("upstream_protocol", ["chat", "messages", "responses"])
def test_each_official_sdk_reads_each_upstream_protocol(upstream_protocol: str) -> None:
    scripted = Scripted()
    scripted.answers["m"] = Answer(written(upstream_protocol, HELLO))
    with serve(scripted.app) as base:
        upstream = Upstream("up", upstream_protocol, f"{base}/v1")
        app = create_app(config({"up": upstream}, {"*": "up/m"}))
        with (
            serve(app) as gateway,
            anthropic.Anthropic(base_url=gateway, api_key="k", max_retries=0) as claude,
            openai.OpenAI(base_url=f"{gateway}/v1", api_key="k", max_retries=0) as client,
        ):
            with claude.messages.stream(**messages_body("claude-x")) as stream:
                message = stream.get_final_message()
            with client.responses.stream(model="gpt-x", input="hi") as events:
                response = events.get_final_response()
            chunks = client.chat.completions.create(
                model="x", messages=[{"role": "user", "content": "hi"}], stream=True,
                stream_options={"include_usage": True},
            )  # fmt: skip
            pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    assert [b.text for b in message.content if b.type == "text"] == ["Hello there"]
    assert (message.usage.input_tokens, message.usage.output_tokens) == (7, 4)
    assert response.output_text == "Hello there"
    assert response.usage is not None and response.usage.output_tokens == 4
    assert "".join(pieces) == "Hello there"
    paths = {path for path, _, _ in scripted.requests}
    assert paths == {
        {"chat": "/v1/chat/completions", "messages": "/v1/messages", "responses": "/v1/responses"}[
            upstream_protocol
        ]
    }
    for _, _, body in scripted.requests:
        assert body["model"] == "m" and body["stream"] is True


def test_openai_pythons_chat_tool_loop_gives_deepseek_its_reasoning_back(servers: Servers) -> None:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "weather", "arguments": ""},
    }
    servers.upstream.answers["chat-loop"] = Answer(
        [
            chunk({"role": "assistant", "reasoning_content": "I need the weather."}),
            chunk({"tool_calls": [call]}),
            chunk(
                {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Oslo"}'}}]},
                "tool_calls",
            ),
            USAGE,
            DONE,
        ]
    )
    tools: list[Any] = [
        {
            "type": "function",
            "function": {
                "name": "weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    asked: list[Any] = [{"role": "user", "content": "Weather in Oslo?"}]
    with openai.OpenAI(base_url=f"{servers.gateway}/v1", api_key="k", max_retries=0) as client:
        first = client.chat.completions.create(model="chat-loop", messages=asked, tools=tools)
        said = first.choices[0].message
        [called] = said.tool_calls or []
        assert called.type == "function" and called.function.arguments == '{"city": "Oslo"}'
        reasoning = (said.model_extra or {})["reasoning_content"]
        assert reasoning == "I need the weather."
        servers.upstream.answers["chat-loop"] = Answer(HELLO)
        history = [
            *asked,
            said.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": "call_1", "content": "4 C"},
        ]
        second = client.chat.completions.create(model="chat-loop", messages=history, tools=tools)
    assert second.choices[0].message.content == "Hello there"
    sent = servers.upstream.bodies("chat-loop")[-1]["messages"]
    assert sent[1]["reasoning_content"] == "I need the weather.", "DeepSeek's rule"
    assert sent[1]["tool_calls"][0]["id"] == "call_1" and sent[2]["tool_call_id"] == "call_1"
