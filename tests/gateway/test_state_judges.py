"""Responses state in the gateway (generator/gateway/state.py) judged by the real clients
that lean on it: openai-agents (`Runner.run` and `Runner.run_streamed` with
`previous_response_id`, `auto_previous_response_id` and `conversation_id`, pinned in
requirements.lock) and the Vercel AI SDK (`@ai-sdk/openai`'s Responses model with
`previousResponseId` and `conversation`, through tests/clients/ai_sdk_previous_response.mjs).
Each continues a conversation it does not resend, through a gateway in DeepSeek's dialect in
front of the echo upstream (tests/helpers/echo_upstream.py), whose answers list what it was
sent. Asserts what each client read (the answers, so the history the upstream saw), what it
sent the gateway (only its new input: recorded on the way in, and the gateway's stored
`/input_items`), and the upstream's requests: the whole history in order, each tool call
with its result and every assistant turn with its `reasoning_content`.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import httpx
import openai
import pytest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from generator.gateway.app import create_app
from generator.gateway.config import Upstream
from generator.gateway.store import StoreSettings
from tests.helpers.echo_upstream import TOOL, EchoUpstream
from tests.helpers.gateways import config
from tests.helpers.loopback import serve

if TYPE_CHECKING:
    from agents import Agent

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
WAIT = 10.0
"""Seconds an agent's run may take; a Node process (all the turns of a scenario), thrice
that."""
AGENTS_KEY = "sk-agents-judge"
AI_SDK_KEY = "sk-ai-sdk-judge"  # the key tests/clients/ai_sdk_previous_response.mjs sends
INSTRUCTIONS = "Be brief."
FIRST = "use the tool for paris"  # the echo upstream calls `lookup` for it
GREETING = "hello there"  # ... and answers this one
NEXT = "and now?"
CALL_ID = "call_0"  # the echo upstream's id of a call made with no assistant turn before
Json = dict[str, Any]


def looked_up(q: str) -> str:
    return f"42 for {q}"


# --- the stack -----------------------------------------------------------------------


class Recorder:
    """An ASGI app in front of `app` that keeps the JSON body of each `POST /v1/responses`
    (what the client sent the gateway) and passes every request on unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.sent: list[Json] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (scope["method"], scope["path"]) != (
            "POST",
            "/v1/responses",
        ):
            await self.app(scope, receive, send)
            return
        data, more = b"", True
        while more:
            message = await receive()
            data, more = data + message.get("body", b""), message.get("more_body", False)
        self.sent.append(cast(Json, json.loads(data)))
        replayed = False

        async def again() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()  # the client's disconnect, when it leaves
            replayed = True
            return {"type": "http.request", "body": data, "more_body": False}

        await self.app(scope, again, send)


@dataclass
class Stack:
    """The echo upstream, and a gateway (DeepSeek's dialect, a SQLite store) behind a
    `Recorder`."""

    upstream: EchoUpstream
    gateway: str
    recorder: Recorder

    @property
    def v1(self) -> str:
        return f"{self.gateway}/v1"

    def get(self, path: str, key: str, **params: Any) -> Json:
        headers = {"authorization": f"Bearer {key}"}
        answer = httpx.get(f"{self.gateway}{path}", headers=headers, params=params, timeout=WAIT)
        assert answer.status_code == 200, answer.text
        return cast(Json, answer.json())

    def input_items(self, response_id: str, key: str) -> list[Json]:
        """The input the gateway kept for a response, in order."""
        page = self.get(f"/v1/responses/{response_id}/input_items", key, order="asc")
        return cast(list[Json], page["data"])

    def conversation_items(self, conversation_id: str, key: str) -> list[Json]:
        page = self.get(f"/v1/conversations/{conversation_id}/items", key, order="asc", limit=100)
        assert page["has_more"] is False
        return cast(list[Json], page["data"])


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    upstream = EchoUpstream()
    with serve(upstream) as base:
        settings = StoreSettings(url=f"sqlite:///{tmp_path / 'store.sqlite3'}")
        gateway = Upstream("up", "chat", f"{base}/v1", dialect="deepseek")
        recorder = Recorder(create_app(config({"up": gateway}, {"*": "up/*"}, store=settings)))
        with serve(recorder) as url:
            yield Stack(upstream, url, recorder)


# --- what was said -------------------------------------------------------------------


