"""The runtime (generator/runtime/) as source, on its own: the table reading, the
decoders, the merge rules, and the copying of its definitions into a module."""

from __future__ import annotations

import enum
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from generator.render import linking
from generator.runtime.chat.events import _ChatEvents
from generator.runtime.dataclass_base import _as_dicts, _sparse, _WideObject
from generator.runtime.errors import ChunkDecodeError
from generator.runtime.extra import _Extra, _no_extra
from generator.runtime.merge import _RULES, _copied, _finish, _merge, _Merged, _Plan
from generator.runtime.objects import _defaulted, _nullable, _problem, _read, _required, _Shape
from generator.runtime.sse import KEPT_DATA, RawEvent, _SseFramer
from generator.runtime.unset import UNSET, _Unset
from generator.runtime.values import _either, _int, _list_of, _one_of, _str, _tagged

SHAPE = _Shape(
    {
        "id": _required(_str),
        "n": _nullable(_int, "n_"),
        "tags": _defaulted(_list_of(_str)),
        "kind": _required(_one_of("a", "b")),
    }
)


def test_read_takes_known_keys_by_name_and_keeps_the_others_in_order() -> None:
    known, other = _read({"z": 1, "n": None, "id": "x", "tags": None, "kind": "a"}, SHAPE)
    assert known == {"n_": None, "id": "x", "tags": [], "kind": "a"}
    assert list(other) == ["z"]


def test_read_arranges_each_sequence_of_keys_once_in_spec_order() -> None:
    shape = _Shape(
        {"id": _required(_str), "tags": _defaulted(_list_of(_str)), "n": _nullable(_int)}
    )
    for data in ({"n": 1, "id": "x"}, {"id": "y", "n": 2}, {"n": 3, "id": "z"}):
        known, _ = _read(data, shape)
        assert list(known.items()) == [("id", data["id"]), ("tags", []), ("n", data["n"])]
    assert len(shape.arranged) == 2  # two orders of the same keys, each arranged once
    with pytest.raises(ChunkDecodeError):  # an arrangement is no promise about values
        _read({"n": 4, "id": 5}, shape)


def test_read_forgets_its_arrangements_past_a_bound() -> None:
    shape = _Shape({"id": _required(_str)})
    for number in range(2_500):
        known, other = _read({"id": "x", f"k{number}": number}, shape)
        assert known == {"id": "x"} and other == {f"k{number}": number}
    assert 0 < len(shape.arranged) <= 1_000


@_sparse
@dataclass(kw_only=True)
class _Wide(_WideObject):
    id: str
    n_: int | _Unset | None = UNSET
    tags: list[str] = field(default_factory=list[str])
    parts: list[_Wide] | _Unset = UNSET
    extra: Mapping[str, Any] = field(default_factory=_no_extra)

    _fields: ClassVar[_Shape] = _Shape(
        {
            "id": _required(_str),
            "n": _nullable(_int, "n_"),
            "tags": _defaulted(_list_of(_str)),
            "parts": _nullable(_list_of(lambda data: _Wide.from_dict(data))),
        }
    )
    _writers: ClassVar[dict[str, Any]] = {"parts": _as_dicts}


def test_a_wide_object_holds_its_keywords_and_writes_them_in_spec_order() -> None:
    wide = _Wide(parts=[_Wide(id="p")], n_=None, id="x", tags=["t"])
    assert list(vars(wide)) == ["parts", "n_", "id", "tags"]
    expected = {"id": "x", "n": None, "tags": ["t"], "parts": [{"id": "p", "tags": []}]}
    assert list(wide.to_dict().items()) == list(expected.items())
    later = _Wide(id="y")
    later.extra = _Extra({"z": 1})
    later.n_ = 2  # assigned after the others: still written in its place
    assert list(later.to_dict().items()) == [("id", "y"), ("n", 2), ("tags", []), ("z", 1)]
    assert _Wide.from_dict(later.to_dict()) == later
    later.n_ = UNSET  # as if absent
    assert "n" not in later.to_dict()


def test_a_wide_object_checks_its_keywords_as_its_dataclass_would() -> None:
    with pytest.raises(
        TypeError, match=r"^_Wide.__init__\(\) missing 1 required keyword-only argument: 'id'$"
    ):
        _Wide(n_=1)  # type: ignore[call-arg]
    with pytest.raises(
        TypeError, match=r"^_Wide.__init__\(\) got an unexpected keyword argument 'zz'$"
    ):
        _Wide(id="x", zz=1)  # type: ignore[call-arg]


def test_a_wide_object_forgets_its_arrangements_past_a_bound() -> None:
    wide = _Wide(id="x")
    for number in range(2_500):
        setattr(wide, f"k{number}", number)  # an attribute no field has: not written
        assert wide.to_dict() == {"id": "x", "tags": []}
    assert 0 < len(_Wide._arranged) <= 1_000


