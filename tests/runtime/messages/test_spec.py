"""spec/messages_stream_event.yaml against anthropic-sdk-python's own types, by
introspection: every pydantic model reachable from `RawMessageStreamEvent`, `Message` and
`ErrorResponse` (the `error` event) has a spec type with the same wire keys, the same
required/optional and nullable split, compatible types, the same union members (ours
plus the `Other…` member that keeps unknown types whole) and the same enum values (ours
may add a value only where the YAML says why in a comment on it). The mapping is total
both ways: an SDK model without a spec type fails, and so does a spec type no SDK model
maps to, unless listed below with the reason. A mismatch names the type and the key.

The SDK is the installed one (requirements.lock pins it); when an upgrade adds a field,
a block type or an enum value, this test says where the spec must follow."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

import pydantic
import pytest
from anthropic.types import (
    Message,
    MessageDeltaUsage,
    RawContentBlockStartEvent,
    RawMessageStreamEvent,
    TextBlock,
    ThinkingBlock,
    Usage,
)
from anthropic.types.raw_message_delta_event import Delta
from anthropic.types.shared.error_response import ErrorResponse

from tests.helpers.sdk_drift import Allowed, Comparison, Family, reachable, stray_types, uncompared
from tests.runtime.requests.test_messages import COMPARISON as REQUEST

# The SDK's names where ours differ: the events lose the SDK's `Raw` prefix, the message
# delta's inner object gets a name of its own, `error` events are its ErrorResponse.
RENAMED = {
    "RawMessageStartEvent": "MessageStartEvent",
    "RawMessageDeltaEvent": "MessageDeltaEvent",
    "RawMessageStopEvent": "MessageStopEvent",
    "RawContentBlockStartEvent": "ContentBlockStartEvent",
    "RawContentBlockDeltaEvent": "ContentBlockDeltaEvent",
    "RawContentBlockStopEvent": "ContentBlockStopEvent",
    "Delta": "MessageDelta",
    "InputJSONDelta": "InputJsonDelta",
    "ErrorResponse": "ErrorEvent",
}

# An SDK union read by one spec type, with why (the spec file says more).
COLLAPSED = {
    "ErrorObject": "nine SDK types that differ only in `type`: one type with an open enum,"
    " so that an error object without `type` still reads as the server's error",
}

# Members our unions have beyond the SDK's, with why.
EXTRA_MEMBERS = {
    ("MessageStreamEvent", "PingEvent"): "the SDK's stream skips `ping` before typing events",
    ("MessageStreamEvent", "ErrorEvent"): "the SDK's stream raises on `error` (ErrorResponse)",
}

# The SDK's roots, with the spec type each is.
ROOTS: tuple[tuple[Any, str], ...] = (
    (RawMessageStreamEvent, "MessageStreamEvent"),
    (Message, "Message"),
    (ErrorResponse, "ErrorEvent"),
)

FAMILY = Family(
    "messages",
    "spec/messages_stream_event.yaml",
    Allowed(renamed=RENAMED, collapsed=COLLAPSED, extra_members=EXTRA_MEMBERS),
)
COMPARISON = Comparison(FAMILY).run(ROOTS)


# --- the tests ------------------------------------------------------------------------


def test_every_sdk_model_matches_its_spec_type() -> None:
    assert not COMPARISON.problems, "\n".join(COMPARISON.problems)


def test_every_sdk_model_reachable_has_a_spec_type() -> None:
    """The mapping is total: no SDK model the roots reach is left out of the comparison."""
    missing = [
        f"{model.__module__}.{model.__name__}"
        for model in uncompared(COMPARISON, (annotation for annotation, _ in ROOTS))
    ]
    assert not missing, f"SDK models the spec has no type for: {missing}"
    assert len(COMPARISON.visited) >= 70


def test_every_spec_type_stands_for_an_sdk_model_or_keeps_unknowns() -> None:
    """And the other way: a spec type is an SDK model, an `Other…` member, or listed; the
    request's types stand for the SDK's params (tests/runtime/requests/test_messages.py)."""
    request = set(REQUEST.visited.values())
    left = [name for name in stray_types(COMPARISON) if name not in request]
    assert not left, f"spec types no SDK model maps to: {left}"
    unions = COMPARISON.unions | REQUEST.unions
    assert set(FAMILY.unions) == unions, "every named union is one of the SDK's"
    assert not COMPARISON.unused(), "departures listed that the spec does not make"


def test_every_union_is_open() -> None:
    for union in FAMILY.unions.values():
        others = [m for m in union.members if FAMILY.is_other(m)]
        assert len(others) == 1 and others[0].startswith("Other"), union.name


# --- the comparison fails where the SDK grows -----------------------------------------


class UsageWithANewCount(Usage):
    """What an SDK release that adds a count to Usage would declare."""

    brand_new_tokens: Optional[int] = None  # noqa: UP045 (the SDK's own spelling)


class ThinkingBlockWithoutSignature(ThinkingBlock):
    signature: Optional[str] = None  # type: ignore[assignment]  # noqa: UP045


class HologramBlock(pydantic.BaseModel):
    frames: list[int]
    type: Literal["hologram"]


class StartOfANewBlock(RawContentBlockStartEvent):
    content_block: Annotated[  # type: ignore[assignment]
        Union[TextBlock, HologramBlock],  # noqa: UP007
        pydantic.Discriminator("type"),
    ]


class DeltaWithANewStopReason(Delta):
    stop_reason: Optional[Literal["end_turn", "daydreaming"]] = None  # type: ignore[assignment]  # noqa: UP045


class UsageWithAnInputCountAsText(MessageDeltaUsage):
    input_tokens: Optional[str] = None  # type: ignore[assignment]  # noqa: UP045


@pytest.mark.parametrize(
    ("model", "spec", "expected"),
    [
        (UsageWithANewCount, "Usage", "Usage.brand_new_tokens: in the SDK's"),
        (ThinkingBlockWithoutSignature, "ThinkingBlock", "ThinkingBlock.signature: required"),
        (StartOfANewBlock, "ContentBlockStartEvent", "union ContentBlock lacks HologramBlock"),
        (DeltaWithANewStopReason, "MessageDelta", "enum StopReason lacks the SDK's values"),
        (UsageWithAnInputCountAsText, "MessageDeltaUsage", "the SDK's str is int"),
    ],
)
def test_a_change_in_the_sdk_fails_naming_the_type_and_key(
    model: type[pydantic.BaseModel], spec: str, expected: str
) -> None:
    problems = Comparison(FAMILY).run([(model, spec)]).problems
    assert any(expected in problem for problem in problems), problems


def test_a_new_sdk_model_is_caught_by_the_totality_check() -> None:
    """HologramBlock has no spec type: the comparison never reaches it."""
    comparison = Comparison(FAMILY).run([(StartOfANewBlock, "ContentBlockStartEvent")])
    assert HologramBlock in reachable([StartOfANewBlock])
    assert HologramBlock not in comparison.visited


def test_an_enum_value_the_sdk_lacks_needs_a_comment() -> None:
    comparison = Comparison(FAMILY)
    comparison.enum_values["StopReason"] = {"end_turn"}
    comparison.check_enums()
    assert any("value 'max_tokens' is not the SDK's" in p for p in comparison.problems)