def text_of(content: object) -> str:
    """A chat message's or Responses item's text: a string, or its parts' texts joined."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in cast(list[Json], content))
    return "" if content is None else str(content)


def chat_turns(request: Json) -> list[Json]:
    """A chat request's messages, each as what a model reads of it: role, text, the
    replayed reasoning, the tool calls (id, name, parsed arguments), the call a result
    answers."""
    turns: list[Json] = []
    for message in cast(list[Json], request["messages"]):
        turn: Json = {"role": message["role"], "text": text_of(message.get("content"))}
        if message.get("reasoning_content") is not None:
            turn["reasoning"] = message["reasoning_content"]
        if message.get("tool_calls"):
            turn["calls"] = [
                (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                for c in cast(list[Json], message["tool_calls"])
            ]
        if message["role"] == "tool":
            turn["call_id"] = message.get("tool_call_id")
        turns.append(turn)
    return turns


def system(instructions: str | None) -> list[Json]:
    return [] if instructions is None else [{"role": "system", "text": instructions}]


def tool_turns(asked: str) -> list[Json]:
    """The user's request for the tool, the call of it (with the reasoning before it, the
    echo upstream's first thought) and its result."""
    return [
        {"role": "user", "text": asked},
        {
            "role": "assistant",
            "text": "",
            "reasoning": "thought 0",
            "calls": [(CALL_ID, TOOL, {"q": asked})],
        },
        {"role": "tool", "text": looked_up(asked), "call_id": CALL_ID},
    ]


def echoed(text: str) -> Json:
    """What the echo upstream's answer says it was sent."""
    said = json.loads(text)
    assert isinstance(said, dict), text
    return cast(Json, said)


def user_texts(items: list[Json]) -> list[str]:
    """The texts of `items` if they are all user messages (else the assertion fails)."""
    assert all(i.get("type", "message") == "message" and i["role"] == "user" for i in items), items
    return [text_of(i["content"]) for i in items]


def kinds(items: list[Json]) -> list[str]:
    """Each item's type, with a message's role: "user", "assistant", "reasoning", …"""
    return [
        str(i["role"]) if i.get("type", "message") == "message" else str(i["type"]) for i in items
    ]


# --- openai-agents -------------------------------------------------------------------


def lookup(q: str) -> str:
    """Look something up.

    Args:
        q: What to look up.
    """
    return looked_up(q)


def client(stack: Stack, key: str = AGENTS_KEY) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=stack.v1, api_key=key, max_retries=0, timeout=WAIT)


def agent(stack: Stack, key: str = AGENTS_KEY) -> Agent[Any]:
    # Imported here, not at the top: openai-agents takes seconds to import, and every
    # pytest-xdist worker imports each test module to collect it.
    from agents import Agent, OpenAIResponsesModel, function_tool, set_tracing_disabled

    set_tracing_disabled(True)  # the SDK would send traces to OpenAI otherwise
    return Agent(
        name="Lookup agent",
        instructions=INSTRUCTIONS,
        tools=[function_tool(lookup)],
        model=OpenAIResponsesModel("m", client(stack, key)),
    )


@dataclass(frozen=True)
class Ran:
    """What a run returned: its final output, and the ids of the responses its model
    calls got, in order."""

    output: str
    response_ids: list[str]

    @property
    def last_response_id(self) -> str:
        return self.response_ids[-1]


async def run(stack: Stack, text: str, streamed: bool, **state: Any) -> Ran:
    """One `Runner` run of the agent on `text`, with the state options `state`
    (previous_response_id, auto_previous_response_id, conversation_id)."""
    from agents import RunConfig, Runner

    settings = RunConfig(tracing_disabled=True)
    if streamed:
        streaming = Runner.run_streamed(agent(stack), text, run_config=settings, **state)
        async for _ in streaming.stream_events():
            pass
        result: Any = streaming
    else:
        result = await Runner.run(agent(stack), text, run_config=settings, **state)
    ids = [str(r.response_id) for r in result.raw_responses]
    assert ids[-1] == result.last_response_id
    return Ran(str(result.final_output), ids)


T = TypeVar("T")


def ran(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coroutine, WAIT))


def first_answer() -> Json:
    """What the echo upstream answers the agent once its tool ran: everything it was
    sent."""
    return {
        "users": [FIRST],
        "assistants": [""],
        "reasoning": ["thought 0"],
        "tools": [looked_up(FIRST)],
        "system": [INSTRUCTIONS],
    }


