"""Which upstream, and which of its models, a client's model id goes to: the `[models]`
table's globs, in the file's order, the first that matches."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from .config import Config, Upstream


@dataclass(frozen=True)
class Target:
    upstream: Upstream
    model: str


def route(config: Config, model: str) -> Target | None:
    """Where a request for `model` goes; None when no route matches it. A route to
    "UPSTREAM/*" passes the client's model id on as it is."""
    for entry in config.routes:
        if fnmatchcase(model, entry.pattern):
            return Target(
                config.upstream(entry.upstream), model if entry.model == "*" else entry.model
            )
    return None


def listed(config: Config) -> list[tuple[str, str]]:
    """The model ids `/v1/models` lists, each with the upstream it goes to: the routes
    that name one id (no glob), then the upstream models the routes name."""
    seen: dict[str, str] = {}
    for entry in config.routes:
        if not any(c in entry.pattern for c in "*?["):
            seen.setdefault(entry.pattern, entry.upstream)
    for entry in config.routes:
        if entry.model != "*":
            seen.setdefault(entry.model, entry.upstream)
    return list(seen.items())
