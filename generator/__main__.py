"""Command line: `python -m generator generate` writes generated/ and tests/generated/;
`python -m generator check` fails when what is committed differs from the spec."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.emit import RenderError, stale, write_all
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
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.command == "check":
        diffs = stale(root, outputs)
        if diffs:
            sys.stdout.writelines(diffs)
            print(
                f"error: {len(diffs)} generated file(s) are stale; run `make generate`",
                file=sys.stderr,
            )
            return 1
        print(f"{len(outputs)} generated files are up to date")
        return 0
    written = write_all(root, outputs)
    print(
        f"{len(outputs)} files generated, {len(written)} changed"
        + "".join(f"\n  {p}" for p in written)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
