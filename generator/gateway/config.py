"""The gateway's configuration: a TOML file, flags and environment variables, checked
before anything is served. A problem stops the gateway with the file, the line and what
was expected (`ConfigError`).

    [gateway]
    host = "127.0.0.1"
    port = 4000
    workers = 2
    hosted_tools = "drop"          # or "refuse"

    [upstreams.deepseek]
    protocol = "chat"              # chat | messages | responses
    base_url = "https://api.deepseek.com/v1"
    key_env = "DEEPSEEK_API_KEY"
    dialect = "deepseek"

    [models]                       # the client's model id (a glob) -> upstream/model
    "claude-*haiku*" = "deepseek/deepseek-chat"
    "*" = "deepseek/deepseek-reasoner"

    [store]                        # Responses state (docs/gateway-state.md)
    url = "sqlite:///responses.sqlite3"   # or postgresql://…, or "none"
    ttl = "30d"
    max_response_mb = 32
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from .store import DEFAULT_MAX_BYTES, StoreSettings

PROTOCOLS = ("chat", "messages", "responses")
"""What an upstream speaks, as `aiter_parts` names it."""

HOSTED_TOOLS = ("drop", "refuse")
"""What to do with a tool the upstream cannot run (a hosted web search to a chat model):
leave it out and say so, or refuse the request."""


class Locator(Protocol):
    """Names where a key of the configuration was given, for errors."""

    def at(self, path: tuple[str, ...]) -> str: ...


class ConfigError(ValueError):
    """A configuration the gateway cannot run: where, and what was expected."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


@dataclass(frozen=True)
class Upstream:
    """A backend the gateway sends requests to."""

    name: str
    protocol: str
    base_url: str
    """As the OpenAI SDK takes it: up to and including `/v1` (Gemini's
    `.../v1beta/openai`); the protocol's path is appended."""
    key_env: str | None = None
    """The environment variable holding the upstream's key; None: the client's key is
    passed on."""
    dialect: str = "openai"
    """A chat upstream's request dialect (the spec's `requests:`)."""
    think_tags: tuple[str, str] | None = None
    """The tags a chat upstream puts its reasoning between, inside the text."""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    """Headers sent on every request (OpenRouter's `HTTP-Referer`, say)."""
    timeout: float = 600.0
    """Seconds a read may wait: a model may think for minutes before its next event."""

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path


@dataclass(frozen=True)
class Route:
    """Client model ids matching `pattern` (a glob) go to `upstream` as `model`."""

    pattern: str
    upstream: str
    model: str