@pytest.mark.parametrize(
    ("data", "path", "message"),
    [
        ([], "$", "expected an object, got a list"),
        ({"kind": "c"}, "$.id", "missing required key"),
        ({"id": 1, "kind": "c"}, "$.id", "expected a string, got an integer"),
        (
            {"id": "x", "tags": ["t", 2], "kind": "a"},
            "$.tags[1]",
            "expected a string, got an integer",
        ),
        ({"id": "x", "kind": "c"}, "$.kind", "expected one of 'a', 'b', got 'c'"),
        ({"id": None, "kind": "a"}, "$.id", "must not be null"),
    ],
)
def test_problem_names_the_first_problem_in_spec_order(data: Any, path: str, message: str) -> None:
    error = _problem(data, SHAPE)
    assert (error.path, error.message) == (path, message)


def test_problem_reports_an_unknown_key_only_when_strict() -> None:
    strict = _Shape(dict(SHAPE.rows), strict=True)
    assert _problem({"id": "x", "kind": "a", "zz": 1}, strict).path == "$.zz"
    with pytest.raises(AssertionError):
        _problem({"id": "x", "kind": "a", "zz": 1}, SHAPE)


def test_a_list_of_items_taken_as_they_are_is_checked_at_once_and_copied() -> None:
    ids = [1, 2, 3]
    read = _list_of(_int)(ids)
    assert read == ids and read is not ids
    with pytest.raises(ChunkDecodeError) as caught:
        _list_of(_int)([1, True, 3])  # a boolean is no integer, though Python says so
    assert (caught.value.path, caught.value.message) == (
        "$[1]",
        "expected an integer, got a boolean",
    )
    assert _list_of(_list_of(_str))([["a"], []]) == [["a"], []]


def test_unions_pick_their_alternative_by_kind_or_tag() -> None:
    either = _either("a string or a list", {str: None, list: _list_of(_int)})
    assert either("s") == "s" and either([1]) == [1]
    with pytest.raises(ChunkDecodeError, match="expected a string or a list, got a number"):
        either(1.5)
    tagged = _tagged("type", {"a": lambda v: ("A", v), "b": lambda v: ("B", v)})
    assert tagged({"type": "b"}) == ("B", {"type": "b"})
    with pytest.raises(ChunkDecodeError) as caught:
        tagged({"type": ["a"]})
    assert caught.value.path == "$.type"


def test_every_merge_rule_is_a_function_of_the_table() -> None:
    plans = {
        "C": _Plan(
            rules={
                "t": ("append", "t", ""),
                "i": ("first", "i", ""),
                "n": ("append_unless_repeated", "n", ""),
                "o": ("merge", "o", "O"),
                "l": ("by_index", "l", "O"),
                "x": ("drop", "", ""),
            }
        ),
        "O": _Plan(rules={"s": ("append", "s", "")}),
    }
    assert set(_RULES) == {"append", "append_unless_repeated", "by_index", "drop", "first"} | {
        "last",
        "merge",
    }
    merged = _Merged("C", plans)
    chunks: list[dict[str, Any]] = [
        {"t": "a", "i": "", "n": "f", "o": {"s": "x"}, "l": [{"index": 0, "s": "p"}], "x": 1},
        {"t": "b", "i": "id", "n": "f", "o": {"s": "y"}, "l": [{"index": 0, "s": "q"}], "z": 1},
        {"t": "c", "i": "late", "n": "g", "z": None},
    ]
    for chunk in chunks:
        _merge(merged, chunk)
    assert _finish(merged) == {
        "t": "abc",
        "i": "id",
        "n": "fg",
        "o": {"s": "xy"},
        "l": [{"index": 0, "s": "pq"}],
        "z": 1,
    }


def test_every_rule_that_keeps_a_list_or_dict_keeps_its_own_copy() -> None:
    """Each place a rule stores a value (a list or dict given where text was expected, an
    object where its items were) keeps a copy: the chunk changed afterwards changes
    nothing merged."""
    plans = {
        "C": _Plan(
            rules={
                "parts": ("append", "parts", ""),
                "args": ("append", "args", ""),
                "i": ("first", "i", ""),
                "n": ("append_unless_repeated", "n", ""),
                "o": ("merge", "o", "O"),
                "l": ("by_index", "l", "O"),
            }
        ),
        "O": _Plan(),
    }
    chunks: list[dict[str, Any]] = [
        {"parts": [{"t": "a"}], "args": {"q": [1]}, "i": {"k": [1]}, "n": [1], "o": [1]},
        {"parts": [{"t": "b"}], "l": {"k": [1]}, "z": {"k": [1]}},
    ]
    expected = {
        "parts": [{"t": "a"}, {"t": "b"}],
        "args": {"q": [1]},
        "i": {"k": [1]},
        "n": [1],
        "o": [1],
        "l": {"k": [1]},
        "z": {"k": [1]},
    }
    merged = _Merged("C", plans)
    for chunk in chunks:
        _merge(merged, chunk)
    assert _finish(merged) == expected
    for chunk in chunks:
        for value in chunk.values():
            inner = next(iter(value.values())) if isinstance(value, dict) else value[0]
            if isinstance(inner, dict):
                inner["t"] = "changed"
            elif isinstance(inner, list):
                inner.append(2)
            if isinstance(value, list):
                value.append(3)
            else:
                value["extra"] = 1
    assert _finish(merged) == expected


