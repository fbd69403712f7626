"""Format the rendered files and write them, or compare them with what is on disk
(stage 4 of the pipeline).

Output must be byte-identical everywhere, so the formatter (ruff's, black's style; the
pinned ruff of requirements.lock) runs with its options fixed here and `--isolated`: no
configuration file of the caller is read. It formats the ~30,000 generated lines in a
fraction of a second, where black took eight. Writes are all-or-nothing: every file is
rendered and formatted in memory first, then each one is replaced atomically.
"""

from __future__ import annotations

import difflib
import os
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ruff.__main__ import find_ruff_bin

from .header import GENERATED
from .linking import RUNTIME_PACKAGE
from .templating import Rendered

FORMATTERS = 4
"""Formatter processes at once: enough to keep two cores busy beside the compile checks."""
FORMAT_COMMAND = (
    "format",
    "--isolated",
    "--line-length=88",
    "--target-version=py311",
    "--stdin-filename=generated.py",
    "-",
)


@dataclass(frozen=True)
class Output:
    path: str
    content: str


class RenderError(Exception):
    """A template produced code that is not Python (a generator bug, not a spec error)."""


GENERATED_FOLDERS = ("generated", "tests/generated")


def finish(rendered: Sequence[Rendered]) -> list[Output]:
    """Format rendered files: the formatter of each Python file runs in a process of its
    own, all at once. It parses what it formats: a file that is not Python is refused
    there, with its line (the generator's bug, not the spec's)."""
    ruff = find_ruff_bin()  # once, here: its look-up is not safe in threads
    with ThreadPoolExecutor(max_workers=FORMATTERS) as pool:
        formatted = [pool.submit(_formatted, ruff, one) if one.python else None for one in rendered]
        return [
            Output(one.path, one.text if done is None else done.result())
            for one, done in zip(rendered, formatted, strict=True)
        ]


def _formatted(ruff: str, rendered: Rendered) -> str:
    result = subprocess.run(
        [ruff, *FORMAT_COMMAND],
        input=rendered.text,
        capture_output=True,
        encoding="utf-8",
        check=False,
    )
    if result.returncode != 0:
        said = result.stderr.strip().removeprefix("error: ")
        said = said.replace("generated.py:", f"{rendered.path}:", 1)
        raise RenderError(f"{rendered.path}: generated code the formatter refused: {said}")
    return result.stdout


def write_all(root: Path, outputs: Iterable[Output]) -> list[str]:
    """Write the outputs that differ from disk; returns the paths written.

    Every changed file is first written in full next to its target; only then are they
    renamed into place, so a failure while writing leaves the old files as they were.
    """
    staged: list[tuple[Path, Path, str]] = []
    try:
        for output in outputs:
            target = root / output.path
            data = output.content.encode("utf-8")
            if target.is_file() and target.read_bytes() == data:
                continue
            if target.exists() and not target.is_file():
                raise IsADirectoryError(f"{output.path} is in the way: it is not a file")
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            staged.append((Path(tmp), target, output.path))
        for tmp_path, target, _ in staged:
            os.replace(tmp_path, target)
    finally:
        for tmp_path, _, _ in staged:
            tmp_path.unlink(missing_ok=True)
    return [path for _, _, path in staged]


def strays(root: Path, outputs: Iterable[Output]) -> list[str]:
    """Files in the generated folders that the spec no longer produces."""
    expected = {output.path for output in outputs}
    found = []
    for folder in GENERATED_FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            relative = path.relative_to(root).as_posix()
            if path.is_file() and "__pycache__" not in path.parts and relative not in expected:
                found.append(relative)
    return found


def written_by_chunkspec(path: Path, name: str) -> bool:
    """Whether the file at `path` (`name` inside its folder) is one chunkspec wrote: a
    runtime file of a package (`_runtime/`, copied as it is), or a file that starts with
    the generated header. Only such a file is removed when no longer written."""
    if f"/{RUNTIME_PACKAGE}/" in f"/{name}":
        return True
    try:
        with path.open(encoding="utf-8") as handle:
            return handle.readline().startswith(f"# {GENERATED}")
    except (OSError, UnicodeDecodeError):
        return False


def stale(root: Path, outputs: Iterable[Output]) -> list[str]:
    """Unified diffs of every output that differs from the file on disk."""
    diffs = []
    for output in outputs:
        target = root / output.path
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != output.content:
            diff = difflib.unified_diff(
                current.splitlines(keepends=True),
                output.content.splitlines(keepends=True),
                fromfile=f"{output.path} (on disk)",
                tofile=f"{output.path} (from the spec)",
                n=1,
            )
            diffs.append("".join(diff))
    return diffs
