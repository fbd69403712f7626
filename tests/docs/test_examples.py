"""README.md and docs/*.md, run: every python block of them prints what the doc shows under
it, and every excerpt of a file is still in that file, so the docs cannot drift from the
code.

docs/streams.md needs loopback HTTP servers and is run by tests/docs/test_streams.py; every
other doc is run here, and `test_every_doc_is_run` fails if a doc is in neither place.

The conventions (this module reads nothing else of a doc):

- A ```python block is an example. It runs on its own, in a fresh namespace, in the order
  of the doc, with the repository root as working directory and on sys.path (examples
  import `generated.dataclasses.chat` and the like). What it prints must equal the
  ```text block that follows it with nothing but blank lines between; a python block
  without one must print nothing. An exception it raises is printed as its traceback
  (with the doc's line numbers), so it shows in the diff. Blocks of other kinds
  (```console, ```sh, ```yaml, ...) are not run.
- Markers: HTML comments on the lines right before a fence, one per line, of the form
  `<!-- key: value -->` or `<!-- key -->`, with the keys below. Any other comment there
  is an error (a typo would otherwise turn an excerpt into an example).
- `<!-- excerpt: PATH -->` before a block of any kind: the block is an excerpt of PATH
  (relative to the project root), not an example, and is never run. Its lines must occur
  in PATH in order and one after another; a line that is only `...` (indented or not)
  stands for any number of lines left out. Lines are compared without their trailing
  whitespace. Mark every python block that shows code instead of running it (generated
  code, a line of a test) this way; a python block that is neither an example nor an
  excerpt has no place in the docs.
- `<!-- after: COMMAND -->` before a python block or an excerpt: the block runs, or is
  checked, in a scratch project instead of the repository: a copy of spec/ and
  templates/ in a temporary directory, with the doc's `file` and `patch` blocks above it
  applied, after COMMAND (several are separated by `;`). A command is a command of the
  generator, spelled `chunkspec ...` or `python -m generator ...`; it runs with the
  scratch project as working directory and `--root`. An example then runs in another
  process, with the scratch project as working directory and first on sys.path, so
  `generated` (and a module `vendor` wrote) is the scratch project's. Use it for an
  example that needs other generated code (`chunkspec generate --vendors vllm`, a
  vendored module, a new vendor file).
- `<!-- file: PATH -->` before any block: from there on, the doc's scratch projects hold the
  block's text as PATH (say a new spec/vendors/acme.yaml).
- `<!-- patch -->` before a ```diff block: from there on, the doc's scratch projects have
  the unified diff applied; each hunk must match the file at the line its header gives.

A failure names the block by its doc and the line of its first line, and shows the
difference as a diff.
"""

from __future__ import annotations

import difflib
import importlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.docs_blocks import ROOT, Fence, difference, fences, output_after, run_code

RUN_ELSEWHERE = {
    "docs/streams.md": "tests.docs.test_streams",
    "docs/claude-code.md": "tests.docs.test_claude_code",
    "docs/codex.md": "tests.docs.test_codex",
}
"""Docs another test module runs (it has a DOC naming the doc), by that module."""
COPIED = ("spec", "templates")
"""What a scratch project starts from: the repository's own."""
COMMAND_TIMEOUT = 120.0  # seconds one generator command or one example may take

_KEY = re.compile(r"^(?P<key>[a-z][a-z-]*)(?::\s*(?P<value>.*))?$")
_HUNK = re.compile(r"^@@ -(?P<start>\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")


def all_docs() -> list[str]:
    """README.md and every docs/*.md, as paths relative to the repository root."""
    return ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]


DOCS = [doc for doc in all_docs() if doc not in RUN_ELSEWHERE]


@dataclass(frozen=True)
class Edit:
    """A `file` or `patch` block: a change the doc's scratch projects make to the copy."""

    where: str
    path: str | None
    """The file a `file` block writes; None for a patch."""
    text: str


@dataclass(frozen=True)
class Project:
    """A scratch project: the copy, these edits, then these commands."""

    edits: tuple[Edit, ...]
    commands: tuple[str, ...]


