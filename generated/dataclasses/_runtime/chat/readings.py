"""What chat's reader looks up in a chunk, compiled once per module from the spellings
of a chunk (`_Readings`): the keys of a choice's head (`delta`) that hold texts, tool
calls and the tools the server ran, the finish reason, the usage reports, and how each
is read (from JSON data, or from the target's objects by `_Typed`)."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter, methodcaller
from typing import Any, Final, NamedTuple, TypeAlias, cast

from ..json_text import _as_is
from ..parts import _COUNTS, _OPAQUE, _PART_ITEMS, _REPORTED, _TEXTS, UsageSummary
from ..spellings import _by_meaning, _first_value, _Spelling, _Step


def _usage(
    data: Any,
    meanings: dict[str, list[list[_Spelling]]],
    in_choices: tuple[str, ...] = (),
) -> UsageSummary:
    """The usage report of a completion or a chunk, read by its rules; `in_choices`
    are the keys of a choice that may hold one."""
    choices: Any = data.get("choices")
    if choices:
        # No report there: no walk through them. Of two entries of one choice that
        # hold one (a repeated index), the later is the report, as it is merged.
        data = {**data, "choices": _reporting(choices, in_choices) or None}
    counts = {
        meaning: _first_value(data, meanings.get(meaning, []), (int,))
        for meaning in _COUNTS
    }
    prompt, completion = counts["prompt_tokens"], counts["completion_tokens"]
    total, reasoning = counts["total_tokens"], counts["reasoning_tokens"]
    if (
        None not in (prompt, completion, total)
        and reasoning
        and total == prompt + completion + reasoning
    ):
        # Reasoning counted apart from the completion (xAI): OpenAI's sense includes it.
        counts["completion_tokens"] = completion + reasoning
    cost = _first_value(data, meanings.get("cost_usd", []), (int, float))
    return UsageSummary(**counts, cost_usd=None if cost is None else float(cost))


def _reporting(choices: list[Any], in_choices: tuple[str, ...]) -> list[Any]:
    """The entries of a chunk's choices that hold a usage report (at `in_choices`), in
    the order of their indexes, as a completion holds them: of two entries of one
    choice (a repeated index), the later, as they are merged."""
    reporting = {
        _index_of(choice): choice
        for choice in choices
        if choice.__class__ is dict
        and any(choice.get(key) is not None for key in in_choices)
    }
    return [reporting[index] for index in sorted(reporting)]


def _index_of(choice: dict[str, Any]) -> int:
    """A choice's index (0 when it sends none, as Azure's filter chunks may not)."""
    index: Any = choice.get("index")
    return index if index.__class__ is int else 0


def _report_keys_in_choices(spellings: tuple[_Spelling, ...]) -> tuple[str, ...]:
    """The keys of a choice that may hold a usage report."""
    paths = [s.path for s in spellings if s.meaning in _REPORTED]
    keys = (p[2] for p in paths if p[:2] == ("choices", None) and len(p) > 2)
    return tuple(key for key in dict.fromkeys(keys) if isinstance(key, str))


class _Typed(NamedTuple):
    """How a target's own chunk objects are read, where they are not JSON data: the
    attribute of each key read, by where the key sits ("" in the chunk, "choices" in
    a choice, "choices.delta" in its delta), a key not listed being one the module
    does not declare; the attribute that holds the keys it does not declare (None:
    none are kept); and how a value reads as JSON data."""

    names: dict[str, dict[str, str]]
    extra: str | None
    json_of: Callable[[Any], Any]
    unset: object
    """What an absent key reads as (`UNSET`; None in pydantic)."""


class _InExtra:
    """Gets a key the module does not declare from an object's undeclared keys."""

    __slots__ = ("attribute", "key")

    def __init__(self, attribute: str, key: str) -> None:
        self.attribute, self.key = attribute, key

    def __call__(self, obj: Any) -> Any:
        return getattr(obj, self.attribute).get(self.key)


def _nothing(obj: Any) -> None:
    """A key that is never there (a module that keeps no undeclared key)."""


