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
from urllib.parse import urlparse
from urllib.request import url2pathname

PACKAGE = Path(__file__).resolve().parents[1]


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
        """The command that installs this very chunkspec (or what is known of it)."""
        if self.revision is None:  # built from a copy without git history
            return f"{self.describe()}, whose revision is not known"
        where = self.repository or "<chunkspec's repository URL>"
        return f'pip install "git+{where}@{self.revision}"'


TOP = (__package__ or "").partition(".")[0]
"""The import package: `chunkspec` installed, `generator` in the checkout."""


def this_build() -> Build:
    if TOP != "chunkspec":  # the checkout, run as `python -m generator`
        origin = _git(PACKAGE.parent, "remote", "get-url", "origin")
        return Build(None, _git(PACKAGE.parent, "rev-parse", "--short=9", "HEAD"), origin)
    try:
        version = importlib.import_module(f"{TOP}._version")
        revision = str(version.commit_id).removeprefix("g") if version.commit_id else None
    except ImportError:
        revision = None
    return Build(metadata.version("chunkspec"), revision, _repository())


def _repository() -> str | None:
    """The git URL chunkspec was installed from: pip records it for `pip install
    git+URL@REV`; for a folder (pre-commit installs its clone of the hook's repository
    so), the folder's `origin`, if it is a clone."""
    try:
        text = metadata.distribution("chunkspec").read_text("direct_url.json")
        record = json.loads(text or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        return None
    url = record.get("url") if isinstance(record, dict) else None
    if not isinstance(url, str):
        return None
    if "vcs_info" in record:
        return url
    if url.startswith("file://"):
        return _git(Path(url2pathname(urlparse(url).path)), "remote", "get-url", "origin")
    return None


def _git(folder: Path, *args: str) -> str | None:
    """What a git command prints in `folder`; None when it fails or git is missing."""
    try:
        result = subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    return (result.stdout.strip() or None) if result.returncode == 0 else None
