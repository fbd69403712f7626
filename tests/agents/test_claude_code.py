"""Claude Code 2.1.328 (tests/clients, pinned) as a judge of the gateway: `claude -p`
through `python -m generator serve` in front of a scripted chat upstream
(tests/helpers/agent_upstream.py). Each scenario asserts what Claude Code printed and what the
upstream received. Codex's scenarios are in tests/agents/test_codex.py.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.agent_capture import TINY_PDF, tiny_png
from tests.helpers.agent_clis import AgentRun, Stack, Stacks
from tests.helpers.agent_upstream import (
    SIGNATURE,
    Call,
    Fault,
    FaultKind,
    Script,
    assistant_call_turns,
    content_text,
    offered_tools,
    usage_totals,
)

MARK = "agent-marker-42"
BASH = Call("Bash", {"command": f"echo {MARK}", "description": "Print a marker"})
PROMPT = f"Run `echo {MARK}` with Bash and tell me what it printed."


@pytest.fixture(scope="module")
def stacks() -> Iterator[Stacks]:
    opened = Stacks()
    try:
        yield opened
    finally:
        opened.close()


def finished(run: AgentRun) -> None:
    assert run.returncode == 0 and not run.timed_out, run.describe()
    result = [e for e in run.events if e.get("type") == "result"]
    assert result and result[-1].get("is_error") is False, run.describe()
    # Nothing refused on the way: an agent that gets a 400 may retry without what was
    # refused (Claude Code turns tool search off) and still finish.
    refused = [line for line in run.gateway_log if line.get("status") == 400 or "refused" in line]
    assert not refused, refused


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def bash_loop(stack: Stack, script: Script, prompt: str = PROMPT) -> AgentRun:
    """Claude Code's Bash called, run and answered; the checks every dialect shares."""
    run = stack.run("claude", prompt, script)
    finished(run)
    upstream = stack.upstream
    assert [t.kind for t in upstream.turns] == ["calls", "answer"], run.describe()
    first, second = upstream.requests
    call_ids = upstream.turns[0].call_ids
    # What Claude Code printed: the calls it ran, each result, the answer quoting them.
    printed = [(name, args) for _, name, args in run.tool_uses()]
    assert printed == [(c.name, c.arguments) for c in script.calls]
    results = run.tool_results()
    assert len(results) == len(script.calls)
    assert all(r.get("is_error") is False for r in results), results
    # What the upstream received next: its own calls back, ids matching, each result
    # answering its call, the system prompt and the tools as they were.
    [turn] = assistant_call_turns(second)
    assert [c["id"] for c in turn["tool_calls"]] == call_ids
    assert [
        (c["function"]["name"], json.loads(c["function"]["arguments"])) for c in turn["tool_calls"]
    ] == [(c.name, c.arguments) for c in script.calls]
    # Each call answered once (parallel calls' results may come in the order they ended).
    assert sorted(m["tool_call_id"] for m in tool_messages(second)) == sorted(call_ids)
    assert second["messages"][0]["role"] == "system"
    assert second["messages"][0] == first["messages"][0]
    assert "You are a Claude agent" in content_text(first["messages"][0]["content"])
    assert second["tools"] == first["tools"]
    # The tokens each stream carried (where the backend puts them) reached Claude Code.
    [result] = [e for e in run.events if e.get("type") == "result"]
    tokens_in, tokens_out = usage_totals(upstream.turns)
    assert (result["usage"]["input_tokens"], result["usage"]["output_tokens"]) == (
        tokens_in,
        tokens_out,
    ), result["usage"]
    return run


# -- the scenarios -------------------------------------------------------------------------


def test_text_answer(stacks: Stacks) -> None:
    stack = stacks.get()
    run = stack.run("claude", "Say hello.", Script(text="Hello from the scripted upstream."))
    finished(run)
    assert run.final_text() == "Hello from the scripted upstream."
    assert run.thinking() == [Script().reasoning]
    [body] = stack.upstream.requests
    assert body["model"] == "deepseek-reasoner"  # the gateway's [models] mapping
    assert body["stream"] is True
    assert body["messages"][0]["role"] == "system"
    assert "You are a Claude agent" in content_text(body["messages"][0]["content"])
    assert content_text(body["messages"][1]["content"]).endswith("Say hello.")
    assert {"Bash", "Read", "ToolSearch"} <= offered_tools(body)
    # The upstream's key (the gateway's key_env), never the agent's.
    assert stack.upstream.headers[0].get("authorization") == "Bearer sk-upstream-dummy"


