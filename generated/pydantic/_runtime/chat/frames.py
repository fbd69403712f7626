"""Token frames, the same in every target: the server-sent event of a chunk that
repeats one probe chunk with another text in its token field, made by splicing the
text's JSON into the event the module's own writer made of the probe once. A server
that streams a model's tokens builds its frames at the cost of one string written as
JSON and two concatenations, and they cannot drift from `sse_chunk`: the template is
cut from its output, and checked against it when it is made."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, ClassVar, Final, Generic

from ..json_text import _json_string
from ..sse import _Chunk

_SENTINEL: Final = "chunkspec:token-frame"
"""The text a template is cut at: every JSON writer writes it as it is."""


_CHECKED: Final = (
    "".join(map(chr, range(0x20)))
    + '"\\/\x7f\x80\x9f\u00e9\u2028\u2029\ufeff\U0001f600 plain'
)
"""One of every character JSON writers may escape each their own way (the controls,
quote, backslash, slash, DEL, C1 controls, the line and paragraph separators, a BOM,
a character outside the BMP): a writer's frame of it is its event, or the escape is
not that writer's. Every other character is written as it is by any of them."""


class TokenFramesError(ValueError):
    """A probe `TokenFrames` cannot make frames of, and why."""


class _TokenFrames(Generic[_Chunk]):
    """What every module's `TokenFrames` does; each says where the keys it sets are
    (`_names`, by where they sit, as the meanings reader's table does), whether its
    chunks are JSON data (`_mapped`), how it may write a text (`_escapes`, its
    writer's string writer first) and how it writes a chunk (`_writer`); a typed
    module whose delta does not declare a dialect's key also says where its unknown
    keys are and how a delta is made with one (`_extra`, `_delta_with`)."""

    __slots__ = ("_escape", "_field", "_probe", "_templates", "_write")
    _names: ClassVar[dict[str, dict[str, str]]]
    _token_keys: ClassVar[tuple[str, ...]]
    """The keys of a delta whose text a stream appends to, in spec order."""
    _mapped: ClassVar[bool]
    _escapes: ClassVar[tuple[Callable[[str], bytes], ...]]
    _extra: ClassVar[str | None] = None
    """The attribute of a typed object that holds the keys its class does not declare,
    for a token key the delta does not declare (None: no token key is one)."""

    def __init__(self, probe: _Chunk, *, dialect: str | None = None) -> None:
        """`probe`: a chunk with one choice whose delta sets one of the token fields
        (`content`, `reasoning_content`, ...) to a text, and whatever else every chunk
        of the stream repeats (id, created, model, vendor keys). `dialect`: write the
        frames as `iter_sse(..., dialect=...)` writes them. Raises `TokenFramesError`
        for a probe it cannot make frames of."""
        choices = self._get(probe, "", "choices")
        if choices.__class__ is not list or len(choices) != 1:
            count = len(choices) if choices.__class__ is list else 0
            raise TokenFramesError(f"a probe has one choice, not {count}")
        delta = self._get(choices[0], "choices", "delta")
        texts = [
            key
            for key in self._token_keys
            if delta and self._get(delta, "choices.delta", key).__class__ is str
        ]
        if len(texts) != 1:
            keys = ", ".join(self._token_keys)
            raise TokenFramesError(
                f"a probe's delta sets one of {keys} to a text; this one sets"
                f" {', '.join(texts) or 'none'}"
            )
        self._probe = probe
        self._field = texts[0]
        self._write = self._writer(dialect)
        self._templates: dict[int | None, tuple[bytes, bytes, bytes]] = {}
        prefix, suffix, _ = self._template(None)
        self._escape = self._checked(prefix, suffix)

    def frame(self, text: str, index: int | None = None) -> bytes:
        """The event of the probe with `text` in its token field (and, when given,
        `index` as its choice's): exactly what `sse_chunk` (or the dialect's writer)
        writes of that chunk."""
        if text.__class__ is not str:
            raise TypeError(f"a token is a str, not {text.__class__.__name__}")
        template = self._templates.get(index)
        if template is None:
            template = self._template(index)
        if not text:  # a dialect's writer leaves an empty text where it came
            return template[2]
        try:
            return template[0] + self._escape(text) + template[1]
        except ValueError:  # half of a surrogate pair: the writer decides what it is
            return self._write(self._with(text, index))

    def first(self, text: str = "", role: str = "assistant") -> bytes:
        """The first event of a choice: the probe with `text`, and `role` in its
        delta."""
        delta = self._set(self._delta(), "choices.delta", "role", role)
        return self._write(self._with(text, None, delta))

    def finish(self, reason: str, usage: Any = None, index: int | None = None) -> bytes:
        """The last event of a choice: the probe with an empty delta and
        `finish_reason`, and `usage` (the module's usage object) when given."""
        empty: Any = {} if self._mapped else type(self._delta())()
        chunk = self._with(None, index, empty)
        choice = self._get(chunk, "", "choices")[0]
        choice = self._set(choice, "choices", "finish_reason", reason)
        chunk = self._set(chunk, "", "choices", [choice])
        if usage is not None:
            chunk = self._set(chunk, "", "usage", usage)
        return self._write(chunk)

    def _template(self, index: int | None) -> tuple[bytes, bytes, bytes]:
        """The event of the probe cut where its text goes (for a choice `index`), and
        its event with an empty text, which a dialect does not move."""
        event = self._write(self._with(_SENTINEL, index))
        mark = _json_string(_SENTINEL)
        if event.count(mark) != 1:
            raise TokenFramesError(
                f"the probe holds {_SENTINEL!r} elsewhere, the text frames are cut at"
            )
        prefix, _, suffix = event.partition(mark)
        template = (prefix, suffix, self._write(self._with("", index)))
        self._templates[index] = template
        return template

    def _checked(self, prefix: bytes, suffix: bytes) -> Callable[[str], bytes]:
        """The string writer whose frames are the writer's events."""
        event = self._write(self._with(_CHECKED, None))
        for escape in self._escapes:
            if prefix + escape(_CHECKED) + suffix == event:
                return escape
        raise TokenFramesError(
            "the module's writer writes text unlike its string writers"
        )

    def _delta(self) -> Any:
        choice = self._get(self._probe, "", "choices")[0]
        return self._get(choice, "choices", "delta")

    def _with(self, text: str | None, index: int | None, delta: Any = None) -> _Chunk:
        """The probe with `text` in its token field (None: the delta given), and
        `index` as its choice's (None: the probe's)."""
        choice = self._get(self._probe, "", "choices")[0]
        if delta is None:
            delta = self._get(choice, "choices", "delta")
        if text is not None:
            delta = self._set(delta, "choices.delta", self._field, text)
        choice = self._set(choice, "choices", "delta", delta)
        if index is not None:
            choice = self._set(choice, "choices", "index", index)
        chunk: _Chunk = self._set(self._probe, "", "choices", [choice])
        return chunk

    def _get(self, obj: Any, where: str, key: str) -> Any:
        if self._mapped:
            return obj.get(key)
        name = self._names[where].get(key)
        if name is not None:
            return getattr(obj, name)
        extra: Any = getattr(obj, self._extra) if self._extra is not None else None
        return extra.get(key) if extra else None  # pydantic's may be None

    def _set(self, obj: Any, where: str, key: str, value: Any) -> Any:
        """A copy of `obj` with `value` at `key`; `obj` is left as it is."""
        if self._mapped:
            return {**obj, key: value}
        name = self._names[where].get(key)
        if name is None:  # a token key among the delta's unknown keys
            return self._delta_with(obj, key, value)
        changed = copy.copy(obj)
        setattr(changed, name, value)
        return changed

    def _delta_with(self, delta: Any, key: str, value: Any) -> Any:
        """A copy of a typed `delta` with `value` at `key`, a key its class does not
        declare (`_extra`)."""
        raise NotImplementedError

    def _writer(self, dialect: str | None) -> Callable[[_Chunk], bytes]:
        raise NotImplementedError