class _Kind(enum.StrEnum):
    TEXT = "text"


def test_a_copy_of_json_data_is_new_down_to_every_list_and_dict() -> None:
    """`_copied` copies in C what marshal writes; a value with another type inside (an
    enum member, kept as it is) or nested deeper than marshal goes is walked."""
    deep: Any = [1]
    for _ in range(3000):
        deep = [deep]
    values = [
        {"a": [1, -0.0, 1e300, 2**70, True, None, "\ud83d é"], "b": {"c": []}},
        [{"type": _Kind.TEXT, "n": [1]}],
        deep,
    ]
    for value in values:
        originals, copies = [value], [_copied(value)]
        while originals:  # not ==, which recurses: the deep value is past its limit
            original, copy = originals.pop(), copies.pop()
            assert original is not copy and type(original) is type(copy)
            if isinstance(original, dict):
                assert list(original) == list(copy)
                original, copy = list(original.values()), list(copy.values())
            for one, other in zip(original, copy, strict=True):
                if isinstance(one, dict | list):
                    originals.append(one)
                    copies.append(other)
                else:
                    assert one == other and type(one) is type(other)
    assert _copied(values[1])[0]["type"] is _Kind.TEXT
    assert _copied("text") == "text" and _copied(None) is None


def test_the_event_reader_reads_lines_split_anywhere_and_keeps_every_byte() -> None:
    chat: _ChatEvents[bytes] = _ChatEvents(lambda data: data)
    reader = _SseFramer(chat, 100)
    reader.keep_raw()
    text = b'\xef\xbb\xbfdata: {"a":\r\ndata: 1}\r\n\r\n: keep-alive\n\nevent: x\ndata: y\n\ndata: [DONE]\r'
    events: list[RawEvent[bytes]] = []
    for i in range(len(text)):
        events += reader.feed(text[i : i + 1])
    events += reader.close()
    assert b"".join(e.raw for e in events) == text
    assert [e.chunk for e in events] == [b'{"a":\n1}', None, None, None]
    assert [e.event and (e.event.event, e.event.data) for e in events] == [
        None,
        None,
        ("x", "y"),
        ("message", "[DONE]"),
    ]
    assert chat.done


def test_a_skipped_event_keeps_an_error_no_larger_than_its_cut_data() -> None:
    """A decoder's error may say as much as the payload (a message quoting it, a path
    through keys as long as it): kept, it holds `KEPT_DATA` characters of each, and no
    traceback, context or cause, whose frames hold the whole payload."""
    payload = b'{"' + b"k" * 50_000 + b'": 1}'

    def loads(data: bytes) -> bytes:
        try:
            raise KeyError(data)  # a context whose traceback holds the payload
        except KeyError:
            error = ChunkDecodeError(f"bad: {data.decode()}")
        raise error.under(f"[{data.decode()!r}]").under(".deeper")

    events: _ChatEvents[bytes] = _ChatEvents(loads, "skip")
    _SseFramer(events, 10**6).feed(b"data: " + payload + b"\n\n")
    (skipped,) = events.skipped
    kept = skipped.error
    assert len(skipped.event.data) == KEPT_DATA
    assert (len(kept.message), len(kept.path)) == (KEPT_DATA, KEPT_DATA)
    assert kept.args == (kept.message,) and kept.message.startswith("bad: {")
    assert kept.path.startswith("$.deeper['{") and str(kept).startswith(kept.path + ": bad")
    assert (kept.__traceback__, kept.__context__, kept.__cause__) == (None, None, None)


def test_link_imports_what_a_module_uses_and_the_package_copies_what_that_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = "#<imports>\n\n\n#<runtime errors values objects>\n\n\ndef f(x: Any) -> str:\n    return _str(x)\n"
    linked = linking.link(module)
    assert "from typing import Any\n" in linked.text
    assert "from ._runtime.values import _str\n" in linked.text
    assert "#<runtime" not in linked.text and linked.uses == {"values"}
    files = linking.copied(linked.uses)
    assert files == ["__init__", "errors", "values"]  # values imports errors; not objects
    package = tmp_path / "linked"
    (package / "_runtime").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "m.py").write_text(linked.text)
    for name in files:
        (package / "_runtime" / f"{name}.py").write_text(linking.runtime_text(name))
    monkeypatch.syspath_prepend(str(tmp_path))
    m = importlib.import_module("linked.m")
    assert m.f("s") == "s"
    with pytest.raises(ValueError, match="expected a string, got an integer"):
        m.f(1)


def test_link_refuses_two_runtime_files_defining_one_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "twice_a.py").write_text('"""A."""\n\n_x = 1\n')
    (tmp_path / "twice_b.py").write_text('"""B."""\n\n_x = 2\n')
    monkeypatch.setattr(linking, "RUNTIME", tmp_path)
    with pytest.raises(linking.LinkError, match="twice_a and twice_b both define _x"):
        linking.link("#<runtime twice_a twice_b>\ny = _x\n")
