"""`chunkspec serve`: the gateway under uvicorn, from a TOML file, flags and environment
variables (flags win over the environment, which wins over the file).

  chunkspec serve --config gateway.toml
  chunkspec serve --upstream https://api.deepseek.com/v1 --dialect deepseek \\
      --key-env DEEPSEEK_API_KEY --model deepseek-reasoner --small-model deepseek-chat
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .config import HOSTED_TOOLS, PROTOCOLS, Config, ConfigError, load, parse

ENVIRONMENT = {
    "config": "CHUNKSPEC_GATEWAY_CONFIG",
    "host": "CHUNKSPEC_GATEWAY_HOST",
    "port": "CHUNKSPEC_GATEWAY_PORT",
    "workers": "CHUNKSPEC_GATEWAY_WORKERS",
    "store": "CHUNKSPEC_GATEWAY_STORE",
}
"""The environment variables `serve` reads, by setting."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `serve` command's flags."""
    parser.add_argument("--config", type=Path, help="the gateway's TOML file")
    parser.add_argument("--host", help="the address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, help="the port to listen on (4000)")
    parser.add_argument("--workers", type=int, help="worker processes (1)")
    parser.add_argument("--hosted-tools", choices=HOSTED_TOOLS, help="drop (default) or refuse")
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"))
    parser.add_argument(
        "--store",
        metavar="URL",
        help="where Responses state is kept: sqlite:///PATH (a file in the user's state "
        "folder by default), postgresql://USER@HOST/DATABASE, or none",
    )
    parser.add_argument(
        "--check", action="store_true", help="check the configuration, print it, and exit"
    )
    one = parser.add_argument_group("one upstream, without a file")
    one.add_argument("--upstream", metavar="URL", help="its base URL, up to /v1")
    one.add_argument("--protocol", choices=PROTOCOLS, default="chat", help="what it speaks")
    one.add_argument("--dialect", default="openai", help="a chat upstream's request dialect")
    one.add_argument("--key-env", metavar="VAR", help="the variable holding its key")
    one.add_argument("--model", help="the model every request goes to")
    one.add_argument(
        "--small-model", help="the model for Claude Code's small-model (haiku) requests"
    )
    one.add_argument("--think-tags", nargs=2, metavar=("OPEN", "CLOSE"))


def configured(args: argparse.Namespace, environ: dict[str, str]) -> Config:
    """The configuration the flags, the environment and the file say."""
    overrides: dict[str, Any] = {
        "host": args.host or environ.get(ENVIRONMENT["host"]),
        "port": args.port if args.port is not None else _int(environ, "port"),
        "workers": args.workers if args.workers is not None else _int(environ, "workers"),
        "hosted_tools": args.hosted_tools,
        "log_level": args.log_level,
        "store": args.store or environ.get(ENVIRONMENT["store"]),
    }
    path = args.config or (
        Path(environ[ENVIRONMENT["config"]]) if ENVIRONMENT["config"] in environ else None
    )
    if path is not None and args.upstream:
        raise ConfigError("--upstream", "give a config file or --upstream, not both")
    if path is not None:
        if not path.is_file():
            raise ConfigError(str(path), "no such file")
        return load(path, overrides)
    if not args.upstream or not args.model:
        raise ConfigError(
            "serve",
            "give --config FILE (or $CHUNKSPEC_GATEWAY_CONFIG), or --upstream URL and --model",
        )
    upstream: dict[str, Any] = {
        "protocol": args.protocol,
        "base_url": args.upstream,
        "dialect": args.dialect,
    }
    if args.key_env:
        upstream["key_env"] = args.key_env
    if args.think_tags:
        upstream["think_tags"] = list(args.think_tags)
    models = {"*": f"upstream/{args.model}"}
    if args.small_model:  # Claude Code's background requests name a haiku model
        models = {"claude-*haiku*": f"upstream/{args.small_model}", **models}
    return parse({"upstreams": {"upstream": upstream}, "models": models}, _Flags(), overrides)


def _int(environ: dict[str, str], key: str) -> int | None:
    text = environ.get(ENVIRONMENT[key])
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"${ENVIRONMENT[key]}", f"must be a whole number, not {text!r}") from None


