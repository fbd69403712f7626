"""The agent pages (docs/claude-code.md, docs/codex.md) followed as a new user follows
them: their files written as shown, their commands run as shown, against a scripted
backend in place of the real one. What a test changes is said and checked to apply:
the backend's address (the scripted upstream's), the gateway's port (a free one), the
agent's binary (tests/clients' pinned one), `chunkspec` (the checkout's
`python -m generator`) and the agent's home (a scratch folder, so that nothing of the
developer's leaks in)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.agent_clis import CLAUDE, CODEX, AgentRun, _base_env, _run
from tests.helpers.docs_blocks import ROOT, Fence, fences
from tests.helpers.gateways import free_port, wait_healthy

DOC_PORT = "4000"
"""The gateway's port on the pages."""


@dataclass(frozen=True)
class Page:
    """An agent page's blocks: files by name, commands by role."""

    files: dict[str, str]
    commands: dict[str, str]

    @classmethod
    def read(cls, doc: Path) -> Page:
        files: dict[str, str] = {}
        commands: dict[str, str] = {}
        for fence in fences(doc.read_text(encoding="utf-8"), str(doc)):
            for marker in fence.markers:
                key, _, value = marker.partition(":")
                if key.strip() == "file":
                    files[value.strip()] = fence.body
                elif key.strip() == "run":
                    commands[value.strip()] = _one_line(fence)
        return cls(files, commands)


def _one_line(fence: Fence) -> str:
    lines = [line for line in fence.body.splitlines() if line.strip()]
    assert len(lines) == 1, f"a command block holds one command: {fence.body!r}"
    return lines[0]


def replaced(text: str, old: str, new: str) -> str:
    """`text` with `old` replaced, which must be there (the page changed otherwise)."""
    assert old in text, f"the page no longer says {old!r}"
    return text.replace(old, new)


def parsed(command: str) -> tuple[dict[str, str], list[str], str | None]:
    """A shell line's leading variable assignments, its argv, and the file its stdin is
    redirected from (`</dev/null`)."""
    words = shlex.split(command)
    stdin = None
    if words and words[-1].startswith("<"):
        stdin = words.pop()[1:]
    env: dict[str, str] = {}
    while words and "=" in words[0] and not words[0].startswith("-"):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    return env, words, stdin


@dataclass
class RunningGateway:
    url: str
    process: subprocess.Popen[bytes]
    log: Path


@contextmanager
def gateway_as_shown(page: Page, config: str, folder: Path) -> Iterator[RunningGateway]:
    """The page's gateway command, run in `folder` where its `gateway.toml` (`config`) is."""
    port = str(free_port())
    (folder / "gateway.toml").write_text(replaced(config, f"port = {DOC_PORT}", f"port = {port}"))
    env, argv, _ = parsed(page.commands["gateway"])
    assert argv[0] == "chunkspec", argv
    argv = [sys.executable, "-m", "generator", *argv[1:]]
    log = folder / "gateway.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv,
            cwd=folder,
            env={**os.environ, "PYTHONPATH": str(ROOT), **env},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    running = RunningGateway(f"http://127.0.0.1:{port}", process, log)
    try:
        wait_healthy(running.url, process, log.read_text)
        yield running
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(15)


def agent_as_shown(
    page: Page, gateway: RunningGateway, folder: Path, home_files: dict[str, str]
) -> AgentRun:
    """The page's agent command, in a scratch home holding `home_files` (paths relative
    to it), the page's gateway address moved to the running gateway's port: in the
    command or in the files, and somewhere."""
    shown, running = f"127.0.0.1:{DOC_PORT}", gateway.url.removeprefix("http://")
    line = page.commands["agent"]
    assert shown in line or any(shown in text for text in home_files.values())
    env, argv, stdin = parsed(line.replace(shown, running))
    assert stdin in (None, "/dev/null"), stdin
    binaries = {"claude": CLAUDE, "codex": CODEX}
    argv = [str(binaries[argv[0]]), *argv[1:]]
    home = Path(tempfile.mkdtemp(prefix="agent-home-", dir=folder))
    for name, text in home_files.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace(shown, running))
    work = folder / "work"
    work.mkdir(exist_ok=True)
    return _run(argv, {**_base_env(home), **env}, work, 60.0)
