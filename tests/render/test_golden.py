"""Golden records (tests/golden/<feature>/): each tiny spec's record (the modules of the
four target packages) is what the generator makes of it now, and each record, imported as
a package, does what its feature says. The records are rewritten by `make golden`
(python -m tests.helpers.golden)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from generator.ir.load import CORE_FILE, FAMILY_FILES, VENDOR_DIR
from generator.ir.model import Options
from generator.render.linking import RUNTIME_PACKAGE, copied, runtime_text
from tests.helpers import golden

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
    "messages_open_union",
    "responses_vendor_section",
    "request_dialects",
}
TARGETS = golden.TARGETS
DIFF_LINES = 60


def test_every_required_feature_has_a_golden_case() -> None:
    missing = sorted(REQUIRED_FEATURES - set(FEATURES))
    assert not missing, missing


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("feature", FEATURES)
def test_the_golden_record_is_what_the_generator_makes(feature: str, target: str) -> None:
    modules = golden.rendered(feature)[target]
    for module, actual in modules.items():
        path = golden.expected_path(feature, target, module)
        name = golden.relative(path)
        assert path.is_file(), f"{name} is missing; write it with `{golden.COMMAND}`"
        expected = path.read_text(encoding="utf-8")
        if actual != expected:
            pytest.fail(
                f"{name} differs from what the generator makes now; if the change is meant,"
                f" regenerate with `{golden.COMMAND}` and review the diff.\n"
                + golden.diff(expected, actual, name, DIFF_LINES),
                pytrace=False,
            )
    strays = [golden.relative(p) for p in golden.strays(feature) if p.parent.name == target]
    assert not strays, f"made by the generator no more (remove them): {strays}"


def recorded_modules(feature: str) -> set[str]:
    """The modules a feature's record holds for each target, as its spec says: the chat
    module and `__init__`, and a module per other family whose file the spec has (of
    those `protocols` names, when options.toml names some)."""
    options = golden.options_for(feature)
    return {"__init__.py", "chat.py"} | {
        f"{family}.py"
        for family, file in FAMILY_FILES.items()
        if family != "chat" and (golden.GOLDEN / feature / file).is_file()
        if options.speaks(family)
    }


@pytest.mark.parametrize("feature", FEATURES)
def test_a_golden_folder_holds_its_spec_and_its_records_only(feature: str) -> None:
    folder = golden.GOLDEN / feature
    found = {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    # The package's modules; not its `_runtime/` (the runtime's files, as they are) or
    # its empty `py.typed`.
    records = {f"expected/{t}/{m}" for t in TARGETS for m in recorded_modules(feature)}
    families = {file for file in FAMILY_FILES.values() if file != CORE_FILE}
    vendors = {p for p in found if p.startswith(f"{VENDOR_DIR}/") and p.count("/") == 2}
    assert CORE_FILE in found
    assert records <= found, sorted(records - found)
    assert all(p.endswith(".yaml") for p in vendors), sorted(vendors)
    allowed = {CORE_FILE, golden.OPTIONS_FILE, *families, *records, *vendors}
    assert found <= allowed, f"stray files: {sorted(found - allowed)}"
    spec_text = (folder / CORE_FILE).read_text(encoding="utf-8")
    assert spec_text.startswith(f"# Golden case `{feature}`"), "say what the case shows"


def test_options_name_the_vendors_profile_and_protocols(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(golden, "GOLDEN", tmp_path)
    (tmp_path / "plain").mkdir()
    assert golden.options_for("plain") == Options()
    options = tmp_path / "chosen" / golden.OPTIONS_FILE
    options.parent.mkdir()
    options.write_text(
        'vendors = ["acme"]\nprofile = "strict"\nprotocols = ["responses"]\n', encoding="utf-8"
    )
    chosen = golden.options_for("chosen")
    assert (chosen.vendors, chosen.profile, chosen.protocols) == (
        ("acme",),
        "strict",
        ("responses",),
    )
    assert chosen.speaks("chat") and chosen.speaks("responses")
    assert not chosen.speaks("messages")
    for bad in ('protocols = ["chat"]', 'protocols = "messages"', 'vendor = ["acme"]'):
        options.write_text(bad + "\n", encoding="utf-8")
        with pytest.raises(ValueError, match=r"protocols|unknown keys"):
            golden.options_for("chosen")


# --- a record as a package ---------------------------------------------------------


def runtime_used(modules: dict[str, str]) -> set[str]:
    """The runtime files the modules import (`from ._runtime.chat.reader import ...`),
    as linking names them (`chat/reader`)."""
    prefix = f"{RUNTIME_PACKAGE}."
    return {
        node.module.removeprefix(prefix).replace(".", "/")
        for text in modules.values()
        for node in ast.parse(text).body
        if isinstance(node, ast.ImportFrom) and node.level == 1
        if node.module is not None and node.module.startswith(prefix)
    }


def package_files(feature: str, target: str) -> dict[str, str]:
    """The files of the package a record is imported as: its modules, and under
    `_runtime/` the runtime's files they import (and those import), as the generator
    copies them."""
    folder = golden.expected_path(feature, target, "chat.py").parent
    modules = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.py"))}
    runtime = {
        f"{RUNTIME_PACKAGE}/{name}.py": runtime_text(name) for name in copied(runtime_used(modules))
    }
    return modules | runtime


@pytest.mark.parametrize("feature", FEATURES)
def test_a_record_with_the_runtime_it_imports_is_the_package_the_generator_makes(
    feature: str,
) -> None:
    for target, made in golden.generated(feature).items():
        files = package_files(feature, target)
        assert sorted(files) == sorted(set(made) - {"py.typed"}), target
        differ = [path for path, text in files.items() if made[path] != text]
        assert not differ, (target, differ)


def _import(folder: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package  # its modules import each other through sys.modules
    spec.loader.exec_module(package)
    return package


Records = Callable[[str], dict[str, ModuleType]]


@pytest.fixture
def golden_packages(tmp_path: Path) -> Iterator[Records]:
    """Imports the record of a feature as the four packages it is, by target: each
    record's modules with the runtime they import, in a temporary folder. A package's
    public names are those of its chat module; `submodule(package, "messages")` is another."""
    loaded: list[str] = []

    def load(feature: str) -> dict[str, ModuleType]:
        assert feature in FEATURES, feature
        packages = {}
        for target in TARGETS:
            name = f"golden_{feature}_{target}"
            folder = tmp_path / name
            for path, text in package_files(feature, target).items():
                (folder / path).parent.mkdir(parents=True, exist_ok=True)
                (folder / path).write_text(text, encoding="utf-8")
            loaded.append(name)
            packages[target] = _import(folder, name)
        return packages

    yield load
    for name in list(sys.modules):
        if any(name == n or name.startswith(f"{n}.") for n in loaded):
            del sys.modules[name]


def submodule(package: ModuleType, name: str) -> ModuleType:
    """A module of an imported record (`chat`, `messages`, `responses`)."""
    return importlib.import_module(f"{package.__name__}.{name}")


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


def test_feature_relaxations(golden_packages: Records) -> None:
    records = golden_packages("relaxations")
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


def test_feature_discriminated_union(golden_packages: Records) -> None:
    records = golden_packages("discriminated_union")
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


def test_feature_defaulted_lists(golden_packages: Records) -> None:
    records = golden_packages("defaulted_lists")
    for target, m in records.items():
        for payload in ({"id": "a", "tags": None}, {"id": "a"}):
            assert_round_trips(m, payload, {"id": "a", "tags": []})
            assert attribute(target, m.loads(json.dumps(payload)), "tags", same("tags")) == []
        assert_round_trips(m, {"id": "a", "tags": ["x", "y"], "labels": ["z"]})
        assert_rejected(m, {"id": "a", "tags": "x"})


def test_feature_open_enums(golden_packages: Records) -> None:
    records = golden_packages("open_enums")
    for target, m in records.items():
        assert_round_trips(m, {"color": "mauve", "shape": "circle"})
        assert_round_trips(m, {"color": "red", "shape": "square"})
        parsed = m.loads(json.dumps({"color": "mauve"}))
        assert attribute(target, parsed, "color", same("color")) == "mauve"
        assert_rejected(m, {"color": "red", "shape": "hexagon"})
        assert_rejected(m, {"color": 1})


def test_feature_strict_profile(golden_packages: Records) -> None:
    records = golden_packages("strict_profile")
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


def test_feature_awkward_names(golden_packages: Records) -> None:
    records = golden_packages("awkward_names")
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


def test_feature_merge_rules(golden_packages: Records) -> None:
    records = golden_packages("merge_rules")
    for target, m in records.items():
        assert canonical(accumulate(m, MERGE_STREAM)) == canonical(MERGED), target
        # Fills: a message always (`{}`, merged as a Delta), with a role.
        filled = {"id": "x", "message": {"role": "assistant"}}
        assert canonical(accumulate(m, [{"id": "x"}])) == canonical(filled), target
        completion = m.loads_completion(json.dumps(MERGED))
        assert canonical(json.loads(m.dumps(completion))) == canonical(MERGED), target


def test_feature_vendor_selection(golden_packages: Records) -> None:
    records = golden_packages("vendor_selection")
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


MYSTERY: dict[str, Any] = {"type": "mystery", "seq": 1, "payload": {"x": [1, 2.5, None]}}
"""An event of a type the Messages spec of `messages_open_union` does not list."""


def sse(*events: dict[str, Any]) -> str:
    """A server-sent-event body of the events, each named by its `type`."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def test_feature_messages_open_union(golden_packages: Records) -> None:
    records = golden_packages("messages_open_union")
    for target, package in records.items():
        m = submodule(package, "messages")
        # A type the union does not list is read as its open member, kept whole.
        assert_round_trips(m, MYSTERY)
        assert_round_trips(m, {"type": "ping"})
        assert_round_trips(m, {"type": "ping", "seq": 2})  # unknown keys are kept
        parsed = m.loads(json.dumps(MYSTERY))
        assert attribute(target, parsed, "type", same("type")) == "mystery"
        if target != "typeddicts":
            assert isinstance(parsed, m.OtherEvent), (target, type(parsed))
            assert isinstance(m.loads('{"type": "ping"}'), m.PingEvent), target
        # The tag is the one key every event needs, a string.
        assert_rejected(m, {"seq": 1})
        assert_rejected(m, {"type": 5})
        # In a stream too: the unknown event comes through whole, in order.
        events = m.iter_events(sse(MYSTERY, {"type": "ping"}))
        read = [json.loads(m.dumps(event)) for event in events]
        assert canonical(read) == canonical([MYSTERY, {"type": "ping"}]), target


