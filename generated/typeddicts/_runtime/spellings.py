"""Where a meaning is spelled, the same in every target and protocol: a `_Spelling` is a
path into JSON data (the spec's `means:`), and these functions read the values found
there. For one meaning, the spelling of highest precedence that has a value wins: two
spellings of one text (OpenRouter's `reasoning` and `reasoning_details`) are never added
together."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from typing import Any, NamedTuple, TypeAlias, cast

from .json_text import _json_text
from .parts import (
    _OPAQUE,
    _TEXTS,
    Citation,
    ReasoningItem,
    ServerToolSummary,
    ToolCallSummary,
    _cite_once,
)

_Step: TypeAlias = "str | tuple[str, str] | None"
"""A key; a (key, value) filter, for the items of a list whose `key` is `value`; or
None, for every item of a list."""


class _Spelling(NamedTuple):
    """Where one meaning is spelled: a path from a choice of the completion (for the
    meanings of a choice) or from the completion (for usage, cost and citations)."""

    meaning: str
    path: tuple[_Step, ...]
    precedence: int = 0
    """Of the spellings that have a value, the highest wins."""
    scale: float = 1.0
    """What one unit of the value is in the meaning's unit (1e-10 for ticks to USD)."""
    items: tuple[tuple[str, tuple[_Step, ...]], ...] = ()
    """For tool calls, server tools and citations: the path of each part (`id`, `url`)
    in an item."""


def _found(
    value: Any, path: tuple[_Step, ...]
) -> list[tuple[Any, Any, tuple[int, ...]]]:
    """The values at `path` under `value`, in order, each with the list item it came
    from (None: none) and its place (the indexes of the items passed through)."""
    for at, step in enumerate(path):  # keys, the most of a path, are looked up fast
        if step.__class__ is not str:
            return _found_in_lists(value, path[at:])
        if value.__class__ is not dict:
            return []
        value = value.get(step)
        if value is None:
            return []
    return [(value, None, ())]


def _found_in_lists(
    value: Any, path: tuple[_Step, ...]
) -> list[tuple[Any, Any, tuple[int, ...]]]:
    found: list[tuple[Any, Any, tuple[int, ...]]] = [(value, None, ())]
    for step in path:
        stepped: list[tuple[Any, Any, tuple[int, ...]]] = []
        for current, item, place in found:
            kind = current.__class__
            if step.__class__ is str:
                if kind is dict:
                    inner = current.get(step)
                    if inner is not None:
                        stepped.append((inner, item, place))
            elif kind is list:
                items = enumerate(cast(list[Any], current))
                if step is None:
                    stepped.extend(
                        (v, v, (*place, i)) for i, v in items if v is not None
                    )
                else:
                    key, wanted = cast("tuple[str, str]", step)
                    stepped.extend(
                        (v, v, (*place, i))
                        for i, v in items
                        if v.__class__ is dict and v.get(key) == wanted
                    )
        found = stepped
        if not found:
            break
    return found


def _by_meaning(spellings: tuple[_Spelling, ...]) -> dict[str, list[list[_Spelling]]]:
    """Each meaning's spellings in tiers, highest precedence first."""
    tiers: dict[str, dict[int, list[_Spelling]]] = {}
    for spelling in spellings:
        tier = tiers.setdefault(spelling.meaning, {})
        tier.setdefault(spelling.precedence, []).append(spelling)
    return {
        meaning: [tier[p] for p in sorted(tier, reverse=True)]
        for meaning, tier in tiers.items()
    }


def _first_value(
    data: Any, tiers: list[list[_Spelling]], kinds: tuple[type, ...]
) -> Any:
    for tier in tiers:
        for spelling in tier:
            path = spelling.path
            if data.get(path[0]) is None:
                continue  # most places are not there: no walk
            for value, _, _ in _found(data, path):
                if value.__class__ in kinds:
                    if spelling.scale == 1.0:
                        return value
                    return cast(float, value) * spelling.scale
    return None


def _parts(item: Any, spelling: _Spelling) -> dict[str, Any]:
    parts: dict[str, Any] = {}
    for name, path in spelling.items:  # of a part's spellings, the first found wins
        if parts.get(name) is None:
            values = _found(item, path)
            parts[name] = values[0][0] if values else None
    return parts


