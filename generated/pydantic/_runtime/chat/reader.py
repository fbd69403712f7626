"""Chat chunks read into `Part`s, chunk by chunk, by the `_Readings` of a module: the
texts of each choice (inline reasoning found by `inline_reasoning.py`), its tool calls,
the tools the server ran, finish reasons and usage reports, from wherever the backend
spelled them (docs/meanings.md)."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from itertools import compress
from typing import Any, Final

from ..errors import _cut_off_error
from ..inline_reasoning import _Harmony, _Splitter, _ThinkTags
from ..json_text import _paired
from ..parts import (
    _TEXTS,
    Citation,
    Identity,
    Part,
    ToolCallPart,
    ToolCallSummary,
    _cite_once,
)
from ..spellings import (
    _citation,
    _found,
    _parts,
    _place,
    _server_tool,
    _tool_call,
)
from .readings import (
    _CitePlaces,
    _Entry,
    _Head,
    _index_of,
    _OpaquePlaces,
    _Readings,
    _reported,
    _reporting,
    _ServerPlaces,
    _Spelled,
    _usage,
)


class _ChoiceTexts:
    __slots__ = ("from_field", "read", "seen", "spelled", "splitter", "texts")

    def __init__(self, think_tags: _ThinkTags) -> None:
        self.texts: dict[str, list[str]] = {meaning: [] for meaning in _TEXTS}
        self.read = True
        """Whether the texts are read chunk by chunk (else a watching reader's
        completion has them, see `_Reader.watch`)."""
        self.seen: set[str | tuple[str]] = set()
        """Watching: the keys of the head seen (a key as `(key,)` once seen holding
        parts, when it spells other meanings then)."""
        self.spelled: dict[str, set[str]] = {}
        """Watching: the keys seen that may spell each meaning."""
        self.splitter: _Splitter | _Harmony | None = None
        if think_tags == "harmony":
            self.splitter = _Harmony()
        elif think_tags is not None:
            self.splitter = _Splitter(think_tags)
        self.from_field = False
        """Whether a field carried reasoning in the entry being read: then reasoning
        between tags there is the same text again (llama.cpp sends both), and not
        read. Per entry: a stream re-spelled in tags keeps a field that holds more
        than the text (`reasoning_details`) beside its copy in tags, and a later piece
        in tags alone is read."""


_READ_ORDER: Final = ("reasoning", "text", "refusal")
"""The texts of a chunk in the order they are read: reasoning before the answer."""


def _spells_anew(state: _ChoiceTexts, head: _Head, inner: dict[str, Any]) -> bool:
    """Whether a head's keys now seen may spell one meaning twice. A key whose whole
    value and parts spell different meanings (`content`: text, or Mistral's thinking
    parts) counts for its parts' once it holds some."""
    seen = state.seen
    fresh = not seen.issuperset(inner)
    for key in head.mixed:
        value = inner.get(key)
        if value and value.__class__ is not str and (key,) not in seen:
            seen.add((key,))
            fresh = True
            for meaning, _, _ in head.spelled[key].nested:
                state.spelled.setdefault(meaning, set()).add(key)
    if not fresh:
        return False
    for key in inner:
        if key in seen:
            continue
        seen.add(key)
        what = head.spelled.get(key)
        if what is not None:
            meanings = {m for m, _ in what.plain}
            if key not in head.mixed:
                meanings |= {m for m, _, _ in what.nested}
            for meaning in meanings:
                state.spelled.setdefault(meaning, set()).add(key)
    return any(len(keys) > 1 for keys in state.spelled.values())


