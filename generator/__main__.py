"""Command line of chunkspec (`chunkspec`, `python -m chunkspec`; in a checkout
`python -m generator`).

  vendor --target T --out DIR [--vendors V] [--profile P]    one package for your repository
  check --vendored PATH ...                                  fail when one is stale or edited
  generate [--vendors V] [--profile P]                       spec -> generated/, tests/generated/
  check                                                      fail when generated/ is stale
  new-vendor NAME                                            scaffold spec/vendors/NAME.yaml
  serve --config FILE                                        run the gateway (docs/gateway.md)

`vendor` and `check --vendored` use the spec chunkspec ships (or --root). `generate`,
`check` and `new-vendor` work on a chunkspec project: the checkout, or --root. They read
their defaults from `[tool.chunkspec]` (`vendors`, `profile`) in the project's
pyproject.toml; the flags override them.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2

from .gateway.serve import add_arguments as add_serve_arguments
from .ir.build import build_specs
from .ir.errors import SpecError
from .ir.load import load_spec
from .ir.model import Options
from .pipeline import generate
from .render.emit import Output, RenderError, stale, strays, write_all, written_by_chunkspec
from .render.header import PROJECT_COMMAND
from .render.targets import module_names
from .render.templating import PACKAGE_FOLDER
from .vendoring.vendored import (
    Request,
    add_request_arguments,
    add_selection_arguments,
    options_from,
    package_folder,
    render_vendored,
    vendor_options,
)

if TYPE_CHECKING:
    from .captures.inspection import Report

# The captures' commands (inspect, new-vendor) import their modules when run: `generate`
# and `check`, run most, start without them.

PACKAGE = Path(__file__).resolve().parent
INSTALLED = (PACKAGE / "spec").is_dir()
"""Installed, the spec and templates are package data; in a checkout, they are beside it."""
ROOT = PACKAGE if INSTALLED else PACKAGE.parent


def parser(prog: str) -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog=prog,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--root", type=Path, help="the chunkspec project (default: chunkspec's own spec)"
    )
    commands = main.add_subparsers(dest="command", required=True)
    generate_ = commands.add_parser(
        "generate", parents=[common], help="write generated/ and tests/generated/"
    )
    add_selection_arguments(generate_)
    check_ = commands.add_parser(
        "check", parents=[common], help="fail when generated files are stale"
    )
    check_.add_argument(
        "--vendored", nargs="+", type=Path, metavar="PATH", help="check vendored modules instead"
    )
    vendor = commands.add_parser(
        "vendor", parents=[common], help="write one self-contained package"
    )
    add_request_arguments(vendor)
    scaffold = commands.add_parser(
        "new-vendor", parents=[common], help="create spec/vendors/NAME.yaml"
    )
    scaffold.add_argument("name")
    scaffold.add_argument(
        "--from",
        dest="captures",
        nargs="+",
        metavar="CAPTURE",
        help="draft the file from captured streams: every key the spec does not know",
    )
    inspect = commands.add_parser(
        "inspect",
        parents=[common],
        help="where captured streams depart from OpenAI's definition, and why",
    )
    inspect.add_argument(
        "captures",
        nargs="*",
        metavar="CAPTURE",
        help="server-sent events (as `curl -N` saves them) or JSON Lines; none or - reads stdin",
    )
    inspect.add_argument("--format", choices=("table", "json"), default="table")
    serve_ = commands.add_parser(
        "serve",
        help="run the gateway: Claude Code, Codex and the SDKs on any backend (docs/gateway.md)",
    )
    add_serve_arguments(serve_)
    return main


def main(argv: list[str] | None = None, prog: str = "python -m generator") -> int:
    args = parser(prog).parse_args(argv)
    if args.command == "serve":
        from .gateway.serve import serve

        return serve(args)
    root: Path = (args.root or ROOT).resolve()
    try:
        if args.command == "vendor":
            from .vendoring.check import in_repository, root_from

            own_root = None if root == ROOT else root_from(Path(args.out), root)
            options = vendor_options(args.vendors, args.profile, args.protocols)
            folder = Path(package_folder(args.out))
            request = Request(prog, args.target, options, in_repository(folder), own_root)
            return write_vendored(root, request, folder)
        if args.command == "check" and args.vendored:
            return check_vendored(root, args.vendored, prog)
        if args.command == "inspect":
            return inspect_captures(root, args.captures or ["-"], args.format)
        if INSTALLED and args.root is None:
            return fail(
                f"`{args.command}` works on a chunkspec project (a checkout of chunkspec, or"
                " a folder with its spec/ and templates/): pass --root"
            )
        if args.command == "new-vendor" and args.captures:
            return draft_vendor(root, args.name, args.captures)
        if args.command == "new-vendor":
            from .captures.scaffold import new_vendor

            path = new_vendor(root, args.name)
            print(f"wrote {path.relative_to(root)}; fill it in and run `make generate`")
            return 0
        flags = (
            getattr(args, "vendors", None),
            getattr(args, "profile", None),
            getattr(args, "protocols", None),
        )
        options = project_options(root, *flags)
        outputs = generate(root, options, generate_command(prog, *flags))
    except (SpecError, RenderError) as exc:
        return fail(str(exc))
    except jinja2.TemplateError as exc:
        # A broken template is a bug of ours, but it still gets one line, not a traceback.
        where = (
            f"templates/{exc.name}:{exc.lineno}"
            if isinstance(exc, jinja2.TemplateSyntaxError)
            else "templates"
        )
        return fail(f"{where}: {type(exc).__name__}: {exc}")
    if args.command == "check":
        return check(root, outputs)
    try:
        written = write_all(root, outputs)
    except OSError as exc:
        return fail(f"nothing was changed: {exc}")
    # A module the selection no longer makes (another protocol's), or a runtime file no
    # module uses: what chunkspec wrote is removed, nothing else.
    for name in strays(root, outputs):
        if written_by_chunkspec(root / name, name):
            (root / name).unlink()
            written.append(f"{name} (removed: the selection no longer makes it)")
    remove_empty_folders(root / PACKAGE_FOLDER)
    print(f"{len(outputs)} files generated, {len(written)} changed")
    for name in written:
        print(f"  {name}")
    return 0


def project_options(
    root: Path, vendors: str | None, profile: str | None, protocols: str | None = None
) -> Options:
    """Flags, else `[tool.chunkspec]` of the project's pyproject.toml, else everything."""
    config: dict[str, object] = {}
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            config = (
                tomllib.loads(pyproject.read_text(encoding="utf-8"))
                .get("tool", {})
                .get("chunkspec", {})
            )
        except tomllib.TOMLDecodeError as exc:
            raise SpecError(f"invalid TOML: {exc}", "pyproject.toml") from exc
    unknown = sorted(set(config) - {"vendors", "profile", "protocols"})
    if unknown:
        raise SpecError(
            f"[tool.chunkspec] has unknown keys {unknown} (known: vendors, profile, protocols)",
            "pyproject.toml",
        )
    if protocols is None and "protocols" in config:
        listed = config["protocols"]
        if isinstance(listed, str):
            protocols = listed
        elif isinstance(listed, list) and all(isinstance(p, str) for p in listed):
            protocols = ",".join(["chat", *listed])
        else:
            raise SpecError(
                '[tool.chunkspec] protocols must be a list of names or "all"', "pyproject.toml"
            )
    if vendors is None and "vendors" in config:
        listed = config["vendors"]
        if isinstance(listed, str):
            vendors = listed
        elif isinstance(listed, list) and all(isinstance(v, str) for v in listed):
            vendors = ",".join(listed) or "none"
        else:
            raise SpecError(
                '[tool.chunkspec] vendors must be a list of names or "all"', "pyproject.toml"
            )
    if profile is None and "profile" in config:
        profile = str(config["profile"])
        if profile not in ("lenient", "strict"):
            raise SpecError(
                f'[tool.chunkspec] profile must be "lenient" or "strict", not {profile!r}',
                "pyproject.toml",
            )
    return options_from(vendors, profile, protocols)