def _tool_calls(data: Any, tiers: list[list[_Spelling]]) -> tuple[ToolCallSummary, ...]:
    for tier in tiers:
        calls = [
            _tool_call(_parts(item, spelling))
            for spelling in tier
            for item, _, _ in _found(data, spelling.path)
            if item.__class__ is dict
        ]
        if calls:
            return tuple(calls)
    return ()


def _tool_call(parts: dict[str, Any]) -> ToolCallSummary:
    arguments = parts.get("arguments")
    if arguments is None:
        arguments = ""
    elif arguments.__class__ is not str:
        arguments = _json_text(arguments)
    ident, name = parts.get("id"), parts.get("name")
    return ToolCallSummary(
        ident if ident.__class__ is str else None,
        name if name.__class__ is str else None,
        arguments,
    )


def _server_tools(
    data: Any, tiers: list[list[_Spelling]]
) -> tuple[ServerToolSummary, ...]:
    """The tools the backend ran, from the best tier of spellings that has any."""
    for tier in tiers:
        tools = [
            _server_tool(_parts(value, spelling), value if item is None else item)
            for spelling in tier
            for value, item, _ in _found(data, spelling.path)
            if value.__class__ is dict
        ]
        if tools:
            return tuple(tools)
    return ()


def _server_tool(parts: dict[str, Any], source: Any) -> ServerToolSummary:
    index, name = parts.get("index"), parts.get("name")
    arguments, output = parts.get("arguments"), parts.get("output")
    if arguments is None:
        arguments = ""
    elif arguments.__class__ is not str:
        arguments = _json_text(arguments)
    if output is not None and output.__class__ is not str:
        output = _json_text(output)
    return ServerToolSummary(
        index if index.__class__ is int else None,
        name if name.__class__ is str else None,
        arguments,
        output,
        source,
    )


def _reasoning_items(
    data: Any, spellings: list[_Spelling]
) -> tuple[ReasoningItem, ...]:
    found: list[tuple[tuple[int, ...], int, ReasoningItem]] = []
    for order, spelling in enumerate(spellings):
        for value, item, place in _found(data, spelling.path):
            if value == "" or value == []:
                continue  # an empty signature opens a block; the real one comes later
            kind = _OPAQUE[spelling.meaning]
            found.append((place, order, ReasoningItem(kind, value, item)))
    return tuple(entry for _, _, entry in sorted(found, key=lambda e: (e[0], e[1])))


def _citations(data: Any, tiers: list[list[_Spelling]]) -> tuple[Citation, ...]:
    """Every cited source once, by URL, the best spelling's title first."""
    seen: dict[object, Citation] = {}
    for tier in tiers:
        for spelling in tier:
            for value, _, _ in _found(data, spelling.path):
                cited = _citation(value, spelling)
                if cited is not None:
                    _cite_once(seen, cited)
    return tuple(seen.values())


def _citation(value: Any, spelling: _Spelling) -> Citation | None:
    """The source a value found at a spelling of citations cites: one with a URL (a
    URL alone, or an item with its `url` and `title`)."""
    parts = _parts(value, spelling) if spelling.items else {"url": value}
    url, title = parts.get("url"), parts.get("title")
    if url.__class__ is not str or not url:
        return None
    return Citation(url, title if title.__class__ is str else None)


def _texts_in(
    choice: dict[str, Any], meanings: dict[str, list[list[_Spelling]]]
) -> dict[str, str]:
    """The texts of a choice of the completion, where each meaning came in one key:
    the first tier of its spellings that has text, joined."""
    texts: dict[str, str] = dict.fromkeys(_TEXTS, "")
    for meaning in _TEXTS:
        for tier in meanings.get(meaning, []):
            found = [
                (place, value)
                for spelling in tier
                for value, _, place in _found(choice, spelling.path)
                if value.__class__ is str
            ]
            if any(value for _, value in found):
                found.sort(key=_place)  # two spellings of one list: in its order
                texts[meaning] = "".join(value for _, value in found)
                break
    return texts


def _place(found: tuple[tuple[int, ...], str]) -> tuple[int, ...]:
    return found[0]