class _Reader:
    """The texts of a stream, read chunk by chunk (as parts, for `iter_parts`), by the
    `_Readings` of its module: only the keys spelled there are looked at.

    It keeps each choice's texts when `keeps` (for a summary); without that and without
    inline reasoning to find, a choice needs no state at all."""

    __slots__ = (
        "_choices",
        "_cited",
        "_citing",
        "_opaque",
        "_servers",
        "_stateless",
        "_think_tags",
        "last_report",
        "readings",
        "report_choices",
        "watches",
    )

    def __init__(
        self,
        readings: _Readings,
        think_tags: _ThinkTags,
        keeps: bool = True,
        watches: bool = False,
    ) -> None:
        """`keeps`: the texts are kept, for a summary; `watches`: chunks are given to
        `watch` (an accumulator's, without think tags)."""
        self.readings = readings
        self._think_tags: _ThinkTags = think_tags
        self._choices: dict[int, _ChoiceTexts] = {}
        self._stateless = not keeps and think_tags is None
        self.watches = watches
        self.last_report: tuple[str, ...] = ()
        """The keys under which the last chunk that held a usage report held it: the
        last report wins, wherever it is."""
        self.report_choices: frozenset[int] = frozenset()
        """... and, when they include `choices`, the indexes of the choices."""
        self._servers: list[tuple[Any, _ServerPlaces]] = []
        """The values of the choice being read that hold the tools the backend ran,
        each with its spellings, as `_texts_of` finds them (see `_server_tools`)."""
        self._opaque: list[tuple[Any, _OpaquePlaces]] = []
        """... and those that hold signatures and opaque reasoning."""
        self._citing: list[tuple[Any, _CitePlaces, int | None]] = []
        """The values of the chunk being read that cite sources, each with its
        spellings and its choice (None: out of the choices)."""
        self._cited: dict[object, Citation] = {}
        """The sources cited so far, by URL: a chunk that repeats them (Perplexity's
        every chunk) gives a part only for a new one, or one whose title is new."""

    def _report(self, reported: tuple[str, ...], data: Any) -> None:
        self.last_report = reported
        if "choices" in reported:  # once a stream, or so
            r = self.readings
            choices: Any = r.json_of(data).get("choices") or []
            found = _reporting(choices, r.choice_report_keys)
            self.report_choices = frozenset(_index_of(c) for c in found)

    def read(self, data: Any, chunk: Any = None, out: list[Part] | None = None) -> None:
        """Read one chunk (JSON data, or the target's object, as the readings say); add
        its parts to `out`, when given, each with `chunk`."""
        # JSON data is read by `dict.get` itself, a third of the cost of a getter.
        r = self.readings
        mapped = r.mapped
        choices: Any = data.get("choices") if mapped else r.choices(data)
        if choices:
            for choice in choices:
                if not mapped or choice.__class__ is dict:
                    self._choice(choice, chunk, out)
        if out is not None and (
            not r.top_cite_keys.isdisjoint(data)
            if mapped
            else any(r.top_cite_values(data))
        ):
            self._cites_at_top(data)  # the few chunks that cite (Perplexity's)
        if self._citing:
            if out is not None:
                self._citations(chunk, out)
            self._citing.clear()
        reported = _reported(r, data)
        if reported:
            self._report(reported, data)
            if out is not None:
                # Once a stream, or so: the whole chunk is read as JSON data.
                usage = _usage(r.json_of(data), r.by_meaning, r.choice_report_keys)
                out.append(Part("usage", None, "", chunk, usage=usage))

    def read_choice(self, choice: Any, out: list[Part]) -> None:
        """Read one entry of a chunk's choices (JSON data); add its parts to `out`
        (its texts, calls and finish: the sources it cites stay in it)."""
        self._choice(choice, None, out)
        self._citing.clear()

    def _choice(self, choice: Any, chunk: Any, out: list[Part] | None) -> None:
        r = self.readings
        mapped = r.mapped
        index: Any = choice.get("index") if mapped else r.index(choice)
        if index.__class__ is not int:
            index = 0  # Azure's filter chunks may send none
        state = None
        if not self._stateless:
            state = self._choices.get(index)
            if state is None:
                state = self._choices[index] = _ChoiceTexts(self._think_tags)
            state.from_field = False
        for head in r.heads:
            inner: Any = choice.get(head.key) if mapped else head.get(choice)
            if not inner or (mapped and inner.__class__ is not dict):
                continue
            pieces, calls = self._texts_of(head, inner, index)
            if state is None:
                assert out is not None, "a reader without state gives parts"
                for meaning, piece in pieces:
                    out.append(Part(meaning, index, piece, chunk))
            else:
                for meaning, piece in pieces:
                    if meaning == "text" and state.splitter is not None:
                        self._add(state, index, state.splitter.split(piece), chunk, out)
                        continue
                    if meaning == "reasoning":
                        state.from_field = True
                    state.texts[meaning].append(piece)
                    if out is not None:
                        out.append(Part(meaning, index, piece, chunk))
            if self._opaque:  # after the reasoning it signs: few chunks
                if out is not None:
                    self._opaque_parts(index, chunk, out)
                self._opaque.clear()
            if calls is not None and out is not None:
                self._tool_calls(calls, index, chunk, out)
        if r.calls_elsewhere is not None and out is not None:
            found = _found(r.json_of(choice), r.calls_elsewhere)
            self._tool_calls([item for item, _, _ in found], index, chunk, out)
        if r.cites_elsewhere and out is not None:
            self._citing.append((r.json_of(choice), r.cites_elsewhere, index))
        elif out is None and self._citing:
            self._citing.clear()  # read for its texts only
        if r.servers_elsewhere:
            self._servers.append(
                (choice, tuple((s.path, s) for s in r.servers_elsewhere))
            )
        if self._servers:  # the tools the backend ran: few chunks
            if out is not None:
                self._server_tools(index, chunk, out)
            self._servers.clear()
        if r.finish is not None:
            finish: Any = choice.get(r.finish_key) if mapped else r.finish(choice)
            if finish.__class__ is str and finish:  # "" is no finish (B1)
                if state is not None and state.splitter is not None:
                    self._add(state, index, state.splitter.flush(), chunk, out)
                if out is not None:
                    out.append(Part("finish", index, finish, chunk))

    def _texts_of(
        self, head: _Head, inner: Any, index: int
    ) -> tuple[list[tuple[str, str]], Any]:
        """(meaning, text) of the texts under the head of choice `index` in this
        chunk, reasoning first: of each meaning, the spellings of the highest
        precedence that have text, joined; and its tool calls (None: none)."""
        spelled = head.spelled
        found_values: list[tuple[_Spelled, Any]]
        if head.values is None:
            found_values = [
                (spelled[key], value)
                for key, value in inner.items()
                if value and key in spelled
            ]
        else:  # those with a value, at C speed (most chunks: one)
            values = head.values(inner)
            found_values = list(
                zip(compress(head.whats, values), compress(values, values), strict=True)
            )
        if len(found_values) == 1:
            what, value = found_values[0]
            if value.__class__ is str and len(what.plain) == 1:
                return [(what.plain[0][0], value)], None  # a text in one key
        hits: list[tuple[str, int, list[str]]] = []
        calls: Any = None
        for what, value in found_values:
            if value.__class__ is str:
                for meaning, precedence in what.plain:
                    hits.append((meaning, precedence, [value]))
            else:
                if what.nested or what.opaque:
                    value = self.readings.json_of(value)  # once, for both
                if what.nested:
                    self._nested(what.nested, value, hits)
                if what.calls:
                    calls = value
                if what.servers:
                    self._servers.append((value, what.servers))
                if what.opaque and _says_any(value, what.opaque_keys):
                    self._opaque.append((value, what.opaque))
                if what.cites:
                    self._citing.append((value, what.cites, index))
        if not hits:
            found: list[tuple[str, str]] = []
        elif len(hits) == 1:
            meaning, _, texts = hits[0]
            found = [(meaning, texts[0] if len(texts) == 1 else "".join(texts))]
        else:
            best: dict[str, tuple[int, list[str]]] = {}
            for meaning, precedence, texts in hits:
                known = best.get(meaning)
                if known is None or known[0] < precedence:
                    best[meaning] = (precedence, list(texts))
                elif known[0] == precedence:
                    known[1].extend(texts)
            found = [(m, "".join(best[m][1])) for m in _READ_ORDER if m in best]
        return found, calls

    def _nested(
        self,
        spelled: tuple[_Entry, ...],
        data: Any,
        hits: list[tuple[str, int, list[str]]],
    ) -> None:
        """The texts inside a key's value (a list of parts, as JSON data), by each of
        its spellings that has any."""
        found: dict[tuple[str, int], list[tuple[tuple[int, ...], str]]] = {}
        for meaning, precedence, rest in spelled:
            if data.__class__ is not (dict if rest[0].__class__ is str else list):
                continue  # the other shape of the field
            for v, _, place in _found(data, rest):
                if v.__class__ is str and v:
                    found.setdefault((meaning, precedence), []).append((place, v))
        for (meaning, precedence), texts in found.items():
            texts.sort(key=_place)  # two spellings of one list: in the list's order
            hits.append((meaning, precedence, [v for _, v in texts]))

    def _add(
        self,
        state: _ChoiceTexts,
        index: int,
        pieces: list[tuple[str, str]],
        chunk: Any,
        out: list[Part] | None,
        from_tags: bool = True,
    ) -> None:
        for meaning, text in pieces:
            if from_tags and meaning == "reasoning" and state.from_field:
                continue  # the same reasoning as the field's, again between tags
            if meaning.startswith("tool_call:"):  # a call in Harmony markup
                if out is not None and isinstance(state.splitter, _Harmony):
                    number = int(meaning.partition(":")[2])
                    name = state.splitter.calls[number][0]
                    which = ToolCallPart(number, None, name)
                    out.append(Part("tool_call", index, text, chunk, tool_call=which))
                continue
            state.texts[meaning].append(text)
            if out is not None:
                out.append(Part(meaning, index, text, chunk))

    def _tool_calls(self, calls: Any, index: int, chunk: Any, out: list[Part]) -> None:
        """Parts of the tool calls of a choice, from their list."""
        spelling = self.readings.call_spelling
        assert spelling is not None, "read only where tool calls are spelled"
        items: Any = self.readings.json_of(calls)
        for item in items if items.__class__ is list else ():
            if item.__class__ is dict:
                call = _tool_call(_parts(item, spelling))
                at: Any = item.get("index")
                which = ToolCallPart(
                    at if at.__class__ is int else None, call.id, call.name
                )
                for path in self.readings.call_signatures:
                    for value, _, _ in _found(item, path):
                        if value.__class__ is str and value:
                            out.append(
                                Part("signature", index, value, chunk, tool_call=which)
                            )
                out.append(
                    Part("tool_call", index, call.arguments, chunk, tool_call=which)
                )

    def _server_tools(self, index: int, chunk: Any, out: list[Part]) -> None:
        """Parts of the tools the backend ran, one per entry of the choice as it came
        (its arguments, or its output), from the values `_texts_of` noted: of the
        spellings that have entries, those of the highest precedence."""
        by_precedence: dict[int, list[Part]] = {}
        json_of = self.readings.json_of
        for value, places in self._servers:
            data: Any = json_of(value)
            for rest, spelling in places:
                for item, listed, _ in _found(data, rest):
                    if item.__class__ is dict:
                        source = item if listed is None else listed
                        tool = _server_tool(_parts(item, spelling), source)
                        part = Part("server_tool", index, "", chunk, server_tool=tool)
                        by_precedence.setdefault(spelling.precedence, []).append(part)
        if by_precedence:
            out.extend(by_precedence[max(by_precedence)])

    def _opaque_parts(self, index: int, chunk: Any, out: list[Part]) -> None:
        """Parts of the signatures and opaque reasoning of a choice, from the values
        `_texts_of` noted (JSON data): in their list's order, as the summary has
        them; an empty one (a signature that opens a block, the real one later) is
        none."""
        found: list[tuple[tuple[int, ...], int, str, str]] = []
        for data, places in self._opaque:
            for order, (kind, rest) in enumerate(places):
                for said, _, place in _found(data, rest):
                    if said.__class__ is str and said:
                        found.append((place, order, kind, said))
        found.sort(key=lambda entry: entry[:2])
        out.extend(Part(kind, index, said, chunk) for _, _, kind, said in found)

    def _cites_at_top(self, data: Any) -> None:
        """Note the values out of the choices that cite sources (Perplexity's)."""
        r = self.readings
        for key, get, rest, spelling, order in r.cites_at_top:
            value: Any = data.get(key) if r.mapped else get(data)
            if value:  # absent: None, or UNSET
                self._citing.append((value, ((rest, spelling, order),), None))

    def _citations(self, chunk: Any, out: list[Part]) -> None:
        """Parts of the sources a chunk cites that were not cited before (or gain a
        title), in the order the summary lists them (`_citations`: the spellings of
        the highest precedence first, then in spec order)."""
        json_of = self.readings.json_of
        found: list[tuple[int, int, tuple[int, ...], int | None, Citation]] = []
        for value, places, index in self._citing:
            data: Any = json_of(value)
            for rest, spelling, order in places:
                for item, _, place in _found(data, rest):
                    cited = _citation(item, spelling)
                    if cited is not None:
                        rank = (-spelling.precedence, order, place)
                        found.append((*rank, index, cited))
        found.sort(key=lambda entry: entry[:3])
        for _, _, _, index, cited in found:
            if _cite_once(self._cited, cited):
                out.append(Part("citation", index, "", chunk, citation=cited))

    def texts(self, index: int) -> dict[str, str] | None:
        """The texts of a choice so far (a tag cut off at the end is not in them); None
        when a watching reader left them to the completion."""
        state = self._choices.get(index)
        if state is None:
            return None if self.watches else dict.fromkeys(_TEXTS, "")
        if not state.read:
            return None
        return {m: _paired("".join(pieces)) for m, pieces in state.texts.items()}

    def watch(self, data: Any, so_far: Callable[[int], dict[str, str]]) -> None:
        """Read a chunk's JSON data for an accumulator, whose completion holds the
        texts: while each meaning of a choice has come in one key (the most streams),
        its texts are the completion's, and the chunk is only looked at for a key it
        has not seen. Once a second key may spell a meaning (a rename, two spellings of
        one text), the choice is read chunk by chunk, from its texts `so_far` (the
        completion's before this chunk, one spelling's each)."""
        r = self.readings
        reported = _reported(r, data)
        if reported:
            self._report(reported, data)
        choices: Any = data.get("choices") or ()
        for at, choice in enumerate(choices):
            if choice.__class__ is not dict:
                continue
            index: Any = choice.get("index")
            if index.__class__ is not int:
                index = 0
            state = self._choices.get(index)
            if state is None:
                state = self._choices[index] = _ChoiceTexts(None)
                state.read = False
            elif state.read:
                self._choice(choice, None, None)
                continue
            for head in r.heads:
                inner: Any = choice.get(head.key)
                if inner.__class__ is dict and _spells_anew(state, head, inner):
                    texts = so_far(index)
                    state.texts = {m: [texts[m]] if texts[m] else [] for m in _TEXTS}
                    state.read = True
                    # The completion does not hold this chunk yet: its entries of
                    # this choice so far are read too (a repeated index).
                    for entry in choices[: at + 1]:
                        if entry.__class__ is dict and _index_of(entry) == index:
                            self._choice(entry, None, None)
                    break

    def calls(self, index: int) -> tuple[ToolCallSummary, ...]:
        """The tool calls a choice made in Harmony markup."""
        state = self._choices.get(index)
        if state is None or not isinstance(state.splitter, _Harmony):
            return ()
        return tuple(
            ToolCallSummary(None, name, "".join(pieces))
            for name, pieces in state.splitter.calls
        )

    def end(self, chunk: Any = None, out: list[Part] | None = None) -> None:
        """The stream has ended: what was held back is text after all."""
        for index, state in self._choices.items():
            if state.splitter is not None:
                self._add(state, index, state.splitter.flush(), chunk, out)


