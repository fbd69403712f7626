"""Reading a payload's JSON, and writing the compact JSON text every `dumps` gives."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from typing import Any, Final

from .errors import ChunkDecodeError


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


def _json(data: str | bytes) -> Any:
    """The JSON value of a payload; raises `ChunkDecodeError` when it is not JSON."""
    if _fast_loads is not None:
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
        return json.loads(data.decode("utf-8") if isinstance(data, bytes) else data)
    except ValueError as exc:  # JSONDecodeError or UnicodeDecodeError
        raise ChunkDecodeError(f"invalid JSON: {exc}") from None
    except RecursionError:
        raise ChunkDecodeError("invalid JSON: nested too deeply") from None


def _wire_text(data: Any) -> str:
    """Compact JSON text with UTF-8 characters as they are, except a lone UTF-16
    surrogate (half of a pair a stream split across chunks, D9), which UTF-8 cannot
    encode: it is written as its JSON escape, the same value."""
    text = _JSON_TEXT.encode(data)
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
    return text


_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_JSON_TEXT: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""json.dumps with these options, without building an encoder on every call."""
