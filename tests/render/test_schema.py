"""generated/chunk.schema.json, checked by two independent consumers: the `jsonschema`
validator and pydantic models that datamodel-code-generator builds from it."""

from __future__ import annotations

import importlib.util
import json
import sys
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.generated.examples import EXAMPLES
from tests.helpers.support import FIXTURE_STREAMS, Stream

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "generated" / "chunk.schema.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def validator_for(type_name: str) -> Draft202012Validator:
    if type_name == SCHEMA["title"]:
        return Draft202012Validator(SCHEMA)
    return Draft202012Validator({"$ref": f"#/$defs/{type_name}", "$defs": SCHEMA["$defs"]})


def test_schema_is_valid_2020_12() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=lambda s: s.name)
def test_every_captured_chunk_is_valid(stream: Stream) -> None:
    validator = validator_for(SCHEMA["title"])
    for line, text in stream.chunks:
        errors = list(validator.iter_errors(json.loads(text)))
        assert not errors, f"{stream.name}:{line}: {errors[0].message} at {errors[0].json_path}"


@pytest.mark.parametrize(
    ("type_name", "variant", "value"), EXAMPLES, ids=[f"{t}-{v}" for t, v, _ in EXAMPLES]
)
def test_every_spec_example_is_valid(type_name: str, variant: str, value: Any) -> None:
    errors = list(validator_for(type_name).iter_errors(value))
    assert not errors, f"{type_name} {variant}: {errors[0].message} at {errors[0].json_path}"


@pytest.mark.parametrize(
    "payload",
    [
        {"error": {"message": "boom"}},
        {"id": 1, "created": 1, "model": "m", "object": "x", "choices": []},
        {"id": "c", "created": 1, "model": "m", "object": "x", "choices": [{"index": "0"}]},
        {"choices": [], "moderation": {"input": {"model": "m"}}},
    ],
    ids=["error payload", "id not a string", "choice index a string", "union member untagged"],
)
def test_what_the_models_reject_the_schema_rejects(payload: dict[str, Any]) -> None:
    assert not validator_for(SCHEMA["title"]).is_valid(payload)


@pytest.fixture(scope="module")
def dmcg_models(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    from datamodel_code_generator import InputFileType, PythonVersion, generate
    from datamodel_code_generator.enums import DataModelType

    out = tmp_path_factory.mktemp("dmcg") / "dmcg_chunk_models.py"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # about its default formatters
        generate(
            SCHEMA_PATH.read_text(encoding="utf-8"),
            input_file_type=InputFileType.JsonSchema,
            output=out,
            output_model_type=DataModelType.PydanticV2BaseModel,
            target_python_version=PythonVersion.PY_311,
            disable_timestamp=True,
            class_name=SCHEMA["title"],
        )
    spec = importlib.util.spec_from_file_location("dmcg_chunk_models", out)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["dmcg_chunk_models"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=lambda s: s.name)
def test_models_generated_from_the_schema_accept_every_captured_chunk(
    dmcg_models: ModuleType, stream: Stream
) -> None:
    model = getattr(dmcg_models, SCHEMA["title"])
    for line, text in stream.chunks:
        parsed = model.model_validate_json(text)
        assert parsed.id == json.loads(text)["id"], f"{stream.name}:{line}"