@dataclass(frozen=True)
class Block:
    """A python block to run, or an excerpt (of any kind) to find."""

    doc: str
    line: int
    """The line of its first line, counted from 1."""
    code: str
    expected: str
    """What an example must print."""
    excerpt_of: str | None
    project: Project | None
    """None: the repository itself."""
    problem: str | None = None
    """What is wrong with its markers, if anything."""

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def read_doc(doc: str) -> list[Block]:
    """The python blocks and the excerpts of `doc`, each with where it runs."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    all_fences = fences(text, doc)
    edits: list[Edit] = []
    blocks: list[Block] = []
    for fence in all_fences:
        keys, problem = markers(fence)
        where = f"{doc}:{fence.line + 1}"
        if "file" in keys:
            edits.append(Edit(where, keys["file"], fence.body))
        if "patch" in keys:
            if fence.kind != "diff":
                problem = problem or "<!-- patch --> marks a ```diff block only"
            edits.append(Edit(where, None, fence.body))
        project = None
        if "after" in keys:
            commands = tuple(c.strip() for c in keys["after"].split(";") if c.strip())
            project = Project(tuple(edits), commands)
        line = fence.line + 1
        if "excerpt" in keys:
            if not keys["excerpt"]:
                problem = problem or "<!-- excerpt: PATH --> needs the path"
            blocks.append(Block(doc, line, fence.body, "", keys["excerpt"], project, problem))
        elif fence.kind == "python":
            after = output_after(fence, all_fences, text)
            expected = after.body if after else ""
            blocks.append(Block(doc, line, fence.body, expected, None, project, problem))
        elif problem or project:
            problem = problem or "<!-- after --> marks a python block or an excerpt"
            blocks.append(Block(doc, line, "", "", None, None, problem))
    return blocks


def markers(fence: Fence) -> tuple[dict[str, str], str | None]:
    """The markers of a fence, by key, and what is wrong with them (None if nothing)."""
    keys: dict[str, str] = {}
    for marker in fence.markers:
        match = _KEY.match(marker)
        if not match or match["key"] not in {"excerpt", "after", "file", "patch"}:
            known = "excerpt: PATH, after: COMMAND, file: PATH, patch"
            return keys, f"unknown marker <!-- {marker} --> (known: {known})"
        keys[match["key"]] = (match["value"] or "").strip()
    return keys, None


BLOCKS = [block for doc in DOCS for block in read_doc(doc)]


def test_every_doc_is_run() -> None:
    """Every doc is run here or by the test module RUN_ELSEWHERE names, never by neither."""
    assert set(DOCS) | set(RUN_ELSEWHERE) == set(all_docs())
    for doc, module_name in RUN_ELSEWHERE.items():
        runs = importlib.import_module(module_name).DOC
        assert runs == ROOT / doc, f"{module_name} runs {runs}, not {doc}"
    assert any(block.doc == "README.md" and not block.excerpt_of for block in BLOCKS)


# Scratch projects -----------------------------------------------------------------------


class ProjectError(Exception):
    """A scratch project could not be made: a patch that does not apply, a failed command."""


class Projects:
    """The scratch projects of this module, each made once, on first use."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.made: dict[Project, Path | ProjectError] = {}

    def root(self, project: Project | None) -> Path:
        if project is None:
            return ROOT
        if project not in self.made:
            try:
                self.made[project] = self.make(project, self.base / f"project{len(self.made)}")
            except ProjectError as exc:
                self.made[project] = exc  # every block that needs it fails the same way
        made = self.made[project]
        if isinstance(made, ProjectError):
            pytest.fail(str(made), pytrace=False)
        return made

    def make(self, project: Project, root: Path) -> Path:
        for name in COPIED:
            shutil.copytree(ROOT / name, root / name)
        for edit in project.edits:
            if edit.path is not None:
                (root / edit.path).parent.mkdir(parents=True, exist_ok=True)
                (root / edit.path).write_text(edit.text, encoding="utf-8")
            elif problem := apply_patch(root, edit.text):
                raise ProjectError(f"the patch at {edit.where} does not apply: {problem}")
        for command in project.commands:
            result = subprocess.run(
                [sys.executable, "-m", "generator", *generator_args(command), "--root", str(root)],
                cwd=root,
                env=environment(),
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT,
            )
            if result.returncode:
                raise ProjectError(f"`{command}` failed:\n{result.stdout}{result.stderr}")
        return root


def generator_args(command: str) -> list[str]:
    """The arguments of a generator command, spelled `chunkspec ...` or `python -m generator ...`."""
    words = shlex.split(command)
    for prefix in (["chunkspec"], ["python", "-m", "generator"]):
        if words[: len(prefix)] == prefix:
            return words[len(prefix) :]
    raise ProjectError(f"`{command}` is not a command of the generator")