def check_second_run(stack: Stack, first: Ran, second: Ran) -> None:
    """The second run, which named the first's conversation and sent only NEXT: its answer
    and its upstream request hold the whole history in order."""
    assert echoed(first.output) == first_answer()
    assert echoed(second.output) == {
        "users": [FIRST, NEXT],
        "assistants": ["", first.output],
        "reasoning": ["thought 0", "thought 1"],
        "tools": [looked_up(FIRST)],
        "system": [INSTRUCTIONS],
    }
    history = [
        *system(INSTRUCTIONS),
        *tool_turns(FIRST),
        {"role": "assistant", "text": first.output, "reasoning": "thought 1"},
        {"role": "user", "text": NEXT},
    ]
    assert chat_turns(stack.upstream.requests[-1]) == history
    # the gateway kept this turn's own input only: the SDK did not resend the history
    assert user_texts(stack.input_items(second.last_response_id, AGENTS_KEY)) == [NEXT]


STREAMED = pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])


@STREAMED
def test_agents_previous_response_id(stack: Stack, streamed: bool) -> None:
    """A run that manages its own history (the tool loop resends it), then a run that
    names the first's last response and sends only its new input."""
    first = ran(run(stack, FIRST, streamed))
    second = ran(run(stack, NEXT, streamed, previous_response_id=first.last_response_id))
    assert len(first.response_ids) == 2  # the tool call, then the answer
    assert len(second.response_ids) == 1
    sent = stack.recorder.sent
    assert len(sent) == 3
    assert all(body.get("stream", False) is streamed for body in sent)
    assert "previous_response_id" not in sent[0] and "previous_response_id" not in sent[1]
    # without state options the SDK's tool loop resends the history itself
    assert kinds(sent[1]["input"]) == ["user", "reasoning", "function_call", "function_call_output"]
    assert sent[2]["previous_response_id"] == first.last_response_id
    assert user_texts(sent[2]["input"]) == [NEXT]
    assert "conversation" not in sent[2]
    check_second_run(stack, first, second)
    kept = stack.get(f"/v1/responses/{second.last_response_id}", AGENTS_KEY)
    assert kept["previous_response_id"] == first.last_response_id
    texts = [text_of(i.get("content")) for i in kept["output"] if i["type"] == "message"]
    assert texts == [second.output]


@STREAMED
def test_agents_auto_previous_response_id(stack: Stack, streamed: bool) -> None:
    """`auto_previous_response_id`: the SDK chains even its first run's tool loop on the
    server, sending the tool's result alone; the gateway replays the call before it."""
    first = ran(run(stack, FIRST, streamed, auto_previous_response_id=True))
    second = ran(
        run(
            stack,
            NEXT,
            streamed,
            previous_response_id=first.last_response_id,
            auto_previous_response_id=True,
        )
    )
    call, answer = first.response_ids
    sent = stack.recorder.sent
    assert len(sent) == 3
    assert "previous_response_id" not in sent[0]
    assert user_texts(sent[0]["input"]) == [FIRST]
    assert sent[1]["previous_response_id"] == call
    [result] = sent[1]["input"]  # only the tool's result: the call is the gateway's to add
    assert (result["type"], result["call_id"]) == ("function_call_output", CALL_ID)
    assert result["output"] == looked_up(FIRST)
    assert sent[2]["previous_response_id"] == answer
    assert user_texts(sent[2]["input"]) == [NEXT]
    requests = stack.upstream.requests
    assert chat_turns(requests[1]) == [*system(INSTRUCTIONS), *tool_turns(FIRST)]
    check_second_run(stack, first, second)
    [kept] = stack.input_items(answer, AGENTS_KEY)
    assert (kept["type"], kept["call_id"]) == ("function_call_output", CALL_ID)


