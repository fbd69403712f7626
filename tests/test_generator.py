"""The generator as a command: bad specs stop it with file:line and leave generated/
alone; `check` catches stale or hand-edited output; output is reproducible; awkward
wire names become importable, aliased code."""

from __future__ import annotations

import ast
import io
import json
import os
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

from generator.naming import python_name
from tests.support import load_module

REPO = Path(__file__).resolve().parent.parent


def copy_project(dest: Path) -> Path:
    """A copy of what the generator reads and writes, to run it without touching the repo."""
    for name in ("spec", "templates", "generated", "tests/generated"):
        shutil.copytree(REPO / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def run_generator(root: Path, *args: str, hash_seed: str = "0") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    return subprocess.run(
        [sys.executable, "-m", "generator", *args, "--root", str(root)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for folder in ("generated", "tests/generated")
        for p in sorted((root / folder).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path / "project")


VENDOR = "vendor: zzbad\ntitle: Bad\nsource: https://example.com/zzbad\n"
FIELD = "      type: string\n      doc: A field.\n"

# (file written under spec/vendors/zzbad.yaml, or a replacement of text in the core file;
#  expected "file:line" and a fragment of the message)
SPEC_ERRORS = {
    "yaml syntax": (VENDOR + "fields: [unclosed\n", "spec/vendors/zzbad.yaml:5", "YAML error"),
    "duplicate field": (
        VENDOR + "fields:\n  Choice:\n    extra_a:\n" + FIELD + "    extra_a:\n" + FIELD,
        "spec/vendors/zzbad.yaml:9",
        "duplicate key 'extra_a' (first defined on line 6)",
    ),
    "collides with core": (
        VENDOR + "fields:\n  Choice:\n    index:\n" + FIELD,
        "spec/vendors/zzbad.yaml:6",
        "Choice.index collides with the core field",
    ),
    "collides with a vendor": (
        VENDOR + "fields:\n  ChoiceDelta:\n    reasoning:\n" + FIELD,
        "spec/vendors/zzbad.yaml:6",
        "collides with the field of vendor 'vllm'",
    ),
    "unknown type": (
        VENDOR + "fields:\n  Choice:\n    extra_a:\n      type: list[Nope]\n      doc: A field.\n",
        "spec/vendors/zzbad.yaml:7",
        "unknown type 'Nope'",
    ),
    "missing doc": (
        VENDOR + "fields:\n  Choice:\n    extra_a:\n      type: string\n",
        "spec/vendors/zzbad.yaml:6",
        "needs 'doc'",
    ),
    "unknown owner": (
        VENDOR + "fields:\n  Nope:\n    extra_a:\n" + FIELD,
        "spec/vendors/zzbad.yaml:5",
        "unknown type 'Nope'",
    ),
    "repeats on a number": (
        VENDOR
        + "fields:\n  Choice:\n    extra_a:\n      type: int\n      repeats: stream\n"
        + "      doc: A field.\n",
        "spec/vendors/zzbad.yaml:6",
        "Choice.extra_a says it repeats, which only a string field can",
    ),
    "unknown kind of repeat": (
        VENDOR + "fields:\n  Choice:\n    extra_a:\n" + FIELD + "      repeats: always\n",
        "spec/vendors/zzbad.yaml:9",
        "unknown kind of repeat 'always' (known: stream, vocabulary)",
    ),
    "unknown field key": (
        VENDOR + "fields:\n  Choice:\n    extra_a:\n" + FIELD + "      optional: true\n",
        "spec/vendors/zzbad.yaml:9",
        "unknown key 'optional'",
    ),
    "tighten a core field": (
        VENDOR + "relax:\n  Choice:\n    finish_reason:\n      required: true\n      doc: No.\n",
        "spec/vendors/zzbad.yaml:7",
        "can only relax 'required' to false",
    ),
    "relax a missing field": (
        VENDOR + "relax:\n  Choice:\n    nope:\n      nullable: true\n      doc: No.\n",
        "spec/vendors/zzbad.yaml:6",
        "is not a core field",
    ),
    "also names no vendor": (
        VENDOR + "fields:\n  Choice:\n    extra_a:\n" + FIELD + "      also: [nobody]\n",
        "spec/vendors/zzbad.yaml:6",
        "'also' names 'nobody'",
    ),
    "enum value read as bool": (
        VENDOR
        + "fields:\n  Choice:\n    extra_a:\n      type: BadSwitch\n      doc: A field.\n"
        + "enums:\n  BadSwitch:\n    doc: A switch.\n    values:\n      on: On.\n",
        "spec/vendors/zzbad.yaml:13",
        "key 'on' must be a string (quote it: YAML reads it as bool)",
    ),
    "union of two strings": (
        VENDOR
        + "fields:\n  Choice:\n    extra_a:\n      type: string | Role\n      doc: A field.\n",
        "spec/vendors/zzbad.yaml:6",
        "both JSON strings",
    ),
    "type cycle": (
        VENDOR
        + "fields:\n  Choice:\n    extra_a:\n      type: BadNode\n      doc: A field.\n"
        + "types:\n  BadNode:\n    doc: A node.\n    fields:\n      next:\n        type: BadNode\n        doc: The next.\n",
        "spec/vendors/zzbad.yaml:10",
        "type cycle: BadNode -> BadNode",
    ),
    "unused type": (
        VENDOR
        + "types:\n  BadOrphan:\n    doc: Unused.\n    fields:\n      a:\n"
        + FIELD.replace("      ", "        "),
        "spec/vendors/zzbad.yaml:5",
        "never reached",
    ),
    "required vendor field": (
        VENDOR + "fields:\n  Choice:\n    extra_a:\n" + FIELD + "      required: true\n",
        "spec/vendors/zzbad.yaml:6",
        "Choice.extra_a cannot be required",
    ),
    "relaxation that changes nothing": (
        VENDOR + "relax:\n  Choice:\n    finish_reason:\n      required: false\n      doc: No.\n",
        "spec/vendors/zzbad.yaml:6",
        "Choice.finish_reason is already optional",
    ),
    "open discriminator": (
        VENDOR
        + "fields:\n  Choice:\n    extra_a:\n      type: BadA | BadB\n      discriminator: kind\n      doc: A.\n"
        + "types:\n  BadA:\n    doc: A.\n    fields:\n      kind:\n        type: BadKind\n        required: true\n        doc: K.\n"
        + "  BadB:\n    doc: B.\n    fields:\n      kind:\n        type: BadKind\n        required: true\n        doc: K.\n"
        + "enums:\n  BadKind:\n    doc: K.\n    values:\n      a: A.\n",
        "spec/vendors/zzbad.yaml:6",
        "whose enum has 'open: false'",
    ),
    "a union member with two tag values": (
        VENDOR
        + "fields:\n  Choice:\n    extra_a:\n      type: BadA | BadB\n      discriminator: kind\n      doc: A.\n"
        + "types:\n  BadA:\n    doc: A.\n    fields:\n      kind:\n        type: BadKindA\n        required: true\n        doc: K.\n"
        + "  BadB:\n    doc: B.\n    fields:\n      kind:\n        type: BadKindB\n        required: true\n        doc: K.\n"
        + "enums:\n  BadKindA:\n    doc: K.\n    open: false\n    values:\n      a: A.\n      aa: AA.\n"
        + "  BadKindB:\n    doc: K.\n    open: false\n    values:\n      b: B.\n",
        "spec/vendors/zzbad.yaml:6",
        "BadA.kind must have exactly one value to tell it apart",
    ),
    "relaxed discriminator tag": (
        VENDOR + "relax:\n  ModerationError:\n    type:\n      required: false\n      doc: No.\n",
        "spec/vendors/zzbad.yaml:6",
        "ModerationError.type tells the alternatives of Moderation.input apart",
    ),
    "type shadows a module name": (
        VENDOR
        + "fields:\n  Choice:\n    extra_a:\n      type: Field\n      doc: A.\n"
        + "types:\n  Field:\n    doc: F.\n    fields:\n      a:\n"
        + FIELD.replace("      ", "        "),
        "spec/vendors/zzbad.yaml:10",
        "would shadow a name the generated modules use",
    ),
    "a vendor named twice in also": (
        VENDOR + "fields:\n  Choice:\n    extra_a:\n" + FIELD + "      also: [vllm, vllm]\n",
        "spec/vendors/zzbad.yaml:9",
        "'also' names a vendor twice",
    ),
    "unknown merge rule": (
        VENDOR + "fields:\n  ChoiceDelta:\n    extra_a:\n" + FIELD + "      merge: concat\n",
        "spec/vendors/zzbad.yaml:9",
        "unknown merge rule 'concat'",
    ),
    "append to a number": (
        VENDOR + "fields:\n  ChoiceDelta:\n    extra_a:\n      type: int\n      merge: append\n"
        "      doc: A.\n",
        "spec/vendors/zzbad.yaml:6",
        "'merge: append' needs a string or a list",
    ),
    "by index without an index": (
        VENDOR
        + "fields:\n  ChoiceDelta:\n    extra_a:\n      type: list[BadItem]\n      merge: by_index\n"
        + "      doc: A.\ntypes:\n  BadItem:\n    doc: An item.\n    fields:\n      a:\n"
        + FIELD.replace("      ", "        "),
        "spec/vendors/zzbad.yaml:6",
        "needs a list of objects with an int 'index'",
    ),
    "merge rule on the completion": (
        VENDOR
        + "fields:\n  ChatCompletionMessage:\n    extra_a:\n"
        + FIELD
        + "      merge: append\n",
        "spec/vendors/zzbad.yaml:6",
        "ChatCompletionMessage is not merged from any chunk, so 'extra_a' takes no merge rule",
    ),
    "merged into a field of another type": (
        VENDOR
        + "fields:\n  ChoiceDelta:\n    extra_a:\n      type: int\n      into: content\n"
        + "      doc: A.\n",
        "spec/vendors/zzbad.yaml:6",
        "ChoiceDelta.extra_a and ChatCompletionMessage.content have different types",
    ),
    "two fields into one key": (
        VENDOR + "fields:\n  ChoiceDelta:\n    extra_a:\n" + FIELD + "      into: refusal\n"
        "      merge: append\n",
        "spec/vendors/zzbad.yaml:6",
        "ChoiceDelta.extra_a and ChoiceDelta.refusal both merge into 'refusal'",
    ),
    "a dropped field with a destination": (
        VENDOR + "fields:\n  ChoiceDelta:\n    extra_a:\n" + FIELD + "      merge: drop\n"
        "      into: elsewhere\n",
        "spec/vendors/zzbad.yaml:6",
        "a dropped field goes nowhere",
    ),
    "fill on a type nothing merges into": (
        VENDOR
        + "fields:\n  ChoiceDelta:\n    extra_a:\n      type: BadBox\n      merge: last\n"
        + "      doc: A.\ntypes:\n  BadBox:\n    doc: A box.\n    fill:\n      a: x\n"
        + "    fields:\n      a:\n"
        + FIELD.replace("      ", "        "),
        "spec/vendors/zzbad.yaml:14",
        "BadBox is not merged into, so it takes no 'fill'",
    ),
    "fill of an unknown key": (
        VENDOR
        + "fields:\n  ChoiceDelta:\n    extra_a:\n      type: BadBox\n      doc: A.\n"
        + "types:\n  BadBox:\n    doc: A box.\n    fill:\n      b: x\n    fields:\n      a:\n"
        + FIELD.replace("      ", "        "),
        "spec/vendors/zzbad.yaml:13",
        "fill names 'b', which is not a field of BadBox",
    ),
    "fill that does not fit": (
        VENDOR
        + "fields:\n  ChoiceDelta:\n    extra_a:\n      type: BadBox\n      doc: A.\n"
        + "types:\n  BadBox:\n    doc: A box.\n    fill:\n      a: 1\n    fields:\n      a:\n"
        + FIELD.replace("      ", "        "),
        "spec/vendors/zzbad.yaml:13",
        "fill 'a': 1 does not fit BadBox.a",
    ),
    "fill with a list": (
        VENDOR
        + "fields:\n  ChoiceDelta:\n    extra_a:\n      type: BadBox\n      doc: A.\n"
        + "types:\n  BadBox:\n    doc: A box.\n    fill:\n      a: [x]\n    fields:\n      a:\n"
        + FIELD.replace("      ", "        "),
        "spec/vendors/zzbad.yaml:13",
        "a fill value is a JSON scalar, null or {}",
    ),
    "file named after another vendor": (
        VENDOR.replace("vendor: zzbad", "vendor: vllm"),
        "spec/vendors/zzbad.yaml:1",
        "must live in spec/vendors/vllm.yaml",
    ),
}


@pytest.mark.parametrize(("text", "where", "message"), SPEC_ERRORS.values(), ids=SPEC_ERRORS.keys())
def test_bad_spec_stops_with_file_and_line_and_writes_nothing(
    project: Path, text: str, where: str, message: str
) -> None:
    (project / "spec/vendors/zzbad.yaml").write_text(text)
    before = snapshot(project)
    result = run_generator(project, "generate")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.startswith(f"error: {where}: "), result.stderr
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, "one message, no traceback"
    assert snapshot(project) == before


def test_core_spec_errors_name_the_core_file(project: Path) -> None:
    core = project / "spec/chat_completion_chunk.yaml"
    text = core.read_text()
    core.write_text(
        text.replace(
            "        doc: Position of this choice among the choices of the completion.\n", "", 1
        )
    )
    result = run_generator(project, "generate")
    line = text.splitlines().index("      index:") + 1
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"error: spec/chat_completion_chunk.yaml:{line}: "
    ), result.stderr
    assert "field Choice.index needs 'doc'" in result.stderr


def test_committed_output_is_fresh() -> None:
    result = run_generator(REPO, "check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_fails_on_a_hand_edited_file(project: Path) -> None:
    target = project / "generated/chunk_dataclasses.py"
    target.write_text(target.read_text().replace("DO NOT EDIT", "edited", 1))
    result = run_generator(project, "check")
    assert result.returncode == 1
    assert "generated/chunk_dataclasses.py" in result.stdout
    assert "stale" in result.stderr


def test_check_fails_on_a_stray_generated_file(project: Path) -> None:
    (project / "generated/chunk_old.py").write_text("# left over\n")
    result = run_generator(project, "check")
    assert result.returncode == 1
    assert "generated/chunk_old.py: not produced by the spec" in result.stdout


def test_a_failed_write_changes_nothing(project: Path) -> None:
    (project / "spec/vendors/zzextra.yaml").write_text(
        "vendor: zzextra\ntitle: Extra\nsource: https://example.com\n"
        "fields:\n  Choice:\n    extra_a:\n      type: string\n      doc: A field.\n"
    )
    blocker = project / "tests/generated/test_targets_agree.py"
    blocker.unlink()
    blocker.mkdir()  # the last file cannot be written
    before = snapshot(project)
    result = run_generator(project, "generate")
    assert result.returncode == 1
    assert result.stderr.startswith("error: nothing was changed: ")
    assert snapshot(project) == before
    assert not list(project.rglob("*.tmp"))


def test_generate_repairs_what_check_reports(project: Path) -> None:
    (project / "generated/chunk.schema.json").unlink()
    assert run_generator(project, "check").returncode == 1
    assert run_generator(project, "generate").returncode == 0
    assert run_generator(project, "check").returncode == 0
    assert snapshot(project) == snapshot(REPO)


def test_output_is_byte_identical_under_any_hash_seed(tmp_path: Path) -> None:
    outputs = []
    for seed in ("0", "1", "12345"):
        root = copy_project(tmp_path / f"seed{seed}")
        shutil.rmtree(root / "generated")
        shutil.rmtree(root / "tests/generated")
        result = run_generator(root, "generate", hash_seed=seed)
        assert result.returncode == 0, result.stderr
        outputs.append(snapshot(root))
    assert outputs[0] == outputs[1] == outputs[2]
    assert outputs[0] == snapshot(REPO)


@pytest.mark.parametrize(
    ("wire", "dataclasses", "pydantic"),
    [
        ("id", "id", "id"),
        ("type", "type", "type"),
        ("object", "object", "object"),
        ("from", "from_", "from_"),
        ("class", "class_", "class_"),
        ("model_config", "model_config_", "model_config_"),
        ("schema", "schema", "schema_"),
        ("json", "json", "json_"),
        ("extra", "extra_", "extra"),
        ("int", "int_", "int_"),
        ("__verbose", "verbose_", "verbose_"),
        ("x-request-id", "x_request_id_", "x_request_id_"),
        ("2fa", "field_2fa_", "field_2fa_"),
    ],
)
def test_python_names(wire: str, dataclasses: str, pydantic: str) -> None:
    from generator.naming import DATACLASS_RESERVED, PYDANTIC_RESERVED

    assert python_name(wire, DATACLASS_RESERVED) == dataclasses
    assert python_name(wire, PYDANTIC_RESERVED) == pydantic


AWKWARD = """vendor: awkward
title: Awkward names
source: https://example.com/awkward
fields:
  ChatCompletionChunk:
    from:
      type: int
      doc: A keyword.
    class:
      type: string
      nullable: true
      doc: 'Quotes \"\"\"; import os and a backslash \\\\ and {{ braces }} and caf\u00e9.'
    model_config:
      type: bool
      doc: Reserved by pydantic.
    schema:
      type: map[any]
      doc: A BaseModel method name.
    __private:
      type: any
      doc: A private-looking name.
    x-request-id:
      type: string
      doc: Not an identifier.
    field:
      type: int
      doc: The name of the dataclasses helper.
    Annotated:
      type: int
      doc: The name of a typing helper.
"""


def test_awkward_wire_names_generate_importable_aliased_code(project: Path) -> None:
    (project / "spec/vendors/awkward.yaml").write_text(AWKWARD)
    result = run_generator(project, "generate")
    assert result.returncode == 0, result.stderr
    payload = (
        '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],'
        '"from":3,"class":null,"model_config":true,"schema":{"a":[1]},"__private":{"k":1},'
        '"x-request-id":"r","field":1,"Annotated":2,"class_":"not the class key"}'
    )
    texts = set()
    for target in ("dataclasses", "typeddicts", "pydantic", "msgspec"):
        module = load_module(project / f"generated/chunk_{target}.py")
        parsed = module.loads(payload)
        texts.add(module.dumps(parsed))
        if target != "typeddicts":
            assert parsed.from_ == 3
            assert parsed.class_ is None
            assert parsed.model_config_ is True
            assert parsed.private_ == {"k": 1}
            assert parsed.x_request_id_ == "r"
            assert parsed.field_ == 1
            assert parsed.Annotated_ == 2
    assert len(texts) == 1
    assert json.loads(texts.pop()) == json.loads(payload)
    # The doc text arrives intact as a docstring, and no spec string became code.
    doc = 'Quotes """; import os and a backslash \\\\ and {{ braces }} and café.'
    for target in ("dataclasses", "typeddicts", "pydantic", "msgspec"):
        source = (project / f"generated/chunk_{target}.py").read_text()
        tree = ast.parse(source)
        strings = [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
        # A functional TypedDict carries its docs as comments.
        comments = [
            t.string[1:]
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type == tokenize.COMMENT
        ]
        assert any(doc in " ".join(s.split()) for s in [*strings, " ".join(comments)]), target
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert "os" not in imported
