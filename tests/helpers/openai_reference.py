"""Comparison with the real openai-python SDK: what its `ChatCompletionChunk` reads from a
payload, field by field, against what a target reads. Shared by the differential tests
of the captured streams and of the property-test examples."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

from openai.types.chat import ChatCompletionChunk
from pydantic import BaseModel, ValidationError


def openai_reads(text: str) -> ChatCompletionChunk | None:
    """openai's reading of a payload, or None when openai rejects it."""
    try:
        return ChatCompletionChunk.model_validate_json(text)
    except ValidationError:
        return None


def assert_same_as_openai(target: ModuleType, text: str, theirs: ChatCompletionChunk) -> None:
    """The target reads every field openai declares to the same value, and writes the same
    JSON value as openai's `model_dump_json(exclude_unset=True)`."""
    ours = target.loads(text)
    sent = json.loads(text)
    _same_fields(theirs, ours, sent, "chunk")
    written = json.loads(target.dumps(ours))
    _same_value(json.loads(theirs.model_dump_json(exclude_unset=True)), written, sent, "dumps")


def _same_fields(theirs: BaseModel, ours: Any, sent: Any, path: str) -> None:
    # openai's chat types name every field by its wire key.
    for name in type(theirs).model_fields.keys() & theirs.model_fields_set:
        got = ours[name] if isinstance(ours, dict) else getattr(ours, name)
        _same_value(getattr(theirs, name), got, sent[name], f"{path}.{name}")


def _same_value(want: Any, got: Any, sent: Any, path: str) -> None:
    """`want` is openai's reading of `sent`, `got` the target's."""
    if isinstance(want, BaseModel):
        _same_fields(want, got, sent, path)
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), f"{path}: {got!r}"
        for key, item in want.items():
            _same_value(item, got[key], sent[key], f"{path}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: {got!r}"
        for index, (item, ours) in enumerate(zip(want, got, strict=True)):
            _same_value(item, ours, sent[index], f"{path}[{index}]")
    elif {type(got), type(want)} == {int, float}:
        # openai turns a whole float into an int where it declares an int, and an int into
        # a float where it declares a float (losing digits past 2**53); the targets keep
        # the number as sent. The number sent, as openai's type holds it:
        assert type(got) is type(sent) and type(want)(got) == want, f"{path}: {got!r} != {want!r}"
    else:
        assert got == want and type(got) is type(want), f"{path}: {got!r} != {want!r}"