def _nothing_of(obj: Any) -> tuple[Any, ...]:
    """The values of no keys."""
    return ()


def _getter(typed: _Typed | None, where: str, key: str) -> Callable[[Any], Any]:
    """How the key `key` of an object at `where` is read: `dict.get` on JSON data, an
    attribute on a typed object. Absent, it reads as None, or UNSET (both false)."""
    if typed is None:
        return methodcaller("get", key)
    name = typed.names.get(where, {}).get(key)
    if name is not None:
        return attrgetter(name)
    return _nothing if typed.extra is None else _InExtra(typed.extra, key)


def _values_of(
    typed: _Typed, where: str, keys: tuple[str, ...]
) -> Callable[[Any], tuple[Any, ...]]:
    """The values of several keys of a typed object, in order: in one call when the
    module declares them all."""
    names = typed.names.get(where, {})
    if keys and all(key in names for key in keys):
        if len(keys) == 1:
            get = attrgetter(names[keys[0]])
            return lambda obj: (get(obj),)
        return cast(
            "Callable[[Any], tuple[Any, ...]]",
            attrgetter(*[names[key] for key in keys]),
        )
    getters = [_getter(typed, where, key) for key in keys]
    return lambda obj: tuple(get(obj) for get in getters)


_Entry: TypeAlias = "tuple[str, int, tuple[_Step, ...]]"
"""A spelling of a text under a key: (meaning, precedence, path in the key's value)."""


_ServerPlaces: TypeAlias = "tuple[tuple[tuple[_Step, ...], _Spelling], ...]"
"""Spellings of the tools the backend ran in a value: (path in the value, spelling)."""


_OpaquePlaces: TypeAlias = "tuple[tuple[str, tuple[_Step, ...]], ...]"
"""Spellings of opaque reasoning in a value: (the kind of its part, path in the
value), in spec order."""


_CitePlaces: TypeAlias = "tuple[tuple[tuple[_Step, ...], _Spelling, int], ...]"
"""Spellings of cited sources in a value: (path in the value, spelling, its place
among the spellings), the place ordering them as the summary does."""


_OPAQUE_KINDS: Final = {
    meaning: next(kind for kind, item in _PART_ITEMS.items() if item == made)
    for meaning, made in _OPAQUE.items()
}
"""The Part kind of each opaque meaning: "signature", "redacted_reasoning"."""


class _Head(NamedTuple):
    """A key of a choice that holds texts (`delta`): the spellings under each of its
    keys, and how its keys are read."""

    key: str
    get: Callable[[Any], Any]
    spelled: dict[str, _Spelled]
    """Its keys that hold a text or the tool calls, and what each holds."""
    values: Callable[[Any], tuple[Any, ...]] | None
    """Typed: the values of the keys of `spelled`, in order, at once."""
    mixed: tuple[str, ...]
    """Keys whose whole value spells other meanings than their parts (`content`)."""
    whats: tuple[_Spelled, ...]
    """What each key of `spelled` holds, in order (read beside `values`)."""


class _Spelled(NamedTuple):
    """What a key of a choice's head holds."""

    plain: tuple[tuple[str, int], ...]
    """(meaning, precedence) of the texts that are its whole value."""
    nested: tuple[_Entry, ...]
    """The spellings of a text inside its value (a list of parts)."""
    calls: bool
    """Whether it holds the tool calls."""
    servers: _ServerPlaces = ()
    """The spellings of the tools the backend ran in its value."""
    opaque: _OpaquePlaces = ()
    """The spellings of signatures and opaque reasoning in its value (OpenRouter's
    `reasoning_details`)."""
    opaque_keys: frozenset[str] | None = None
    """The keys of an entry of its value that hold them (`signature`, `data`), to
    pass over the entries that hold none at once (None: they are deeper)."""
    cites: _CitePlaces = ()
    """The spellings of cited sources in its value (`annotations`)."""