def test_feature_responses_vendor_section(golden_packages: Records) -> None:
    records = golden_packages("responses_vendor_section")
    response = {"id": "r", "acme_cost": 3}
    event = {"type": "response.completed", "response": response}
    for target, package in records.items():
        m = submodule(package, "responses")
        assert_round_trips(m, event)
        whole = m.loads_response(json.dumps(response))
        assert attribute(target, whole, "acme_cost", same("acme_cost")) == 3, target
        inner = attribute(target, m.loads(json.dumps(event)), "response", same("response"))
        assert attribute(target, inner, "acme_cost", same("acme_cost")) == 3, target
        # acme's field is typed: an int, wherever a Response is read.
        costly = {"id": "r", "acme_cost": "cheap"}
        assert_rejected(m, {**event, "response": costly})
        with pytest.raises(m.ChunkDecodeError):
            m.loads_response(json.dumps(costly))
        # The section is the Responses family's: to chat it is an unknown key.
        assert_round_trips(package, {"id": "c", "acme_cost": "cheap"})
        text = golden.expected_path("responses_vendor_section", target, "responses.py")
        assert "Sent by Acme AI" in text.read_text(encoding="utf-8"), target


CHAT_REQUEST: dict[str, Any] = {
    "model": "m",
    "max_completion_tokens": 5,
    "reasoning_effort": "high",
    "messages": [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "be brief"},
    ],
}
MESSAGES_REQUEST: dict[str, Any] = {
    "model": "m",
    "max_tokens": 7,
    "system": "be brief",
    "messages": [{"role": "user", "content": "hi"}],
}


