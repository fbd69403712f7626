"""Golden records per feature: tests/golden/<feature>/ holds a tiny spec that shows one
feature, and expected/ the modules of the four target packages the generator makes of it.

    python -m tests.helpers.golden          rewrite every expected/ file (make golden)
    python -m tests.helpers.golden --check  exit 1, listing the expected/ files that are stale

A golden folder holds:

    spec/chat_completion_chunk.yaml   the core spec; the comment at its top says what the
                                      case shows (`# Golden case `<feature>`: ...`)
    spec/messages_stream_event.yaml   the Messages family, when the feature is about it
    spec/responses_stream_event.yaml  the Responses family, likewise
    spec/vendors/*.yaml               vendor files, when the feature needs vendors
    options.toml                      optional: `vendors = [...]`, `profile = "strict"`,
                                      `protocols = [...]` (the generator's options)
    expected/<target>/<module>.py     the record, for each target

A record holds the package's own modules, byte for byte as generated: `chat.py`,
`__init__.py` (the public names), and `messages.py` / `responses.py` when the spec has
that family and it is rendered. It does not hold the package's `_runtime/`, which is
generator/runtime/'s files copied as they are (their own tests cover them; the tests
that import a record copy them beside it), nor the empty `py.typed`.
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import sys
import tempfile
import tomllib
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from generator.ir.load import FAMILY_FILES
from generator.ir.model import Options
from generator.render.targets import TARGETS as REGISTRY

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parents[1] / "golden"
TEMPLATES = REPO / "templates"
TARGETS = tuple(REGISTRY)
COMMAND = "make golden"
"""How the records are regenerated; named in failure messages and in each record's header."""
OPTIONS_FILE = "options.toml"
OPTION_KEYS = ("vendors", "profile", "protocols")
PROTOCOLS = tuple(family for family in FAMILY_FILES if family != "chat")
"""The protocols besides chat, whose modules a package holds when the spec has them."""


class GoldenError(Exception):
    """A golden case the generator cannot render (its spec, options or the generator)."""


def features() -> list[str]:
    """The golden cases, by folder name."""
    return sorted(p.name for p in GOLDEN.iterdir() if (p / "spec").is_dir())


def expected_path(feature: str, target: str, module: str) -> Path:
    return GOLDEN / feature / "expected" / target / module


def _names(path: Path, key: str, value: object, known: Sequence[str] | None = None) -> None:
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise ValueError(f"{path}: {key} must be a list of names")
    if known is not None and not set(value) <= set(known):
        raise ValueError(f"{path}: {key} must name some of {', '.join(known)}, not {value}")


def options_for(feature: str) -> Options:
    """The feature's `options.toml` as generator options (all vendors, lenient and every
    protocol the spec has when absent)."""
    path = GOLDEN / feature / OPTIONS_FILE
    config = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    unknown = sorted(set(config) - set(OPTION_KEYS))
    if unknown:
        raise ValueError(f"{path}: unknown keys {unknown} (known: {', '.join(OPTION_KEYS)})")
    vendors = config.get("vendors")
    if vendors is not None:
        _names(path, "vendors", vendors)
    protocols = config.get("protocols")
    if protocols is not None:
        _names(path, "protocols", protocols, PROTOCOLS)
    profile = config.get("profile", "lenient")
    if profile not in ("lenient", "strict"):
        raise ValueError(f"{path}: profile must be 'lenient' or 'strict', not {profile!r}")
    return Options(
        vendors=None if vendors is None else tuple(vendors),
        profile=profile,
        protocols=None if protocols is None else tuple(protocols),
    )


def _project(feature: str, dest: Path) -> Path:
    """A project root made of the feature's spec and the real templates."""
    shutil.copytree(GOLDEN / feature / "spec", dest / "spec")
    try:
        (dest / "templates").symlink_to(TEMPLATES, target_is_directory=True)
    except OSError:  # no symlinks on this file system
        shutil.copytree(TEMPLATES, dest / "templates")
    return dest


