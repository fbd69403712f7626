"""Golden records (tests/golden/<feature>/): each tiny spec's four target modules are what
the generator makes of it now, and each record, imported, does what its feature says.
The records are rewritten by `make golden` (python -m tests.golden)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests import golden

FEATURES = golden.features()
REQUIRED_FEATURES = {
    "relaxations",
    "discriminated_union",
    "defaulted_lists",
    "open_enums",
    "strict_profile",
    "awkward_names",
    "merge_rules",
    "vendor_selection",
}
TARGETS = golden.TARGETS
DIFF_LINES = 60


def test_every_required_feature_has_a_golden_case() -> None:
    missing = sorted(REQUIRED_FEATURES - set(FEATURES))
    assert not missing, missing


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("feature", FEATURES)
def test_the_golden_record_is_what_the_generator_makes(feature: str, target: str) -> None:
    path = golden.expected_path(feature, target)
    name = path.relative_to(golden.REPO).as_posix()
    assert path.is_file(), f"{name} is missing; write it with `{golden.COMMAND}`"
    expected = path.read_text(encoding="utf-8")
    actual = golden.rendered(feature)[target]
    if actual != expected:
        pytest.fail(
            f"{name} differs from what the generator makes now; if the change is meant,"
            f" regenerate with `{golden.COMMAND}` and review the diff.\n"
            + golden.diff(expected, actual, name, DIFF_LINES),
            pytrace=False,
        )


@pytest.mark.parametrize("feature", FEATURES)
def test_a_golden_folder_holds_its_spec_and_four_records_only(feature: str) -> None:
    folder = golden.GOLDEN / feature
    found = {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    records = {f"expected/{golden.expected_name(t)}" for t in TARGETS}
    core = "spec/chat_completion_chunk.yaml"
    vendors = {p for p in found if p.startswith("spec/vendors/") and p.count("/") == 2}
    assert core in found
    assert records <= found, sorted(records - found)
    assert all(p.endswith(".yaml") for p in vendors), sorted(vendors)
    allowed = {core, golden.OPTIONS_FILE, *records, *vendors}
    assert found <= allowed, f"stray files: {sorted(found - allowed)}"
    spec_text = (folder / core).read_text(encoding="utf-8")
    assert spec_text.startswith(f"# Golden case `{feature}`"), "say what the case shows"


def test_no_record_holds_a_digest() -> None:
    text = (
        "# Made from (input, digest):\n#   spec/x.yaml  0123456789ab\n# Digest: 0123456789abcdef\n"
    )
    normalised = golden.expected_text("generated/dataclasses/chat.py", text)
    placeholder = golden.DIGEST_PLACEHOLDER
    assert normalised == (
        f"# Made from (input, digest):\n#   spec/x.yaml  {placeholder}\n# Digest: {placeholder}\n"
    )
    for feature in FEATURES:
        for target in TARGETS:
            record = golden.expected_path(feature, target).read_text(encoding="utf-8")
            assert not re.search(r"(  |Digest: )[0-9a-f]{12,16}$", record, re.M), (feature, target)


MODULE = """# Digest: 0123456789abcdef
import json


class Shared:
    \"\"\"Copied into every module.\"\"\"

    def read(self, text: str) -> object:
        return json.loads(text)


class Chunk(Shared):
    pass