@STREAMED
def test_agents_conversation_id(stack: Stack, streamed: bool) -> None:
    """`conversation_id` of a conversation made with `POST /v1/conversations`
    (openai-python's `conversations.create()`): every request names it and sends only
    what is new; the conversation holds every item in order."""

    async def both() -> tuple[str, Ran, Ran]:
        made = await client(stack).conversations.create()
        first = await run(stack, FIRST, streamed, conversation_id=made.id)
        second = await run(stack, NEXT, streamed, conversation_id=made.id)
        return made.id, first, second

    conversation, first, second = ran(both())
    assert conversation.startswith("conv_")
    sent = stack.recorder.sent
    assert [body.get("conversation") for body in sent] == [conversation] * 3
    assert not any(body.get("previous_response_id") for body in sent)
    assert user_texts(sent[0]["input"]) == [FIRST]
    assert [i["type"] for i in sent[1]["input"]] == ["function_call_output"]
    assert user_texts(sent[2]["input"]) == [NEXT]
    assert chat_turns(stack.upstream.requests[1]) == [*system(INSTRUCTIONS), *tool_turns(FIRST)]
    check_second_run(stack, first, second)
    items = stack.conversation_items(conversation, AGENTS_KEY)
    assert kinds(items) == [
        "user",
        "reasoning",
        "function_call",
        "function_call_output",
        "reasoning",
        "assistant",
        "user",
        "reasoning",
        "assistant",
    ]
    assert [text_of(i["content"]) for i in items if i.get("type", "message") == "message"] == [
        FIRST,
        first.output,
        NEXT,
        second.output,
    ]


def test_agents_another_key_cannot_continue(stack: Stack) -> None:
    """A response is its caller's: the same run under another API key is refused (a 404
    the SDK raises), and nothing reaches the upstream."""
    first = ran(run(stack, GREETING, False))
    asked = len(stack.upstream.requests)

    async def other() -> None:
        from agents import RunConfig, Runner

        thief = agent(stack, key="sk-another")
        settings = RunConfig(tracing_disabled=True)
        await Runner.run(
            thief, NEXT, run_config=settings, previous_response_id=first.last_response_id
        )

    with pytest.raises(openai.NotFoundError) as refused:
        ran(other())
    assert refused.value.code == "previous_response_not_found"
    assert len(stack.upstream.requests) == asked


# --- the Vercel AI SDK ---------------------------------------------------------------


def ai_sdk(stack: Stack, scenario: str) -> list[Json]:
    """What tests/clients/ai_sdk_previous_response.mjs read in `scenario`: one reading per
    turn (its header comment lists the keys); a turn that failed ends the list."""
    node = shutil.which("node")
    assert node, "Node.js is needed for the real-client tests (see README)"
    assert (CLIENTS / "node_modules").is_dir(), "run `make test`: it installs tests/clients"
    result = subprocess.run(
        [node, str(CLIENTS / "ai_sdk_previous_response.mjs"), stack.v1, scenario],
        capture_output=True,
        text=True,
        timeout=WAIT * 3,
        check=False,
        env=os.environ | {"NODE_NO_WARNINGS": "1"},
    )
    assert result.returncode == 0, result.stderr
    readings = [cast(Json, json.loads(line)) for line in result.stdout.splitlines()]
    assert [r["scenario"] for r in readings] == [scenario] * len(readings), readings
    for reading in readings:
        assert reading["errors"] == [], f"turn {reading['turn']}: {reading['errors']}"
        assert reading["responseId"] == reading["steps"][-1]["responseId"]
    return readings


def check_greeting(stack: Stack, readings: list[Json], options: Json) -> None:
    """Two turns, GREETING then NEXT, the second sending only NEXT with `options`
    (the state keys it names the first with)."""
    first, second = readings
    answer = first["text"]
    assert echoed(answer) == {
        "users": [GREETING],
        "assistants": [],
        "reasoning": [],
        "tools": [],
        "system": [],
    }
    assert echoed(second["text"]) == {
        "users": [GREETING, NEXT],
        "assistants": [answer],
        "reasoning": ["thought 0"],
        "tools": [],
        "system": [],
    }
    *_, sent = stack.recorder.sent
    assert {k: sent.get(k) for k in options} == options
    assert user_texts(sent["input"]) == [NEXT]
    assert chat_turns(stack.upstream.requests[-1]) == [
        {"role": "user", "text": GREETING},
        {"role": "assistant", "text": answer, "reasoning": "thought 0"},
        {"role": "user", "text": NEXT},
    ]
    assert user_texts(stack.input_items(second["responseId"], AI_SDK_KEY)) == [NEXT]


@pytest.mark.parametrize("scenario", ["generate", "stream"])
def test_ai_sdk_previous_response_id(stack: Stack, scenario: str) -> None:
    """`generateText` (`streamText`) twice, the second with `previousResponseId`."""
    first, second = ai_sdk(stack, scenario)
    [turn] = second["steps"]
    assert turn["request"]["previous_response_id"] == first["responseId"]
    check_greeting(stack, [first, second], {"previous_response_id": first["responseId"]})
    assert [b.get("stream", False) for b in stack.recorder.sent] == [scenario == "stream"] * 2


