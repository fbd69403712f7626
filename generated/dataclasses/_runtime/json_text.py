"""Reading a payload's JSON, and writing the compact JSON text every `dumps` gives."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from typing import Any, Final, cast

from .errors import StreamDecodeError, _key


def _orjson_loads() -> Callable[[bytes], Any] | None:
    """orjson's `loads`, when it is installed. It only reads faster: the standard
    library suffices, and decides every doubt. (Imported by name, so that type checkers
    of a project without orjson see no missing module.)"""
    try:
        loads: Callable[[bytes], Any] = importlib.import_module("orjson").loads
    except ImportError:
        return None
    return loads


_fast_loads: Final = _orjson_loads()


# orjson reads an integer past 64 bits as a float (from -9223372036854775809, 19
# digits), so a payload with 19 digits in a row is left to json: they are found by
# mapping each digit to "0" and every other byte to " ".
_DIGITS_AS_ZEROS: Final = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_NUMBER: Final = b"0" * 19

_FAST_MOST: Final = 1 << 20
"""The longest payload orjson reads: it sizes its pool by the payload's length, about
13 times a long text's bytes (a 20 MB delta peaked at 267 MiB), where json takes
about 2; the few longer payloads are read by json, in bounded memory."""


MAX_DEPTH: Final = 512
"""How deep `loads` lets JSON nest (arrays and objects), in every target. Deeper input
is refused, so that whatever is read can be written and copied from any caller's
stack; Rust's serde_json stops at 128, orjson at 1024."""
_SHALLOW: Final = 2 * MAX_DEPTH + 1
"""Payloads this long or shorter cannot nest past `MAX_DEPTH`: the check is a `len`."""
_OPENERS: Final = (b"[", b"{")
_BRACKETS: Final = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
"""A JSON string (skipped whole: brackets in text do not nest) or a bracket."""


def _check_depth(data: str | bytes) -> None:
    """Raise `StreamDecodeError` when `data`, longer than `_SHALLOW`, nests deeper than
    `MAX_DEPTH`. Few opening brackets settle it; only then are they walked."""
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    if sum(map(raw.count, _OPENERS)) <= MAX_DEPTH:
        return
    depth = 0
    for match in _BRACKETS.finditer(raw):
        bracket = raw[match.start()]
        if bracket in b"[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise StreamDecodeError(
                    f"JSON nested more than {MAX_DEPTH} deep, at byte {match.start()}"
                )
        elif bracket != 34:  # 34 is '"': a string
            depth -= 1


class _NotFinite(ValueError):
    """NaN, Infinity or a number past a float's range: Python's json reads them, but
    they are not JSON, and nothing but Python writes or reads them (msgspec, orjson,
    JavaScript and serde_json refuse them)."""


def _finite_float(text: str) -> float:
    number = float(text)
    if number - number != 0.0:  # inf - inf and nan - nan are nan
        raise _NotFinite(text)
    return number


def _not_a_number(text: str) -> float:
    raise _NotFinite(text)


_READER: Final = json.JSONDecoder(
    parse_float=_finite_float, parse_constant=_not_a_number
)
"""json.loads, refusing what is not a finite number."""


def _json(data: str | bytes) -> Any:
    """The JSON value of a payload; raises `StreamDecodeError` when it is not JSON,
    nests deeper than `MAX_DEPTH`, or holds a number no float holds."""
    if len(data) > _SHALLOW:
        _check_depth(data)
    if _fast_loads is not None and len(data) <= _FAST_MOST:
        try:
            raw = data if isinstance(data, bytes) else data.encode()
            if _LONG_NUMBER not in raw.translate(_DIGITS_AS_ZEROS):
                return _fast_loads(raw)
        except (
            ValueError
        ):  # what orjson refuses and json may read: NaN, lone surrogates
            pass
    try:
        # Bytes must be UTF-8, as JSON on the wire is (json.loads would guess UTF-16
        # too).
        return _READER.decode(data.decode("utf-8") if isinstance(data, bytes) else data)
    except _NotFinite:
        raise _not_finite_at(data) from None
    except ValueError as exc:  # JSONDecodeError or UnicodeDecodeError
        raise StreamDecodeError(f"invalid JSON: {exc}") from None
    except RecursionError:
        raise StreamDecodeError("invalid JSON: nested too deeply") from None


