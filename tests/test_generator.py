"""The generator as a command: a bad core file stops it with file:line; `check` catches
stale or hand-edited output; a failed write changes nothing; output is reproducible;
wire names become Python names. The corpus of bad vendor files is tests/ir/test_spec_errors.py."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from generator.ir.naming import python_name
from tests.helpers.project import REPO, copy_project, run_generator, snapshot


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path / "project")


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


def test_a_family_file_without_what_its_stream_adds_up_to_is_refused(project: Path) -> None:
    # Its module's accumulator needs the type; a union root without one once crashed the
    # build with a KeyError.
    family = project / "spec/messages_stream_event.yaml"
    text = family.read_text()
    assert "\ncompletion: Message\n" in text
    family.write_text(text.replace("\ncompletion: Message\n", "\n", 1))
    result = run_generator(project, "generate")
    assert result.returncode == 1
    assert re.fullmatch(
        r"error: spec/messages_stream_event\.yaml:\d+: a family file needs 'completion'\n",
        result.stderr,
    ), result.stderr


def test_committed_output_is_fresh() -> None:
    result = run_generator(REPO, "check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_fails_on_a_hand_edited_file(project: Path) -> None:
    target = project / "generated/dataclasses/chat.py"
    target.write_text(target.read_text().replace("DO NOT EDIT", "edited", 1))
    result = run_generator(project, "check")
    assert result.returncode == 1
    assert "generated/dataclasses/chat.py" in result.stdout
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


FORMATTER_CONFIG = """\
line-length = 40
indent-width = 2
[format]
quote-style = "single"
indent-style = "tab"
line-ending = "cr-lf"
"""


def test_output_ignores_the_callers_formatter_configuration(tmp_path: Path) -> None:
    """A caller's ruff and black settings, in the project, its output folders and the
    user's configuration folder, change no byte of the output."""
    root = copy_project(tmp_path / "configured")
    shutil.rmtree(root / "generated")
    shutil.rmtree(root / "tests/generated")
    for folder in (root, root / "generated", root / "tests/generated"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "ruff.toml").write_text(FORMATTER_CONFIG)
        (folder / ".ruff.toml").write_text(FORMATTER_CONFIG)
    (root / "pyproject.toml").write_text(
        "[tool.ruff]\n"
        + FORMATTER_CONFIG.replace("[format]", "[tool.ruff.format]")
        + "[tool.black]\nline-length = 40\nskip-string-normalization = true\n"
    )
    user = tmp_path / "user-config"
    (user / "ruff").mkdir(parents=True)
    (user / "ruff/ruff.toml").write_text(FORMATTER_CONFIG)
    (user / "black").write_text("[tool.black]\nline-length = 40\n")
    # Run from inside the configured project, where a formatter would look first.
    result = run_generator(
        root, "generate", env={"XDG_CONFIG_HOME": str(user), "PYTHONPATH": str(REPO)}, cwd=root
    )
    assert result.returncode == 0, result.stderr
    output = {path: data for path, data in snapshot(root).items() if "ruff.toml" not in path}
    assert output == snapshot(REPO)


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
    from generator.ir.naming import DATACLASS_RESERVED, PYDANTIC_RESERVED

    assert python_name(wire, DATACLASS_RESERVED) == dataclasses
    assert python_name(wire, PYDANTIC_RESERVED) == pydantic
