"""Codex 0.169.0 (tests/clients, pinned) as a judge of the gateway: `codex exec --json` in
its stock configuration (only a provider table with `wire_api = "responses"` in
config.toml: web search and multi-agent on) through `python -m generator serve` in front of
a scripted chat upstream (tests/helpers/agent_upstream.py). Each scenario asserts what Codex printed
and what the upstream received. Claude Code's are in tests/agents/test_claude_code.py.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers.agent_capture import tiny_png
from tests.helpers.agent_clis import AgentRun, Stack, Stacks
from tests.helpers.agent_upstream import (
    SIGNATURE,
    Call,
    Fault,
    FaultKind,
    Script,
    assistant_call_turns,
    content_text,
    match_tool,
    offered_tools,
    usage_totals,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agents"
MARK = "agent-marker-42"
EXEC = Call("exec_command", {"cmd": f"echo {MARK}"})
PROMPT = f"Run `echo {MARK}` and tell me what it printed."


@pytest.fixture(scope="module")
def stacks() -> Iterator[Stacks]:
    opened = Stacks()
    try:
        yield opened
    finally:
        opened.close()


def finished(run: AgentRun) -> None:
    assert run.returncode == 0 and not run.timed_out, run.describe()
    kinds = [e.get("type") for e in run.events]
    assert "turn.completed" in kinds and "turn.failed" not in kinds, run.describe()
    # Nothing refused on the way: an agent that gets a 400 may retry without what was
    # refused (Claude Code turns tool search off) and still finish.
    refused = [line for line in run.gateway_log if line.get("status") == 400 or "refused" in line]
    assert not refused, refused


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def commands(run: AgentRun) -> list[dict[str, Any]]:
    """The commands Codex ran (its `command_execution` items)."""
    return [item for _, kind, item in run.tool_uses() if kind == "command_execution"]


def exec_loop(stack: Stack, script: Script, prompt: str = PROMPT) -> AgentRun:
    """Codex's exec_command called, run and answered; the checks every dialect shares."""
    run = stack.run("codex", prompt, script)
    finished(run)
    upstream = stack.upstream
    assert [t.kind for t in upstream.turns] == ["calls", "answer"], run.describe()
    first, second = upstream.requests
    call_ids = upstream.turns[0].call_ids
    ran = commands(run)  # parallel calls may finish in any order
    assert len(ran) == len(script.calls), run.describe()
    for call in script.calls:
        [item] = [i for i in ran if call.arguments["cmd"] in i["command"]]
        assert item["exit_code"] == 0
    [turn] = assistant_call_turns(second)
    assert [c["id"] for c in turn["tool_calls"]] == call_ids
    assert [
        (c["function"]["name"], json.loads(c["function"]["arguments"])) for c in turn["tool_calls"]
    ] == [(c.name, c.arguments) for c in script.calls]
    # Each call answered once (parallel calls' results may come in the order they ended).
    assert sorted(m["tool_call_id"] for m in tool_messages(second)) == sorted(call_ids)
    # Codex's system prompt (its first developer message) first, then as it was.
    assert second["messages"][0]["role"] in ("system", "developer")
    assert "You are a coding agent running in the Codex CLI" in content_text(
        second["messages"][0]["content"]
    )
    assert second["messages"][0] == first["messages"][0]
    assert second["tools"] == first["tools"]
    # The tokens each stream carried (where the backend puts them) reached Codex.
    [done] = [e for e in run.events if e.get("type") == "turn.completed"]
    tokens_in, tokens_out = usage_totals(upstream.turns)
    assert (done["usage"]["input_tokens"], done["usage"]["output_tokens"]) == (
        tokens_in,
        tokens_out,
    ), done["usage"]
    return run


# -- the scenarios -------------------------------------------------------------------------


def test_stock_codex_text_answer(stacks: Stacks) -> None:
    """Stock Codex (web search, multi-agent, client_metadata) gets an answer: the hosted
    web_search tool left out and said, the namespace's tools offered as functions, the
    client-only keys dropped."""
    stack = stacks.get()
    run = stack.run("codex", "Say hello.", Script(text="Hello from the scripted upstream."))
    finished(run)
    assert run.final_text() == "Hello from the scripted upstream."
    [body] = stack.upstream.requests
    assert body["model"] == "deepseek-reasoner"
    assert "client_metadata" not in body and "metadata" not in body
    tools = body["tools"]
    assert all(t["type"] == "function" for t in tools), tools
    offered = offered_tools(body)
    assert {"exec_command", "view_image"} <= offered
    for inner in ("spawn_agent", "send_input", "wait_agent", "close_agent", "resume_agent"):
        assert match_tool(inner, offered) is not None, (inner, sorted(offered))
    assert not any("web_search" in name for name in offered)
    assert content_text(body["messages"][-1]["content"]) == "Say hello."
    # The upstream's key (the gateway's key_env), never the agent's.
    assert stack.upstream.headers[0].get("authorization") == "Bearer sk-upstream-dummy"
    said = [line for line in stack.gateway.log_lines() if line.get("protocol") == "responses"]
    assert said and "web_search" in json.dumps(said[-1].get("dropped")), said