def test_claude_code_own_model_ids_mapped(stacks: Stacks) -> None:
    """Started with no model at all, Claude Code sends its own model ids; the gateway's
    `[models]` maps every one of them to the upstream's model."""
    stack = stacks.get()
    run = stack.run("claude", "Say hello.", Script(text="Mapped."), model=None)
    finished(run)
    assert run.final_text() == "Mapped."
    assert stack.upstream.requests
    assert {body["model"] for body in stack.upstream.requests} == {"deepseek-reasoner"}
    asked = {line.get("model") for line in stack.gateway.log_lines() if "model" in line}
    assert any(str(m).startswith("claude-") for m in asked), asked


def test_bash_called_run_and_answered_deepseek(stacks: Stacks) -> None:
    stack = stacks.get()
    script = Script(calls=[BASH])
    run = bash_loop(stack, script)
    assert MARK in run.final_text()
    first, second = stack.upstream.requests
    assert first["model"] == second["model"] == stack.upstream_model == "deepseek-reasoner"
    [turn] = assistant_call_turns(second)
    # DeepSeek's thinking mode: the reasoning of a turn that called tools comes back.
    assert turn["reasoning_content"] == script.reasoning
    [result] = tool_messages(second)
    assert MARK in content_text(result["content"])
    assert run.thinking()[0] == script.reasoning


def test_parallel_calls(stacks: Stacks) -> None:
    stack = stacks.get()
    calls = [
        Call("Bash", {"command": "echo parallel-one", "description": "Print one"}),
        Call("Bash", {"command": "echo parallel-two", "description": "Print two"}),
    ]
    run = bash_loop(stack, Script(calls=calls), "Run both echo commands at once.")
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
    script = Script(calls=[BASH], reasoning=reasoning, reasoning_deltas=6000)
    run = bash_loop(stack, script)
    assert run.thinking()[0] == reasoning  # 6,000 deltas, every character shown
    [turn] = assistant_call_turns(stack.upstream.requests[1])
    assert turn["reasoning_content"] == reasoning  # and every character sent back


@pytest.mark.parametrize("kind", ["429", "500", "error_midstream", "cut"])
def test_upstream_fault_retried(stacks: Stacks, kind: FaultKind) -> None:
    """Claude Code retries a 429 (after its `retry-after`), a 500, a stream that ends in
    an error event and a cut connection; the retry is the same request (nothing of the
    failed attempt merged into it) and the turn finishes."""
    stack = stacks.get()
    script = Script(text="Recovered answer.", faults=[Fault(kind, retry_after="2")])
    run = stack.run("claude", "Say hello.", script)
    finished(run)
    assert run.final_text() == "Recovered answer."
    upstream = stack.upstream
    assert [t.kind for t in upstream.turns] == ["fault", "text"], run.describe()
    failed, retry = upstream.requests
    assert retry["messages"] == failed["messages"]
    retries = [e for e in run.events if e.get("subtype") == "api_retry"]
    if kind in ("429", "500"):  # the upstream's status reached Claude Code, which said so
        assert [e.get("error_status") for e in retries] == [int(kind)], run.describe()
    if kind == "429":  # and its retry-after, which Claude Code waited out
        assert retries[0]["retry_delay_ms"] >= 1900, retries
        assert upstream.times[1] - upstream.times[0] >= 1.9


def test_openrouter_reasoning_details(stacks: Stacks) -> None:
    stack = stacks.get("openrouter")
    script = Script(style="openrouter", calls=[BASH])
    run = bash_loop(stack, script)
    assert MARK in run.final_text()
    assert run.thinking()[0] == script.reasoning
    [turn] = assistant_call_turns(stack.upstream.requests[1])
    details = turn["reasoning_details"]
    assert all(d["type"] == "reasoning.text" for d in details), details
    assert "".join(d["text"] for d in details) == script.reasoning


def test_think_tags_never_shown(stacks: Stacks) -> None:
    stack = stacks.get("think")
    script = Script(style="think", calls=[BASH])
    run = bash_loop(stack, script)
    assert MARK in run.final_text()
    for text in run.texts():
        assert "<think>" not in text and "</think>" not in text, text
    assert run.thinking()[0] == script.reasoning  # a thinking block, not answer text
    for body in stack.upstream.requests:
        assert "<think>" not in json.dumps(body["messages"])