def generate_command(
    prog: str, vendors: str | None, profile: str | None, protocols: str | None = None
) -> str:
    """The command a generated header names: the flags given, if any, else make's."""
    if vendors is None and profile is None and protocols is None:
        return PROJECT_COMMAND
    args = [*shlex.split(prog), "generate"]
    args += ["--vendors", vendors] if vendors is not None else []
    args += ["--profile", profile] if profile is not None else []
    args += ["--protocols", protocols] if protocols is not None else []
    return shlex.join(args)


def write_vendored(root: Path, request: Request, folder: Path) -> int:
    """Write the package `request` asks for into `folder`, all files or none; remove
    what chunkspec wrote there before and no longer writes."""
    from .vendoring.check import written_beside

    outputs = render_vendored(root, request)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        written = write_all(folder, outputs)
    except OSError as exc:
        return fail(f"{folder}: cannot write: {exc}")
    for name in written_beside(folder, {o.path: o.content for o in outputs}):
        (folder / name).unlink()
        written.append(f"{name} (removed: the command no longer writes it)")
    remove_empty_folders(folder)
    check = shlex.join([*shlex.split(request.prog), "check", "--vendored", str(folder)])
    print(
        f"wrote {folder}/ ({len(outputs)} files, {len(written)} changed); check it later with: {check}"
    )
    return 0


