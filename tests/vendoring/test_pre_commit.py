"""The pre-commit hook of .pre-commit-hooks.yaml, run for real by the pinned pre-commit.

pre-commit installs a hook from a git repository at a commit (`rev:`), so the test
commits a copy of this checkout (uncommitted changes included) into a temporary
repository and points an application repository at it. The application vendors a
package with that copy's chunkspec, and the hook must pass it fresh, fail a commit that
edits it by hand, pass after a spec change that does not reach the package (a doc of a
vendor it left out) and fail, naming the file that differs and how to update the
package, after one that does (a doc of its own vendor's field).

Each `rev:` makes pre-commit build an environment (pip installs chunkspec and its
dependencies), so the test uses three revisions.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from generator.render.header import recorded_command
from tests.helpers.checkout import CHECKOUT, commit_all, committed_copy, git, isolated_environment
from tests.helpers.support import REPORT

LOCK = CHECKOUT / "requirements.lock"
MODULE = "app/chunks"
VENDOR = ("vendor", "--target", "pydantic", "--vendors", "vllm", "--out", MODULE)
AGAIN = "chunkspec vendor --target pydantic --vendors vllm --out app/chunks"
"""The command the hook's messages show (the hook runs the `chunkspec` console script)."""

# A doc of a field of a vendor the module leaves out, and one of a field it has.
GROQ_DOC = ("Seconds the request waited in Groq's queue", "Seconds spent in Groq's queue")
VLLM_DOC = ("Token ids of the rendered prompt", "Token ids of the prompt")

QUICK = 60
"""Seconds for a git command or a vendoring run."""
PRE_COMMIT_RUN = 300
"""Seconds for a pre-commit run, which may build an environment (pip installs)."""


@dataclass(frozen=True)
class Repos:
    hook: Path
    """The committed copy of this checkout: the hook's repository."""
    app: Path
    """The repository that vendors a module and runs the hook."""
    env: dict[str, str]


def environment(home: Path) -> dict[str, str]:
    return {**isolated_environment(), "PRE_COMMIT_HOME": str(home)}


def run(
    *args: str, cwd: Path, env: dict[str, str], timeout: float = QUICK
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=timeout
    )


def said(result: subprocess.CompletedProcess[str]) -> str:
    command = " ".join(str(arg) for arg in result.args)
    return f"`{command}` exited {result.returncode}:\n{result.stdout}{result.stderr}"


def ok(*args: str, cwd: Path, env: dict[str, str]) -> str:
    result = run(*args, cwd=cwd, env=env)
    assert result.returncode == 0, said(result)
    return result.stdout


def pre_commit(repos: Repos, *args: str) -> subprocess.CompletedProcess[str]:
    return run(
        sys.executable,
        "-m",
        "pre_commit",
        *args,
        cwd=repos.app,
        env=repos.env,
        timeout=PRE_COMMIT_RUN,
    )


def commit(repos: Repos, message: str) -> subprocess.CompletedProcess[str]:
    """`git commit` in the application repository, which runs the installed hook."""
    return run("git", "commit", "-m", message, cwd=repos.app, env=repos.env, timeout=PRE_COMMIT_RUN)


def change_spec(repos: Repos, name: str, old: str, new: str) -> str:
    """Replace a text in a spec file of the hook's repository, commit, and point the
    application at the new commit. Returns the commit."""
    path = repos.hook / name
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{name}: {old!r} is not there once"
    path.write_text(text.replace(old, new), encoding="utf-8")
    rev = commit_all(repos.hook, f"{name}: a doc", repos.env)
    use_rev(repos, rev)
    return rev


