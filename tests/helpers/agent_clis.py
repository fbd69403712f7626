"""The real agent CLIs, run non-interactively: Claude Code (`claude -p ... --output-format
stream-json --verbose`) and Codex (`codex exec --json`), each with a scratch home, stdin
closed and a bounded run (killed, with its process group, on timeout), each returning the
JSON events it printed. And the gateway, started as users start it (`python -m generator
serve --config FILE --port N`), waited on through GET /health.

Both CLIs come from tests/clients (pinned in its package.json, installed by `npm ci`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helpers.agent_upstream import Script, ScriptedUpstream
from tests.helpers.gateways import free_port, wait_healthy
from tests.helpers.loopback import serve

ROOT = Path(__file__).resolve().parents[2]
CLIENTS_BIN = ROOT / "tests" / "clients" / "node_modules" / ".bin"
CLAUDE = CLIENTS_BIN / "claude"
CODEX = CLIENTS_BIN / "codex"
HOST = "127.0.0.1"

JSON = dict[str, Any]


@dataclass
class AgentRun:
    """What one agent run printed: its JSON events (one a line on stdout), the lines that
    were not JSON, stderr, the exit status and the wall time."""

    events: list[JSON]
    other_lines: list[str]
    stderr: str
    returncode: int
    seconds: float
    timed_out: bool
    gateway_log: list[JSON] = field(default_factory=list[JSON])
    """The gateway's log lines of this run (one per request it answered or refused)."""

    def final_text(self) -> str:
        """The agent's last answer: Claude Code's `result` event, Codex's last
        `agent_message` item."""
        for event in reversed(self.events):
            if event.get("type") == "result":
                return str(event.get("result", ""))
            item = event.get("item")
            if (
                event.get("type") == "item.completed"
                and isinstance(item, dict)
                and item.get("type") == "agent_message"
            ):
                return str(item.get("text", ""))
        return ""

    def tool_uses(self) -> list[tuple[str, str, Any]]:
        """The tool calls the agent printed, in order: (id, name, input). Claude Code:
        `tool_use` blocks of its `assistant` events; Codex: its completed items
        (`command_execution`: the command; other tools: the item as printed)."""
        found: list[tuple[str, str, Any]] = []
        for event in self.events:
            message = event.get("message")
            if event.get("type") == "assistant" and isinstance(message, dict):
                for block in message.get("content") or []:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        found.append((str(block["id"]), str(block["name"]), block.get("input")))
            item = event.get("item")
            if (
                event.get("type") == "item.completed"
                and isinstance(item, dict)
                and item.get("type") not in ("agent_message", "reasoning", "error")
            ):
                found.append((str(item.get("id")), str(item.get("type")), item))
        return found

    def tool_results(self) -> list[JSON]:
        """Claude Code's `tool_result` blocks (its `user` events), in order."""
        found: list[JSON] = []
        for event in self.events:
            message = event.get("message")
            if event.get("type") == "user" and isinstance(message, dict):
                content = message.get("content")
                if isinstance(content, list):
                    found += [
                        b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
                    ]
        return found

    def texts(self) -> list[str]:
        """Every answer text the agent printed (Claude Code's text blocks, Codex's agent
        messages) and its final result."""
        found: list[str] = []
        for event in self.events:
            message = event.get("message")
            if event.get("type") == "assistant" and isinstance(message, dict):
                found += [
                    str(b.get("text", ""))
                    for b in message.get("content") or []
                    if isinstance(b, dict) and b.get("type") == "text"
                ]
            item = event.get("item")
            if isinstance(item, dict) and item.get("type") == "agent_message":
                found.append(str(item.get("text", "")))
            if event.get("type") == "result":
                found.append(str(event.get("result", "")))
        return found

    def thinking(self) -> list[str]:
        """The reasoning the agent printed: Claude Code's thinking blocks, Codex's
        reasoning items."""
        found: list[str] = []
        for event in self.events:
            message = event.get("message")
            if event.get("type") == "assistant" and isinstance(message, dict):
                found += [
                    str(b.get("thinking", ""))
                    for b in message.get("content") or []
                    if isinstance(b, dict) and b.get("type") == "thinking"
                ]
            item = event.get("item")
            if (
                event.get("type") == "item.completed"
                and isinstance(item, dict)
                and item.get("type") == "reasoning"
            ):
                found.append(str(item.get("text", "")))
        return found

    def describe(self) -> str:
        """For assertion messages: the end of what the agent printed."""
        tail = [json.dumps(e)[:400] for e in self.events[-8:]]
        return (
            f"exit {self.returncode} after {self.seconds:.1f} s"
            f"{' (timed out)' if self.timed_out else ''}\n"
            + "\n".join(tail + self.other_lines[-5:])
            + f"\nstderr: {self.stderr[-1500:]}"
        )


def _run(argv: list[str], env: Mapping[str, str], cwd: Path, timeout: float) -> AgentRun:
    start = time.monotonic()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: killed whole on timeout
    )
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(process)
        stdout, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            _kill_group(process)
    events: list[JSON] = []
    other: list[str] = []
    for line in stdout.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            other.append(line)
            continue
        if isinstance(value, dict):
            events.append(value)
        else:
            other.append(line)
    return AgentRun(events, other, stderr, process.returncode, time.monotonic() - start, timed_out)