def test_codex_request_dropped_keys_said(stacks: Stacks) -> None:
    """Codex's real first request (tests/fixtures/agents/codex_first_request.json), sent
    to the gateway as it is: answered, with what was dropped said in the response's
    `x-chunkspec-dropped` header (the hosted web_search tool, client_metadata)."""
    stack = stacks.get()
    stack.upstream.reset(Script(text="Hello."))
    body = json.loads((FIXTURES / "codex_first_request.json").read_text())["body"]
    with httpx.stream("POST", f"{stack.gateway.v1}/responses", json=body, timeout=20.0) as response:
        text = response.read().decode()
        assert response.status_code == 200, text
        dropped = response.headers.get("x-chunkspec-dropped", "")
    assert "web_search" in dropped and "client_metadata" in dropped, dropped
    assert "response.completed" in text
    [sent] = stack.upstream.requests
    assert "client_metadata" not in sent and "prompt_cache_key" not in sent


def test_exec_called_run_and_answered_deepseek(stacks: Stacks) -> None:
    stack = stacks.get()
    script = Script(calls=[EXEC])
    run = exec_loop(stack, script)
    assert MARK in run.final_text()
    assert MARK in commands(run)[0]["aggregated_output"]
    [turn] = assistant_call_turns(stack.upstream.requests[1])
    assert turn["reasoning_content"] == script.reasoning
    [result] = tool_messages(stack.upstream.requests[1])
    assert MARK in content_text(result["content"])
    assert run.thinking() == [script.reasoning] * 2  # each turn's reasoning, shown


def test_parallel_calls(stacks: Stacks) -> None:
    stack = stacks.get()
    calls = [
        Call("exec_command", {"cmd": "echo parallel-one"}),
        Call("exec_command", {"cmd": "echo parallel-two"}),
    ]
    run = exec_loop(stack, Script(calls=calls), "Run both echo commands at once.")
    results = {
        m["tool_call_id"]: content_text(m["content"])
        for m in tool_messages(stack.upstream.requests[1])
    }
    first_id, second_id = stack.upstream.turns[0].call_ids
    assert "parallel-one" in results[first_id] and "parallel-two" in results[second_id]
    assert "parallel-one" in run.final_text() and "parallel-two" in run.final_text()


def test_long_reasoning_stream(stacks: Stacks) -> None:
    stack = stacks.get()
    reasoning = "".join(f"step {i}; " for i in range(6000))
    script = Script(calls=[EXEC], reasoning=reasoning, reasoning_deltas=6000)
    run = exec_loop(stack, script)
    assert run.thinking()[0] == reasoning  # 6,000 deltas, every character shown
    [turn] = assistant_call_turns(stack.upstream.requests[1])
    assert turn["reasoning_content"] == reasoning  # and every character sent back


@pytest.mark.parametrize("kind", ["429", "500", "error_midstream", "cut"])
def test_upstream_fault_retried(stacks: Stacks, kind: FaultKind) -> None:
    """Codex retries a 429 (after its `retry-after`), a 500 (request_max_retries), a stream
    that ends in an error and a cut connection (stream_max_retries, "Reconnecting... 1/2";
    a 429 too); the retry's request holds nothing of the failed attempt (no item of it
    sent back as completed, no reasoning merged) and the turn finishes."""
    stack = stacks.get()
    script = Script(text="Recovered answer.", faults=[Fault(kind, retry_after="2")])
    run = stack.run("codex", "Say hello.", script)
    finished(run)
    assert run.final_text() == "Recovered answer."
    upstream = stack.upstream
    assert [t.kind for t in upstream.turns] == ["fault", "text"], run.describe()
    failed, retry = upstream.requests
    assert retry["messages"] == failed["messages"]
    reconnecting = [e["message"] for e in run.events if e.get("type") == "error"]
    if kind == "500":  # retried as a request (request_max_retries), without a word
        assert reconnecting == [], reconnecting
    else:  # retried as a stream (stream_max_retries), said
        assert len(reconnecting) == 1 and reconnecting[0].startswith("Reconnecting... 1/2")
    if kind == "429":  # the status and the retry-after reached Codex, which waited it out
        assert "429" in reconnecting[0], reconnecting
        assert upstream.times[1] - upstream.times[0] >= 1.9
    if kind == "error_midstream":  # the upstream's message, passed on
        assert "Provider returned error" in reconnecting[0], reconnecting