def test_gemini_signature_comes_back(stacks: Stacks) -> None:
    stack = stacks.get("gemini")
    script = Script(style="gemini", calls=[BASH])
    bash_loop(stack, script)
    second = stack.upstream.requests[1]
    [turn] = assistant_call_turns(second)
    assert turn["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": SIGNATURE}}
    assert "skip_thought_signature_validator" not in json.dumps(second)


def test_image_in_tool_result(stacks: Stacks, tmp_path: Path) -> None:
    """Claude Code's Read of a PNG: the image reaches a chat upstream that takes images
    (OpenAI's dialect) in a user message right after the tool message, and the turn goes
    on."""
    stack = stacks.get("openai")
    png = tmp_path / "red.png"
    png.write_bytes(tiny_png())
    call = Call("Read", {"file_path": str(png)})
    run = stack.run("claude", f"Look at {png}.", Script(style="openai", calls=[call]), cwd=tmp_path)
    finished(run)
    assert [t.kind for t in stack.upstream.turns] == ["calls", "answer"], run.describe()
    messages = stack.upstream.requests[1]["messages"]
    index = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    assert messages[index]["tool_call_id"] == stack.upstream.turns[0].call_ids[0]
    after = messages[index + 1]
    assert after["role"] == "user"
    urls = [p["image_url"]["url"] for p in after["content"] if p.get("type") == "image_url"]
    assert urls == ["data:image/png;base64," + base64.b64encode(tiny_png()).decode()]


def test_pdf_in_tool_result(stacks: Stacks, tmp_path: Path) -> None:
    """Claude Code's Read of a PDF: the document reaches the chat upstream as a `file`
    part in a user message right after the tool message."""
    stack = stacks.get("openai")
    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(TINY_PDF)
    call = Call("Read", {"file_path": str(pdf)})
    run = stack.run("claude", f"Read {pdf}.", Script(style="openai", calls=[call]), cwd=tmp_path)
    finished(run)
    assert [t.kind for t in stack.upstream.turns] == ["calls", "answer"], run.describe()
    messages = stack.upstream.requests[1]["messages"]
    index = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    after = messages[index + 1]
    assert after["role"] == "user"
    files = [p["file"] for p in after["content"] if p.get("type") == "file"]
    assert len(files) == 1
    assert base64.b64encode(TINY_PDF).decode() in files[0]["file_data"]


def test_tool_search(stacks: Stacks) -> None:
    """Tools marked `defer_loading` are held back from the upstream until a
    `tool_reference` names them (as Anthropic's API does); Claude Code's tool search keeps
    working."""
    stack = stacks.get()
    search = Call("ToolSearch", {"query": "select:WebFetch", "max_results": 5})
    run = stack.run("claude", "Fetch https://example.com for me.", Script(calls=[search]))
    finished(run)
    assert [t.kind for t in stack.upstream.turns] == ["calls", "answer"], run.describe()
    [result] = run.tool_results()
    assert result.get("is_error") is not True, result
    first, second = stack.upstream.requests
    assert "ToolSearch" in offered_tools(first)
    assert "DeferredToolPlaceholder" not in offered_tools(first)
    assert "WebFetch" not in offered_tools(first)
    assert "ToolSearch" in offered_tools(second)  # tool search still on
    assert "WebFetch" in offered_tools(second)  # loaded by the tool_reference
    assert "DeferredToolPlaceholder" not in offered_tools(second)
    [web_fetch] = [t for t in second["tools"] if t["function"]["name"] == "WebFetch"]
    assert "url" in web_fetch["function"]["parameters"]["properties"]


def test_system_message_after_first_turn(stacks: Stacks) -> None:
    """Claude Code's mid-conversation system message ("# Environment …") goes where a
    vLLM chat template takes it: no system message after a non-system one, its text kept."""
    stack = stacks.get("vllm")
    run = stack.run("claude", PROMPT, Script(style="openai", calls=[BASH]))
    finished(run)
    assert len(stack.upstream.requests) == 2, run.describe()
    for body in stack.upstream.requests:
        roles = [m["role"] for m in body["messages"]]
        leading = next(i for i, role in enumerate(roles) if role != "system")
        assert "system" not in roles[leading:], roles
        assert "# Environment" in json.dumps(body["messages"])
