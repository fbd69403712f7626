"""This checkout as a user's tools see it: committed in a git repository of its own.

pip (through setuptools-scm) and pre-commit take chunkspec from a git repository at a
commit, so the tests that install it commit a copy of the checkout as it is now,
uncommitted changes included, and run git isolated from the user's configuration.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
GIT_TIMEOUT = 60  # seconds for one git command


def isolated_environment() -> dict[str, str]:
    """The environment for git, pip and the installed chunkspec: no configuration of the
    user's, and nothing of an enclosing git command (when the tests run inside a hook,
    GIT_DIR and GIT_INDEX_FILE are set) or of this checkout's venv."""
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "PRE_COMMIT")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", *dropped))}
    name, email = "chunkspec test", "test@chunkspec.invalid"
    return {
        **env,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    """What a git command prints; it must succeed."""
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=GIT_TIMEOUT,
    )
    assert result.returncode == 0, f"git {' '.join(args)}:\n{result.stdout}{result.stderr}"
    return result.stdout


def commit_all(repo: Path, message: str, env: dict[str, str]) -> str:
    """Commit every change of `repo`; the new commit."""
    git("add", "--force", "--all", cwd=repo, env=env)
    git("commit", "-q", "-m", message, cwd=repo, env=env)
    return git("rev-parse", "HEAD", cwd=repo, env=env).strip()


def copied_checkout(to: Path, env: dict[str, str]) -> list[str]:
    """The checkout's files as they are now, tracked or new but not ignored, copied to
    `to` without .git (as a tarball of the next commit holds them); their names."""
    listed = git(
        "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=CHECKOUT, env=env
    )
    copied = []
    for name in filter(None, listed.split("\0")):
        source = CHECKOUT / name
        if source.is_file():  # a deleted file is still in the index
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, to / name)
            copied.append(name)
    return copied


def committed_copy(to: Path, env: dict[str, str]) -> str:
    """The checkout's files as they are now, tracked or new but not ignored, committed in
    a new repository at `to`; the commit."""
    copied_checkout(to, env)
    git("init", "-q", "-b", "main", cwd=to, env=env)
    return commit_all(to, "chunkspec as checked out", env)
