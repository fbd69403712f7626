"""Format the rendered files and write them, or compare them with what is on disk
(stage 4 of the pipeline).

Output must be byte-identical everywhere, so black runs in-process with a mode fixed
here: no configuration file of the caller is read. Writes are all-or-nothing: every
file is rendered and formatted in memory first, then each one is replaced atomically.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import black
from black.mode import TargetVersion

from generator.render import Rendered

BLACK_MODE = black.Mode(
    target_versions={TargetVersion.PY311},
    line_length=88,
    string_normalization=True,
    magic_trailing_comma=True,
)


@dataclass(frozen=True)
class Output:
    path: str
    content: str


class RenderError(Exception):
    """A template produced code that does not compile (a generator bug, not a spec error)."""


def spec_hash(root: Path, spec_files: Iterable[str]) -> str:
    """A short hash of the spec files and the templates, stable across machines."""
    digest = hashlib.sha256()
    template_files = sorted(
        p.relative_to(root).as_posix() for p in (root / "templates").glob("*.jinja")
    )
    for name in [*spec_files, *template_files]:
        digest.update(name.encode() + b"\0")
        digest.update((root / name).read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()[:16]


def finish(rendered: Rendered) -> Output:
    """Compile-check and format one rendered file."""
    if not rendered.python:
        return Output(rendered.path, rendered.text)
    try:
        compile(rendered.text, rendered.path, "exec")
    except SyntaxError as exc:
        raise RenderError(
            f"{rendered.path}:{exc.lineno}: generated code does not compile: {exc.msg}"
        ) from exc
    return Output(rendered.path, black.format_str(rendered.text, mode=BLACK_MODE))


def write_all(root: Path, outputs: Iterable[Output]) -> list[str]:
    """Write the outputs that differ from disk; returns the paths written."""
    written = []
    for output in outputs:
        target = root / output.path
        data = output.content.encode("utf-8")
        if target.exists() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        written.append(output.path)
    return written


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
