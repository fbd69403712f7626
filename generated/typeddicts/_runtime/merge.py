"""Merging JSON objects by rules, the same in every target and protocol: the objects of
a stream merge key by key, each by the rule its plan gives it, and the result is read as
JSON data.

A merge rule is one function of `_RULES`, applied to a key's non-null value; the spec
names it (`merge:` in a chunk field) and the generator checks the name against
`_RULES` (generator/ir/merging.py)."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import marshal
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias

from .json_text import _json_text, _paired

_Kept: TypeAlias = "dict[str, _Kept | None]"
"""The keys of an object to keep: None for a key's whole value, else which of its keys
(through the items of a list)."""


class _Plan:
    """How the objects of one chunk type merge into one object of the completion."""

    __slots__ = ("fills", "not_null", "rules", "steps")

    def __init__(
        self,
        rules: dict[str, tuple[str, str, str]] | None = None,
        not_null: frozenset[str] = frozenset(),
        fills: tuple[tuple[str, object, str], ...] = (),
    ) -> None:
        self.rules = rules or {}
        """Key -> (rule, key in the completion, chunk type of the value); a key not
        listed keeps its last value that is not null."""
        self.not_null = not_null
        """Keys of the completion that cannot be null: a null sent for one is not
        kept."""
        self.fills = fills
        """(key, value, chunk type) for keys no chunk supplied: the value, or, when a
        chunk type is named, an empty object merged as that type."""
        self.steps = {
            key: (_RULES[how], into or key, inner)
            for key, (how, into, inner) in self.rules.items()
        }
        """The rules as `_merge` applies them: key -> (rule, key, chunk type)."""


class _Merged(dict[str, Any]):
    """The keys merged so far into one object of the completion."""

    __slots__ = ("plan", "plans")

    def __init__(self, kind: str, plans: dict[str, _Plan]) -> None:
        super().__init__()
        self.plan = plans.get(kind, _NO_RULES)
        """The plan of the chunk type whose objects merge into it (a type without one
        keeps the last value of every key)."""
        self.plans = plans
        """Every plan, by chunk type, for the values merged by their own."""


class _Text(list[str]):
    """The pieces of a text, joined when the completion is read (never `+=` in a
    loop)."""

    __slots__ = ()


class _Items(list[Any]):
    """The items of a list, gathered from every chunk."""

    __slots__ = ()


class _Slots(dict[int, _Merged]):
    """The objects of a list, merged by their `index`."""

    __slots__ = ("latest",)

    def __init__(self) -> None:
        super().__init__()
        self.latest = 0
        """The index merged most recently."""

    def place(self, item: Mapping[str, Any]) -> int:
        """The index of an item that has none: the object's with the same `id`, when
        the item brings one (parallel calls may interleave); a new object's when the
        latest has another `id`; else the latest object's."""
        if not self:
            return 0
        ident = item.get("id")
        if ident:
            for index, slot in self.items():
                if slot.get("id") == ident:
                    return index
            if self[self.latest].get("id"):
                return max(self) + 1
        return self.latest


def _merge(merged: _Merged, obj: Mapping[str, Any]) -> None:
    """Merge one object of a chunk into what the chunks before it left."""
    plan = merged.plan
    steps = plan.steps
    for key, value in obj.items():
        step = steps.get(key)
        if value is None:
            # A null replaces nothing, and stays only while no value comes.
            into = key if step is None else step[1]
            if (step is None or step[0] is not _drop) and into not in plan.not_null:
                merged.setdefault(into, None)
        elif step is None:  # the last value, under the same key (`_last`)
            if value.__class__ is str:  # most keys: nothing to copy
                if value or merged.get(key) is None:
                    merged[key] = value
            else:
                _last(merged, key, value, "")
        else:
            step[0](merged, step[1], value, step[2])


def _last(merged: _Merged, key: str, value: Any, inner: str) -> None:
    """The last value that is not null; nor "" (B1: finish_reason) once there is one."""
    if value != "" or merged.get(key) is None:
        merged[key] = _copied(value)


