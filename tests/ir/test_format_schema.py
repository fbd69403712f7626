"""spec/spec.schema.json, the JSON Schema of the spec format that editors read: it is what
generator/ir/format_schema.py renders, every spec file validates against it and names it
on its first line, its choices are the loader's, and what the loader refuses in a file's
shape it refuses too (checked with `jsonschema`, pinned in requirements.lock)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from generator.captures.drafting import _header
from generator.captures.scaffold import new_vendor
from generator.ir.errors import SpecError
from generator.ir.format_schema import (
    SCHEMA_PATH,
    _object,
    format_schema,
    modeline,
    render_format_schema,
)
from generator.ir.load import (
    CORE_KEYS,
    DIALECT_KEYS,
    ENUM_KEYS,
    FAMILY_FILES,
    FAMILY_KEYS,
    FAMILY_SECTIONS,
    FIELD_KEYS,
    MEANS_KEYS,
    MERGE_RULES,
    RELAX_KEYS,
    RELAXED,
    REPEATS,
    SECTION_KEYS,
    TYPE_KEYS,
    UNION_KEYS,
    VENDOR_FIELD_KEYS,
    VENDOR_KEYS,
    load_spec,
)
from generator.ir.requests import CHOICES, MEDIA, REQUEST_KEYS
from generator.ir.yamlfile import Keys, load_yaml

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "spec_errors"
SPEC_FILES = sorted(
    p.relative_to(REPO).as_posix()
    for p in [*(REPO / "spec").glob("*.yaml"), *(REPO / "spec" / "vendors").glob("*.yaml")]
)
SCHEMA = format_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
DEFS: dict[str, Any] = SCHEMA["$defs"]


def problems(document: object) -> list[str]:
    """What the schema says is wrong with a document, as `path: message` lines."""
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in VALIDATOR.iter_errors(document)
    ]


# (a) the committed file is the rendered one


def test_the_committed_schema_is_the_rendered_one() -> None:
    committed = (REPO / SCHEMA_PATH).read_text(encoding="utf-8")
    assert committed == render_format_schema(), f"{SCHEMA_PATH} is stale: run `make generate`"


def test_the_schema_is_a_valid_2020_12_schema_rendered_the_same_every_time() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert render_format_schema() == render_format_schema()
    assert render_format_schema().endswith("}\n")


# (b) every real spec file validates


@pytest.mark.parametrize("file", SPEC_FILES)
def test_every_spec_file_validates(file: str) -> None:
    assert problems(load_yaml(REPO / file, file)) == []


def test_the_spec_files_are_the_ones_the_loader_reads() -> None:
    families = [f for f in FAMILY_FILES.values() if (REPO / f).exists()]
    assert sorted([*families, *load_spec(REPO).files[1:]]) == SPEC_FILES


# (c) the schema's choices are the loader's


def test_the_choices_are_the_loaders() -> None:
    field = DEFS["Field"]["properties"]
    assert field["merge"]["enum"] == list(MERGE_RULES)
    assert field["repeats"]["enum"] == list(REPEATS)
    relax = DEFS["Relax"]["properties"]
    assert {k: relax[k]["const"] for k in RELAXED} == RELAXED
    vocabulary = [m.name for m in load_spec(REPO).core.meanings]
    assert sorted(DEFS["MeaningName"]["enum"]) == sorted(vocabulary)
    assert DEFS["FamilyFile"]["properties"]["family"]["enum"] == list(FAMILY_SECTIONS)
    request = DEFS["RequestDialect"]["properties"]
    assert request["system"]["enum"] == list(CHOICES["system"])
    assert request["reasoning"]["properties"]["turns"]["enum"] == list(CHOICES["turns"])
    assert request["signature"]["properties"]["calls"]["enum"] == list(CHOICES["calls"])
    assert request["media"]["items"]["enum"] == list(MEDIA)


@pytest.mark.parametrize(
    ("name", "keys"),
    [
        ("CoreFile", CORE_KEYS),
        ("FamilyFile", FAMILY_KEYS),
        ("VendorFile", VENDOR_KEYS),
        ("VendorSection", SECTION_KEYS),
        ("Type", TYPE_KEYS),
        ("Field", FIELD_KEYS),
        ("VendorField", VENDOR_FIELD_KEYS),
        ("Relax", RELAX_KEYS),
        ("Enum", ENUM_KEYS),
        ("Union", UNION_KEYS),
        ("MeansEntry", MEANS_KEYS),
        ("Dialect", DIALECT_KEYS),
        ("RequestDialect", REQUEST_KEYS),
    ],
)
def test_each_mapping_has_the_loaders_keys(name: str, keys: Keys) -> None:
    schema = DEFS[name]
    assert set(schema["properties"]) == keys.allowed
    assert set(schema.get("required", [])) == keys.required
    assert schema["additionalProperties"] is False
    assert all("description" in p or "$ref" in p for p in schema["properties"].values())


def test_a_key_the_schema_does_not_describe_stops_its_build() -> None:
    with pytest.raises(ValueError, match="the loader allows"):
        _object(Keys(frozenset({"doc", "new"})), "a mapping", {"doc": {}})


WRONG = {
    "a misspelled key": (
        "fields:\n  ChoiceDelta:\n    acme_hint:\n      type: string\n      nulable: true\n"
        "      doc: A hint.\n",
        "unknown key 'nulable' in field ChoiceDelta.acme_hint",
        "'nulable' was unexpected",
    ),
    "an unknown merge rule": (
        "fields:\n  ChoiceDelta:\n    acme_hint:\n      type: string\n      merge: concat\n"
        "      doc: A hint.\n",
        "unknown merge rule 'concat'",
        "'concat' is not one of",
    ),
    "a relaxation that tightens": (
        "relax:\n  Choice:\n    finish_reason:\n      nullable: false\n      doc: Never null.\n",
        "a vendor can only relax 'nullable' to true",
        "True was expected",
    ),
    "a section of no family": (
        "message:\n  fields: {}\n",
        "unknown key 'message' in a vendor file",
        "'message' was unexpected",
    ),
}


@pytest.mark.parametrize("case", WRONG, ids=list(WRONG))
def test_a_wrong_vendor_file_fails_the_schema_and_the_loader(tmp_path: Path, case: str) -> None:
    body, loader_says, schema_says = WRONG[case]
    text = f"{modeline('spec/vendors/acme.yaml')}\nvendor: acme\ntitle: Acme\nsource: x\n{body}"
    shutil.copytree(REPO / "spec", tmp_path / "spec")
    path = tmp_path / "spec/vendors/acme.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as raised:
        load_spec(tmp_path)
    assert loader_says in str(raised.value)
    said = problems(load_yaml(path, "spec/vendors/acme.yaml"))
    assert any(schema_says in line for line in said), said


def corpus_case(case: Path) -> str:
    """What a case of tests/spec_errors/ expects: its `# error: ...` or `generates`."""
    for line in case.read_text(encoding="utf-8").splitlines():
        if line.startswith("# error: "):
            return line.removeprefix("# error: ")
        if line.startswith("# generates"):
            return "generates"
    raise AssertionError(f"{case.name} says neither")


NOT_A_SHAPE = (
    "must live in spec/vendors/",  # the file's name
    "is declared in",  # another file's dialect
)
"""Loader errors about more than one file's shape, which no schema of one file can see."""


