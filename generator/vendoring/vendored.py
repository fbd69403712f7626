"""One package written for another repository: the request (the command that writes it)
and the package's files.

Every module of the package records the command in its header; check.py reads it back
and writes the package again in memory, to compare it file by file with what is there.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..ir.build import build_spec
from ..ir.errors import SpecError
from ..ir.load import FAMILY_FILES, load_spec
from ..ir.model import Options
from ..render.emit import Output, finish
from ..render.targets import TARGETS, module_names
from ..render.templating import render_package


@dataclass(frozen=True)
class Request:
    """What `vendor` was asked for: everything needed to write the same package again."""

    prog: str
    """The command as the user ran it: `chunkspec`, `python -m chunkspec`..."""
    target: str
    options: Options
    out: str
    """The package's folder, relative to the repository it is written into."""
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
        if self.options.protocols is None:
            args += ["--protocols", "all"]
        elif self.options.protocols != VENDORED_PROTOCOLS:
            args += ["--protocols", ",".join(self.options.protocols)]
        return shlex.join([*args, "--out", self.out])


def render_vendored(root: Path, request: Request) -> list[Output]:
    """The files of the package `request` asks for, formatted, by their paths inside
    the package (`chat.py`, `_runtime/sse.py`)."""
    raw = load_spec(root)
    spec = build_spec(raw, request.options, reserved=module_names())
    families = [
        build_spec(raw.family(protocol), request.options, reserved=module_names())
        for protocol in FAMILY_FILES
        if protocol != "chat" and request.options.speaks(protocol)
    ]
    target = TARGETS[request.target](spec)
    rendered = render_package(spec, families, root, target, request.command(), "")
    return finish(rendered)


def package_folder(out: str) -> str:
    """The folder `--out` names, refused when it names a module: a package is written
    since chunkspec 0.2 (CHANGELOG.md)."""
    path = PurePosixPath(out)
    if path.suffix == ".py":
        raise SpecError(
            "chunkspec writes a package now, not one module: give its folder,"
            f" `--out {path.with_suffix('')}/` (imports of `{path.stem}` keep working)",
            "--out",
        )
    return path.as_posix()


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every rendering command takes."""
    parser.add_argument(
        "--vendors", help="comma-separated vendors whose fields are typed, or 'all'"
    )
    parser.add_argument("--profile", choices=("lenient", "strict"), help="default: lenient")
    parser.add_argument(
        "--protocols",
        help="comma-separated protocols whose modules are made (chat always), or 'all'",
    )


def add_request_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", required=True, choices=tuple(TARGETS))
    add_selection_arguments(parser)
    parser.add_argument("--out", required=True, help="the folder of the package to write")


VENDORED_PROTOCOLS = ("chat",)
"""What `vendor` writes without `--protocols`: chat's module alone (`generate` makes every
protocol's)."""


def vendor_options(vendors: str | None, profile: str | None, protocols: str | None) -> Options:
    """`options_from` for `vendor`: no `--protocols` is chat alone, `all` every one."""
    return options_from(vendors, profile, protocols or ",".join(VENDORED_PROTOCOLS))


def options_from(vendors: str | None, profile: str | None, protocols: str | None = None) -> Options:
    """Options from the command-line spelling (`--vendors vllm,zai`, `all`, `none`;
    `--protocols chat,messages`, `all`)."""
    selected: tuple[str, ...] | None
    if vendors is None or vendors == "all":
        selected = None
    elif vendors == "none":
        selected = ()
    else:
        selected = tuple(v.strip() for v in vendors.split(",") if v.strip())
    spoken: tuple[str, ...] | None = None
    if protocols is not None and protocols != "all":
        named = {p.strip() for p in protocols.split(",") if p.strip()}
        unknown = sorted(named - set(FAMILY_FILES))
        if unknown:
            known = ", ".join(FAMILY_FILES)
            raise SpecError(
                f"unknown protocol {', '.join(unknown)} (known: {known})", "--protocols"
            )
        spoken = tuple(p for p in FAMILY_FILES if p in named | {"chat"})
    return Options(selected, "strict" if profile == "strict" else "lenient", spoken)


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
    try:
        options = vendor_options(args.vendors, args.profile, args.protocols)
    except SpecError as exc:
        raise CommandError(str(exc)) from None
    return Request(shlex.join(words[:at]), args.target, options, args.out, args.root)