class _Flags:
    """Where a problem of a configuration made of flags is: the flags."""

    def at(self, path: tuple[str, ...]) -> str:
        return "flags"


def serve(args: argparse.Namespace) -> int:
    """Run the gateway until it is stopped (or, with --check, say what it would run)."""
    from .app import CONFIG_VARIABLE, keys  # the server's imports wait for the command

    try:
        config = configured(args, dict(os.environ))
        keys(config)
    except ConfigError as error:
        print(f"chunkspec serve: {error}", file=sys.stderr)
        return 2
    print(_banner(config), file=sys.stderr)
    if args.check:
        return 0
    try:
        import uvicorn
    except ImportError:
        print(
            "chunkspec serve: the gateway needs its server: pip install 'chunkspec[gateway]'",
            file=sys.stderr,
        )
        return 2
    problem = _store_problem(config)
    if problem is not None:
        print(f"chunkspec serve: [store] {problem}", file=sys.stderr)
        return 2
    os.environ[CONFIG_VARIABLE] = config.to_json()
    package = __name__.rsplit(".", 1)[0]
    uvicorn.run(
        f"{package}.app:from_environment",
        factory=True,
        http=f"{package}.nodelay:NoDelayH11Protocol",
        host=config.host,
        port=config.port,
        workers=config.workers,
        log_config=_logging(config.log_level),
        access_log=False,
        timeout_graceful_shutdown=5,
    )
    return 0


def _store_problem(config: Config) -> str | None:
    """Why the store cannot be opened (its tables made or migrated), before any worker
    starts; None when it opens."""
    from .store import StoreUnavailable, open_store

    store = open_store(config.store)
    if store is None:
        return None

    async def opened() -> None:
        await store.open()
        await store.close()

    try:
        asyncio.run(opened())
    except StoreUnavailable as error:
        return str(error)
    return None


def _banner(config: Config) -> str:
    lines = [
        f"chunkspec gateway on http://{config.host}:{config.port} ({config.workers} worker(s))"
    ]
    for upstream in config.upstreams:
        dialect = f", dialect {upstream.dialect}" if upstream.protocol == "chat" else ""
        lines.append(
            f"  upstream {upstream.name}: {upstream.protocol} at {upstream.base_url}{dialect}"
        )
    for entry in config.routes:
        lines.append(f"  model {entry.pattern} -> {entry.upstream}/{entry.model}")
    lines.append(f"  store {_without_password(config.store.url)}")
    return "\n".join(lines)


def _without_password(url: str) -> str:
    """A store URL as the banner shows it: a password in it (before the host's `@`, or
    a `password=` parameter) left out."""
    if not url.startswith(("postgresql://", "postgres://")):
        return url  # a file's path holds no password
    parts = urlsplit(url)
    if "@" in parts.netloc:
        user, host = parts.netloc.rsplit("@", 1)
        if ":" in user:
            parts = parts._replace(netloc=f"{user.split(':', 1)[0]}:***@{host}")
    query = re.sub(r"(^|&)password=[^&]*", r"\1password=***", parts.query)
    return urlunsplit(parts._replace(query=query))


def _logging(level: str) -> dict[str, Any]:
    """uvicorn's logging, with the gateway's lines (JSON, one per request) on stderr as
    they are."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "plain": {"format": "%(message)s"},
            "server": {"format": "%(levelname)s %(name)s: %(message)s"},
        },
        "handlers": {
            "lines": {
                "class": "logging.StreamHandler",
                "formatter": "plain",
                "stream": "ext://sys.stderr",
            },
            "server": {
                "class": "logging.StreamHandler",
                "formatter": "server",
                "stream": "ext://sys.stderr",
            },
        },
        "loggers": {
            "chunkspec.gateway": {
                "handlers": ["lines"],
                "level": level.upper(),
                "propagate": False,
            },
            "uvicorn": {
                "handlers": ["server"],
                "level": level.upper() if level != "debug" else "DEBUG",
            },
        },
    }
