"""Command line: `python -m generator generate` writes generated/ and tests/generated/;
`python -m generator check` fails when what is committed differs from the spec."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jinja2

from generator.emit import Output, RenderError, stale, strays, write_all
from generator.errors import SpecError
from generator.pipeline import generate

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator", description=__doc__)
    parser.add_argument("command", choices=("generate", "check"))
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="project root (default: this checkout)"
    )
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    try:
        outputs = generate(root)
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
    print(f"{len(outputs)} files generated, {len(written)} changed")
    for path in written:
        print(f"  {path}")
    return 0


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


if __name__ == "__main__":
    sys.exit(main())
