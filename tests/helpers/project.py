"""The project in the tests: the checkout's root, a copy of what the generator reads and
writes, the generator run on a copy, and a copy's output read back."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def copy_project(dest: Path) -> Path:
    """A copy of what the generator reads and writes, to run it without touching the repo."""
    for name in ("spec", "templates", "generated", "tests/generated"):
        shutil.copytree(REPO / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def run_generator(
    root: Path,
    *args: str,
    hash_seed: str = "0",
    env: dict[str, str] | None = None,
    cwd: Path = REPO,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args, "--root", str(root)],
        cwd=cwd,
        env={**os.environ, "PYTHONHASHSEED": hash_seed, **(env or {})},
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
