"""The gateway (generator/gateway) in the tests: an app for given upstream base URLs, its
log lines, and a gateway process waited on until it answers."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from generator.gateway.app import create_app
from generator.gateway.config import Config, Route, Upstream

LOGGER = "chunkspec.gateway"
WAIT = 5.0
START = 30.0
"""Seconds a gateway process may take to answer its health check."""


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on (for a server started by a command)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def wait_healthy(
    url: str,
    process: subprocess.Popen[Any],
    log: Callable[[], str] = lambda: "",
    timeout: float = START,
) -> None:
    """Wait until the gateway at `url` answers GET /health with `{"status": "ok"}`; fails
    with its `log` when the process stops first or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise AssertionError(f"the gateway exited ({process.returncode}):\n{log()}")
        try:
            if httpx.get(f"{url}/health", timeout=1.0).json() == {"status": "ok"}:
                return
        except (httpx.HTTPError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"the gateway was not healthy within {timeout} s:\n{log()}")
        time.sleep(0.05)


def config(upstreams: dict[str, Upstream], routes: dict[str, str], **settings: Any) -> Config:
    """A configuration of `upstreams` (by name) and `routes` (glob -> "NAME/model")."""
    return Config(
        upstreams=tuple(upstreams.values()),
        routes=tuple(Route(p, *target.split("/", 1)) for p, target in routes.items()),
        **settings,
    )


def one_upstream_app(
    protocol: str,
    base: str,
    *,
    dialect: str = "openai",
    client: httpx.AsyncClient | None = None,
    think_tags: tuple[str, str] | None = None,
    **settings: Any,
) -> ASGIApp:
    """The gateway in front of one upstream of `protocol` at `base` (before /v1), every
    client model id passed on as it is."""
    upstream = Upstream("up", protocol, f"{base}/v1", dialect=dialect, think_tags=think_tags)
    return create_app(config({"up": upstream}, {"*": "up/*"}, **settings), client=client)


class ByPath:
    """One ASGI app made of several, by the path's prefix (the first that matches)."""

    def __init__(self, apps: dict[str, ASGIApp]) -> None:
        self.apps = apps

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        for prefix, app in self.apps.items():
            if path.startswith(prefix):
                return await app(scope, receive, send)
        raise AssertionError(f"no app for {path}")


def log_lines(caplog: pytest.LogCaptureFixture, count: int) -> list[dict[str, Any]]:
    """The gateway's request lines, as JSON, once it has written `count` of them."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == LOGGER]
        if len(lines) >= count:
            return lines
        time.sleep(0.01)
    raise AssertionError(f"the gateway logged fewer than {count} lines within {WAIT} s")
