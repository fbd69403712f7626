"""The packages of an installed chunkspec: found, never listed by hand.

pyproject.toml holds the configuration; this file only names the packages. Four folders
of the checkout are installed under other names (`[tool.setuptools] package-dir` in
pyproject.toml): generator/ as `chunkspec`, spec/ as `chunkspec.spec`, templates/ as
`chunkspec.templates` and generated/ as `chunkspec._generated`. setuptools'
`[tool.setuptools.packages.find]` names a package after its folder (it would find
`generator.runtime`, not `chunkspec.runtime`), so the search is made here: every folder
below the four, with an `__init__.py` or not (spec/vendors/ holds only data), under its
installed name. A folder added later is installed without an edit, in a wheel built from
a tree without .git (a tarball, `git archive`) as from a checkout;
tests/vendoring/test_wheel.py builds one and compares it with the tree.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, setup

ROOT = Path(__file__).resolve().parent


def packages() -> list[str]:
    """Each installed package's name: the folders of package-dir and all below them."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_dir: dict[str, str] = pyproject["tool"]["setuptools"]["package-dir"]
    found = []
    for name, folder in package_dir.items():
        below = find_namespace_packages(ROOT / folder, exclude=["__pycache__", "*.__pycache__"])
        found += [name, *(f"{name}.{package}" for package in below)]
    return sorted(found)


setup(packages=packages())
