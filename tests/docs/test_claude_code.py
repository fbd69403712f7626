"""docs/claude-code.md followed as written (tests/helpers/agent_docs.py): its gateway.toml and its
two commands, Claude Code on a scripted DeepSeek in place of api.deepseek.com. The page's
Bash loop must work: Claude Code prints what the command printed, and DeepSeek gets its
key, its models and the reasoning of the turn that called the tool."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.agent_docs import Page, agent_as_shown, gateway_as_shown, replaced
from tests.helpers.agent_upstream import Call, Script, ScriptedUpstream, assistant_call_turns
from tests.helpers.docs_blocks import ROOT
from tests.helpers.loopback import serve

DOC = ROOT / "docs/claude-code.md"


def test_the_claude_code_page_gives_a_working_tool_loop(tmp_path: Path) -> None:
    page = Page.read(DOC)
    assert set(page.files) == {"gateway.toml"} and set(page.commands) == {"gateway", "agent"}
    bash = Call("Bash", {"command": "echo hello-from-deepseek", "description": "Print it"})
    upstream = ScriptedUpstream(Script(style="deepseek", calls=[bash]))
    with serve(upstream.app()) as base:
        config = replaced(page.files["gateway.toml"], "https://api.deepseek.com/v1", f"{base}/v1")
        with gateway_as_shown(page, config, tmp_path) as gateway:
            run = agent_as_shown(page, gateway, tmp_path, {})
    assert run.returncode == 0 and not run.timed_out, run.describe()
    assert [name for _, name, _ in run.tool_uses()] == ["Bash"], run.describe()
    assert "hello-from-deepseek" in run.final_text(), run.describe()
    assert {headers["authorization"] for headers in upstream.headers} == {"Bearer sk-your-key"}
    assert {body["model"] for body in upstream.requests} <= {"deepseek-reasoner", "deepseek-chat"}
    last = upstream.requests[-1]
    [turn] = assistant_call_turns(last)
    assert turn["reasoning_content"] == upstream.script.reasoning, "DeepSeek's rule"
    results = [m["content"] for m in last["messages"] if m["role"] == "tool"]
    assert len(results) == 1 and "hello-from-deepseek" in str(results[0])