class _Readings:
    """What `_Reader` looks up on every chunk, compiled once per module from the
    spellings of a chunk: the keys that hold texts, the finish reason, tool calls and
    usage reports, and how each is read (from JSON data, or from the target's objects
    by `_Typed`). Only these keys of a chunk are looked at."""

    __slots__ = (
        "any_choice_report",
        "any_report",
        "by_meaning",
        "call_signatures",
        "call_spelling",
        "calls_elsewhere",
        "choice_report_keys",
        "choice_reports",
        "choices",
        "cites_at_top",
        "cites_elsewhere",
        "finish",
        "finish_key",
        "heads",
        "index",
        "json_of",
        "mapped",
        "report_places",
        "reports",
        "servers_elsewhere",
        "top_cite_keys",
        "top_cite_values",
        "typed",
        "unset",
    )

    def __init__(self, spellings: tuple[_Spelling, ...], typed: _Typed | None) -> None:
        self.by_meaning = _by_meaning(spellings)
        self.typed = typed
        self.mapped = typed is None
        """Whether chunks are read as JSON data."""
        self.json_of: Callable[[Any], Any] = _as_is if typed is None else typed.json_of
        self.unset = None if typed is None else typed.unset
        self.choices = _getter(typed, "", "choices")
        self.index = _getter(typed, "choices", "index")
        tiers = self.by_meaning.get("tool_calls", [])
        self.call_spelling = tiers[0][0] if tiers else None
        calls = self.call_spelling.path if self.call_spelling else ()
        self.calls_elsewhere: tuple[_Step, ...] | None = None
        """The path of the tool calls from a choice, when they are not the items of a
        list under a head (`delta.tool_calls`): read from the choice's JSON data."""
        if calls and not (len(calls) == 3 and calls[2] is None):
            self.calls_elsewhere, calls = calls, ()
        self.call_signatures = tuple(
            s.path[len(calls) :]
            for s in spellings
            if calls
            and s.meaning == "reasoning_signature"
            and s.path[: len(calls)] == calls
        )
        """The paths, in a tool call, of a signature that rides on it (Gemini's
        `extra_content.google.thought_signature`)."""
        under: dict[str, dict[str, list[_Entry]]] = {}
        for s in spellings:
            path = s.path
            if s.meaning in _TEXTS and len(path) >= 2:
                head, key, *rest = path
                if isinstance(head, str) and isinstance(key, str):
                    entry = (s.meaning, s.precedence, tuple(rest))
                    under.setdefault(head, {}).setdefault(key, []).append(entry)
        if calls:
            under.setdefault(cast(str, calls[0]), {})
        servers: dict[str, dict[str, _ServerPlaces]] = {}
        self.servers_elsewhere: tuple[_Spelling, ...] = ()
        """The spellings of the tools the backend ran that are not in a key of a
        head (as `delta.executed_tools` is): read from the choice's JSON data."""
        for s in spellings:
            if s.meaning != "server_tools":
                continue
            head, key = s.path[0], s.path[1] if len(s.path) > 1 else None
            if isinstance(head, str) and isinstance(key, str):
                at = servers.setdefault(head, {})
                at[key] = (*at.get(key, ()), (s.path[2:], s))
                under.setdefault(head, {})  # read in the head's pass over its keys
            else:
                self.servers_elsewhere += (s,)
        opaque = _opaque_places(spellings, calls)
        cites, self.cites_elsewhere, self.cites_at_top = _cite_places(spellings, typed)
        top = tuple(key for key, *_ in self.cites_at_top)
        self.top_cite_keys = frozenset(top)
        """The keys of a chunk that may cite sources out of its choices."""
        self.top_cite_values = (
            _nothing_of if typed is None else _values_of(typed, "", top)
        )
        """Typed: their values, at once (absent: false)."""
        for head in (*opaque, *cites):
            under.setdefault(head, {})  # read in the head's pass over its keys
        self.heads = tuple(
            _head(
                typed,
                head,
                keys,
                calls,
                servers.get(head, {}),
                opaque.get(head, {}),
                cites.get(head, {}),
            )
            for head, keys in under.items()
        )

        finish = [s.path for s in spellings if s.meaning == "finish_reason"]
        key = finish[0][0] if finish and len(finish[0]) == 1 else None
        self.finish_key = key if isinstance(key, str) else None
        self.finish = (
            None
            if self.finish_key is None
            else _getter(typed, "choices", self.finish_key)
        )
        places = [p for p in _report_places(spellings) if p[0] != "choices"]
        self.report_places = tuple(
            (cast(str, p[0]), cast(tuple[str, ...], p[1:])) for p in places
        )
        """Where a chunk holds a usage report, out of its choices: (key, path in its
        value) of the object (`usage`; `x_groq`, `usage`)."""
        self.reports = tuple(
            (key, _getter(typed, "", key), rest) for key, rest in self.report_places
        )
        self.choice_report_keys = _report_keys_in_choices(spellings)
        self.choice_reports = tuple(
            _getter(typed, "choices", key) for key in self.choice_report_keys
        )
        """... and those of a choice (Moonshot)."""
        self.any_report: Callable[[Any], tuple[Any, ...]] | None = None
        """Typed: the values of the keys that may hold a report, at once: most chunks
        hold none (a present object is true, absent and null are false)."""
        self.any_choice_report: Callable[[Any], tuple[Any, ...]] | None = None
        if typed is not None:
            keys = tuple(key for key, _ in self.report_places)
            self.any_report = _values_of(typed, "", keys)
            self.any_choice_report = _values_of(
                typed, "choices", self.choice_report_keys
            )


