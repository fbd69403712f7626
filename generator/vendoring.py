"""One module written into another repository, and the check that it is still what the
spec produces.

A vendored module's header records the exact command that wrote it, the digests of what
it was made from (generator/digests.py) and a checksum of its own text, so `check
--vendored` can tell a hand-edited copy (the checksum no longer matches) from a stale one
(an input it was made from changed since), and say which input changed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from .build import build_spec
from .digests import Inputs, inputs, recorded
from .emit import Output, finish
from .errors import SpecError
from .ir import Options
from .load import load_spec
from .render import Rendered, render_module
from .revision import this_build
from .targets import TARGETS

COMMAND_PREFIX = "# Regenerate with: "
CHECKSUM_PREFIX = "# Checksum: "


@dataclass(frozen=True)
class Request:
    """What `vendor` was asked for: everything needed to write the same file again."""

    prog: str
    """The command as the user ran it: `chunkspec`, `python -m chunkspec`..."""
    target: str
    options: Options
    out: str
    """The module's path, relative to the repository it is written into."""
    root: str | None = None
    """The project root, when it is not chunkspec's own spec."""

    def command(self) -> str:
        args = [*shlex.split(self.prog), "vendor", "--target", self.target]
        if self.root is not None:
            args += ["--root", self.root]
        if self.options.vendors is not None:
            args += ["--vendors", ",".join(self.options.vendors) or "none"]
        if self.options.strict:
            args += ["--profile", "strict"]
        return shlex.join([*args, "--out", self.out])


def render_vendored(root: Path, request: Request) -> Output:
    """The module `request` asks for, formatted and sealed with its checksum."""
    spec = build_spec(load_spec(root), request.options)
    text = render_module(spec, root, TARGETS[request.target](spec), request.command())
    formatted = finish(Rendered(request.out, text, python=True)).content
    return Output(request.out, seal(formatted))


def current_inputs(root: Path, request: Request) -> Inputs:
    """What the module `request` asks for is made from now."""
    spec = build_spec(load_spec(root), request.options)
    return inputs(root, spec, [TARGETS[request.target](spec)])


def seal(text: str) -> str:
    """Insert, after the command line of the header, a checksum of the whole text."""
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith(COMMAND_PREFIX)) + 1
    lines.insert(at, f"{CHECKSUM_PREFIX}{_checksum(text)}\n")
    return "".join(lines)


def unseal(text: str) -> tuple[str, str | None]:
    """The text without its checksum line, and the checksum it recorded (if any)."""
    kept, recorded = [], None
    for line in text.splitlines(keepends=True):
        if recorded is None and line.startswith(CHECKSUM_PREFIX):
            recorded = line[len(CHECKSUM_PREFIX) :].strip()
        else:
            kept.append(line)
    return "".join(kept), recorded


def _checksum(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def recorded_command(text: str) -> str | None:
    """The command in the header (the comment lines the module starts with)."""
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if line.startswith(COMMAND_PREFIX):
            return line[len(COMMAND_PREFIX) :]
    return None


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every rendering command takes."""
    parser.add_argument(
        "--vendors", help="comma-separated vendors whose fields are typed, or 'all'"
    )
    parser.add_argument("--profile", choices=("lenient", "strict"), help="default: lenient")


def add_request_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", required=True, choices=tuple(TARGETS))
    add_selection_arguments(parser)
    parser.add_argument("--out", required=True, help="where to write the module")


def options_from(vendors: str | None, profile: str | None) -> Options:
    """Options from the command-line spelling (`--vendors vllm,zai`, `all`, `none`)."""
    selected: tuple[str, ...] | None
    if vendors is None or vendors == "all":
        selected = None
    elif vendors == "none":
        selected = ()
    else:
        selected = tuple(v.strip() for v in vendors.split(",") if v.strip())
    return Options(selected, "strict" if profile == "strict" else "lenient")


class CommandError(ValueError):
    """A recorded command that cannot be read back."""


def parse_command(command: str) -> Request:
    """The request a recorded `chunkspec vendor ...` command made."""
    parser = argparse.ArgumentParser(prog="vendor", add_help=False, exit_on_error=False)
    add_request_arguments(parser)
    parser.add_argument("--root")
    try:
        words = shlex.split(command)
        at = words.index("vendor")
        args, unknown = parser.parse_known_args(words[at + 1 :])
    except (ValueError, argparse.ArgumentError, SystemExit) as exc:
        raise CommandError(str(exc) or "unreadable") from None
    if unknown:
        raise CommandError(f"unknown arguments {unknown}")
    options = options_from(args.vendors, args.profile)
    return Request(shlex.join(words[:at]), args.target, options, args.out, args.root)


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


def problems(root: Path, path: Path, prog: str) -> str | None:
    """Why the vendored module at `path` is not what chunkspec makes of its command now
    (None if it is). `prog` is how the user runs chunkspec, for the commands shown."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read: {exc}"
    body, checksum = unseal(text)
    command = recorded_command(text)
    if checksum is None or command is None or " vendor " not in f" {command} ":
        return f"not a module written by `{prog} vendor` (its header has no command or checksum)"
    try:
        request = parse_command(command)
    except CommandError as exc:
        return f"its header's command cannot be read ({exc}); write it again with `{prog} vendor`"
    again = replace(request, prog=prog).command()
    if _checksum(body) != checksum:
        return (
            "edited by hand (its checksum does not match); from the repository root, write it"
            f" again with:\n    {again}"
        )
    try:
        now = current_inputs(_project(root, request, path), request)
    except SpecError as exc:
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