@dataclass(frozen=True)
class Config:
    upstreams: tuple[Upstream, ...]
    routes: tuple[Route, ...]
    host: str = "127.0.0.1"
    port: int = 4000
    workers: int = 1
    hosted_tools: str = "drop"
    log_level: str = "info"
    store: StoreSettings = field(default_factory=StoreSettings)

    def upstream(self, name: str) -> Upstream:
        return next(u for u in self.upstreams if u.name == name)

    def to_json(self) -> str:
        """The configuration as JSON, to hand to worker processes."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Config:
        data = json.loads(text)
        upstreams = tuple(
            Upstream(**{**u, "think_tags": _tags(u["think_tags"])}) for u in data.pop("upstreams")
        )
        routes = tuple(Route(**r) for r in data.pop("routes"))
        store = StoreSettings(**data.pop("store"))
        return cls(upstreams=upstreams, routes=routes, store=store, **data)


def _tags(value: Any) -> tuple[str, str] | None:
    return None if value is None else (str(value[0]), str(value[1]))


# --- reading the file -----------------------------------------------------------------

_SECTIONS = {"gateway", "upstreams", "models", "store"}
_STORE_KEYS = {"url", "ttl", "max_response_mb"}
TTL_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_GATEWAY_KEYS = {"host", "port", "workers", "hosted_tools", "log_level"}
_UPSTREAM_KEYS = {"protocol", "base_url", "key_env", "dialect", "think_tags", "headers", "timeout"}


def load(path: Path, overrides: Mapping[str, Any] | None = None) -> Config:
    """The configuration in the TOML file `path`, with `overrides` (from flags and the
    environment: `host`, `port`, `workers`, `hosted_tools`, `log_level`, `store`) on
    top."""
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(str(path), f"not TOML: {error}") from None
    return parse(data, _Locator(str(path), text), overrides or {})


def parse(data: Mapping[str, Any], where: Locator, overrides: Mapping[str, Any]) -> Config:
    """The configuration of parsed TOML `data`; `where` names lines in errors."""
    _known(data, _SECTIONS, where, ())
    gateway = _table(data, "gateway", where, ())
    _known(gateway, _GATEWAY_KEYS, where, ("gateway",))
    settings = {**gateway, **{k: v for k, v in overrides.items() if v is not None}}
    upstreams = tuple(
        _upstream(name, value, where)
        for name, value in _table(data, "upstreams", where, ()).items()
    )
    if not upstreams:
        raise ConfigError(where.at(()), "no [upstreams.NAME] table: nothing to send requests to")
    names = {u.name for u in upstreams}
    routes = tuple(
        _route(pattern, value, names, where)
        for pattern, value in _table(data, "models", where, ()).items()
    )
    if not routes:
        raise ConfigError(
            where.at(()),
            "no [models] table: say which upstream model each client model id goes to, "
            'such as "*" = "UPSTREAM/MODEL"',
        )
    return Config(
        upstreams=upstreams,
        routes=routes,
        store=_store(_table(data, "store", where, ()), overrides.get("store"), where),
        host=_typed(settings, "host", str, "127.0.0.1", where, ("gateway",)),
        port=_port(settings, where),
        workers=_positive(settings, "workers", 1, where),
        hosted_tools=_choice(settings, "hosted_tools", HOSTED_TOOLS, "drop", where, ("gateway",)),
        log_level=_choice(
            settings,
            "log_level",
            ("debug", "info", "warning", "error"),
            "info",
            where,
            ("gateway",),
        ),
    )


def _upstream(name: str, value: Any, where: Locator) -> Upstream:
    path = ("upstreams", name)
    if not isinstance(value, dict):
        raise ConfigError(where.at(path), f"upstreams.{name} must be a table")
    table = cast(dict[str, Any], value)
    _known(table, _UPSTREAM_KEYS, where, path)
    protocol = _choice(table, "protocol", PROTOCOLS, None, where, path)
    base_url = _typed(table, "base_url", str, None, where, path)
    if not re.match(r"https?://", base_url):
        raise ConfigError(
            where.at((*path, "base_url")),
            f"base_url must start with http:// or https://, not {base_url!r}",
        )
    dialect = _typed(table, "dialect", str, "openai", where, path)
    if dialect != "openai" and protocol != "chat":
        raise ConfigError(
            where.at((*path, "dialect")), f"a dialect is a chat upstream's; this one is {protocol}"
        )
    # Imported here: the generator's own commands import this module, and must run
    # while generated/ is being rewritten.
    from .wire import chat

    try:
        chat.to_request({"messages": []}, protocol="chat", dialect=dialect)
    except ValueError as error:
        raise ConfigError(where.at((*path, "dialect")), str(error)) from None
    tags = table.get("think_tags")
    if tags is not None and not (
        isinstance(tags, list)
        and len(tags) == 2
        and all(
            isinstance(t, str) and t for t in tags
        )  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    ):
        raise ConfigError(
            where.at((*path, "think_tags")),
            'think_tags must be two tags, such as ["<think>", "</think>"]',
        )
    headers = _typed(table, "headers", dict, {}, where, path)
    if not all(isinstance(v, str) for v in headers.values()):
        raise ConfigError(where.at((*path, "headers")), "headers must map names to strings")
    timeout = table.get("timeout", Upstream.timeout)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise ConfigError(where.at((*path, "timeout")), "timeout must be a number of seconds")
    key_env = table.get("key_env")
    if key_env is not None and not (isinstance(key_env, str) and key_env):
        raise ConfigError(where.at((*path, "key_env")), "key_env must name a variable")
    return Upstream(
        name=name,
        protocol=protocol,
        base_url=base_url,
        key_env=key_env,
        dialect=dialect,
        think_tags=_tags(tags),
        headers=cast(dict[str, str], headers),
        timeout=float(timeout),
    )


def _store(table: dict[str, Any], url: str | None, where: Locator) -> StoreSettings:
    """The `[store]` table (its `url` given by a flag or the environment wins)."""
    path = ("store",)
    _known(table, _STORE_KEYS, where, path)
    url = url or table.get("url")
    if url is None:
        url = StoreSettings().url
    elif not isinstance(url, str) or not (
        url == "none" or url.startswith(("sqlite:///", "postgresql://", "postgres://"))
    ):
        raise ConfigError(
            where.at((*path, "url")),
            "store.url must be sqlite:///PATH, postgresql://USER@HOST/DATABASE or none, "
            f"not {url!r}",
        )
    ttl = table.get("ttl", "30d")
    found = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd])", ttl) if isinstance(ttl, str) else None
    if found is None or float(found.group(1)) * TTL_UNITS[found.group(2)] < 1:
        raise ConfigError(
            where.at((*path, "ttl")),
            'store.ttl must be a time of a second or more, such as "30d", "12h", "90m" or '
            f'"600s", not {ttl!r}',
        )
    size = table.get("max_response_mb", DEFAULT_MAX_BYTES / 2**20)
    if not isinstance(size, int | float) or isinstance(size, bool) or size <= 0:
        raise ConfigError(
            where.at((*path, "max_response_mb")), "store.max_response_mb must be a number above 0"
        )
    seconds = float(found.group(1)) * TTL_UNITS[found.group(2)]
    return StoreSettings(url=url, ttl=seconds, max_bytes=int(size * 2**20))


def _route(pattern: str, value: Any, names: set[str], where: Locator) -> Route:
    path = ("models", pattern)
    if not isinstance(value, str) or "/" not in value:
        raise ConfigError(
            where.at(path), f'models."{pattern}" must be "UPSTREAM/MODEL", not {value!r}'
        )
    upstream, model = value.split("/", 1)
    if upstream not in names:
        raise ConfigError(
            where.at(path),
            f"no upstream named {upstream!r}{_suggest(upstream, names)}; "
            f"upstreams: {', '.join(sorted(names))}",
        )
    if not model:
        raise ConfigError(where.at(path), f'models."{pattern}" names no model after the "/"')
    return Route(pattern, upstream, model)


def _known(table: Mapping[str, Any], keys: set[str], where: Locator, path: tuple[str, ...]) -> None:
    for key in table:
        if key not in keys:
            place = ".".join((*path, key))
            raise ConfigError(
                where.at((*path, key)),
                f"unknown key {place!r}{_suggest(key, keys)}; known: {', '.join(sorted(keys))}",
            )


def _suggest(word: str, choices: set[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _table(
    data: Mapping[str, Any], key: str, where: Locator, path: tuple[str, ...]
) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(where.at((*path, key)), f"{key} must be a table")
    return cast(dict[str, Any], value)


def _typed(
    table: Mapping[str, Any],
    key: str,
    kind: type[Any],
    default: Any,
    where: Locator,
    path: tuple[str, ...],
) -> Any:
    value = table.get(key, default)
    if value is None:
        raise ConfigError(where.at(path), f"{'.'.join((*path, key))} is required")
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ConfigError(where.at((*path, key)), f"{key} must be a {kind.__name__}, not {value!r}")
    return value


def _choice(
    table: Mapping[str, Any],
    key: str,
    choices: tuple[str, ...],
    default: str | None,
    where: Locator,
    path: tuple[str, ...],
) -> str:
    value = _typed(table, key, str, default, where, path)
    if value not in choices:
        raise ConfigError(
            where.at((*path, key)),
            f"{key} must be one of {', '.join(choices)}, not {value!r}{_suggest(value, choices)}",
        )
    return cast(str, value)


def _port(settings: Mapping[str, Any], where: Locator) -> int:
    port = _typed(settings, "port", int, 4000, where, ("gateway",))
    if not 0 <= port <= 65535:
        raise ConfigError(where.at(("gateway", "port")), f"port must be 0 to 65535, not {port}")
    return cast(int, port)


def _positive(settings: Mapping[str, Any], key: str, default: int, where: Locator) -> int:
    value = _typed(settings, key, int, default, where, ("gateway",))
    if value < 1:
        raise ConfigError(where.at(("gateway", key)), f"{key} must be 1 or more, not {value}")
    return cast(int, value)


class _Locator:
    """Names the line of a key of a TOML file, for errors: tomllib keeps no positions,
    so the text is searched for the key's table header and the key in it."""

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.lines = text.splitlines()

    def at(self, path: tuple[str, ...]) -> str:
        line = self._line(path)
        return f"{self.name}:{line}" if line else self.name

    def _line(self, path: tuple[str, ...]) -> int | None:
        table: tuple[str, ...] = ()
        best, depth = None, 0  # the header of the deepest table holding `path`
        for number, raw in enumerate(self.lines, 1):
            text = raw.strip()
            header = re.fullmatch(r"\[([^\[\]]+)\]\s*(#.*)?", text)
            if header:
                table = _keys(header.group(1))
                if table and path[: len(table)] == table and len(table) > depth:
                    best, depth = number, len(table)
                continue
            key = re.match(r'("[^"]*"|\'[^\']*\'|[A-Za-z0-9_.-]+)\s*=', text)
            if key and (*table, *_keys(key.group(1))) == path:
                return number
        return best


def _keys(dotted: str) -> tuple[str, ...]:
    """The keys of a dotted TOML key (`upstreams."my up".x`)."""
    parts = re.findall(r'"([^"]*)"|\'([^\']*)\'|([^.\s]+)', dotted)
    return tuple(next(p for p in match if p) if any(match) else "" for match in parts)