def _kill_group(process: subprocess.Popen[str]) -> None:
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)


def _base_env(home: Path) -> dict[str, str]:
    """A scratch home and nothing from the developer's environment but PATH and locale."""
    env = {k: v for k, v in os.environ.items() if k in {"PATH", "LANG", "LC_ALL", "TERM", "TZ"}}
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["TMPDIR"] = str(home / "tmp")
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def run_claude(
    base_url: str,
    prompt: str,
    *,
    model: str | None = "claude-sonnet-4-5",
    small_model: str | None = None,
    cwd: Path | None = None,
    timeout: float = 30.0,
    allowed_tools: str = "Bash Read ToolSearch",
    extra_args: list[str] | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> AgentRun:
    """`claude -p PROMPT --output-format stream-json --verbose --model MODEL` against
    `base_url` (the server root: Claude Code adds /v1/messages), HOME a scratch folder.
    `model` None: no model given at all (neither `--model` nor `ANTHROPIC_MODEL` nor the
    small model), as a new user starts it: Claude Code's own model ids go out."""
    with tempfile.TemporaryDirectory(prefix="claude-home-") as home_dir:
        home = Path(home_dir)
        env = _base_env(home)
        env.update(
            {
                "ANTHROPIC_BASE_URL": base_url,
                "ANTHROPIC_API_KEY": "sk-ant-test-dummy",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "DISABLE_AUTOUPDATER": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
            }
        )
        if model is not None:
            env["ANTHROPIC_MODEL"] = model
            env["ANTHROPIC_DEFAULT_HAIKU_MODEL"] = small_model or model
            env["ANTHROPIC_SMALL_FAST_MODEL"] = small_model or model
        env.update(extra_env or {})
        (home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True}))
        work = cwd or home / "work"
        work.mkdir(parents=True, exist_ok=True)
        argv = [
            str(CLAUDE),
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            *(["--model", model] if model is not None else []),
            "--allowedTools",
            allowed_tools,
            *(extra_args or []),
        ]
        return _run(argv, env, work, timeout)


def codex_config(
    base_url: str,
    model: str,
    *,
    request_max_retries: int = 2,
    stream_max_retries: int = 2,
    extra: str = "",
) -> str:
    """$CODEX_HOME/config.toml: the provider table and nothing else a user would not
    write (web search and multi-agent stay on, as they are by default)."""
    return (
        f'model = "{model}"\n'
        'model_provider = "gw"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n'
        f"{extra}"
        "[model_providers.gw]\n"
        'name = "gateway"\n'
        f'base_url = "{base_url}"\n'
        'wire_api = "responses"\n'
        'env_key = "GW_KEY"\n'
        f"request_max_retries = {request_max_retries}\n"
        f"stream_max_retries = {stream_max_retries}\n"
        "stream_idle_timeout_ms = 20000\n"
    )


def run_codex(
    base_url: str,
    prompt: str,
    *,
    model: str = "gpt-5-codex",
    cwd: Path | None = None,
    timeout: float = 30.0,
    request_max_retries: int = 2,
    stream_max_retries: int = 2,
    extra_config: str = "",
) -> AgentRun:
    """`codex exec --json --skip-git-repo-check PROMPT` with a provider at `base_url`
    (up to /v1) in a scratch CODEX_HOME, stdin closed."""
    with tempfile.TemporaryDirectory(prefix="codex-home-") as home_dir:
        home = Path(home_dir)
        env = _base_env(home)
        codex_home = home / ".codex"
        codex_home.mkdir()
        (codex_home / "config.toml").write_text(
            codex_config(
                base_url,
                model,
                request_max_retries=request_max_retries,
                stream_max_retries=stream_max_retries,
                extra=extra_config,
            )
        )
        env.update({"CODEX_HOME": str(codex_home), "GW_KEY": "sk-test-dummy", "RUST_LOG": "error"})
        work = cwd or home / "work"
        work.mkdir(parents=True, exist_ok=True)
        argv = [str(CODEX), "exec", "--json", "--skip-git-repo-check", prompt]
        return _run(argv, env, work, timeout)


# -- The gateway --------------------------------------------------------------------------


@dataclass
class Gateway:
    base_url: str  # http://127.0.0.1:PORT (Claude Code's ANTHROPIC_BASE_URL)
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def v1(self) -> str:
        return f"{self.base_url}/v1"

    def log_lines(self) -> list[JSON]:
        """The JSON lines the gateway printed on stderr so far."""
        lines: list[JSON] = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                lines.append(value)
        return lines


@dataclass(frozen=True)
class Route:
    """One upstream of the test gateway: a scripted chat upstream in `dialect`, reached by
    the client model id `client_model`, which the gateway maps to `upstream_model`."""

    name: str
    dialect: str
    upstream_model: str
    think_tags: tuple[str, str] | None = None

    @property
    def client_model(self) -> str:
        return f"agent-{self.name}"


