"""openai-agents (the OpenAI Agents SDK for Python, pinned in requirements.lock) through the
gateway's /v1/responses: an Agent with a function tool, run by `Runner` (unstreamed and
streamed) on the Responses model against a scripted chat upstream
(tests/helpers/agent_upstream.py). Asserts what the agent returned and what the upstream
received: its tool called, run by the SDK, the result sent back with the call's id.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.agent_clis import Stack, Stacks
from tests.helpers.agent_upstream import (
    Call,
    Script,
    Style,
    assistant_call_turns,
    content_text,
    offered_tools,
)

if TYPE_CHECKING:
    from agents import Agent

MARK = "sdk-marker-7"
CALLED: list[str] = []


def lookup_marker(city: str) -> str:
    """Look up the marker of a city.

    Args:
        city: The city's name.
    """
    CALLED.append(city)
    return f"{MARK} for {city}"


@pytest.fixture(scope="module")
def stacks() -> Iterator[Stacks]:
    opened = Stacks()
    try:
        yield opened
    finally:
        opened.close()


def agent(stack: Stack) -> Agent[Any]:
    # Imported here, not at the top: openai-agents takes seconds to import, and every
    # pytest-xdist worker imports each test module to collect it.
    from agents import Agent, OpenAIResponsesModel, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)  # the SDK would send traces to OpenAI otherwise
    client = AsyncOpenAI(base_url=stack.gateway.v1, api_key="sk-test-dummy", max_retries=0)
    return Agent(
        name="Marker agent",
        instructions="You look markers up with your tool.",
        tools=[function_tool(lookup_marker)],
        model=OpenAIResponsesModel(stack.route.client_model, client),
    )


async def run_agent(stack: Stack, streamed: bool) -> str:
    from agents import RunConfig, Runner

    config = RunConfig(tracing_disabled=True)
    if not streamed:
        result = await Runner.run(agent(stack), "What is Paris's marker?", run_config=config)
        return str(result.final_output)
    streaming = Runner.run_streamed(agent(stack), "What is Paris's marker?", run_config=config)
    async for _ in streaming.stream_events():
        pass
    return str(streaming.final_output)


@pytest.mark.parametrize("streamed", [False, True], ids=["unstreamed", "streamed"])
@pytest.mark.parametrize("style", ["deepseek", "openrouter"])
def test_function_tool_loop(stacks: Stacks, streamed: bool, style: Style) -> None:
    stack = stacks.get(style)
    script = Script(style=style, calls=[Call("lookup_marker", {"city": "Paris"})])
    stack.upstream.reset(script)
    CALLED.clear()
    output = asyncio.run(asyncio.wait_for(run_agent(stack, streamed), 30))
    assert CALLED == ["Paris"]  # the SDK ran the tool the upstream called
    assert MARK in output
    upstream = stack.upstream
    assert [t.kind for t in upstream.turns] == ["calls", "answer"]
    first, second = upstream.requests
    assert first["model"] == stack.upstream_model  # the gateway's [models] mapping
    assert first["messages"][0]["role"] in ("system", "developer")
    assert content_text(first["messages"][0]["content"]) == "You look markers up with your tool."
    assert offered_tools(first) == {"lookup_marker"}
    [tool] = first["tools"]
    assert tool["function"]["parameters"]["properties"]["city"]["type"] == "string"
    [turn] = assistant_call_turns(second)
    [call] = turn["tool_calls"]
    assert call["id"] == upstream.turns[0].call_ids[0]
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    [result] = [m for m in second["messages"] if m["role"] == "tool"]
    assert result["tool_call_id"] == call["id"]
    assert content_text(result["content"]) == f"{MARK} for Paris"
    if style == "deepseek":
        assert turn["reasoning_content"] == script.reasoning
    else:
        assert "".join(d["text"] for d in turn["reasoning_details"]) == script.reasoning