def _parts_of(
    chunks: Iterable[Any], readings: _Readings, think_tags: _ThinkTags
) -> Iterator[Part]:
    """The parts of a stream of chunks: a "start" part first, from the first chunk
    (with the usage that chunk reports, if any); what the reader held back, at the
    end; and an "error" part last when `chunks` is a stream cut off before its end (a
    `StreamError` it raises is raised)."""
    reader = _Reader(readings, think_tags)
    chunk: Any = None
    started = False
    for chunk in chunks:
        out: list[Part] = []
        if not started:
            started = True
            out.append(_start(chunk, readings.mapped))
            reader.read(chunk, chunk, out)
            _started_with(out)
        else:
            reader.read(chunk, chunk, out)
        yield from out
    out = []
    reader.end(chunk, out)
    if getattr(chunks, "done", True) is False:
        out.append(_cut_off(chunk))
    yield from out


async def _aparts_of(
    chunks: AsyncIterable[Any], readings: _Readings, think_tags: _ThinkTags
) -> AsyncIterator[Part]:
    """`_parts_of` for chunks that arrive asynchronously."""
    reader = _Reader(readings, think_tags)
    chunk: Any = None
    started = False
    async for chunk in chunks:
        out: list[Part] = []
        if not started:
            started = True
            out.append(_start(chunk, readings.mapped))
            reader.read(chunk, chunk, out)
            _started_with(out)
        else:
            reader.read(chunk, chunk, out)
        for part in out:
            yield part
    out = []
    reader.end(chunk, out)
    if getattr(chunks, "done", True) is False:
        out.append(_cut_off(chunk))
    for part in out:
        yield part


