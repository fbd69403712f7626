"""What the docs tell a new user holds (issue 31, item 27): the headline loop of
docs/meanings.md names the option a `<think>` stream needs, a doc that links an example
file for a function points at one that calls it, the generated packages the README says
are committed are, and every path of the repository a doc names exists (`problem` says
how a placeholder such as `<target>` is read)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
from types import ModuleType

import pytest

from tests.helpers.docs_blocks import fences
from tests.helpers.project import REPO
from tests.helpers.support import TARGETS

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
API = {name for module in TARGETS.values() for name in module.__all__}
"""Every name the generated modules export."""


def headline_think_tags() -> tuple[str, str]:
    """The `think_tags` the first example of docs/meanings.md says to pass."""
    text = (REPO / "docs/meanings.md").read_text(encoding="utf-8")
    first = next(fence for fence in fences(text) if fence.kind == "python")
    found = re.search(r"think_tags=(\([^)]*\))", first.body)
    assert found, "the headline loop says what a stream with inline <think> needs"
    tags = ast.literal_eval(found[1])
    assert isinstance(tags, tuple) and all(isinstance(tag, str) for tag in tags)
    open_tag, close_tag = tags
    return open_tag, close_tag


@pytest.mark.parametrize("module", TARGETS.values(), ids=TARGETS)
def test_the_headline_loop_names_the_think_tags_an_inline_stream_needs(
    module: ModuleType,
) -> None:
    pieces = ["<think>2 and", " 2</think>", "It is 4."]
    texts = [
        json.dumps({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": p}}]})
        for p in pieces
    ]
    for options, reasoning, answer in (
        ({}, "", "<think>2 and 2</think>It is 4."),  # as the loop is written: all text
        ({"think_tags": headline_think_tags()}, "2 and 2", "It is 4."),
    ):
        accumulator = module.ChunkAccumulator(**options)
        for text in texts:
            accumulator.add(module.loads(text))
        [choice] = accumulator.summary().choices
        assert (choice.reasoning, choice.text) == (reasoning, answer)


def sentences(text: str) -> list[str]:
    """The prose of a Markdown file (code blocks left out), sentence by sentence."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    paragraphs = (" ".join(p.split()) for p in prose.split("\n\n"))
    return [s for p in paragraphs for s in re.split(r"(?<=[.!?)])\s+(?=[A-Z(\[`])", p)]


def test_a_doc_that_links_an_example_for_a_function_links_one_that_calls_it() -> None:
    checked = 0
    for doc in DOCS:
        for sentence in sentences(doc.read_text(encoding="utf-8")):
            for link in re.findall(r"\]\((?:\.\./)?(examples/\w+\.py)\)", sentence):
                source = (REPO / link).read_text(encoding="utf-8")
                for name in set(re.findall(r"`(\w+)", sentence)) & API:
                    checked += 1
                    assert re.search(rf"\b{name}\b", source), f"{doc.name}: {link} lacks {name}"
    assert checked, "some sentence names what an example shows"