"""


def test_an_elided_section_is_one_marker_line_and_comes_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    block = MODULE[MODULE.index("class Shared") : MODULE.index("class Chunk")].rstrip("\n") + "\n"
    monkeypatch.setattr(golden, "ELIDE", [block])
    elided = golden.expected_text("chunk_dataclasses.py", MODULE)
    assert block not in elided and "class Chunk(Shared):" in elided
    assert "\n# (runtime section: 0)\n" in elided
    assert len(MODULE.splitlines()) - len(elided.splitlines()) == len(block.splitlines()) - 1
    hashed = golden.expected_text("chunk.schema.json", MODULE)  # not Python: the hash only
    assert golden.DIGEST_PLACEHOLDER in hashed and block in hashed
    assert golden.restore(elided) == hashed
    monkeypatch.setattr(golden, "ELIDE", [])
    monkeypatch.setattr(golden, "runtime_sections", lambda: {"shared": block})
    named = golden.expected_text("chunk_msgspec.py", MODULE)
    assert "\n# (runtime section: shared)\n" in named and block not in named
    assert golden.restore(named) == hashed


def test_runtime_sections_are_shown_as_markers_and_come_back_byte_for_byte() -> None:
    text = (golden.REPO / "generated/dataclasses/chat.py").read_text(encoding="utf-8")
    shown = golden.expected_text("chunk_dataclasses.py", text)
    assert "# (runtime section: objects._read)\n" in shown
    assert "def _read(" not in shown
    hashed = golden._DIGESTS.sub(lambda m: m.group(1) + golden.DIGEST_PLACEHOLDER, text)
    assert golden.restore(shown) == hashed


# --- the records at work -----------------------------------------------------------


def _import(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve their module through sys.modules
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


Records = Callable[[str], dict[str, ModuleType]]


@pytest.fixture
def golden_modules(tmp_path: Path) -> Iterator[Records]:
    """Imports the four golden modules of a feature, by target, from copies in a
    temporary folder with their runtime sections put back."""
    loaded: list[str] = []

    def load(feature: str) -> dict[str, ModuleType]:
        assert feature in FEATURES, feature
        modules = {}
        for target in TARGETS:
            text = golden.expected_path(feature, target).read_text(encoding="utf-8")
            name = f"golden_{feature}_{target}"
            path = tmp_path / f"{name}.py"
            path.write_text(golden.restore(text), encoding="utf-8")
            modules[target] = _import(path, name)
            loaded.append(name)
        return modules

    yield load
    for name in loaded:
        sys.modules.pop(name, None)


def canonical(value: Any) -> str:
    """A JSON value as text that tells 1 from 1.0 and true, and ignores key order."""
    return json.dumps(value, sort_keys=True)


def round_trip(module: ModuleType, payload: Any) -> Any:
    """The JSON value a target writes back for a payload it reads."""
    return json.loads(module.dumps(module.loads(json.dumps(payload))))


def assert_round_trips(module: ModuleType, payload: Any, expected: Any = None) -> None:
    want = payload if expected is None else expected
    assert canonical(round_trip(module, payload)) == canonical(want), module.__name__


def assert_rejected(module: ModuleType, payload: Any) -> None:
    with pytest.raises(module.ChunkDecodeError):
        module.loads(json.dumps(payload))


def attribute(target: str, value: Any, wire: str, names: tuple[str, str]) -> Any:
    """A decoded field by its wire key (TypedDicts) or by the target's Python name
    (dataclasses, msgspec: the first name; pydantic: the second)."""
    if target == "typeddicts":
        return value[wire]
    return getattr(value, names[1] if target == "pydantic" else names[0])


def same(wire: str) -> tuple[str, str]:
    return (wire, wire)


def test_feature_relaxations(golden_modules: Records) -> None:
    records = golden_modules("relaxations")
    for target, m in records.items():
        # Every quirk at once: no `id`, `count` as a string, `note` null.
        loose = {"name": "n", "count": "12", "note": None}
        assert_round_trips(m, loose)
        assert attribute(target, m.loads(json.dumps(loose)), "count", same("count")) == "12"
        assert_round_trips(m, {"id": "a", "name": "n", "count": 3, "note": "x"})
        # What no vendor loosens is read absent or null all the same (the lenient
        # profile reads every key so); its type stays as the core declares it.
        assert_round_trips(m, {"id": "a", "count": 3})
        assert_round_trips(m, {"id": "a", "name": None, "count": 3})
        assert_rejected(m, {"id": "a", "name": "n", "count": 1.5})


def test_feature_discriminated_union(golden_modules: Records) -> None:
    records = golden_modules("discriminated_union")
    for target, m in records.items():
        progress = {"event": {"type": "progress", "percent": 50}}
        failure = {"event": {"type": "failure", "message": "disk full"}}
        for payload, kind in ((progress, "Progress"), (failure, "Failure")):
            assert_round_trips(m, payload)
            if target != "typeddicts":
                event = m.loads(json.dumps(payload)).event
                assert isinstance(event, getattr(m, kind)), (target, type(event))
        assert_rejected(m, {"event": {"type": "paused", "percent": 1}})
        assert_rejected(m, {"event": {"type": "failure", "message": 5}})
        assert_rejected(m, {"event": {"percent": 5}})  # the tag is the one key it needs


def test_feature_defaulted_lists(golden_modules: Records) -> None:
    records = golden_modules("defaulted_lists")
    for target, m in records.items():
        for payload in ({"id": "a", "tags": None}, {"id": "a"}):
            assert_round_trips(m, payload, {"id": "a", "tags": []})
            assert attribute(target, m.loads(json.dumps(payload)), "tags", same("tags")) == []
        assert_round_trips(m, {"id": "a", "tags": ["x", "y"], "labels": ["z"]})
        assert_rejected(m, {"id": "a", "tags": "x"})


def test_feature_open_enums(golden_modules: Records) -> None:
    records = golden_modules("open_enums")
    for target, m in records.items():
        assert_round_trips(m, {"color": "mauve", "shape": "circle"})
        assert_round_trips(m, {"color": "red", "shape": "square"})
        parsed = m.loads(json.dumps({"color": "mauve"}))
        assert attribute(target, parsed, "color", same("color")) == "mauve"
        assert_rejected(m, {"color": "red", "shape": "hexagon"})
        assert_rejected(m, {"color": 1})


def test_feature_strict_profile(golden_modules: Records) -> None:
    records = golden_modules("strict_profile")
    valid = {"id": "a", "kind": "data", "items": ["x"], "acme_latency": 7}
    for m in records.values():
        assert_round_trips(m, valid)
        assert_round_trips(m, {"id": "a", "items": []})
        assert_rejected(m, {**valid, "unknown": 1})  # unknown keys are rejected
        assert_rejected(m, {**valid, "kind": "other"})  # the open enum is closed
        assert_rejected(m, {"id": "a", "kind": "data"})  # `items` is required...
        assert_rejected(m, {**valid, "items": None})  # ...and not nullable
        assert_rejected(m, {"items": ["x"]})  # acme's quirk (no `id`) is not applied
        assert_rejected(m, {**valid, "acme_latency": None})  # no null for vendor fields


AWKWARD: dict[str, tuple[Any, tuple[str, str]]] = {
    # wire key: (value, (dataclasses and msgspec name, pydantic name))
    "id": ("a", same("id")),
    "from": (1, ("from_", "from_")),
    "class": (None, ("class_", "class_")),
    "json": (2, ("json", "json_")),
    "model_config": (True, ("model_config_", "model_config_")),
    "extra": (3, ("extra_", "extra")),
    "x-request-id": ("r-1", ("x_request_id_", "x_request_id_")),
    "2fa": (False, ("field_2fa_", "field_2fa_")),
    "__verbose": (True, ("verbose_", "verbose_")),
}


def test_feature_awkward_names(golden_modules: Records) -> None:
    records = golden_modules("awkward_names")
    payload = {wire: value for wire, (value, _) in AWKWARD.items()}
    for target, m in records.items():
        assert_round_trips(m, payload)
        # An unknown key spelled like a Python name stays an unknown key.
        assert_round_trips(m, {**payload, "from_": "unknown"})
        parsed = m.loads(json.dumps(payload))
        for wire, (value, names) in AWKWARD.items():
            assert attribute(target, parsed, wire, names) == value, (target, wire)
        assert_rejected(m, {**payload, "x-request-id": 5})


MERGE_STREAM: list[dict[str, Any]] = [
    {
        "id": "s1",
        "text": "Hel",
        "name": "get",
        "status": "started",
        "noise": "xx",
        "items": [{"index": 1, "value": "b"}],
        "delta": {"role": "user", "content": "Hi"},
    },
    {
        "id": "s2",
        "text": "lo",
        "name": "get",
        "status": "running",
        "noise": "yy",
        "items": [{"index": 0, "value": "a"}, {"index": 1, "value": "c"}],
        "delta": {"content": " there"},
    },
    {
        "id": "",
        "text": None,
        "name": "_weather",
        "status": "done",
        "items": [{"index": 2}],
        "delta": {"role": "tool"},
    },
]
MERGED: dict[str, Any] = {
    "id": "s1",  # first
    "text": "Hello",  # append; null adds nothing
    "name": "get_weather",  # append_unless_repeated
    "status": "done",  # last
    "items": [  # by_index, in index order; `value` filled with ""
        {"index": 0, "value": "a"},
        {"index": 1, "value": "bc"},
        {"index": 2, "value": ""},
    ],
    "message": {"role": "user", "content": "Hi there"},  # delta merged into message
}  # `noise` dropped


def accumulate(m: ModuleType, chunks: list[dict[str, Any]]) -> Any:
    accumulator = m.ChunkAccumulator()
    for chunk in chunks:
        accumulator.add(m.loads(json.dumps(chunk)))
    return json.loads(m.dumps(accumulator.result()))


def test_feature_merge_rules(golden_modules: Records) -> None:
    records = golden_modules("merge_rules")
    for target, m in records.items():
        assert canonical(accumulate(m, MERGE_STREAM)) == canonical(MERGED), target
        # Fills: a message always (`{}`, merged as a Delta), with a role.
        filled = {"id": "x", "message": {"role": "assistant"}}
        assert canonical(accumulate(m, [{"id": "x"}])) == canonical(filled), target
        completion = m.loads_completion(json.dumps(MERGED))
        assert canonical(json.loads(m.dumps(completion))) == canonical(MERGED), target


def test_feature_vendor_selection(golden_modules: Records) -> None:
    records = golden_modules("vendor_selection")
    payload = {"id": "a", "alpha_score": 0.5, "beta_trace": {"span": "s"}, "detail": {"code": 3}}
    for target, m in records.items():
        assert_round_trips(m, payload)
        assert hasattr(m, "Chunk")
        assert not hasattr(m, "BetaTrace") and not hasattr(m, "BetaDetail"), target
        parsed = m.loads(json.dumps(payload))
        assert attribute(target, parsed, "alpha_score", same("alpha_score")) == 0.5
        extras: Callable[[Any], Any] = {
            "dataclasses": lambda v: v.extra,
            "msgspec": lambda v: v.extra,
            "pydantic": lambda v: v.model_extra,
            "typeddicts": lambda v: {"beta_trace": v["beta_trace"]},
        }[target]
        assert dict(extras(parsed)) == {"beta_trace": {"span": "s"}}, target
        # alpha's field is typed; beta's is an unknown key, whatever its value.
        assert_rejected(m, {**payload, "alpha_score": "high"})
        assert_round_trips(m, {**payload, "beta_trace": "not a trace"})
        # beta's quirk applies, with its type as plain JSON: any object, not a number.
        assert_round_trips(m, {**payload, "detail": {"code": "not an int"}})
        assert_round_trips(m, {**payload, "detail": "text"})
        assert_rejected(m, {**payload, "detail": 5})
