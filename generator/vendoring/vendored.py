"""One module written for another repository: the request (the command that writes it)
and the module, sealed with a checksum of its text.

The header records the command, the digests of what the module was made from
(render/digests.py) and the checksum; check.py reads them back. This module is part of
what every vendored module is made from; the check is not.
"""

from __future__ import annotations

import argparse
import hashlib
import shlex
from dataclasses import dataclass
from pathlib import Path

from ..ir.build import build_spec
from ..ir.errors import SpecError
from ..ir.load import FAMILY_FILES, load_spec
from ..ir.model import Options
from ..render.emit import Output, finish
from ..render.header import COMMAND
from ..render.inline import Hub
from ..render.targets import TARGETS, module_names
from ..render.templating import Rendered, render_hub, render_module

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
        if self.options.protocols is not None:
            args += ["--protocols", ",".join(self.options.protocols)]
        return shlex.join([*args, "--out", self.out])

    def outputs(self) -> dict[str, str]:
        """The path of each module it writes, by protocol: chat's at `out`, each other
        protocol's beside it, named after it (`chunks.py`, `chunks_messages.py`)."""
        out = Path(self.out)
        paths = {"chat": self.out}
        for protocol in self.options.protocols or ("chat",):
            if protocol != "chat":
                paths[protocol] = out.with_name(f"{out.stem}_{protocol}{out.suffix}").as_posix()
        return paths


def render_vendored(root: Path, request: Request) -> list[Output]:
    """The modules `request` asks for (chat's, then each other protocol's), formatted
    and each sealed with its checksum."""
    raw = load_spec(root)
    paths = request.outputs()
    stems = {protocol: Path(path).stem for protocol, path in paths.items()}
    others = {protocol: stem for protocol, stem in stems.items() if protocol != "chat"}
    spec = build_spec(raw, request.options, reserved=module_names())
    target = TARGETS[request.target]
    command = request.command()
    text, names = render_hub(spec, root, target(spec), command, protocols=others)
    rendered = [Rendered(request.out, text, python=True, parsed=True)]
    hub = Hub(stems["chat"], names)
    for protocol in others:
        family = build_spec(raw.family(protocol), request.options, reserved=module_names())
        made = render_module(family, root, target(family), command, hub)
        rendered.append(Rendered(paths[protocol], made, python=True, parsed=True))
    return [Output(done.path, seal(done.content)) for done in finish(rendered)]


def seal(text: str) -> str:
    """Insert, before the command of the header, a checksum of the whole text."""
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith(f"# {COMMAND}"))
    lines.insert(at, f"{CHECKSUM_PREFIX}{checksum(text)}\n")
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


def checksum(text: str) -> str:
    """The checksum a sealed module records of its text (without that line)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


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
    parser.add_argument("--out", required=True, help="where to write the module")


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
        options = options_from(args.vendors, args.profile, args.protocols)
    except SpecError as exc:
        raise CommandError(str(exc)) from None
    return Request(shlex.join(words[:at]), args.target, options, args.out, args.root)
