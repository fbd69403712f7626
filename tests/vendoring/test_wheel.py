"""chunkspec's wheel, built from the tree without .git, holds the whole tree and works.

In a git checkout setuptools-scm adds every tracked file to a wheel, which hides a
folder or file the packaging configuration leaves out; a wheel built from a tarball
(`git archive`, an sdist) has only what the configuration names. So the checkout's files
(tracked or new, not ignored: tests/helpers/checkout.py) are copied without .git and built with
`pip wheel --no-build-isolation --no-index`: the build uses the setuptools and
setuptools-scm of .venv (requirements.lock pins the same as pyproject.toml's
[build-system]) and needs no network. Every file under generator/, generated/, spec/
and templates/ must be in the wheel, under its installed name, and nothing else.

The wheel is then installed, as pip installs it, into a new venv without pip or system
site-packages (`pip --python <venv> install --no-deps --no-index`, pip run from .venv):
its dependencies (Jinja2, PyYAML, ruff; pydantic and msgspec for importing the output)
come from .venv's site-packages, named by a .pth file that sys.path puts after the venv's
own, so `chunkspec` can only be the installed wheel and nothing of the checkout is on the
path. That takes a second, where installing the dependencies from an index takes
minutes and the network (tests/vendoring/test_install.py does that, once, for its own tests).
The installed command generates every protocol for every target into a new project made
of the spec and templates the wheel holds, and the modules it writes import. The output's
layout is the generator's to change: the test asserts only that each target has a module
of each protocol, found by the words of its path.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

import pytest

from generator.render.families import FAMILIES
from generator.render.targets import TARGETS
from tests.helpers.checkout import CHECKOUT, copied_checkout, isolated_environment

TIMEOUT = 120  # seconds for any one command
ENV = isolated_environment()

INSTALLED_AS = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "setuptools"
]["package-dir"]
"""Installed package -> the checkout's folder: chunkspec -> generator, ..."""

PROTOCOL_WORDS = {family: {family} for family in FAMILIES} | {"chat": {"chat", "chunk"}}
"""The words a generated module's path names its protocol by (chat's are chunk_*.py)."""


def run(*args: str | Path, cwd: Path) -> str:
    result = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        check=False,
        timeout=TIMEOUT,
    )
    assert (
        result.returncode == 0
    ), f"{args} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@dataclass(frozen=True)
class Built:
    tree: list[str]
    """The names of the files the wheel was built from (relative to the checkout)."""
    wheel: Path
    python: Path
    """The venv's interpreter; the wheel is installed there."""
    work: Path
    """A folder outside the checkout to run the installed chunkspec in."""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    work = tmp_path_factory.mktemp("wheel")
    tree = work / "chunkspec"
    names = copied_checkout(tree, ENV)
    assert not (tree / ".git").exists()
    wheels = work / "wheels"
    pip = (sys.executable, "-m", "pip", "--disable-pip-version-check")
    build = ("wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", wheels)
    run(*pip, *build, tree, cwd=work)
    (wheel,) = wheels.glob("*.whl")

    env = work / "venv"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    site = Path(
        run(
            python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=work
        ).strip()
    )
    ours = dict.fromkeys(sysconfig.get_path(kind) for kind in ("purelib", "platlib"))
    (site / "_dependencies.pth").write_text("".join(f"{path}\n" for path in ours))
    run(*pip, "--python", python, "install", "--no-deps", "--no-index", "-q", wheel, cwd=work)
    yield Built(names, wheel, python, work)


def test_the_wheel_holds_every_file_of_the_installed_folders(built: Built) -> None:
    installed = {}
    for name in built.tree:
        for package, folder in INSTALLED_AS.items():
            if name.startswith(f"{folder}/"):
                installed[package.replace(".", "/") + name.removeprefix(folder)] = name
    assert any(name.startswith("generator/runtime/") for name in installed.values())
    with zipfile.ZipFile(built.wheel) as wheel:
        held = {name for name in wheel.namelist() if not name.startswith("chunkspec-")}
    missing = sorted(installed[name] for name in set(installed) - held)
    assert not missing, f"left out of the wheel: {missing}"
    # setuptools-scm writes _version.py into the tree it builds (ignored by git).
    assert held - set(installed) == {"chunkspec/_version.py"}


def test_every_folder_of_python_in_the_generator_is_a_package() -> None:
    folders = {path.parent for path in (CHECKOUT / "generator").rglob("*.py")}
    assert [f for f in sorted(folders) if not (f / "__init__.py").is_file()] == []


def test_the_wheel_is_versioned_licensed_and_ranges_its_dependencies(built: Built) -> None:
    with zipfile.ZipFile(built.wheel) as wheel:
        (info,) = {name.split("/")[0] for name in wheel.namelist() if ".dist-info/" in name}
        metadata = HeaderParser().parsestr(wheel.read(f"{info}/METADATA").decode())
        licensed = f"{info}/licenses/LICENSE" in wheel.namelist()
    # No .git, no tag: the version is setuptools-scm's fallback, and no revision is known.
    pyproject = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))
    assert metadata["Version"] == pyproject["tool"]["setuptools_scm"]["fallback_version"]
    build = "from chunkspec.vendoring.revision import this_build; print(this_build().describe())"
    assert run(built.python, "-c", build, cwd=built.work) == f"chunkspec {metadata['Version']}\n"
    assert (metadata["License-Expression"], licensed) == ("MIT", True)
    urls = {url.split(",")[0] for url in metadata.get_all("Project-URL") or []}
    assert urls == {"Homepage", "Repository", "Documentation", "Changelog"}
    requires = metadata.get_all("Requires-Dist") or []
    pinned = [r for r in requires if "==" in r and "extra ==" not in r]
    assert pinned == ["ruff==" + _locked("ruff")], "only ruff is pinned (pyproject.toml)"


def test_the_installed_command_generates_every_protocol_for_every_target(built: Built) -> None:
    found = run(built.python, "-c", "import chunkspec; print(chunkspec.__file__)", cwd=built.work)
    package = Path(found.strip()).parent
    assert package.is_relative_to(built.python.parent.parent), package  # not the checkout's
    project = built.work / "project"
    for data in ("spec", "templates"):  # the spec and templates the wheel holds
        shutil.copytree(package / data, project / data)
    chunkspec = built.python.parent / "chunkspec"
    run(
        chunkspec,
        "generate",
        "--root",
        project,
        "--protocols",
        "all",
        "--vendors",
        "all",
        cwd=project,
    )

    modules = sorted((project / "generated").rglob("*.py"))
    words = [set(re.split(r"[/_.]", m.relative_to(project).as_posix())) for m in modules]
    absent = [
        f"{target} {protocol}"
        for target in TARGETS
        for protocol, named in PROTOCOL_WORDS.items()
        if not any(target in w and named & w for w in words)
    ]
    assert not absent, f"no module for: {absent}; written: {modules}"
    names = [".".join(m.relative_to(project).with_suffix("").parts) for m in modules]
    dotted = [name.removesuffix(".__init__") for name in names]
    script = f"import importlib\nfor name in {dotted!r}:\n    importlib.import_module(name)\n"
    run(built.python, "-c", script, cwd=project)


def _locked(name: str) -> str:
    """The version requirements.lock pins `name` to."""
    lock = (CHECKOUT / "requirements.lock").read_text(encoding="utf-8")
    found = re.search(rf"^{re.escape(name)}==(\S+)$", lock, re.M)
    assert found is not None, name
    return found[1]