def use_rev(repos: Repos, rev: str) -> None:
    config = f"""\
repos:
  - repo: {json.dumps(str(repos.hook))}
    rev: {rev}
    hooks:
      - id: chunkspec-vendored
        files: '^app/chunks/'
"""
    (repos.app / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    git("add", ".pre-commit-config.yaml", cwd=repos.app, env=repos.env)


def vendor(repos: Repos) -> str:
    """Write the package with the hook repository's chunkspec as it is now; the text of
    its chat module."""
    env = {**repos.env, "PYTHONPATH": str(repos.hook)}
    ok(sys.executable, "-m", "generator", *VENDOR, cwd=repos.app, env=env)
    return (repos.app / MODULE / "chat.py").read_text(encoding="utf-8")


def passed(result: subprocess.CompletedProcess[str]) -> bool:
    """The hook ran on the module and passed (not skipped for want of files)."""
    output = result.stdout + result.stderr
    return result.returncode == 0 and re.search(r"unedited\.+Passed", output) is not None


def test_the_hook_passes_fresh_and_fails_edited_or_stale_modules(tmp_path: Path) -> None:
    started = time.monotonic()
    locked = re.search(r"^pre_commit==(\S+)", LOCK.read_text(encoding="utf-8"), re.MULTILINE)
    assert locked, "requirements.lock pins no pre_commit"
    assert (
        metadata.version("pre_commit") == locked[1]
    ), "the venv's pre-commit is not the pinned one"

    repos = Repos(tmp_path / "hook", tmp_path / "app", environment(tmp_path / "pre-commit"))
    for folder in (repos.hook, repos.app):
        folder.mkdir()
    rev = committed_copy(repos.hook, repos.env)
    git("init", "-q", "-b", "main", cwd=repos.app, env=repos.env)
    fresh = vendor(repos)
    command = f"python -m generator {' '.join(VENDOR)}"
    assert recorded_command(fresh) == command, f"the header does not record `{command}`"
    use_rev(repos, rev)
    installed = pre_commit(repos, "install")
    assert installed.returncode == 0, said(installed)

    # 1. Fresh: the commit that adds the package passes the hook.
    git("add", MODULE, cwd=repos.app, env=repos.env)
    added = commit(repos, "vendor the chunk models")
    assert passed(added), said(added)
    first = git("rev-parse", "HEAD", cwd=repos.app, env=repos.env)

    # 2. Edited by hand: the hook fails the commit, naming the package and the file.
    path = repos.app / MODULE / "chat.py"
    edited = fresh.replace('"""Models of the streamed', '"""Models of our streamed', 1)
    assert edited != fresh, "the module's docstring has changed; edit another line"
    path.write_text(edited, encoding="utf-8")
    git("add", MODULE, cwd=repos.app, env=repos.env)
    refused = commit(repos, "edit the chunk models")
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, said(refused)
    assert (
        git("rev-parse", "HEAD", cwd=repos.app, env=repos.env) == first
    ), "the edited module was committed"
    assert f"error: {MODULE}: stale or edited: 1 file(s) differ" in output, said(refused)
    assert "\n    chat.py: +1 -1 lines, from line " in output, said(refused)
    assert f"\n    2. {AGAIN}\n" in output, said(refused)
    git("checkout", "HEAD", "--", MODULE, cwd=repos.app, env=repos.env)
    assert path.read_text(encoding="utf-8") == fresh

    # 3. A spec change that does not reach the package: a doc of a groq field (the
    # package types vllm's only). What a CI runs passes.
    groq = change_spec(repos, "spec/vendors/groq.yaml", *GROQ_DOC)
    unaffected = pre_commit(repos, "run", "--all-files")
    assert "Initializing environment for" in unaffected.stdout, said(unaffected)
    assert passed(unaffected), f"the hook at {groq} failed:\n{said(unaffected)}"

    # 4. One that does: a doc of a vllm field. The hook fails, names the file that
    # differs, the revision that checked and the two steps that update the package.
    vllm = change_spec(repos, "spec/vendors/vllm.yaml", *VLLM_DOC)
    stale = pre_commit(repos, "run", "--all-files")
    output = stale.stdout + stale.stderr
    assert "Initializing environment for" in stale.stdout, said(stale)
    assert stale.returncode != 0, f"the hook at {vllm} passed a stale package:\n{said(stale)}"
    assert output.count(f"error: {MODULE}: ") == 1, "one message per package, not per file"
    differ = re.search(
        rf"^error: {re.escape(MODULE)}: stale or edited: 1 file\(s\) differ .*revision"
        r" ([0-9a-f]{7,40});.*\n    chat\.py: \+\d+ -\d+ lines, from line \d+\n",
        output,
        re.M,
    )
    assert differ and vllm.startswith(differ[1]), said(stale)
    current = vendor(repos)
    assert current != fresh and VLLM_DOC[1] in current
    install = rf'pip install "[^"\n]*git\+[^"\n]+@{differ[1]}"'
    step = rf"    1\. install the chunkspec this check ran: {install}\n"
    assert re.search(step, output), said(stale)
    assert f"    2. {AGAIN}\n" in output, said(stale)

    # 5. Written again (step 2 above), the package passes.
    git("add", MODULE, cwd=repos.app, env=repos.env)
    updated = pre_commit(repos, "run", "--all-files")
    assert passed(updated), said(updated)

    REPORT["pre-commit hook"] = (
        f"passed fresh, failed a hand edit, passed a groq doc change, failed a vllm one"
        f" ({time.monotonic() - started:.0f} s)"
    )