def _values_getter(
    readings: _Readings, head: str, keys: tuple[str, ...]
) -> Callable[[Any], tuple[Any, ...]]:
    """The values of some keys of a choice's head, in order, at once."""
    if readings.typed is None:
        return lambda inner: tuple(map(inner.get, keys))
    return _values_of(readings.typed, f"choices.{head}", keys)


def _reported(readings: _Readings, data: Any) -> tuple[str, ...]:
    """The keys of a chunk under which it holds a usage report, a usage object at a
    place reports are spelled (`usage`, `x_groq.usage`, `choices[].usage`): () when it
    holds none. A key alone is no report (Groq's first `x_groq` holds only an id)."""
    r = readings
    found: tuple[str, ...] = ()
    if r.mapped:  # `dict.get` itself: a third of the cost of a getter
        for key, rest in r.report_places:
            value = data.get(key)
            if value is not None and _inside(value, rest).__class__ is dict:
                found += (key,)
        for choice in data.get("choices") or ():
            if choice.__class__ is dict:
                for key in r.choice_report_keys:
                    if choice.get(key).__class__ is dict:
                        return (*found, "choices")
        return found
    assert r.any_report is not None and r.any_choice_report is not None
    unset = r.unset
    if any(r.any_report(data)):
        for key, get, rest in r.reports:
            value = get(data)
            if value is None or value is unset:
                continue
            if not rest or _inside(r.json_of(value), rest).__class__ is dict:
                found += (key,)
    any_choice_report = r.any_choice_report
    for choice in r.choices(data) or ():
        if any(any_choice_report(choice)):
            return (*found, "choices")
    return found


def _inside(value: Any, keys: tuple[str, ...]) -> Any:
    """The value at `keys` in JSON data (None: not there)."""
    for key in keys:
        if value.__class__ is not dict:
            return None
        value = value.get(key)
    return value


def _report_places(spellings: tuple[_Spelling, ...]) -> tuple[tuple[_Step, ...], ...]:
    """Where a usage report is an object: the objects that hold the counts."""
    counts = ("prompt_tokens", "completion_tokens", "total_tokens")
    return tuple(dict.fromkeys(s.path[:-1] for s in spellings if s.meaning in counts))


