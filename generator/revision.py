"""Which chunkspec is running: its version and the git revision it was built from, so a
message can say exactly which chunkspec to install.

Installed, both come from `_version.py`, which setuptools-scm writes at build time (see
pyproject.toml), and the repository from pip's record of where it installed chunkspec
from (PEP 610's direct_url.json). Run from a checkout, the revision is the checkout's.
"""

from __future__ import annotations

import importlib
import json
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Build:
    version: str | None
    revision: str | None
    """A git commit, abbreviated; None when it is not known."""
    repository: str | None
    """The git URL pip installed chunkspec from, when it was one."""

    def describe(self) -> str:
        known = [f"chunkspec {self.version}" if self.version else "chunkspec"]
        known += [f"revision {self.revision}"] if self.revision else []
        return ", ".join(known)

    def install(self) -> str:
        """The command that installs this very chunkspec."""
        if self.revision is None:
            return f'pip install "chunkspec=={self.version}"' if self.version else "(unknown)"
        where = self.repository or "<chunkspec's repository URL>"
        return f'pip install "git+{where}@{self.revision}"'


def this_build() -> Build:
    if __package__ != "chunkspec":  # the checkout, run as `python -m generator`
        return Build(None, _checkout_revision(), None)
    try:
        version = importlib.import_module(f"{__package__}._version")
        revision = str(version.commit_id).removeprefix("g") if version.commit_id else None
    except ImportError:
        revision = None
    return Build(metadata.version("chunkspec"), revision, _repository())


def _checkout_revision() -> str | None:
    try:
        result = subprocess.run(
            ["git", "-C", str(PACKAGE.parent), "rev-parse", "--short=9", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None


def _repository() -> str | None:
    """The URL of a `pip install git+URL@REV` install (not a local folder's)."""
    try:
        text = metadata.distribution("chunkspec").read_text("direct_url.json")
        record = json.loads(text or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        return None
    if not isinstance(record, dict) or "vcs_info" not in record:
        return None
    url = record.get("url")
    return url if isinstance(url, str) else None
