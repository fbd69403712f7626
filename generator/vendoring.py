"""One module written into another repository, and the check that it is still what the
spec produces.

A vendored module's header records the exact command that wrote it and a checksum of
its own text, so `check --vendored` can tell a hand-edited copy (the checksum no longer
matches) from a stale one (the spec, templates or generator changed since).
"""

from __future__ import annotations

import argparse
import hashlib
import shlex
from dataclasses import dataclass
from pathlib import Path

from generator.build import build_spec
from generator.emit import Output, finish, spec_hash
from generator.errors import SpecError
from generator.ir import Options
from generator.load import load_spec
from generator.render import Rendered, render_module
from generator.targets import TARGETS

COMMAND_PREFIX = "# Regenerate with: "
CHECKSUM_PREFIX = "# Checksum: "


@dataclass(frozen=True)
class Request:
    """What `vendor` was asked for: everything needed to write the same file again."""

    target: str
    options: Options
    out: str
    root: str | None = None
    """The project root, when it is not the generator's own checkout."""

    def command(self) -> str:
        args = ["python", "-m", "generator", "vendor", "--target", self.target]
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
    target = TARGETS[request.target](spec)
    text = render_module(
        spec, spec_hash(root, spec.files), root / "templates", target, request.command()
    )
    formatted = finish(Rendered(request.out, text, python=True)).content
    return Output(request.out, seal(formatted))


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
    """The request a recorded `python -m generator vendor ...` command made."""
    parser = argparse.ArgumentParser(prog="vendor", add_help=False, exit_on_error=False)
    add_request_arguments(parser)
    parser.add_argument("--root")
    try:
        words = shlex.split(command)
        args, unknown = parser.parse_known_args(words[words.index("vendor") + 1 :])
    except (ValueError, argparse.ArgumentError, SystemExit) as exc:
        raise CommandError(str(exc) or "unreadable") from None
    if unknown:
        raise CommandError(f"unknown arguments {unknown}")
    return Request(args.target, options_from(args.vendors, args.profile), args.out, args.root)


def problems(root: Path, path: Path) -> str | None:
    """Why the vendored module at `path` is not what its command writes; None if it is."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read: {exc}"
    body, recorded = unseal(text)
    command = recorded_command(text)
    if recorded is None or command is None or " vendor " not in f" {command} ":
        return "not a module written by `python -m generator vendor` (no command or checksum in its header)"
    if _checksum(body) != recorded:
        return f"edited by hand (its checksum does not match); regenerate with: {command}"
    try:
        request = parse_command(command)
        current = render_vendored(root, request).content
    except CommandError as exc:
        return f"its header's command cannot be read ({exc}); regenerate it"
    except SpecError as exc:
        return f"stale: it cannot be made from the current spec ({exc})"
    if current != text:
        return (
            f"stale: the spec or generator changed since it was written; regenerate with: {command}"
        )
    return None
