"""The gateway (generator/gateway) in the tests: an app for given upstream base URLs, and
its log lines."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from generator.gateway.app import create_app
from generator.gateway.config import Config, Route, Upstream

LOGGER = "chunkspec.gateway"
WAIT = 5.0


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