def _drop(merged: _Merged, key: str, value: Any, inner: str) -> None:
    """Not kept in the completion."""


def _first(merged: _Merged, key: str, value: Any, inner: str) -> None:
    """The first value that is not blank."""
    if _blank(merged.get(key)):
        merged[key] = _copied(value)


def _append(merged: _Merged, key: str, value: Any, inner: str) -> None:
    """Text joined, lists concatenated. A value in another form than the ones before
    it is kept beside them, in order, never in their place: text after a list of parts
    (Mistral's thinking parts, then a last "\\n") is a text part of the list, and text
    before a list its first part; an object (arguments some servers send whole) then
    text is the object's JSON text followed by the text, and the reverse likewise."""
    if value.__class__ is not str:
        value = _copied(value)  # kept: later changes to the chunk must not show
    so_far = merged.get(key)
    if value.__class__ is str:
        if type(so_far) is _Text:
            so_far.append(value)
        elif so_far is None:
            merged[key] = _Text((value,))
        elif not value:
            pass  # "" adds nothing to a list of parts or an object
        elif type(so_far) is _Items:
            so_far.append({"type": "text", "text": value})
        else:
            merged[key] = _Text((_json_text(so_far), value))
    elif value.__class__ is list:
        if type(so_far) is _Items:
            so_far.extend(value)
        elif type(so_far) is _Text and (text := "".join(so_far)):
            merged[key] = _Items([{"type": "text", "text": text}, *value])
        else:
            merged[key] = _Items(value)
    elif type(so_far) is _Text:
        so_far.append(_json_text(value))
    elif type(so_far) is _Items:
        so_far.append(value)
    else:
        merged[key] = value


def _append_unless_repeated(merged: _Merged, key: str, value: Any, inner: str) -> None:
    """Text appended unless a chunk sends the whole of it again (a name some servers
    repeat on every chunk)."""
    so_far = merged.get(key)
    if type(value) is not str or type(so_far) is not str:
        merged[key] = _copied(value)
    elif value and value != so_far:
        merged[key] = so_far + value  # a split name: short, and rare


def _merge_object(merged: _Merged, key: str, value: Any, inner: str) -> None:
    """An object merged key by key, by the plan of its chunk type `inner`."""
    if value.__class__ is not dict:
        merged[key] = _copied(value)  # a value of another type than the rule expects
        return
    part = merged.get(key)
    if type(part) is not _Merged:
        part = merged[key] = _Merged(inner, merged.plans)
    _merge(part, value)


def _by_index(merged: _Merged, key: str, value: Any, inner: str) -> None:
    """A list of objects merged item by item, by their `index`."""
    if value.__class__ is not list:
        merged[key] = _copied(value)  # a value of another type than the rule expects
        return
    slots = merged.get(key)
    if type(slots) is not _Slots:
        slots = merged[key] = _Slots()
    for item in value:
        index = item.get("index")
        if type(index) is not int:
            index = slots.place(item)
        slot = slots.get(index)
        if slot is None:
            slot = slots[index] = _Merged(inner, merged.plans)
            slot["index"] = index
        slots.latest = index
        _merge(slot, item)


_RULES: Final[dict[str, Callable[[_Merged, str, Any, str], None]]] = {
    "append": _append,
    "append_unless_repeated": _append_unless_repeated,
    "by_index": _by_index,
    "drop": _drop,
    "first": _first,
    "last": _last,
    "merge": _merge_object,
}
"""The merge rules the spec may name, each applied to a key's value that is not null."""


_NO_RULES: Final = _Plan()


def _blank(value: Any) -> bool:
    """No value yet, or a placeholder: Azure's filter chunks send id "" and created
    0."""
    return value is None or value == "" or (value == 0 and type(value) is int)