def test_ai_sdk_conversation(stack: Stack) -> None:
    """Two turns naming one conversation (`providerOptions.openai.conversation`), made
    with `POST /v1/conversations`."""
    readings = ai_sdk(stack, "conversation")
    conversation = readings[0]["conversation"]
    assert str(conversation).startswith("conv_")
    check_greeting(stack, readings, {"conversation": conversation, "previous_response_id": None})
    items = stack.conversation_items(conversation, AI_SDK_KEY)
    assert kinds(items) == ["user", "reasoning", "assistant", "user", "reasoning", "assistant"]
    texts = [text_of(i["content"]) for i in items if i.get("type", "message") == "message"]
    assert texts == [GREETING, readings[0]["text"], NEXT, readings[1]["text"]]


def test_ai_sdk_tool_result_by_previous_response_id(stack: Stack) -> None:
    """A tool loop the client drives itself: the call, then only the tool's result named
    after it with `previousResponseId`, then a new prompt after that."""
    call, answer, last = ai_sdk(stack, "tool-result")
    assert call["finishReason"] == "tool-calls"
    [made] = call["steps"][0]["toolCalls"]
    assert made == {"toolCallId": CALL_ID, "toolName": TOOL, "input": {"q": FIRST}}
    assert echoed(answer["text"]) == {
        "users": [FIRST],
        "assistants": [""],
        "reasoning": ["thought 0"],
        "tools": [looked_up(FIRST)],
        "system": [],
    }
    assert echoed(last["text"])["users"] == [FIRST, NEXT]
    sent = stack.recorder.sent
    assert [b.get("previous_response_id") for b in sent] == [
        None,
        call["responseId"],
        answer["responseId"],
    ]
    [result] = sent[1]["input"]
    assert (result["type"], result["call_id"]) == ("function_call_output", CALL_ID)
    assert user_texts(sent[2]["input"]) == [NEXT]
    assert chat_turns(stack.upstream.requests[-1]) == [
        *tool_turns(FIRST),
        {"role": "assistant", "text": answer["text"], "reasoning": "thought 1"},
        {"role": "user", "text": NEXT},
    ]


def test_ai_sdk_tool_loop_then_previous_response_id(stack: Stack) -> None:
    """`generateText` with an executed tool and `stopWhen: stepCountIs(4)`: the SDK runs
    the tool and asks again, resending the first step's reasoning and call as
    `item_reference`s (store is true by default), which the gateway reads from its store;
    then a turn with `previousResponseId` of the loop's last response."""
    loop, after = ai_sdk(stack, "tools")
    first_step, second_step = loop["steps"]
    assert [c["toolName"] for c in first_step["toolCalls"]] == [TOOL]
    assert second_step["toolCalls"] == []
    assert echoed(loop["text"]) == {
        "users": [FIRST],
        "assistants": [""],
        "reasoning": ["thought 0"],
        "tools": [looked_up(FIRST)],
        "system": [],
    }
    assert echoed(after["text"]) == {
        "users": [FIRST, NEXT],
        "assistants": ["", loop["text"]],
        "reasoning": ["thought 0", "thought 1"],
        "tools": [looked_up(FIRST)],
        "system": [],
    }
    sent = stack.recorder.sent
    assert len(sent) == 3
    # the loop's second step names the first step's reasoning and call by their ids only
    made = stack.get(f"/v1/responses/{first_step['responseId']}", AI_SDK_KEY)["output"]
    assert kinds(made) == ["reasoning", "function_call"]
    references = [i for i in sent[1]["input"] if i.get("type") == "item_reference"]
    assert [i["id"] for i in references] == [i["id"] for i in made]
    assert kinds(sent[1]["input"]) == [
        "user",
        "item_reference",
        "item_reference",
        "function_call_output",
    ]
    # ... which the gateway read from its store: the upstream got them whole
    assert chat_turns(stack.upstream.requests[1]) == tool_turns(FIRST)
    assert sent[2]["previous_response_id"] == loop["responseId"]
    assert user_texts(sent[2]["input"]) == [NEXT]
    assert chat_turns(stack.upstream.requests[-1]) == [
        *tool_turns(FIRST),
        {"role": "assistant", "text": loop["text"], "reasoning": "thought 1"},
        {"role": "user", "text": NEXT},
    ]