@pytest.mark.parametrize("case", sorted(CORPUS.glob("*.yaml")), ids=lambda c: c.stem)
def test_the_schema_refuses_what_the_loader_refuses_in_the_corpus(
    tmp_path: Path, case: Path
) -> None:
    """Each bad spec of tests/spec_errors/, dropped in as a vendor file: if the loader
    refuses it (before the checks across files), so does the schema; a spec that
    generates, the schema accepts. YAML errors (syntax, duplicate keys, keys YAML reads
    as other types) are the parser's, before any schema."""
    shutil.copytree(REPO / "spec", tmp_path / "spec")
    path = tmp_path / "spec/vendors/zzbad.yaml"
    shutil.copy(case, path)
    try:
        document = load_yaml(path, "spec/vendors/zzbad.yaml")
    except SpecError:
        return
    said = problems(document)
    if corpus_case(case) == "generates":
        assert said == []
        return
    try:
        load_spec(tmp_path)
    except SpecError as exc:
        if not any(words in str(exc) for words in NOT_A_SHAPE):
            assert said, f"the loader says {exc}; the schema accepts it"


# (d) every spec file names the schema


@pytest.mark.parametrize("file", SPEC_FILES)
def test_every_spec_file_names_the_schema_on_its_first_line(file: str) -> None:
    first = (REPO / file).read_text(encoding="utf-8").splitlines()[0]
    assert first == modeline(file)
    schema = (REPO / file).parent / first.rpartition("$schema=")[2]
    assert schema.resolve() == (REPO / SCHEMA_PATH).resolve()


def test_the_modeline_is_relative_to_the_file() -> None:
    assert modeline("spec/vendors/vllm.yaml") == (
        "# yaml-language-server: $schema=../spec.schema.json"
    )
    assert modeline("spec/chat_completion_chunk.yaml") == (
        "# yaml-language-server: $schema=spec.schema.json"
    )


def test_a_new_vendor_file_names_the_schema(tmp_path: Path) -> None:
    """`new-vendor NAME` writes the modeline first, scaffolded or drafted, and the
    scaffold validates."""
    (tmp_path / "spec/vendors").mkdir(parents=True)
    path = new_vendor(tmp_path, "acme")
    assert path.read_text(encoding="utf-8").splitlines()[0] == modeline("spec/vendors/acme.yaml")
    assert problems(load_yaml(path, "spec/vendors/acme.yaml")) == []
    assert _header("acme", "Acme", [], [])[0] == modeline("spec/vendors/acme.yaml")
