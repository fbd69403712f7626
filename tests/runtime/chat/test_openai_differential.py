"""Differential tests against openai-python: on every captured chunk and every chunk
drawn from OpenAI's spec that openai accepts, every target reads the same values for
OpenAI's fields and writes the same JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tests.generated.strategies import openai_chat_completion_chunk
from tests.helpers.openai_reference import assert_same_as_openai, openai_reads
from tests.helpers.support import FIXTURE_STREAMS, REPORT, TARGETS, Stream, count_examples

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
    # openai's types reject some vendors' chunks (Mistral's content parts), never all of
    # a stream's: a reference that accepted nothing would compare nothing.
    assert compared > 0, "openai-python accepted no chunk of the stream"
    COMPARED[f"{name}/{stream.name}"] = compared
    accepted = sum(v for k, v in COMPARED.items() if k.startswith(f"{name}/"))
    total = sum(len(s.chunks) for s in FIXTURE_STREAMS)
    REPORT[f"openai differential, captured chunks, {name}"] = (
        f"{accepted} of {total} chunks (all that openai-python accepts) read and write the same"
    )


@given(payload=openai_chat_completion_chunk, ascii=st.booleans())
def test_any_chunk_of_openais_spec_reads_the_same(payload: dict[str, Any], ascii: bool) -> None:
    """Examples drawn from OpenAI's own spec (the strict profile): every one openai-python
    accepts reads and writes the same in every target."""
    text = json.dumps(payload, ensure_ascii=ascii)
    theirs = openai_reads(text)
    # openai's types are narrower than its spec in places; if it came to reject most of
    # these examples, Hypothesis would fail this test (a filter that rejects too much).
    assume(theirs is not None)
    assert theirs is not None
    for name, target in TARGETS.items():
        try:
            assert_same_as_openai(target, text, theirs)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}\n{text}") from None
    count_examples("openai differential, drawn and accepted by openai-python")