def _says_any(data: Any, keys: frozenset[str] | None) -> bool:
    """Whether JSON data (an entry, or a list of entries) may say opaque reasoning:
    an entry has one of its `keys` (None: any may). Most of OpenRouter's
    `reasoning_details` entries carry text, and no signature."""
    if keys is None:
        return True
    if data.__class__ is dict:
        return not keys.isdisjoint(data)
    if data.__class__ is list:
        return any(i.__class__ is dict and not keys.isdisjoint(i) for i in data)
    return False


def _start(chunk: Any, mapped: bool) -> Part:
    """The "start" part of a stream of chunks, from its first chunk (JSON data when
    `mapped`, else a target's object, read by attribute): its id, model and created
    time; an empty id or model (Azure's first chunk) is none."""
    keys = ("id", "model", "created")
    values: list[Any]
    if not mapped:
        values = [getattr(chunk, key, None) for key in keys]
    elif chunk.__class__ is dict:
        values = [chunk.get(key) for key in keys]
    else:
        values = [None, None, None]
    ident, model, created = values
    if created.__class__ is float and created.is_integer():
        created = int(created)
    identity = Identity(
        ident if ident.__class__ is str and ident else None,
        model if model.__class__ is str and model else None,
        created if created.__class__ is int else None,
    )
    return Part("start", None, "", chunk, identity=identity)


def _started_with(out: list[Part]) -> None:
    """Put the usage the first chunk reports (its "usage" part) on the "start" part
    too (`out[0]`), as the usage known at the start."""
    for part in out:
        if part.kind == "usage":
            out[0].usage = part.usage


def _cut_off(chunk: Any) -> Part:
    """The "error" part of a stream that ended before its end (`[DONE]`)."""
    error = _cut_off_error("chat")
    return Part("error", None, str(error["message"]), chunk, error=error)
