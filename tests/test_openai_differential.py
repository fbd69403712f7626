"""Differential tests against openai-python: on every captured chunk openai accepts,
every target reads the same values for OpenAI's fields and writes the same JSON."""

from __future__ import annotations

import pytest

from tests.openai_reference import assert_same_as_openai, openai_reads
from tests.support import FIXTURE_STREAMS, REPORT, TARGETS, Stream

COMPARED: dict[str, int] = {}


@pytest.mark.parametrize("name", sorted(TARGETS))
@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=lambda s: s.name)
def test_every_chunk_openai_accepts_reads_the_same(stream: Stream, name: str) -> None:
    compared = 0
    for line, text in stream.chunks:
        theirs = openai_reads(text)
        if theirs is None:
            continue  # a vendor's chunk openai's own types reject (its quirks are tested elsewhere)
        try:
            assert_same_as_openai(TARGETS[name], text, theirs)
        except AssertionError as exc:
            raise AssertionError(f"{stream.name}:{line} ({name}): {exc}") from None
        compared += 1
    COMPARED[f"{name}/{stream.name}"] = compared
    accepted = sum(v for k, v in COMPARED.items() if k.startswith(f"{name}/"))
    total = sum(len(s.chunks) for s in FIXTURE_STREAMS)
    REPORT[f"openai differential, captured chunks, {name}"] = (
        f"{accepted} of {total} chunks (all that openai-python accepts) read and write the same"
    )
