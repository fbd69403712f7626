"""What a generated package holds of the runtime: its files copied as they are, so that a
change of one line of the runtime is a change of that line in each package's copy and
nothing else, and a file a package does not use is not copied."""

from __future__ import annotations

import difflib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.pipeline import generate
from generator.render import linking
from generator.render.targets import TARGETS
from tests.helpers.project import REPO


@pytest.fixture
def own_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of generator/runtime/ that generation reads instead of the real one."""
    runtime = tmp_path / "runtime"
    shutil.copytree(linking.RUNTIME, runtime, ignore=shutil.ignore_patterns("__pycache__"))
    linking.runtime_file.cache_clear()
    monkeypatch.setattr(linking, "RUNTIME", runtime)
    yield runtime
    linking.runtime_file.cache_clear()  # the real files again, for the tests after


def test_a_one_line_runtime_change_is_that_line_in_each_copy_and_nothing_else(
    own_runtime: Path,
) -> None:
    before = {output.path: output.content for output in generate(REPO)}
    sse = own_runtime / "sse.py"
    lines = sse.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("# "))
    old = lines[at].rstrip("\n")
    lines[at] = old + " (edited)\n"
    sse.write_text("".join(lines), encoding="utf-8")
    linking.runtime_file.cache_clear()
    after = {output.path: output.content for output in generate(REPO)}
    assert after.keys() == before.keys()
    changed = sorted(path for path in after if after[path] != before[path])
    assert changed == sorted(f"generated/{target}/_runtime/sse.py" for target in TARGETS)
    for path in changed:
        diff = [
            line
            for line in difflib.unified_diff(
                before[path].splitlines(), after[path].splitlines(), lineterm="", n=0
            )
            if line[:1] in "+-" and line[:3] not in ("+++", "---")
        ]
        assert diff == [f"-{old}", f"+{old} (edited)"], path


def test_a_package_copies_the_runtime_files_its_modules_use_and_no_other() -> None:
    for target in TARGETS:
        package = REPO / "generated" / target
        copied = {
            path.relative_to(package / "_runtime").with_suffix("").as_posix()
            for path in (package / "_runtime").rglob("*.py")
        }
        imported = {
            line.split()[1].removeprefix("._runtime.").replace(".", "/")
            for module in ("chat", "messages", "responses")
            for line in (package / f"{module}.py").read_text(encoding="utf-8").splitlines()
            if line.startswith("from ._runtime.")
        }
        assert copied == set(linking.copied(imported)), target
        # Each copy is the runtime's file, byte for byte.
        for name in copied:
            copy = (package / "_runtime" / f"{name}.py").read_bytes()
            assert copy == (linking.RUNTIME / f"{name}.py").read_bytes(), (target, name)
    # What only another target's models use is not in this one's package.
    assert not (REPO / "generated/dataclasses/_runtime/structs.py").exists()
    assert not (REPO / "generated/typeddicts/_runtime/models.py").exists()
    assert (REPO / "generated/msgspec/_runtime/structs.py").exists()
