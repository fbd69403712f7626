"""Golden records per feature: tests/golden/<feature>/ holds a tiny spec that shows one
feature, and expected/ the four target modules the generator makes of it.

    python -m tests.golden            rewrite every expected/ file (make golden)
    python -m tests.golden --check    exit 1, listing the expected/ files that are stale

A golden spec folder holds `spec/chat_completion_chunk.yaml` (and `spec/vendors/*.yaml`
when the feature needs vendors), an optional `options.toml` (`vendors = [...]`,
`profile = "strict"`) and `expected/chunk_<target>.py`. The comment at the top of each
core spec says what the case shows.

Expected files are normalised (`expected_text`) so that a generator change unrelated to
a feature does not touch every record: the spec hash in the header is a placeholder, and
verbatim runtime code shared by every module (`runtime_sections`, `ELIDE`) is replaced
by a one-line marker, which `restore` puts back to import a record.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import re
import shutil
import sys
import tempfile
import tomllib
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from generator.ir.model import Options
from generator.render.targets import TARGETS as REGISTRY

REPO = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
TEMPLATES = REPO / "templates"
TARGETS = tuple(REGISTRY)
COMMAND = "make golden"
"""How the records are regenerated; named in failure messages and in each record's header."""
DIGEST_PLACEHOLDER = "<digest>"
OPTIONS_FILE = "options.toml"

ELIDE: list[str] = []
"""Verbatim text blocks to replace by `# (runtime section: <n>)`, n their index here; empty
by default. Named sections come from `generator.render.inline.sections()` when it exists."""


class GoldenError(Exception):
    """A golden case the generator cannot render (its spec, options or the generator)."""


_DIGESTS = re.compile(r"^(#   \S.*?  +|# Digest: )[0-9a-f]{12,16}$", re.MULTILINE)
"""The header's digests: the code's changes with every edit of the generator."""


def features() -> list[str]:
    """The golden cases, by folder name."""
    return sorted(p.name for p in GOLDEN.iterdir() if (p / "spec").is_dir())


def expected_name(target: str) -> str:
    return f"{target}/chat.py"


def expected_path(feature: str, target: str) -> Path:
    return GOLDEN / feature / "expected" / expected_name(target)


def options_for(feature: str) -> Options:
    """The feature's `options.toml` as generator options (all vendors, lenient when absent)."""
    path = GOLDEN / feature / OPTIONS_FILE
    config = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    unknown = sorted(set(config) - {"vendors", "profile"})
    if unknown:
        raise ValueError(f"{path}: unknown keys {unknown} (known: vendors, profile)")
    vendors = config.get("vendors")
    if vendors is not None and not (
        isinstance(vendors, list) and all(isinstance(v, str) for v in vendors)
    ):
        raise ValueError(f"{path}: vendors must be a list of vendor names")
    profile = config.get("profile", "lenient")
    if profile not in ("lenient", "strict"):
        raise ValueError(f"{path}: profile must be 'lenient' or 'strict', not {profile!r}")
    return Options(vendors=None if vendors is None else tuple(vendors), profile=profile)


# --- the one place that calls the generator --------------------------------------


def _generate(root: Path, options: Options) -> dict[str, str]:
    """Every file the generator makes of the project at `root`, by path relative to it.

    This is the one place to adapt when `generator.pipeline.generate` changes: it is
    called with the project root and the options, plus `command` (the regeneration
    command written in headers) while it takes one; its outputs need `path` and `content`.
    """
    from generator.pipeline import generate

    kwargs: dict[str, Any] = {}
    if "command" in inspect.signature(generate).parameters:
        kwargs["command"] = COMMAND
    return {str(out.path): str(out.content) for out in generate(root, options, **kwargs)}


def _project(feature: str, dest: Path) -> Path:
    """A project root made of the feature's spec and the real templates."""
    shutil.copytree(GOLDEN / feature / "spec", dest / "spec")
    try:
        (dest / "templates").symlink_to(TEMPLATES, target_is_directory=True)
    except OSError:  # no symlinks on this file system
        shutil.copytree(TEMPLATES, dest / "templates")
    return dest


@cache
def generated(feature: str) -> dict[str, str]:
    """The four target modules of a feature as generated now, by target, not normalised."""
    with tempfile.TemporaryDirectory(prefix=f"golden-{feature}-") as tmp:
        try:
            outputs = _generate(_project(feature, Path(tmp)), options_for(feature))
        except Exception as exc:
            raise GoldenError(f"golden case {feature!r}: {type(exc).__name__}: {exc}") from exc
    found: dict[str, str] = {}
    for target in TARGETS:
        name = expected_name(target)
        paths = [p for p in outputs if p == f"generated/{name}"]
        if len(paths) != 1:
            raise GoldenError(f"{feature}: the generator made {len(paths)} files named {name}")
        found[target] = outputs[paths[0]]
    return found


def rendered(feature: str) -> dict[str, str]:
    """What each expected file of a feature should hold now, by target."""
    return {
        target: expected_text(expected_name(target), content)
        for target, content in generated(feature).items()
    }


# --- normalisation ---------------------------------------------------------------


def runtime_sections() -> dict[str, str]:
    """Verbatim runtime code a module carries, by name: none since the runtime is a
    package's own files, which a module imports."""
    return {}


def elisions() -> dict[str, str]:
    """Every block to elide, by the name its marker shows; longest first, so that a block
    inside another is not cut out of it first."""
    blocks = {str(n): block for n, block in enumerate(ELIDE)} | runtime_sections()
    blocks = {name: block for name, block in blocks.items() if block.strip()}
    return dict(sorted(blocks.items(), key=lambda item: -len(item[1])))


def _marker(name: str, block: str) -> str:
    return f"# (runtime section: {name})" + ("\n" if block.endswith("\n") else "")


def expected_text(path: str | Path, content: str) -> str:
    """A generated file as its golden record holds it: the header's digests replaced by a
    placeholder, and each runtime section of a Python module by a one-line marker."""
    text = _DIGESTS.sub(lambda m: m.group(1) + DIGEST_PLACEHOLDER, content)
    if str(path).endswith(".py"):
        for name, block in elisions().items():
            text = text.replace(block, _marker(name, block))
    return text


def restore(text: str) -> str:
    """A golden record with its runtime sections put back, so that it can be imported."""
    for name, block in elisions().items():
        text = text.replace(_marker(name, block), block)
    return text


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
    for target, text in rendered(feature).items():
        path = expected_path(feature, target)
        if not path.is_file():
            out.append((path, "missing"))
        elif path.read_text(encoding="utf-8") != text:
            out.append((path, "stale"))
    return out


def strays(feature: str) -> list[Path]:
    """Files in a feature's expected/ folder that no target makes."""
    folder = GOLDEN / feature / "expected"
    wanted = {expected_name(t) for t in TARGETS}
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name not in wanted and p.name != "__pycache__")


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
    for target, text in rendered(feature).items():
        path = expected_path(feature, target)
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
        prog="python -m tests.golden",
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