def to_chat(m: ModuleType, request: dict[str, Any], dialect: str | None = None) -> Any:
    """`m.to_request` of a copy of `request`, for a chat backend in `dialect`; its
    `RequestLossWarning`s (no dialect here takes a reasoning effort) ignored."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return m.to_request(json.loads(json.dumps(request)), protocol="chat", dialect=dialect)


def test_feature_request_dialects(golden_packages: Records) -> None:
    records = golden_packages("request_dialects")
    for target, package in records.items():
        chat, messages = submodule(package, "chat"), submodule(package, "messages")
        assert [d.name for d in chat._REQUEST_DIALECTS] == ["openai", "terse"], target
        # Every protocol's module writes chat requests, by the same rules.
        assert messages._REQUEST_DIALECTS == chat._REQUEST_DIALECTS, target
        openai, terse = chat._REQUEST_DIALECTS
        assert openai.developer and openai.max_tokens == "max_completion_tokens"
        assert (terse.developer, terse.max_tokens, terse.system, terse.media) == (
            False,
            "max_tokens",
            "first",
            ("image",),
        )
        assert (terse.switch, terse.switch_values) == ("thinking.type", ("enabled", "disabled"))
        # The default dialect is the first: the request as it came.
        default = to_chat(package, CHAT_REQUEST)
        assert default["max_completion_tokens"] == 5 and "max_tokens" not in default, target
        assert default["messages"] == CHAT_REQUEST["messages"], target
        # `terse`: the limit in `max_tokens`, reasoning switched on, the system message first.
        written = to_chat(package, CHAT_REQUEST, "terse")
        assert written["max_tokens"] == 5 and "max_completion_tokens" not in written, target
        assert written["thinking"] == {"type": "enabled"}, target
        assert [m["role"] for m in written["messages"]] == ["system", "user"], target
        # A Messages request, written for a chat backend in each dialect.
        for dialect, key in ((None, "max_completion_tokens"), ("terse", "max_tokens")):
            assert to_chat(messages, MESSAGES_REQUEST, dialect)[key] == 7, (target, dialect)
        with pytest.raises(ValueError, match="one of 'openai', 'terse', not 'other'"):
            to_chat(package, CHAT_REQUEST, "other")
