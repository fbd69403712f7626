"""The check that a vendored module is still what chunkspec makes of its command: not
edited by hand (its checksum matches) and not stale (no input it was made from changed
since, by digest), with a message that says which input changed and what to do.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from ..ir.build import build_spec
from ..ir.errors import SpecError
from ..ir.load import load_spec
from ..render.digests import Inputs, inputs, recorded
from ..render.header import recorded_command
from ..render.targets import TARGETS, module_names
from .revision import this_build
from .vendored import CommandError, Request, checksum, parse_command, unseal


def current_inputs(root: Path, request: Request, protocol: str = "chat") -> Inputs:
    """What the module of `protocol` that `request` asks for is made from now."""
    spec = build_spec(load_spec(root).family(protocol), request.options, reserved=module_names())
    return inputs(root, spec, [TARGETS[request.target](spec)])


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


def root_from(module: Path, root: Path) -> str:
    """How a header records the spec project `root` of a module written at `module`:
    relative to the module's repository root (where its command is run from)."""
    top = repository_top(Path(os.path.normpath(module.absolute())))
    return root.as_posix() if top is None else Path(os.path.relpath(root.resolve(), top)).as_posix()


def problems(root: Path, path: Path, prog: str) -> str | None:
    """Why the vendored module at `path` is not what chunkspec makes of its command now
    (None if it is). `prog` is how the user runs chunkspec, for the commands shown."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read: {exc}"
    body, sealed = unseal(text)
    command = recorded_command(text)
    if sealed is None or command is None or " vendor " not in f" {command} ":
        return f"not a module written by `{prog} vendor` (its header has no command or checksum)"
    try:
        request = parse_command(command)
    except CommandError as exc:
        return f"its header's command cannot be read ({exc}); write it again with `{prog} vendor`"
    again = replace(request, prog=prog).command()
    if checksum(body) != sealed:
        return (
            "edited by hand (its checksum does not match); from the repository root, write it"
            f" again with:\n    {again}"
        )
    protocol = next(
        (p for p, out in request.outputs().items() if Path(out).name == path.name), "chat"
    )
    try:
        now = current_inputs(_project(root, request, path), request, protocol)
    except (SpecError, StopIteration) as exc:
        return f"stale: it cannot be made from the current spec ({exc})"
    made_from = recorded(text)
    if made_from is not None and made_from[1] == now.digest:
        return None
    return _stale(made_from, now, again)


def _project(default: Path, request: Request, module: Path) -> Path:
    """The spec project the module was made from: its recorded root (relative to the
    module's repository), else the checking chunkspec's own spec."""
    if request.root is None:
        return default
    return (repository_top(module.parent) or Path.cwd()) / request.root


def _stale(made_from: tuple[Inputs, str] | None, now: Inputs, again: str) -> str:
    build = this_build()
    if made_from is None:
        lines = ["stale: its header records no input digests (an older chunkspec wrote it)"]
        recorded_digest = "none"
    else:
        lines = ["stale: what it is made from changed since it was written:"]
        changed = made_from[0].changed(now)
        width = max((len(name) for name, _, _ in changed), default=0)
        for name, old, new in changed:
            lines.append(f"    {name.ljust(width)}  recorded {old or '-'}, now {new or '-'}")
        recorded_digest = made_from[1]
    return "\n".join(
        [
            *lines,
            f"  digest: recorded {recorded_digest}, now {now.digest} ({build.describe()})",
            "  to update it, from the repository root:",
            f"    1. install the chunkspec this check ran: {build.install()}",
            f"    2. {again}",
        ]
    )
