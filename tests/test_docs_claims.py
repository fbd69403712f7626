"""What the docs tell a new user holds (issue 31, item 27): the headline loop of
docs/meanings.md names the option a `<think>` stream needs, a doc that links an example
file for a function points at one that calls it, and the generated packages the README
says are committed are."""

from __future__ import annotations

import ast
import json
import re
import subprocess
from types import ModuleType

import pytest

from tests.docs_blocks import fences
from tests.support import TARGETS
from tests.test_generator import REPO

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