def environment() -> dict[str, str]:
    """The environment of a process: the repository importable, output in UTF-8."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def apply_patch(root: Path, diff: str) -> str | None:
    """Apply a unified diff under `root`; None if it applied, else what did not match."""
    lines = diff.splitlines(keepends=True)
    at = 0
    while at < len(lines):
        if not lines[at].startswith("--- "):
            at += 1
            continue
        if at + 1 >= len(lines) or not lines[at + 1].startswith("+++ "):
            return f"no +++ line after {lines[at].strip()!r}"
        name = lines[at + 1][4:].strip().split("\t")[0]
        name = name[2:] if name.startswith("b/") else name
        path = root / name
        if not path.is_file():
            return f"{name}: no such file"
        old = path.read_text(encoding="utf-8").splitlines(keepends=True)
        new: list[str] = []
        done = 0  # lines of `old` already copied or replaced
        at += 2
        while at < len(lines) and (hunk := _HUNK.match(lines[at])):
            start = max(int(hunk["start"]) - 1, 0)
            if start < done:
                return f"{name}: hunks overlap at line {start + 1}"
            new += old[done:start]
            done = start
            at += 1
            while at < len(lines) and lines[at][:1] in (" ", "-", "+", "\n"):
                line = lines[at]
                sign, content = (line[0], line[1:]) if line != "\n" else (" ", "\n")
                if sign in " -":
                    if done >= len(old) or old[done].rstrip("\n") != content.rstrip("\n"):
                        found = old[done].rstrip("\n") if done < len(old) else "(end of file)"
                        return f"{name}:{done + 1}: expected {content.rstrip()!r}, found {found!r}"
                    done += 1
                if sign in " +":
                    new.append(content)
                at += 1
        new += old[done:]
        path.write_text("".join(new), encoding="utf-8")
    return None


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Projects]:
    yield Projects(tmp_path_factory.mktemp("docs_projects"))


# Running and checking ---------------------------------------------------------------------

# The scratch project comes first on sys.path (the working directory), the repository
# after it (PYTHONPATH): `tests` is the repository's, `generated` the scratch project's.
_RUNNER = (
    "import sys; from tests.helpers.docs_blocks import run_code;"
    " sys.stdout.write(run_code(sys.stdin.read(), int(sys.argv[2]), sys.argv[1]))"
)


def run(block: Block, root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """What the example prints, run in the project at `root`."""
    filename = str(ROOT / block.doc)
    if root == ROOT:
        monkeypatch.chdir(ROOT)
        return run_code(block.code, block.line, filename)
    # Another process: its `generated` (and anything it vendored) is the scratch project's.
    result = subprocess.run(
        [sys.executable, "-c", _RUNNER, filename, str(block.line)],
        input=block.code,
        cwd=root,
        env=environment(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=COMMAND_TIMEOUT,
    )
    if result.returncode:
        pytest.fail(f"{block.where}: the process running the block failed:\n{result.stderr}")
    return result.stdout


def excerpt_problem(excerpt: str, text: str) -> str | None:
    """None if the excerpt's lines are in `text` as the module docstring says, else why not."""
    source = [line.rstrip() for line in text.splitlines()]
    parts: list[list[str]] = [[]]
    for line in excerpt.splitlines():
        if line.strip() == "...":
            parts.append([])
        else:
            parts[-1].append(line.rstrip())
    start = 0
    for part in parts:
        if not part:
            continue
        found = next(
            (
                at
                for at in range(start, len(source) - len(part) + 1)
                if source[at : at + len(part)] == part
            ),
            None,
        )
        if found is None:
            return not_found(part, source, start)
        start = found + len(part)
    return None


def not_found(part: list[str], source: list[str], start: int) -> str:
    """A diff of the lines not found against the place of the file most like them."""
    best = max(
        range(start, max(start + 1, len(source) - len(part) + 1)),
        key=lambda at: difflib.SequenceMatcher(
            None, "\n".join(part), "\n".join(source[at : at + len(part)])
        ).ratio(),
    )
    diff = difflib.unified_diff(
        [f"{line}\n" for line in source[best : best + len(part)]],
        [f"{line}\n" for line in part],
        f"the file, from line {best + 1}",
        "the excerpt",
    )
    return f"these lines are not in the file (after line {start}):\n{''.join(diff)}"


@pytest.mark.parametrize("block", BLOCKS, ids=[block.where for block in BLOCKS])
def test_the_block_shows_what_the_code_does(
    block: Block, projects: Projects, monkeypatch: pytest.MonkeyPatch
) -> None:
    if block.problem:
        pytest.fail(f"{block.where}: {block.problem}", pytrace=False)
    root = projects.root(block.project)
    if block.excerpt_of:
        path = root / block.excerpt_of
        if not path.is_file():
            pytest.fail(f"{block.where}: an excerpt of {block.excerpt_of}, which does not exist")
        problem = excerpt_problem(block.code, path.read_text(encoding="utf-8"))
        if problem:
            pytest.fail(f"{block.where}: an excerpt of {block.excerpt_of}: {problem}", False)
        return
    message = difference(block.where, block.expected, run(block, root, monkeypatch))
    if message:
        pytest.fail(message, pytrace=False)
