"""docs/codex.md followed as written (tests/helpers/agent_docs.py): its gateway.toml, Codex's
config.toml and the two commands, Codex in its stock configuration on a scripted vLLM.
Codex's shell loop must work: Codex prints what the command printed, and vLLM gets the
page's model and the command's output."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.agent_docs import Page, agent_as_shown, gateway_as_shown, replaced
from tests.helpers.agent_upstream import Call, Script, ScriptedUpstream
from tests.helpers.docs_blocks import ROOT
from tests.helpers.loopback import serve

DOC = ROOT / "docs/codex.md"


def test_the_codex_page_gives_a_working_tool_loop(tmp_path: Path) -> None:
    page = Page.read(DOC)
    assert set(page.files) == {"gateway.toml", "config.toml"}
    assert set(page.commands) == {"gateway", "agent"}
    shell = Call("exec_command", {"cmd": "echo hello-from-vllm"})
    upstream = ScriptedUpstream(Script(style="deepseek", calls=[shell]))
    with serve(upstream.app()) as base:
        config = replaced(page.files["gateway.toml"], "http://localhost:8000/v1", f"{base}/v1")
        with gateway_as_shown(page, config, tmp_path) as gateway:
            home = {".codex/config.toml": page.files["config.toml"]}
            run = agent_as_shown(page, gateway, tmp_path, home)
    assert run.returncode == 0 and not run.timed_out, run.describe()
    assert "hello-from-vllm" in run.final_text(), run.describe()
    assert {body["model"] for body in upstream.requests} == {"Qwen/Qwen3-8B"}
    last = upstream.requests[-1]
    results = [m["content"] for m in last["messages"] if m["role"] == "tool"]
    assert len(results) == 1 and "hello-from-vllm" in str(results[0])