def _finish(merged: _Merged, kept: _Kept | None = None) -> dict[str, Any]:
    """The JSON object merged so far, with the fills for keys no chunk supplied; only
    its keys `kept`, when given (a summary reads few)."""
    if kept is None:
        out = {key: _finished(value) for key, value in merged.items()}
    else:
        out = {key: _finished(merged[key], kept[key]) for key in kept if key in merged}
    for key, value, inner in merged.plan.fills:
        if kept is not None and key not in kept:
            continue
        current = out.get(key)
        if inner:
            if current is None:
                out[key] = _finish(_Merged(inner, merged.plans))
        elif key not in out or (value is not None and _blank(current)):
            out[key] = (
                value  # a placeholder ("" role) gives way to a fill, null to none
            )
    return out


def _finished(value: Any, kept: _Kept | None = None) -> Any:
    kind = value.__class__
    if kind is _Text:
        text = "".join(value)
        value[:] = (text,)  # the next read starts from one piece
        return _paired(text)
    if kind is _Items:
        return _joined(value)
    if kind is _Slots:
        return [_finish(value[index], kept) for index in sorted(value)]
    if kind is _Merged:
        return _finish(value, kept)
    return _copied(value)


def _joined(parts: list[Any], nested: bool = True) -> list[Any]:
    """The items of a list as a response holds them, new: of the parts that hold only
    a type and one text (`{"type": "text", "text": ...}`, or Mistral's thinking part
    around text parts, one level deep), adjacent ones of one type are one part and
    empty ones are left out; any other item is kept as it came (a part with more keys,
    a reference)."""
    out: list[Any] = []
    run: tuple[str, str, bool] | None = None
    pieces: list[Any] = []
    for part in parts:
        key = _text_key(part, nested)
        if key is None:
            _end_run(run, pieces, out)
            run = None
            out.append(_copied(part))
            continue
        value = part[key]
        listed = value.__class__ is list
        if run != (part["type"], key, listed):
            _end_run(run, pieces, out)
            run, pieces = (part["type"], key, listed), []
        pieces.extend(value) if listed else pieces.append(value)
    _end_run(run, pieces, out)
    return out


def _end_run(
    run: tuple[str, str, bool] | None, pieces: list[Any], out: list[Any]
) -> None:
    """The part a run of joinable parts makes, unless it is empty."""
    if run is None:
        return
    kind, key, listed = run
    value: Any = _joined(pieces, nested=False) if listed else _paired("".join(pieces))
    if value:
        out.append({"type": kind, key: value})


def _text_key(part: Any, nested: bool) -> str | None:
    """The key of a part's text when the part holds only that and its type: a string,
    or (`nested`) a list of parts."""
    if part.__class__ is not dict or len(part) != 2:
        return None
    if part.get("type").__class__ is not str:
        return None
    key = next(k for k in part if k != "type")
    kind = part[key].__class__
    return key if kind is str or (nested and kind is list) else None


def _copied(value: Any) -> Any:
    """A JSON value whose objects and lists are new: what `add` keeps of a chunk shares
    nothing mutable with it (the chunk may change later), and a snapshot nothing with
    what was kept, nor with the snapshots after it."""
    kind = value.__class__
    if kind is not dict and kind is not list:
        return value
    try:
        # In C, at half the cost of the walk (a logprobs item is a dozen lists and
        # dicts). marshal writes the builtin types only: a subclass raises ValueError.
        return marshal.loads(marshal.dumps(value))
    except ValueError:  # another type inside (an enum member), or nested too deep
        return _walked(value)


def _walked(value: Any) -> Any:
    """`_copied` by walking the value: any object that is not a dict or a list is kept
    as it is. Without recursion: JSON data may nest deeper than Python's recursion
    limit allows."""
    top: Any = {} if value.__class__ is dict else []
    stack: list[tuple[Any, Any]] = [(value, top)]
    while stack:
        source, copy = stack.pop()
        pairs = source.items() if source.__class__ is dict else enumerate(source)
        is_list = copy.__class__ is list
        for key, item in pairs:
            inner = item.__class__
            if inner is dict or inner is list:
                item_copy: Any = {} if inner is dict else []
                stack.append((item, item_copy))
                item = item_copy
            if is_list:
                copy.append(item)
            else:
                copy[key] = item
    return top