def remove_empty_folders(top: Path) -> None:
    """Remove the folders under `top` that removing files left empty (but `__pycache__`)."""
    for folder in sorted(top.rglob("*"), key=lambda p: -len(p.parts)):
        if folder.is_dir() and all(c.name == "__pycache__" for c in folder.iterdir()):
            shutil.rmtree(folder)


def check_vendored(root: Path, paths: list[Path], prog: str) -> int:
    # Imported when used: `generate` and `check`, run most, start without it.
    from .vendoring.check import package_of, problems

    failed = 0
    for package in dict.fromkeys(package_of(path) for path in paths):
        problem = problems(root, package, prog)
        if problem is None:
            print(f"{package}: up to date")
        else:
            failed += 1
            print(f"error: {package}: {problem}", file=sys.stderr)
    return 1 if failed else 0


def inspect_captures(root: Path, names: list[str], form: str) -> int:
    """Exit status 2 when a capture cannot be read, 1 when one holds keys the spec does
    not know, else 0."""
    from .captures.inspection import as_json, table

    reports = read_reports(root, names)
    if reports is None:
        return 2
    sys.stdout.write(as_json(reports) if form == "json" else table(reports))
    return 1 if any(report.unknown for report in reports) else 0


def draft_vendor(root: Path, name: str, names: list[str]) -> int:
    from .captures.draftfile import generating
    from .captures.drafting import draft
    from .captures.scaffold import new_vendor

    reports = read_reports(root, names)
    if reports is None:
        return 2
    spec = build_specs(load_spec(root), Options(), reserved=module_names())[0]
    drafted = draft(name, name, spec, reports)
    first = drafted.text()
    path = new_vendor(root, name, first)
    options = project_options(root, None, None)

    def generates(text: str) -> None:
        path.write_text(text, encoding="utf-8")
        # The spec's checks first, alone: most drafts a check refuses fail there, in a
        # quarter of the time the whole generation takes.
        build_specs(load_spec(root), options, reserved=module_names())
        try:
            generate(root, options)
        except RenderError as exc:  # no line of the draft to repair: one is left out
            raise SpecError(str(exc), "generate") from exc

    try:
        text = generating(drafted, generates)
    except SpecError:
        path.write_text(first, encoding="utf-8")  # as drafted: the project fails without it
        raise
    declared = sum(1 for line in text.splitlines() if line.strip().startswith("type: "))
    repaired = text.count("since the generator says")
    print(
        f"wrote {path.relative_to(root)}: {declared} fields declared from"
        f" {sum(len(r.capture.chunks) for r in reports)} chunks"
        + (f", {repaired} changed so that it generates" if repaired else "")
        + "; review the lines marked # REVIEW, then run `make generate`"
    )
    return 0


def read_reports(root: Path, names: list[str]) -> list[Report] | None:
    """The inspection of each capture; None (the reasons printed) if one cannot be read."""
    from .captures.capture import CaptureError, read_capture
    from .captures.inspection import Inspector

    raw = load_spec(root)
    whole, openai = build_specs(
        raw, Options(), Options(vendors=(), profile="strict"), reserved=module_names()
    )
    inspector = Inspector(raw, whole, openai)
    reports, unreadable = [], False
    for name in names:
        try:
            data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
            reports.append(inspector.report(read_capture("<stdin>" if name == "-" else name, data)))
        except (OSError, CaptureError) as exc:
            unreadable = True
            print(f"error: {exc}", file=sys.stderr)
    return None if unreadable else reports


def check(root: Path, outputs: list[Output]) -> int:
    diffs = stale(root, outputs)
    extra = strays(root, outputs)
    sys.stdout.writelines(diffs)
    for path in extra:
        print(f"{path}: not produced by the spec (delete it)")
    if diffs or extra:
        return fail(f"{len(diffs) + len(extra)} generated file(s) are stale; run `make generate`")
    print(f"{len(outputs)} generated files are up to date")
    return 0


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 1


def run() -> None:
    """The `chunkspec` console script."""
    sys.exit(main(prog="chunkspec"))


if __name__ == "__main__":
    sys.exit(main(prog=f"python -m {__package__}"))