def test_upstream_429_retries_run_out(stacks: Stacks) -> None:
    """A 429 on every attempt: Codex tries 1 + stream_max_retries (2) times, then fails
    the turn with the upstream's status."""
    stack = stacks.get()
    script = Script(text="never", faults=[Fault("429", retry_after="0")] * 5)
    run = stack.run("codex", "Say hello.", script)
    assert run.returncode != 0, run.describe()
    assert [t.kind for t in stack.upstream.turns] == ["fault"] * 3, run.describe()
    [failed] = [e for e in run.events if e.get("type") == "turn.failed"]
    assert "429 Too Many Requests" in failed["error"]["message"], failed
    line = [x for x in stack.gateway.log_lines() if x.get("protocol") == "responses"][-1]
    assert line["status"] == 429


def test_openrouter_reasoning_details(stacks: Stacks) -> None:
    stack = stacks.get("openrouter")
    script = Script(style="openrouter", calls=[EXEC])
    run = exec_loop(stack, script)
    assert MARK in run.final_text()
    [turn] = assistant_call_turns(stack.upstream.requests[1])
    details = turn["reasoning_details"]
    assert "".join(d["text"] for d in details) == script.reasoning


def test_think_tags_never_shown(stacks: Stacks) -> None:
    stack = stacks.get("think")
    script = Script(style="think", calls=[EXEC])
    run = exec_loop(stack, script)
    assert MARK in run.final_text()
    for text in run.texts():
        assert "<think>" not in text and "</think>" not in text, text
    assert run.thinking()[0] == script.reasoning  # a reasoning item, not answer text
    for body in stack.upstream.requests:
        assert "<think>" not in json.dumps(body["messages"])


def test_gemini_signature_comes_back(stacks: Stacks) -> None:
    stack = stacks.get("gemini")
    exec_loop(stack, Script(style="gemini", calls=[EXEC]))
    second = stack.upstream.requests[1]
    [turn] = assistant_call_turns(second)
    assert turn["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": SIGNATURE}}
    assert "skip_thought_signature_validator" not in json.dumps(second)


def test_view_image(stacks: Stacks, tmp_path: Path) -> None:
    """Codex's view_image answers with an `input_image` output: it reaches a chat upstream
    that takes images in a user message right after the tool message."""
    stack = stacks.get("openai")
    png = tmp_path / "red.png"
    png.write_bytes(tiny_png())
    call = Call("view_image", {"path": str(png)})
    run = stack.run("codex", f"Look at {png}.", Script(style="openai", calls=[call]), cwd=tmp_path)
    finished(run)
    assert [t.kind for t in stack.upstream.turns] == ["calls", "answer"], run.describe()
    messages = stack.upstream.requests[1]["messages"]
    index = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    assert messages[index]["tool_call_id"] == stack.upstream.turns[0].call_ids[0]
    after = messages[index + 1]
    assert after["role"] == "user"
    urls = [p["image_url"]["url"] for p in after["content"] if p.get("type") == "image_url"]
    assert len(urls) == 1 and urls[0].startswith("data:image/png;base64,")
    assert base64.b64decode(urls[0].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


def test_namespace_tool_called(stacks: Stacks) -> None:
    """A call of a tool inside Codex's multi-agent namespace, offered flat to the chat
    upstream, goes back to Codex as the namespace's call, which Codex runs."""
    stack = stacks.get()
    call = Call("close_agent", {"target": "nonexistent-agent"})
    run = stack.run("codex", "Close the agent.", Script(calls=[call]))
    finished(run)
    assert [t.kind for t in stack.upstream.turns] == ["calls", "answer"], run.describe()
    second = stack.upstream.requests[1]
    [turn] = assistant_call_turns(second)
    flat = stack.upstream.turns[0].detail
    assert turn["tool_calls"][0]["function"]["name"] == flat  # the upstream's own name back
    [result] = tool_messages(second)
    assert result["tool_call_id"] == stack.upstream.turns[0].call_ids[0]
    output = content_text(result["content"])
    assert "unsupported call" not in output, output
    assert "nonexistent-agent" in output  # Codex's agent registry answered


def test_hosted_tools_refused_when_configured(stacks: Stacks) -> None:
    """`hosted_tools = "refuse"`: stock Codex's web_search gets a 400 that names it, and
    nothing goes upstream."""
    stack = stacks.get(hosted_tools="refuse")
    run = stack.run("codex", "Say hello.", Script(text="never"))
    assert run.returncode != 0, run.describe()
    assert "web_search" in json.dumps([e for e in run.events if e.get("type") == "error"])
    assert stack.upstream.requests == []