def test_the_generated_packages_the_readme_says_are_committed_are() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    commands = readme.split("## Commands")[1].split("\n## ")[0]
    assert re.search(r"generated packages .*are committed", " ".join(commands.split()))
    tracked = subprocess.run(
        ["git", "ls-files", "generated"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    assert {
        f"generated/{name}/{file}" for name in TARGETS for file in ("__init__.py", "chat.py")
    } <= set(tracked)


def test_the_readme_and_commands_md_give_the_same_time_for_a_fresh_ci_run() -> None:
    """The time of a fresh clone's `.ci/run`, measured, is said twice: in the README's
    make block and in docs/commands.md's table. One remeasured must change both."""
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").replace("#", " ").split())
    commands = (REPO / "docs/commands.md").read_text(encoding="utf-8")
    said = re.search(r"about (\S+) minutes for a fresh clone's `\.ci/run`", readme)
    row = re.search(r"^\| `\.ci/run` in a fresh clone .*\| about (\S+) minutes", commands, re.M)
    assert said and row, "the README or docs/commands.md no longer says how long .ci/run takes"
    assert said[1] == row[1], f"README: about {said[1]} minutes, docs/commands.md: {row[1]}"


# Every repository path a doc names exists ---------------------------------------------

ROOTS = ("generator", "generated", "templates", "spec", "tests", "bench", "examples", "docs")
"""The top-level folders a doc names paths under."""
IN_GENERATOR = ("runtime", "render", "ir", "vendoring", "captures", "gateway")
"""Folders of generator/ that docs name on their own: `runtime/sse.py` is
generator/runtime/sse.py."""
_PATH = re.compile(
    # Not the tail of a longer path or word (`_runtime/sse.py`, `tests/generated/`, a URL).
    r"(?<![\w./<>{}-])(?:\.\./)?"
    rf"(?P<path>(?:{'|'.join(ROOTS + IN_GENERATOR)})/[\w.*<>{{}}/-]*)"
)
_EACH_TARGET = re.compile(r"<target>|\{target\}")
_PLACEHOLDER = re.compile(r"<[^<>/]+>|\{[^{}/]+\}|(?<![^/])[A-Z][A-Z_]+(?=\.|/|$)")
"""A part of a path that stands for any name: `<vendor>`, `{name}`, or a segment's name in
capitals (`NAME.yaml`)."""
_ATTRIBUTE = re.compile(r"(?P<module>.+/\w+)\.(?P<name>[A-Za-z_]\w*)")

NOT_IN_THE_REPOSITORY = {
    "spec/vendors/acme_ai.yaml": "extending.md: an error message about a made-up vendor",
    "spec/vendors/foo.yml": "extending.md: an error message about a misnamed vendor file",
    "spec/vendors/x.yaml": "spec-format.md: error messages about a vendor named x",
    "tests/fixtures/chat/streams/acme__trace-hint-null-model.jsonl": (
        "extending.md: the capture a reader would add for the made-up vendor Acme"
    ),
    "generator/render/targets/attrs_target.py": "architecture.md: what a new target adds",
    "templates/attrs.py.jinja": "architecture.md: what a new target adds",
    "generated/attrs/": "architecture.md: what a new target adds",
}
"""Paths the docs name on purpose that the repository does not hold, and why. Besides
these, a path a doc writes into its scratch projects (`<!-- file: PATH -->`) is its own."""
INSTALLED = {"tests/clients/node_modules": "make test installs it (npm ci); not committed"}
"""Paths the docs name that the Makefile makes: there or not, depending on the checkout."""


def paths_named(text: str) -> list[tuple[int, str]]:
    """Each repository path `text` names, with its line: in backticks, a link (`../`) or
    plain text, code blocks included; sentence punctuation after it is not part of it."""
    return [
        (number, found["path"].rstrip(".,:;"))
        for number, line in enumerate(text.splitlines(), 1)
        for found in _PATH.finditer(line)
    ]


def problem(path: str) -> str | None:
    """Why `path`, as a doc names it, is not in the repository (None if it is).

    `<target>` (or `{target}`) stands for each target, and each must exist. A path that
    does not exist as written may be a module and a name in it (`render/emit.stale`: the
    file emit.py, which names `stale`), or hold a placeholder for any name (`<vendor>`,
    `{name}`, `NAME`), which is read as `*`: some file must match. A glob (`*`) must match
    at least one file."""
    if path.split("/")[0] in IN_GENERATOR:
        path = f"generator/{path}"
    missing = [p for p in _each_target(path) if not _exists(p)]
    return f"{', '.join(missing)} does not exist" if missing else None


def _each_target(path: str) -> list[str]:
    if not _EACH_TARGET.search(path):
        return [path]
    return [_EACH_TARGET.sub(target, path) for target in TARGETS]


def _exists(path: str) -> bool:
    pattern = path.rstrip("/")
    if "*" in pattern:
        return any(REPO.glob(pattern))
    if (REPO / pattern).exists():
        return True
    attribute = _ATTRIBUTE.fullmatch(pattern)
    if attribute and (module := REPO / f"{attribute['module']}.py").is_file():
        return re.search(rf"\b{attribute['name']}\b", module.read_text("utf-8")) is not None
    if _PLACEHOLDER.search(pattern):
        return any(REPO.glob(_PLACEHOLDER.sub("*", pattern)))
    return False


def written_by(text: str) -> set[str]:
    """The paths a doc's `<!-- file: PATH -->` markers write into its scratch projects."""
    return set(re.findall(r"<!--\s*file:\s*(\S+)\s*-->", text))


def test_the_path_finder_finds_paths_and_judges_them() -> None:
    text = (
        "See `generator/render/linking.py` and runtime/sse.py, not `_runtime/sse.py`\n"
        "or app/tests/x.py; [it](../examples/gateway.py), `tests/generated/`.\n"
        "    generated/<target>/chat.py  spec/vendors/NAME.yaml\n"
    )
    assert paths_named(text) == [
        (1, "generator/render/linking.py"),
        (1, "runtime/sse.py"),
        (2, "examples/gateway.py"),
        (2, "tests/generated/"),
        (3, "generated/<target>/chat.py"),
        (3, "spec/vendors/NAME.yaml"),
    ]
    for real in (
        "generator/render/linking.py",
        "runtime/chat/reader.py",
        "generated/<target>/chat.py",
        "generated/{target}/_runtime/",
        "spec/vendors/<vendor>.yaml",
        "spec/vendors/NAME.yaml",
        "tests/fixtures/chat/streams/{name}.jsonl",
        "tests/golden/<feature>/spec/",
        "bench/*.svg",
        "render/emit.stale",
        "tests/fixtures/chat/streams/SOURCES.md",
    ):
        assert problem(real) is None, real
    for made_up in (
        "generator/render/inline.py",
        "runtime/accumulate.py",
        "generated/chunk_attrs.py",
        "generated/<target>/hub.py",
        "spec/vendors/<vendor>.yml",
        "bench/*.png",
        "render/emit.no_such_name",
    ):
        assert problem(made_up) is not None, made_up
    assert problem("generated/<target>/nowhere.py") == (
        ", ".join(f"generated/{target}/nowhere.py" for target in TARGETS) + " does not exist"
    )


def test_every_repository_path_a_doc_names_exists() -> None:
    wrong, named = [], set()
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        own = written_by(text)
        for line, path in paths_named(text):
            named.add(path)
            if path in own or path in NOT_IN_THE_REPOSITORY or path in INSTALLED:
                continue
            if (why := problem(path)) is not None:
                wrong.append(f"{doc.relative_to(REPO)}:{line}: {why}")
    assert not wrong, "the docs name paths the repository does not hold:\n" + "\n".join(wrong)
    assert len(named) > 100, "the docs name few paths: is the path finder broken?"
    for path, why in INSTALLED.items():
        assert path in named, f"no doc names {path} any more: drop it from the list ({why})"
    for path, why in NOT_IN_THE_REPOSITORY.items():
        assert path in named, f"no doc names {path} any more: drop it from the list ({why})"
        assert problem(path) is not None, f"{path} exists now: drop it from the list"
