"""The `requests:` sections of the spec: how each chat backend reads a request
(docs/spec-format.md, "Request dialects"). The core file declares OpenAI's, the first
and the default; a vendor file declares its backend's, one or more."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..runtime.requests.dialects import _RequestDialect
from .errors import SpecError
from .yamlfile import Keys, Located

# The keys of a request dialect and of its parts; generator/ir/format_schema.py builds
# the spec's JSON Schema from them.
REQUEST_KEYS = Keys(
    frozenset(
        {
            "doc",
            "source",
            "max_tokens",
            "effort",
            "budget",
            "switch",
            "reasoning",
            "details",
            "signature",
            "developer",
            "system",
            "media",
            "cache_control",
        }
    ),
    frozenset({"doc"}),
)
"""A request dialect (an entry of `requests:`)."""
SWITCH_KEYS = Keys(frozenset({"key", "on", "off"}), frozenset({"key"}))
REASONING_KEYS = Keys(frozenset({"key", "turns", "placeholder"}), frozenset({"key"}))
SIGNATURE_KEYS = Keys(frozenset({"key", "calls", "unsigned", "accepts"}), frozenset({"key"}))
CHOICES = {
    "turns": ("all", "tool_calls"),
    "calls": ("first", "each"),
    "system": ("anywhere", "first"),
}
"""The values each key of a choice may take, the default first."""
MEDIA = ("image", "file", "audio")
"""What a message may take as content parts besides text."""


@dataclass(frozen=True)
class RequestDialect:
    """One backend's request rules, with the words docs/vendors.md shows."""

    rules: _RequestDialect
    doc: str
    source: str | None
    file: str
    line: int | None = None


def request_dialects(doc: Located, file: str) -> tuple[RequestDialect, ...]:
    """The dialects of a file's `requests:` section (none when it has none)."""
    if "requests" not in doc:
        return ()
    section = doc["requests"]
    where = doc.key_lines.get("requests", doc.line)
    if not isinstance(section, Located):
        raise SpecError("'requests' must be a mapping of dialect names", file, where)
    return tuple(_dialect(name, section[name], file, section) for name in section)


def _dialect(name: str, body: Any, file: str, section: Located) -> RequestDialect:
    line = section.key_lines.get(name, section.line)
    if not isinstance(body, Located):
        raise SpecError(f"request dialect {name!r} must be a mapping", file, line)
    _known(body, REQUEST_KEYS.allowed, f"request dialect {name!r}", file)
    for key in sorted(REQUEST_KEYS.required):
        if key not in body:
            raise SpecError(f"request dialect {name!r} needs {key!r}", file, line)
    rules: dict[str, Any] = {"name": name}
    for key in ("max_tokens", "effort", "budget", "details"):
        if key in body:
            rules[key] = _string(body, key, file)
    for key in ("developer", "cache_control"):
        if key in body:
            if not isinstance(body[key], bool):
                raise SpecError(f"{key!r} must be true or false", file, body.key_lines.get(key))
            rules[key] = body[key]
    rules["system"] = _choice(body, "system", "anywhere", file)
    if "media" in body:
        media = body["media"]
        if not isinstance(media, list) or not all(m in MEDIA for m in media):
            raise SpecError(
                f"'media' must be a list of {', '.join(MEDIA)}", file, body.key_lines.get("media")
            )
        rules["media"] = tuple(m for m in MEDIA if m in media)
    if "switch" in body:
        switch = _part(body, "switch", SWITCH_KEYS, file, name)
        rules["switch"] = _string(switch, "key", file)
        rules["switch_values"] = (switch.get("on", True), switch.get("off", False))
    if "reasoning" in body:
        reasoning = _part(body, "reasoning", REASONING_KEYS, file, name)
        rules["reasoning"] = _string(reasoning, "key", file)
        rules["reasoning_turns"] = _choice(reasoning, "turns", "all", file)
        if "placeholder" in reasoning:
            rules["placeholder"] = str(reasoning["placeholder"])
    if "signature" in body:
        signature = _part(body, "signature", SIGNATURE_KEYS, file, name)
        rules["signature"] = _string(signature, "key", file)
        rules["signature_calls"] = _choice(signature, "calls", "first", file)
        if "unsigned" in signature:
            rules["unsigned"] = _string(signature, "unsigned", file)
        accepts = signature.get("accepts", [])
        if not isinstance(accepts, list) or not all(isinstance(a, str) for a in accepts):
            raise SpecError("'accepts' must be a list of dialect names", file, signature.line)
        rules["accepts"] = tuple(accepts)
    doc = " ".join(str(body["doc"]).split())
    source = str(body["source"]) if "source" in body else None
    return RequestDialect(_RequestDialect(**rules), doc, source, file, line)


def _known(body: Located, allowed: frozenset[str], what: str, file: str) -> None:
    for key in body:
        if key not in allowed:
            known = ", ".join(sorted(allowed))
            raise SpecError(
                f"unknown key {key!r} in {what} (known: {known})",
                file,
                body.key_lines.get(key, body.line),
            )


def _part(body: Located, key: str, keys: Keys, file: str, name: str) -> Located:
    value = body[key]
    if not isinstance(value, Located):
        raise SpecError(f"{key!r} of request dialect {name!r} must be a mapping", file, body.line)
    _known(value, keys.allowed, f"the {key!r} of request dialect {name!r}", file)
    for needed in sorted(keys.required):
        if needed not in value:
            raise SpecError(
                f"the {key!r} of request dialect {name!r} needs {needed!r}", file, value.line
            )
    return value


def _string(body: Located, key: str, file: str) -> str:
    value = body[key]
    if not isinstance(value, str) or not value:
        raise SpecError(f"{key!r} must be a non-empty string", file, body.key_lines.get(key))
    return value


def _choice(body: Located, key: str, default: str, file: str) -> str:
    value = body.get(key, default)
    if value not in CHOICES[key]:
        choices = " or ".join(map(repr, CHOICES[key]))
        raise SpecError(f"{key!r} must be {choices}", file, body.key_lines.get(key))
    return str(value)


def check_unique(dialects: tuple[RequestDialect, ...]) -> None:
    seen: dict[str, str] = {}
    for dialect in dialects:
        name = dialect.rules.name
        if name in seen:
            message = f"request dialect {name!r} is declared in {seen[name]} too"
            raise SpecError(message, dialect.file, dialect.line)
        seen[name] = dialect.file