ROUTES = {
    route.name: route
    for route in (
        Route("deepseek", "deepseek", "deepseek-reasoner"),
        Route("openrouter", "openrouter", "deepseek/deepseek-r1"),
        Route("think", "openai", "qwen3-32b", ("<think>", "</think>")),
        Route("gemini", "gemini", "gemini-3-pro-preview"),
        Route("openai", "openai", "gpt-4.1"),
        Route("vllm", "vllm", "Qwen/Qwen3-32B"),
    )
}
"""The upstreams every test gateway has; any other model id goes to "deepseek"."""


def gateway_toml(upstreams: dict[str, str], *, hosted_tools: str = "drop") -> str:
    """The gateway's config: one chat upstream per route (`upstreams`: route name -> its
    base URL up to /v1), each client model id routed to its upstream, `*` to DeepSeek."""
    lines = ["[gateway]", f'host = "{HOST}"', f'hosted_tools = "{hosted_tools}"']
    for name, url in upstreams.items():
        route = ROUTES[name]
        lines += [
            f"[upstreams.{name}]",
            'protocol = "chat"',
            f'base_url = "{url}"',
            'key_env = "SCRIPTED_UPSTREAM_KEY"',
            f'dialect = "{route.dialect}"',
        ]
        if route.think_tags:
            lines.append(f'think_tags = ["{route.think_tags[0]}", "{route.think_tags[1]}"]')
    lines.append("[models]")
    for name in upstreams:
        route = ROUTES[name]
        lines.append(f'"{route.client_model}" = "{name}/{route.upstream_model}"')
    lines.append(f'"*" = "deepseek/{ROUTES["deepseek"].upstream_model}"')
    return "\n".join(lines) + "\n"


@contextmanager
def gateway(config_toml: str, *, start_timeout: float = 20.0) -> Iterator[Gateway]:
    """`python -m generator serve --config FILE --port N` from the checkout, stopped on exit."""
    with tempfile.TemporaryDirectory(prefix="gateway-") as tmp:
        config = Path(tmp) / "gateway.toml"
        config.write_text(config_toml)
        log_path = Path(tmp) / "gateway.log"
        port = free_port()
        env = {**os.environ, "SCRIPTED_UPSTREAM_KEY": "sk-upstream-dummy"}
        command = [sys.executable, "-m", "generator"]
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [
                    *command,
                    "serve",
                    "--config",
                    str(config),
                    "--host",
                    HOST,
                    "--port",
                    str(port),
                ],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        handle = Gateway(f"http://{HOST}:{port}", process, log_path)
        try:
            wait_healthy(
                handle.base_url,
                process,
                lambda: handle.log_path.read_text(errors="replace")[-3000:],
                start_timeout,
            )
            yield handle
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(10)


# -- A scripted upstream behind a gateway, shared by a test module's scenarios ---------------


@dataclass
class Stack:
    """A scripted chat upstream (on loopback) and the gateway in front of it, reached with
    the route's client model id."""

    upstream: ScriptedUpstream
    gateway: Gateway
    route: Route

    @property
    def upstream_model(self) -> str:
        return self.route.upstream_model

    def run(self, agent: str, prompt: str, script: Script, **options: Any) -> AgentRun:
        """Reset the upstream's records, give it `script`, run `agent` ("claude" or "codex")
        through the gateway with the route's model id (unless `model` is given)."""
        self.upstream.reset(script)
        options.setdefault("model", self.route.client_model)
        before = len(self.gateway.log_lines())
        if agent == "claude":
            run = run_claude(self.gateway.base_url, prompt, **options)
        else:
            run = run_codex(self.gateway.v1, prompt, **options)
        # A request's line is written when its response ends: wait for the upstream's.
        deadline = time.monotonic() + 2.0
        while (
            len(self.gateway.log_lines()) < before + len(self.upstream.requests)
            and time.monotonic() < deadline
        ):
            time.sleep(0.02)
        run.gateway_log = self.gateway.log_lines()[before:]
        return run


class Stacks:
    """For a test module: a scripted upstream per route and one gateway in front of them
    all (per `hosted_tools` setting), started on first use and kept for the module (a
    gateway takes a second or two to start; an agent run about one)."""

    def __init__(self) -> None:
        self._exit = ExitStack()
        self._upstreams: dict[str, tuple[ScriptedUpstream, str]] = {}
        self._gateways: dict[str, Gateway] = {}

    def get(self, route: str = "deepseek", *, hosted_tools: str = "drop") -> Stack:
        if not self._upstreams:
            for name in ROUTES:
                upstream = ScriptedUpstream(Script())
                url = self._exit.enter_context(serve(upstream.app()))
                self._upstreams[name] = (upstream, f"{url}/v1")
        if hosted_tools not in self._gateways:
            urls = {name: url for name, (_, url) in self._upstreams.items()}
            config = gateway_toml(urls, hosted_tools=hosted_tools)
            self._gateways[hosted_tools] = self._exit.enter_context(gateway(config))
        return Stack(self._upstreams[route][0], self._gateways[hosted_tools], ROUTES[route])

    def close(self) -> None:
        self._exit.close()