@cache
def generated(feature: str) -> dict[str, dict[str, str]]:
    """Every file of each target's package as the generator makes the feature now, by
    target, then by path inside the package (`chat.py`, `_runtime/sse.py`, `py.typed`)."""
    from generator.pipeline import generate

    with tempfile.TemporaryDirectory(prefix=f"golden-{feature}-") as tmp:
        try:
            outputs = generate(_project(feature, Path(tmp)), options_for(feature), command=COMMAND)
        except Exception as exc:
            raise GoldenError(f"golden case {feature!r}: {type(exc).__name__}: {exc}") from exc
    packages: dict[str, dict[str, str]] = {}
    for target in TARGETS:
        folder = f"generated/{target}/"
        files = {
            str(out.path).removeprefix(folder): str(out.content)
            for out in outputs
            if str(out.path).startswith(folder)
        }
        if "chat.py" not in files:
            raise GoldenError(f"{feature}: the generator made no {folder}chat.py")
        packages[target] = files
    return packages


def is_recorded(path: str) -> bool:
    """Whether a record holds a file of a package: its modules, not `_runtime/` or
    `py.typed`."""
    return "/" not in path and path.endswith(".py")


def rendered(feature: str) -> dict[str, dict[str, str]]:
    """What each expected file of a feature should hold now, by target, then module."""
    return {
        target: {path: text for path, text in sorted(files.items()) if is_recorded(path)}
        for target, files in generated(feature).items()
    }


# --- comparing and rewriting -------------------------------------------------------


def diff(expected: str, actual: str, name: str, limit: int = 60) -> str:
    """The first `limit` lines of a unified diff from the record to the output."""
    lines = list(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile=f"{name} (golden record)",
            tofile=f"{name} (generated now)",
        )
    )
    shown = "".join(lines[:limit])
    if len(lines) > limit:
        shown += f"... ({len(lines) - limit} more diff lines)\n"
    return shown


def stale(feature: str) -> list[tuple[Path, str]]:
    """The expected files of a feature that are missing or differ from what is generated
    now, each with what is wrong with it (`missing` or `stale`)."""
    out = []
    for target, modules in rendered(feature).items():
        for module, text in modules.items():
            path = expected_path(feature, target, module)
            if not path.is_file():
                out.append((path, "missing"))
            elif path.read_text(encoding="utf-8") != text:
                out.append((path, "stale"))
    return out


def strays(feature: str) -> list[Path]:
    """Files in a feature's expected/ folder that the generator does not make."""
    folder = GOLDEN / feature / "expected"
    wanted = {
        expected_path(feature, target, module)
        for target, modules in rendered(feature).items()
        for module in modules
    }
    found = (p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return sorted(p for p in found if p not in wanted)


def _changed_lines(old: str, new: str) -> str:
    added = removed = 0
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return f"+{added} -{removed} lines"


def write(feature: str) -> list[tuple[Path, str]]:
    """Rewrite the expected files of a feature that changed; returns them, each with
    what changed (`new` or the lines added and removed)."""
    changed = []
    for target, modules in rendered(feature).items():
        for module, text in modules.items():
            path = expected_path(feature, target, module)
            old = path.read_text(encoding="utf-8") if path.is_file() else None
            if old == text:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
            changed.append((path, "new" if old is None else _changed_lines(old, text)))
    return changed


def relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.helpers.golden",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 1 listing stale records; write nothing"
    )
    parser.add_argument("feature", nargs="*", help="only these features (default: all)")
    args = parser.parse_args(argv)
    known = features()
    chosen: list[str] = args.feature or known
    unknown = sorted(set(chosen) - set(known))
    if unknown:
        parser.error(f"unknown features {unknown} (known: {', '.join(known)})")
    try:
        for feature in chosen:  # render every case before writing any
            rendered(feature)
    except GoldenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.check:
        bad = [(relative(p), why) for f in chosen for p, why in stale(f)]
        bad += [(relative(p), "stray") for f in chosen for p in strays(f)]
        for path, why in bad:
            print(f"{why}: {path}")
        if bad:
            print(f"{len(bad)} golden records are out of date; regenerate with: {COMMAND}")
            return 1
        print(f"golden records up to date ({len(chosen)} features)")
        return 0
    written = [(relative(p), what) for f in chosen for p, what in write(f)]
    for path, what in written:
        print(f"wrote {path} ({what})")
    for path in (relative(p) for f in chosen for p in strays(f)):
        print(f"stray, made by no target (remove it): {path}")
    if not written:
        print(f"golden records unchanged ({len(chosen)} features)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