class _Mark(str):
    """The text of a number that is not finite, marking where it was read."""


def _not_finite_at(data: str | bytes) -> StreamDecodeError:
    """The error at the first number of `data` that is not finite (read again, with
    each such number marked)."""
    value = json.loads(data, parse_float=_mark_float, parse_constant=_Mark)
    return _marked_error(value) or StreamDecodeError("not a finite number")


def _mark_float(text: str) -> float | _Mark:
    number = float(text)
    return _Mark(text) if number - number != 0.0 else number


def _marked_error(value: Any) -> StreamDecodeError | None:
    """The located error of the first `_Mark` in `value`, found without recursion."""
    todo: list[tuple[Any, list[str]]] = [(value, [])]
    while todo:
        item, segments = todo.pop()
        if isinstance(item, _Mark):
            error = StreamDecodeError(f"{item} is not a finite JSON number")
            for segment in segments:
                error.under(segment)
            return error
        kind = item.__class__  # compared as a name: no checker narrows `item`
        if kind is dict:
            pairs = [(_key(k), v) for k, v in cast(dict[str, Any], item).items()]
        elif kind is list:
            pairs = [(f"[{i}]", v) for i, v in enumerate(cast(list[Any], item))]
        else:
            continue
        todo.extend((v, [segment, *segments]) for segment, v in reversed(pairs))
    return None


def _json_text(value: Any) -> str:
    """A JSON value as text, as a server that sent it as text would have."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _wire_text(data: Any) -> str:
    """Compact JSON text with UTF-8 characters as they are, except a lone UTF-16
    surrogate (half of a pair a stream split across chunks, D9), which UTF-8 cannot
    encode: it is written as its JSON escape, the same value. A float that is not finite
    (which `loads` never reads, but a hand-built value may hold) is written as null, as
    JavaScript, msgspec and pydantic write it."""
    try:
        text = _compact(data)
    except ValueError:  # NaN or infinity, put in by hand: JSON cannot spell them
        text = _compact(_finite_only(data))
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
    return text


def _finite_only(value: Any) -> Any:
    """`value` with None for every float that is not finite."""
    kind = value.__class__
    if kind is float:
        return value if value - value == 0.0 else None
    if kind is dict:
        items = cast(dict[str, Any], value).items()
        return {key: _finite_only(item) for key, item in items}
    if kind is list or kind is tuple:
        return [_finite_only(item) for item in cast(list[Any], value)]
    return value


_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_JSON_TEXT: Final = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False
)
"""json.dumps with these options, without building an encoder on every call."""


def _compact_writer() -> Callable[[Any], str]:
    """`_JSON_TEXT.encode` without its set-up on every call: `iterencode` builds the C
    encoder anew each time, a third of the cost of encoding a chunk. The one built here
    keeps no circular-reference markers, which a write that raised would leave stale
    (JSON data nests no deeper than `MAX_DEPTH`, and a cycle put in by hand raises
    RecursionError). Without the C speed-ups it is `_JSON_TEXT.encode` itself."""
    make: Callable[..., Any] | None = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _JSON_TEXT.encode
    default, strings = _JSON_TEXT.default, json.encoder.encode_basestring
    # markers, default, encoder, indent, separators, sort_keys, skipkeys, allow_nan
    chunks = make(None, default, strings, None, ":", ",", False, False, False)

    def write(data: Any) -> str:
        return "".join(chunks(data, 0))

    return write


_compact: Final = _compact_writer()


def _as_is(value: Any) -> Any:
    """JSON data read as JSON data: itself (a stream read as data, not as a target's
    objects)."""
    return value


def _paired(text: str) -> str:
    """The text with UTF-16 surrogate halves that arrived in separate chunks (as JSON
    escapes) joined into one character; a lone half is kept as it is."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode(
        "utf-16-le", "surrogatepass"
    )


def _json_string(text: str) -> bytes:
    """A text as the standard library's writer writes it in a chunk."""
    try:
        return _JSON_TEXT.encode(text).encode()
    except UnicodeEncodeError:  # half of a surrogate pair: written as its escape
        return _wire_text(text).encode()
