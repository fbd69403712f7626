"""The bad-spec corpus, tests/spec_errors/: each file is dropped into a copy of the
project as a vendor file. A file whose header says `# error: FILE:LINE: TEXT` must stop
the generator with one message at that place, changing nothing; a file whose header
says `# generates` must give modules that import, alias every awkward name, keep every
doc as text (nothing in a spec string becomes code) and round-trip its `# payload:`."""

from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.ir.build import build_spec
from generator.ir.errors import SpecError
from generator.ir.load import load_spec
from generator.ir.yamlfile import Located, load_yaml
from generator.render.targets import TARGETS as REGISTRY
from generator.render.targets import module_names
from tests.helpers.project import REPO, copy_project, run_generator, snapshot
from tests.helpers.support import REPORT, assert_same_json, load_module

CORPUS = Path(__file__).resolve().parents[1] / "spec_errors"
TARGETS = ("dataclasses", "typeddicts", "pydantic", "msgspec")
CHUNK = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []}


def header(case: Path) -> dict[str, str]:
    """The `# key: value` lines at the top of a case (a bare `# key` has value "")."""
    out = {}
    for line in case.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        key, _, value = line[1:].strip().partition(": ")
        if key in ("error", "generates", "payload"):
            out[key] = value
    return out


CASES = sorted(CORPUS.glob("*.yaml"))
ERRORS = [c for c in CASES if "error" in header(c)]
GENERATES = [c for c in CASES if "generates" in header(c)]


def test_every_case_says_what_it_expects() -> None:
    assert len(CASES) >= 20
    assert sorted(ERRORS + GENERATES) == CASES
    REPORT["spec-error corpus"] = (
        f"{len(CASES)} specs: {len(ERRORS)} stop with a located message,"
        f" {len(GENERATES)} generate working code"
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path / "project")


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c.stem)
def test_a_bad_spec_stops_at_its_place_and_changes_nothing(project: Path, case: Path) -> None:
    where, message = header(case)["error"].split(": ", 1)
    (project / "spec/vendors/zzbad.yaml").write_bytes(case.read_bytes())
    before = snapshot(project)
    result = run_generator(project, "generate")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.startswith(f"error: {where}: "), result.stderr
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, "one message, no traceback"
    assert snapshot(project) == before


def _strings_and_comments(source: str) -> str:
    """Every string constant and comment of a module, whitespace collapsed."""
    tree = ast.parse(source)
    strings = [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
    comments = [
        t.string[1:]
        for t in tokenize.generate_tokens(io.StringIO(source).readline)
        if t.type == tokenize.COMMENT
    ]
    return " ".join(" ".join(s.split()) for s in [*strings, " ".join(comments)])


def _imports(source: str) -> set[str]:
    tree = ast.parse(source)
    plain = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    start = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    return plain | start


def _docs(value: Any) -> list[str]:
    """Every `doc` string of a spec file, and the descriptions of enum values."""
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k == "doc" and isinstance(v, str)]
        if isinstance(value.get("values"), dict):
            found += [v for v in value["values"].values() if isinstance(v, str)]
        return found + [d for v in value.values() for d in _docs(v)]
    return [d for v in value for d in _docs(v)] if isinstance(value, list) else []


@pytest.mark.parametrize("case", GENERATES, ids=lambda c: c.stem)
def test_an_awkward_spec_generates_working_code(project: Path, case: Path) -> None:
    (project / "spec/vendors/zzbad.yaml").write_bytes(case.read_bytes())
    # Chat's modules alone: an awkward vendor file here is chat's (the others are made
    # by the same code).
    result = run_generator(project, "generate", "--protocols", "chat")
    assert result.returncode == 0, result.stderr
    added = json.loads(header(case)["payload"])
    payload = {**CHUNK, **added}
    spec = build_spec(load_spec(project), reserved=module_names())
    fields = {f.wire: f for f in spec.model("ChatCompletionChunk").fields}
    docs = [" ".join(d.split()) for d in _docs(yaml.safe_load(case.read_text(encoding="utf-8")))]
    for target in TARGETS:
        path = project / f"generated/{target}/chat.py"
        module = load_module(path)
        parsed = module.loads(json.dumps(payload))
        assert_same_json(json.loads(module.dumps(parsed)), payload, where=target)
        if target != "typeddicts":
            for wire in added.keys() & fields.keys():
                name = REGISTRY[target](spec).python_name(fields[wire])
                assert name.isidentifier(), name
                assert getattr(parsed, name) == added[wire], (target, wire, name)
        source = path.read_text(encoding="utf-8")
        text = _strings_and_comments(source)
        for doc in docs:
            assert doc in text, (target, doc)
        committed = (REPO / f"generated/{target}/chat.py").read_text(encoding="utf-8")
        # No import the committed module lacks (chat's alone imports no other protocol's).
        assert _imports(source) <= _imports(committed), "a spec string became an import"
    # Every line fits in 88 columns (a URL alone excepted), as a project linting E501 asks.
    lint = [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "E501"]
    result = subprocess.run(
        [*lint, "--line-length", "88", str(project / "generated")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout


def _read(path: Path) -> object:
    """What load_yaml makes of a file: its values with the line of every mapping and
    key, or the message of its error."""

    def lines(value: object) -> object:
        if isinstance(value, Located):
            keys = {k: (value.key_lines[k], lines(v)) for k, v in value.items()}
            return ("mapping", value.line, keys)
        return [lines(v) for v in value] if isinstance(value, list) else value

    try:
        return lines(load_yaml(path, path.name))
    except SpecError as error:
        return str(error)


SPEC_FILES = sorted((REPO / "spec").rglob("*.yaml"))


@pytest.mark.parametrize("path", [*CASES, *SPEC_FILES], ids=lambda p: p.stem)
def test_libyaml_and_pyyamls_own_parser_read_a_file_alike(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert yaml.__with_libyaml__, "the pinned PyYAML has libyaml: the fast path is tested"
    fast = _read(path)
    monkeypatch.setattr(yaml, "__with_libyaml__", False)
    assert _read(path) == fast


# A bad `absent:` in a family file's union (vendor files cannot add unions, so these edit
# a copy of spec/responses_stream_event.yaml), each with what the generator says.
BAD_ABSENT = [
    ("ZzNothing", "'absent' names ZzNothing, which is not a member of the union"),
    (
        "OtherResponseInputItem",
        "'absent' names OtherResponseInputItem, which takes any 'type'; name a member",
    ),
    (
        "ResponseFunctionToolCall",
        "ResponseFunctionToolCall reads a value without 'type', so its 'type' cannot be"
        " required",
    ),
    ("[EasyInputMessage]", "'absent' of union ResponseInputItem must be a non-empty string"),
]


@pytest.mark.parametrize(("absent", "message"), BAD_ABSENT, ids=[a for a, _ in BAD_ABSENT])
def test_a_bad_absent_member_stops_at_its_line(project: Path, absent: str, message: str) -> None:
    family = project / "spec/responses_stream_event.yaml"
    text = family.read_text(encoding="utf-8")
    good = "    absent: EasyInputMessage\n"
    assert text.count(good) == 1
    family.write_text(text.replace(good, f"    absent: {absent}\n"), encoding="utf-8")
    line = text.splitlines().index(good.rstrip("\n")) + 1
    before = snapshot(project)
    result = run_generator(project, "generate")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.startswith(
        f"error: spec/responses_stream_event.yaml:{line}: "
    ), result.stderr
    assert message in result.stderr, result.stderr
    assert snapshot(project) == before