def _opaque_places(
    spellings: tuple[_Spelling, ...], calls: tuple[_Step, ...]
) -> dict[str, dict[str, _OpaquePlaces]]:
    """The spellings of signatures and opaque reasoning under a key of a head, by head
    and key; those on a tool call are the call's (`call_signatures`)."""
    places: dict[str, dict[str, _OpaquePlaces]] = {}
    for s in spellings:
        kind = _OPAQUE_KINDS.get(s.meaning)
        path = s.path
        if kind is None or len(path) < 3 or (calls and path[: len(calls)] == calls):
            continue
        head, key = path[0], path[1]
        if isinstance(head, str) and isinstance(key, str):
            at = places.setdefault(head, {})
            at[key] = (*at.get(key, ()), (kind, path[2:]))
    return places


def _entry_keys(places: _OpaquePlaces) -> frozenset[str] | None:
    """The keys of an entry that hold opaque reasoning, when every spelling of it is
    a key of an entry (of a list, filtered or not) or of the value itself."""
    keys: set[str] = set()
    for _, rest in places:
        last = rest[-1]
        if not isinstance(last, str) or any(isinstance(s, str) for s in rest[:-1]):
            return None
        keys.add(last)
    return frozenset(keys)


_TopCites: TypeAlias = (
    "tuple[tuple[str, Callable[[Any], Any], tuple[_Step, ...], _Spelling, int], ...]"
)
"""Spellings of cited sources out of the choices (Perplexity's `citations`): (key of
the chunk, how it is read, path in its value, spelling, place among the spellings)."""


def _cite_places(
    spellings: tuple[_Spelling, ...], typed: _Typed | None
) -> tuple[dict[str, dict[str, _CitePlaces]], _CitePlaces, _TopCites]:
    """Where a chunk spells cited sources: under a key of a choice's head (by head and
    key: `delta.annotations`), elsewhere in a choice (paths from the choice), and out
    of the choices (`citations`)."""
    under: dict[str, dict[str, _CitePlaces]] = {}
    elsewhere: _CitePlaces = ()
    top: _TopCites = ()
    for order, s in enumerate(spellings):
        if s.meaning != "citations":
            continue
        path = s.path
        if path[:2] != ("choices", None):
            key = path[0]
            if isinstance(key, str):
                top += ((key, _getter(typed, "", key), path[1:], s, order),)
            continue
        head, key = (path[2], path[3]) if len(path) > 3 else (None, None)
        if isinstance(head, str) and isinstance(key, str):
            at = under.setdefault(head, {})
            at[key] = (*at.get(key, ()), (path[4:], s, order))
        else:
            elsewhere += ((path[2:], s, order),)
    return under, elsewhere, top


def _head(
    typed: _Typed | None,
    key: str,
    keys: dict[str, list[_Entry]],
    calls: tuple[_Step, ...],
    servers: dict[str, _ServerPlaces] | None = None,
    opaque: dict[str, _OpaquePlaces] | None = None,
    cites: dict[str, _CitePlaces] | None = None,
) -> _Head:
    spelled = {
        k: _Spelled(
            tuple((m, p) for m, p, rest in v if not rest),
            tuple(e for e in v if e[2]),
            calls == (key, k, None),
        )
        for k, v in keys.items()
    }
    if calls[:1] == (key,) and calls[1] not in spelled:
        spelled[cast(str, calls[1])] = _Spelled((), (), True)
    for k, places in (servers or {}).items():
        spelled[k] = (spelled.get(k) or _Spelled((), (), False))._replace(
            servers=places
        )
    for k, kinds in (opaque or {}).items():
        spelled[k] = (spelled.get(k) or _Spelled((), (), False))._replace(
            opaque=kinds, opaque_keys=_entry_keys(kinds)
        )
    for k, cited in (cites or {}).items():
        spelled[k] = (spelled.get(k) or _Spelled((), (), False))._replace(cites=cited)
    where = f"choices.{key}"
    values = None if typed is None else _values_of(typed, where, (*spelled,))
    mixed = tuple(
        k
        for k, what in spelled.items()
        if {m for m, _ in what.plain} != {m for m, _, _ in what.nested}
        and what.plain
        and what.nested
    )
    whats = tuple(spelled.values())
    return _Head(key, _getter(typed, "choices", key), spelled, values, mixed, whats)
