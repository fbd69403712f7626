"""The check that a vendored package is still what chunkspec makes of its command: the
package is written again in memory, from the command its header records, and compared
with what is there, file by file. A file that differs is named, whether it was edited by
hand or the spec or chunkspec now writes it otherwise; nothing of how chunkspec is
written counts, so an upgrade that writes the same bytes leaves the package current.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import replace
from pathlib import Path

from ..ir.errors import SpecError
from ..render.emit import written_by_chunkspec
from ..render.header import recorded_command
from .revision import this_build
from .vendored import CommandError, Request, parse_command, render_vendored


def repository_top(path: Path) -> Path | None:
    """The root of the git repository `path` is in, if any."""
    for folder in [path.absolute(), *path.absolute().parents]:
        if (folder / ".git").exists():
            return folder
    return None


def in_repository(path: Path) -> str:
    """How a header records `path`: relative to its repository's root, so the header is
    the same on every machine and in every folder it is run from; as given outside a
    repository."""
    absolute = Path(os.path.normpath(path.absolute()))
    top = repository_top(absolute)
    return path.as_posix() if top is None else absolute.relative_to(top).as_posix()


def root_from(package: Path, root: Path) -> str:
    """How a header records the spec project `root` of a package written at `package`:
    relative to the package's repository root (where its command is run from)."""
    top = repository_top(Path(os.path.normpath(package.absolute())))
    return root.as_posix() if top is None else Path(os.path.relpath(root.resolve(), top)).as_posix()


def package_of(path: Path) -> Path:
    """The vendored package `path` is, or is a file of (what a pre-commit hook passes):
    the nearest folder up whose `__init__.py` records a `vendor` command; `path` itself
    when there is none (the check then says what it is not)."""
    start = path if path.is_dir() else path.parent
    for folder in [start, *start.parents]:
        if _command_of(folder / "__init__.py") is not None:
            return folder
        if (folder / ".git").exists():
            break
    return path


def _command_of(path: Path) -> str | None:
    try:
        command = recorded_command(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    return command if command is not None and " vendor " in f" {command} " else None


def problems(root: Path, path: Path, prog: str) -> str | None:
    """Why the vendored package at `path` is not what chunkspec makes of its command now
    (None if it is). `prog` is how the user runs chunkspec, for the commands shown."""
    if path.is_file():
        command = _command_of(path)
        if command is None:
            return f"not a package written by `{prog} vendor` (no command in its header)"
        # One module with the command in its header: what chunkspec wrote before 0.2.
        return (
            "one module, as an older chunkspec wrote it: chunkspec writes a package now;"
            f" write it again with `{prog} vendor ... --out {path.with_suffix('').as_posix()}/`"
            " and delete this file (CHANGELOG.md)"
        )
    command = _command_of(path / "__init__.py")
    if command is None:
        return f"not a package written by `{prog} vendor` (its __init__.py records no command)"
    try:
        request = parse_command(command)
    except CommandError as exc:
        return f"its header's command cannot be read ({exc}); write it again with `{prog} vendor`"
    again = replace(request, prog=prog).command()
    try:
        expected = {
            o.path: o.content for o in render_vendored(_project(root, request, path), request)
        }
    except SpecError as exc:
        return f"stale: it cannot be made from the current spec ({exc})"
    differ = _differences(path, expected)
    if not differ:
        return None
    build = this_build()
    return "\n".join(
        [
            f"stale or edited: {len(differ)} file(s) differ from what its command writes now"
            f" ({build.describe()}; +: lines here it does not write, -: lines it writes):",
            *(f"    {line}" for line in differ),
            "  to update it, from the repository root:",
            f"    1. install the chunkspec this check ran: {build.install()}",
            f"    2. {again}",
        ]
    )


def _differences(package: Path, expected: dict[str, str]) -> list[str]:
    """Each file of the package that is not as expected, with what differs."""
    out = []
    for name, content in expected.items():
        file = package / name
        try:
            found = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            out.append(f"{name}: missing")
            continue
        except (OSError, UnicodeDecodeError) as exc:
            out.append(f"{name}: cannot read ({exc})")
            continue
        if found != content:
            out.append(f"{name}: {_changed_lines(found, content)}")
    out += [f"{name}: not written by its command" for name in written_beside(package, expected)]
    return out


def written_beside(package: Path, expected: dict[str, str]) -> list[str]:
    """The files of the package chunkspec wrote (its header, or in `_runtime/`) that
    the command no longer writes: a protocol left out, a runtime file gone."""
    found = []
    for file in sorted(package.rglob("*.py")):
        name = file.relative_to(package).as_posix()
        if name in expected or "__pycache__" in file.parts:
            continue
        if written_by_chunkspec(file, name):
            found.append(name)
    return found


def _changed_lines(found: str, expected: str) -> str:
    """What differs, as a diff from what is written to what is found counts it:
    `+1 -1 lines, from line 12` (of the file found)."""
    old, new = expected.splitlines(), found.splitlines()
    added = removed = 0
    first = None
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if tag != "equal":
            first = j1 + 1 if first is None else first
            removed += i2 - i1
            added += j2 - j1
    return f"+{added} -{removed} lines, from line {first}"


def _project(default: Path, request: Request, package: Path) -> Path:
    """The spec project the package was made from: its recorded root (relative to the
    package's repository), else the checking chunkspec's own spec."""
    if request.root is None:
        return default
    return (repository_top(package) or Path.cwd()) / request.root
