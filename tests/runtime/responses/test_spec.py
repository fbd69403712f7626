"""spec/responses_stream_event.yaml against openai-python's own types, by introspection
(tests/helpers/sdk_drift.py): every pydantic model reachable from `ResponseStreamEvent` and
`Response` has a spec type with the same wire keys, the same required/optional and
nullable split, compatible types, the same union members (ours plus the `Other…` member
that keeps unknown types whole) and the same enum values. The mapping is total both
ways: an SDK model without a spec type fails unless it sits under a key the spec keeps
as plain JSON (listed below with the reason), and so does a spec type no SDK model maps
to. Each place the spec reads more loosely than the SDK, or has a key or an event the
SDK lacks, is listed below with what real streams send (tests/fixtures/responses/).

The SDK is the installed one (requirements.lock pins it); when an upgrade adds a field,
an event or item type or an enum value, this test says where the spec must follow."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Required, Union

import pydantic
import pytest
from openai.types.responses import (
    Response,
    ResponseOutputItemAddedEvent,
    ResponseOutputMessage,
    ResponseStreamEvent,
    ResponseTextDeltaEvent,
    ResponseUsage,
)
from openai.types.responses.easy_input_message_param import EasyInputMessageParam
from openai.types.responses.function_tool_param import FunctionToolParam
from openai.types.responses.response_create_params import ResponseCreateParamsBase
from openai.types.responses.response_output_text import ResponseOutputText

from tests.helpers.sdk_drift import Allowed, Comparison, Family, reachable, stray_types, uncompared

_CALLERS = (
    "response_function_tool_call",
    "response_custom_tool_call",
    "response_custom_tool_call_output",
    "response_function_tool_call_output_item",
    "response_function_shell_tool_call",
    "response_function_shell_tool_call_output",
    "response_apply_patch_tool_call",
    "response_apply_patch_tool_call_output",
    # The request's input items (openai-python's TypedDict params).
    "response_function_tool_call_param",
    "response_custom_tool_call_param",
    "response_custom_tool_call_output_param",
)

# The SDK's nested models that share a name with another get one of their own; the SDK
# models of one shape in several modules share one type.
RENAMED = {
    "response_output_text.Logprob": "OutputTextLogprob",
    "response_output_text.LogprobTopLogprob": "OutputTextTopLogprob",
    "response_text_delta_event.Logprob": "TextLogprob",
    "response_text_done_event.Logprob": "TextLogprob",
    "response_text_delta_event.LogprobTopLogprob": "TextTopLogprob",
    "response_text_done_event.LogprobTopLogprob": "TextTopLogprob",
    "response_content_part_added_event.PartReasoningText": "ReasoningTextPart",
    "response_content_part_done_event.PartReasoningText": "ReasoningTextPart",
    "response_reasoning_item.Content": "ReasoningTextPart",
    "response_reasoning_summary_part_added_event.Part": "ReasoningSummaryPart",
    "response_reasoning_summary_part_done_event.Part": "ReasoningSummaryPart",
    "response_reasoning_item.Summary": "ReasoningSummaryPart",
    "response_file_search_tool_call.Result": "FileSearchResult",
    "response_shell_call_output_content_delta_event.Delta": "ShellCallOutputContentDelta",
    "response_usage.InputTokensDetailsCacheWriteTokensDetails": "CacheWriteTokensDetails",
    **{f"{module}.CallerDirect": "DirectCaller" for module in _CALLERS},
    **{f"{module}.CallerProgram": "ProgramCaller" for module in _CALLERS},
    # The request (a TypedDict `XParam` is the spec's `X`, by `param_suffix`, unless
    # named here).
    "response_input_param.FunctionCallOutputCallerDirect": "DirectCaller",
    "response_input_param.FunctionCallOutputCallerProgram": "ProgramCaller",
    "response_reasoning_item_param.Summary": "ReasoningSummaryPart",
    "response_reasoning_item_param.Content": "ReasoningTextPart",
    "response_output_text_param.Logprob": "OutputTextLogprob",
    "response_output_text_param.LogprobTopLogprob": "OutputTextTopLogprob",
    "ResponseConversationParamParam": "Conversation",
    "response_create_params.StreamOptions": "ResponseStreamOptions",
    "response_input_param.Message": "EasyInputMessage",
    "ResponseOutputMessageParam": "EasyInputMessage",
    "ResponseInputTextContentParam": "ResponseInputText",
    "ResponseInputImageContentParam": "ResponseInputImage",
    "ResponseInputFileContentParam": "ResponseInputFile",
    **dict.fromkeys(
        (
            "ToolChoiceAllowedParam",
            "ToolChoiceTypesParam",
            "ToolChoiceFunctionParam",
            "ToolChoiceMcpParam",
            "ToolChoiceCustomParam",
            "ToolChoiceSpecificProgrammaticToolCallingParam",
            "ToolChoiceApplyPatchParam",
            "ToolChoiceShellParam",
        ),
        "ResponseToolChoice",
    ),
}

_ONE_MESSAGE = (
    "one `message` tag, so one type: an input message with a status, or an assistant"
    " turn sent back with its id (the union tells members apart by `type` alone)"
)
_OUTPUT_PART = (
    "a function's output parts: the message content parts, of which the SDK's are the"
    " same keys, each optional or nullable"
)
_TOOL_CHOICE = "one flat type reads every object `tool_choice` (a `type` and its keys)"
# SDK models read as the spec type of another model: only their keys are compared.
MERGED = {
    "response_input_param.Message": _ONE_MESSAGE,
    "ResponseOutputMessageParam": _ONE_MESSAGE,
    "ResponseInputTextContentParam": _OUTPUT_PART,
    "ResponseInputImageContentParam": _OUTPUT_PART,
    "ResponseInputFileContentParam": _OUTPUT_PART,
    **{name: _TOOL_CHOICE for name, spec in RENAMED.items() if spec == "ResponseToolChoice"},
}

_HOSTED_ITEM = (
    "an item of a hosted tool (its call or output sent back) or of the server's own"
    " workings: kept whole by OtherResponseInputItem"
)
_HOSTED_TOOL = "a tool the server hosts, or a custom tool: kept whole by OtherResponseTool"
# Members of the SDK's request unions that the spec reads as the `Other…` member.
OTHER_MEMBERS = {
    **{
        ("ResponseInputItem", member): _HOSTED_ITEM
        for member in (
            "AdditionalTools",
            "ApplyPatchCall",
            "ApplyPatchCallOutput",
            "CompactionTrigger",
            "ComputerCallOutput",
            "ImageGenerationCall",
            "LocalShellCall",
            "LocalShellCallOutput",
            "McpApprovalRequest",
            "McpApprovalResponse",
            "McpCall",
            "McpListTools",
            "Program",
            "ProgramOutput",
            "ResponseCodeInterpreterToolCall",
            "ResponseCompactionItemParam",
            "ResponseComputerToolCall",
            "ResponseConfigurationUpdateItemParam",
            "ResponseFileSearchToolCall",
            "ResponseFunctionWebSearch",
            "ResponseToolSearchOutputItemParam",
            "ShellCall",
            "ShellCallOutput",
            "ToolSearchCall",
        )
    },
    **{
        ("ResponseTool", member): _HOSTED_TOOL
        for member in (
            "ApplyPatchTool",
            "CodeInterpreter",
            "ComputerTool",
            "ComputerUsePreviewTool",
            "CustomTool",
            "FileSearchTool",
            "FunctionShellTool",
            "ImageGeneration",
            "LocalShell",
            "Mcp",
            "NamespaceTool",
            "ProgrammaticToolCalling",
            "ToolSearchTool",
            "WebSearchPreviewTool",
            "WebSearchTool",
        )
    },
}

# Keys the spec requires (or refuses null for) where the SDK's TypedDict does not.
TIGHTER = {
    ("ItemReference", "type"): (
        "the input union tells `item_reference` apart by its `type`; one without it reads"
        " as a message (the union's `absent` member), kept whole"
    ),
}

_SENT_BACK = (
    "an assistant turn sent back as a message (ResponseOutputMessageParam's content)"
    " shares the message's content list"
)
# Events our root union has beyond the SDK's.
EXTRA_MEMBERS = {
    ("ResponseInputContent", "ResponseOutputText"): _SENT_BACK,
    ("ResponseInputContent", "ResponseOutputRefusal"): _SENT_BACK,
    ("ResponseStreamEvent", "ResponseApplyPatchCallOperationDiffDeltaEvent"): (
        "real OpenAI streams send it (openai__apply-patch-operation-diff.sse); the SDK lacks it"
    ),
    ("ResponseStreamEvent", "ResponseApplyPatchCallOperationDiffDoneEvent"): (
        "real OpenAI streams send it (openai__apply-patch-operation-diff.sse); the SDK lacks it"
    ),
    ("ResponseStreamEvent", "ResponseReasoningPartAddedEvent"): (
        "vLLM's event for a reasoning text part (vendor sections cannot add union members)"
    ),
    ("ResponseStreamEvent", "ResponseReasoningPartDoneEvent"): (
        "vLLM's event for a reasoning text part (vendor sections cannot add union members)"
    ),
}

_PADDING = "OpenAI and Azure pad every delta event with it; the SDK keeps it as an extra key"
_OBFUSCATED = (
    "ResponseAudioDeltaEvent",
    "ResponseAudioTranscriptDeltaEvent",
    "ResponseCodeInterpreterCallCodeDeltaEvent",
    "ResponseCustomToolCallInputDeltaEvent",
    "ResponseFunctionCallArgumentsDeltaEvent",
    "ResponseMcpCallArgumentsDeltaEvent",
    "ResponseReasoningSummaryTextDeltaEvent",
    "ResponseReasoningTextDeltaEvent",
    "ResponseRefusalDeltaEvent",
    "ResponseTextDeltaEvent",
)

# Keys the spec has that the SDK's models lack.
EXTRA_KEYS = {
    **{(event, "obfuscation"): _PADDING for event in _OBFUSCATED},
    ("ResponseErrorEvent", "error"): (
        "the live API nests the error (openai__error-insufficient-quota-nested-then-failed"
        ".sse; openai/openai-python#2487), where the SDK declares it flat"
    ),
    ("Response", "store"): "every server's response echoes it (all the captures)",
    ("Response", "frequency_penalty"): "OpenAI, xAI, DeepSeek, LM Studio echo it",
    ("Response", "presence_penalty"): "OpenAI, xAI, DeepSeek, LM Studio echo it",
    ("TextLogprob", "bytes"): "OpenAI sends it on text events (openai__logprobs-text.sse)",
    ("ResponseCreateRequest", "stream"): (
        "the SDK declares it in the streaming and non-streaming params, not in their base"
    ),
    ("EasyInputMessage", "id"): _ONE_MESSAGE,
    ("EasyInputMessage", "status"): _ONE_MESSAGE,
    ("ResponseCreateRequest", "client_metadata"): (
        "Codex 0.169.0 sends it on every request (its thread and turn ids): declared"
        " client-only, so `to_request` drops it for another protocol, said as such"
    ),
}

_NO_SEQUENCE = "OpenAI's streams from before May 2025 have no sequence numbers"
_EVENTS_WITH_SEQUENCE = (
    "ResponseAudioDeltaEvent",
    "ResponseAudioDoneEvent",
    "ResponseAudioTranscriptDeltaEvent",
    "ResponseAudioTranscriptDoneEvent",
    "ResponseCodeInterpreterCallCodeDeltaEvent",
    "ResponseCodeInterpreterCallCodeDoneEvent",
    "ResponseCodeInterpreterCallCompletedEvent",
    "ResponseCodeInterpreterCallInProgressEvent",
    "ResponseCodeInterpreterCallInterpretingEvent",
    "ResponseCompactionCompactingEvent",
    "ResponseCompletedEvent",
    "ResponseContentPartAddedEvent",
    "ResponseContentPartDoneEvent",
    "ResponseCreatedEvent",
    "ResponseCustomToolCallInputDeltaEvent",
    "ResponseCustomToolCallInputDoneEvent",
    "ResponseErrorEvent",
    "ResponseFailedEvent",
    "ResponseFileSearchCallCompletedEvent",
    "ResponseFileSearchCallInProgressEvent",
    "ResponseFileSearchCallSearchingEvent",
    "ResponseFunctionCallArgumentsDeltaEvent",
    "ResponseFunctionCallArgumentsDoneEvent",
    "ResponseImageGenCallCompletedEvent",
    "ResponseImageGenCallGeneratingEvent",
    "ResponseImageGenCallInProgressEvent",
    "ResponseImageGenCallPartialImageEvent",
    "ResponseInProgressEvent",
    "ResponseIncompleteEvent",
    "ResponseMcpCallArgumentsDeltaEvent",
    "ResponseMcpCallArgumentsDoneEvent",
    "ResponseMcpCallCompletedEvent",
    "ResponseMcpCallFailedEvent",
    "ResponseMcpCallInProgressEvent",
    "ResponseMcpListToolsCompletedEvent",
    "ResponseMcpListToolsFailedEvent",
    "ResponseMcpListToolsInProgressEvent",
    "ResponseOutputItemAddedEvent",
    "ResponseOutputItemDoneEvent",
    "ResponseOutputTextAnnotationAddedEvent",
    "ResponseQueuedEvent",
    "ResponseReasoningSummaryPartAddedEvent",
    "ResponseReasoningSummaryPartDoneEvent",
    "ResponseReasoningSummaryTextDeltaEvent",
    "ResponseReasoningSummaryTextDoneEvent",
    "ResponseReasoningTextDeltaEvent",
    "ResponseReasoningTextDoneEvent",
    "ResponseRefusalDeltaEvent",
    "ResponseRefusalDoneEvent",
    "ResponseShellCallCommandAddedEvent",
    "ResponseShellCallCommandDeltaEvent",
    "ResponseShellCallCommandDoneEvent",
    "ResponseShellCallOutputContentDeltaEvent",
    "ResponseShellCallOutputContentDoneEvent",
    "ResponseTextDeltaEvent",
    "ResponseTextDoneEvent",
    "ResponseWebSearchCallCompletedEvent",
    "ResponseWebSearchCallInProgressEvent",
    "ResponseWebSearchCallSearchingEvent",
)

# Keys the spec reads as optional (or nullable) where the SDK requires them.
LOOSER = {
    **{(event, "sequence_number"): _NO_SEQUENCE for event in _EVENTS_WITH_SEQUENCE},
    ("ResponseTextDeltaEvent", "logprobs"): (
        "OpenAI's March-2025 streams and LiteLLM's bridge leave it out"
        " (openai/openai-python#2489)"
    ),
    ("ResponseTextDoneEvent", "logprobs"): "OpenAI's March-2025 streams and xAI leave it out",
    ("ResponseErrorEvent", "message"): "the live API nests it in `error`",
    ("InputTokensDetails", "cache_write_tokens"): (
        "OpenAI, Azure, xAI, DeepSeek, OpenRouter, LM Studio leave it out (the SDK added it"
        " after the captures)"
    ),
    ("ResponseFunctionWebSearch", "action"): (
        "a web search call in progress has none yet (openai__web-search-reasoning.sse)"
    ),
    **dict.fromkeys(
        (
            ("ResponseFunctionToolCall", "async"),
            ("ResponseFunctionToolCall", "id"),
            ("ResponseFunctionToolCall", "namespace"),
            ("ResponseFunctionToolCall", "status"),
            ("ResponseReasoningItem", "content"),
            ("ResponseReasoningItem", "status"),
            ("ResponseCustomToolCall", "async"),
            ("ResponseCustomToolCall", "id"),
            ("ResponseCustomToolCall", "namespace"),
            ("ResponseOutputText", "logprobs"),
        ),
        "the SDK's output model reads null here (Optional); its request param does not",
    ),
}

_ECHO = "kept as JSON: an echo of the request"
_HOSTED = "kept as JSON: the inner workings of a hosted tool"
_INPUT = "kept as JSON: input content the client sent back"
# Keys whose SDK models the spec keeps as plain JSON, with why.
KEPT_AS_JSON = {
    ("Response", "instructions"): _ECHO + " (a string or input items)",
    ("Response", "tools"): _ECHO,
    ("Response", "tool_choice"): _ECHO,
    ("Response", "text"): _ECHO + " (the text format settings)",
    ("Response", "reasoning"): _ECHO + " (the reasoning settings)",
    ("Response", "prompt"): _ECHO + " (the prompt template and its variables)",
    ("Response", "prompt_cache_options"): _ECHO,
    ("Response", "image"): _ECHO,
    ("Response", "access_programs"): _ECHO,
    ("Response", "moderation"): "kept as JSON: moderation verdicts, not the model's output",
    ("Response", "prompt_cache_diagnostics"): "kept as JSON: diagnostics of the prompt cache",
    ("Response", "input_transformations"): "kept as JSON: what the server changed in the input",
    ("ResponseError", "misalignment"): "kept as JSON: details of one error code",
    ("ResponseFunctionWebSearch", "action"): _HOSTED + " (search, open page, find)",
    ("ResponseComputerToolCall", "action"): _HOSTED + " (clicks, keys, scrolls)",
    ("ResponseComputerToolCall", "actions"): _HOSTED,
    ("ResponseComputerToolCall", "pending_safety_checks"): _HOSTED,
    ("ResponseComputerToolCallOutputItem", "output"): _INPUT + " (a screenshot)",
    ("ResponseComputerToolCallOutputItem", "acknowledged_safety_checks"): _INPUT,
    ("ResponseCodeInterpreterToolCall", "outputs"): _HOSTED + " (logs and images)",
    ("ImageGenerationCall", "error"): _HOSTED,
    ("ImageGenerationCall", "svg_usage"): _HOSTED,
    ("LocalShellCall", "action"): _HOSTED,
    ("ResponseFunctionShellToolCall", "action"): _HOSTED,
    ("ResponseFunctionShellToolCall", "environment"): _HOSTED,
    ("ResponseFunctionShellToolCallOutput", "output"): _HOSTED,
    ("ResponseShellCallOutputContentDoneEvent", "output"): _HOSTED,
    ("ResponseApplyPatchToolCall", "operation"): _HOSTED + " (the file operation)",
    ("McpListTools", "tools"): _HOSTED + " (an MCP server's tool list)",
    ("McpCall", "error"): _HOSTED,
    ("ResponseFunctionToolCallOutputItem", "output"): _INPUT,
    ("ResponseCustomToolCallOutputItem", "output"): _INPUT,
    ("ResponseToolSearchOutputItem", "tools"): _ECHO + " (tool definitions)",
    ("AdditionalTools", "tools"): _ECHO + " (tool definitions)",
    # The request: its settings that are JSON Schemas, templates or preview knobs.
    ("ResponseCreateRequest", "moderation"): "kept as JSON: a preview setting (model, policy)",
    ("ResponseCreateRequest", "prompt_cache_options"): "kept as JSON: a preview setting",
    ("ResponseCreateRequest", "image"): "kept as JSON: a preview setting",
    ("ResponseCreateRequest", "access_programs"): "kept as JSON: a preview setting",
    ("ResponseCreateRequest", "background_options"): "kept as JSON: a preview setting",
    ("ResponseTextConfig", "format"): "kept as JSON: a text format, or a JSON Schema",
    ("ResponsePrompt", "variables"): "kept as JSON: a template's values (text or input parts)",
    **{
        (part, "prompt_cache_breakpoint"): "kept as JSON: a preview setting"
        for part in ("ResponseInputText", "ResponseInputImage", "ResponseInputFile")
    },
}

# Spec types no SDK model maps to.
EXTRA_TYPES = {
    "ResponseErrorEventError": "the nested error of an `error` event, as the live API sends it",
}

FAMILY = Family(
    "responses",
    "spec/responses_stream_event.yaml",
    Allowed(
        renamed=RENAMED,
        param_suffix="Param",
        extra_members=EXTRA_MEMBERS,
        extra_keys=EXTRA_KEYS,
        looser=LOOSER,
        kept_as_json=KEPT_AS_JSON,
        extra_types=EXTRA_TYPES,
        collapsed={"ResponseToolChoice": _TOOL_CHOICE},
        merged=MERGED,
        other_members=OTHER_MEMBERS,
        tighter=TIGHTER,
    ),
)

# The SDK's roots, with the spec type each is.
ROOTS: tuple[tuple[Any, str], ...] = (
    (ResponseStreamEvent, "ResponseStreamEvent"),
    (Response, "Response"),
    # The request body: openai-python's TypedDict params, compared key by key the same
    # way (the streaming and non-streaming params differ in `stream` alone).
    (ResponseCreateParamsBase, "ResponseCreateRequest"),
)

COMPARISON = Comparison(FAMILY).run(ROOTS)


# --- the tests ------------------------------------------------------------------------


def test_every_sdk_model_matches_its_spec_type() -> None:
    assert not COMPARISON.problems, "\n".join(COMPARISON.problems)


def test_every_sdk_model_reachable_has_a_spec_type_or_is_kept_as_json() -> None:
    """The mapping is total: every SDK model the roots reach is compared, or sits under a
    key listed in KEPT_AS_JSON."""
    missing = [
        f"{model.__module__}.{model.__name__}"
        for model in uncompared(COMPARISON, (annotation for annotation, _ in ROOTS))
    ]
    assert not missing, f"SDK models the spec has no type for: {missing}"
    assert len(COMPARISON.visited) >= 120
    # What is kept as JSON stays the lesser part.
    assert len(COMPARISON.kept) < 2 * len(COMPARISON.visited)


def test_every_spec_type_stands_for_an_sdk_model_or_keeps_unknowns() -> None:
    """And the other way: a spec type is an SDK model, an `Other…` member, or listed;
    every listed departure is one the spec makes."""
    left = stray_types(COMPARISON)
    assert not left, f"spec types no SDK model maps to: {left}"
    assert set(FAMILY.unions) == COMPARISON.unions, "every named union is one of the SDK's"
    assert not COMPARISON.unused(), "departures listed that the spec does not make"


def test_every_union_is_open() -> None:
    for union in FAMILY.unions.values():
        others = [m for m in union.members if FAMILY.is_other(m)]
        assert len(others) == 1 and others[0].startswith("Other"), union.name


def test_every_event_of_the_sdk_is_a_member_of_the_root_union() -> None:
    members = set(FAMILY.unions["ResponseStreamEvent"].members)
    events = {
        COMPARISON.visited[m]
        for m in reachable([ResponseStreamEvent])
        if m.__name__.endswith("Event")
    }
    assert len(events) == 59
    assert events <= members


# --- the comparison fails where the SDK grows -----------------------------------------


class UsageWithANewCount(ResponseUsage):
    """What an SDK release that adds a count to ResponseUsage would declare."""

    brand_new_tokens: Optional[int] = None  # noqa: UP045 (the SDK's own spelling)


class TextDeltaWithRequiredObfuscation(ResponseTextDeltaEvent):
    item_id: Optional[str] = None  # type: ignore[assignment]  # noqa: UP045


class HologramItem(pydantic.BaseModel):
    frames: list[int]
    type: Literal["hologram"]


class AddedNewItem(ResponseOutputItemAddedEvent):
    item: Annotated[  # type: ignore[assignment]
        Union[ResponseOutputMessage, HologramItem],  # noqa: UP007
        pydantic.Discriminator("type"),
    ]


class MessageWithANewStatus(ResponseOutputMessage):
    status: Literal["in_progress", "completed", "incomplete", "daydreaming"]  # type: ignore[assignment]


class TextWithAnnotationsAsText(ResponseOutputText):
    annotations: str  # type: ignore[assignment]


class FunctionToolWithANewKey(FunctionToolParam, total=False):
    """What an SDK release that adds a key to a request's function tool would declare."""

    brand_new: str


class EasyMessageWithTypeRequired(EasyInputMessageParam, total=False):
    type: Required[Literal["message"]]  # type: ignore[misc]


@pytest.mark.parametrize(
    ("model", "spec", "expected"),
    [
        (UsageWithANewCount, "ResponseUsage", "ResponseUsage.brand_new_tokens: in the SDK's"),
        (
            TextDeltaWithRequiredObfuscation,
            "ResponseTextDeltaEvent",
            "ResponseTextDeltaEvent.item_id: required",
        ),
        (
            AddedNewItem,
            "ResponseOutputItemAddedEvent",
            "union ResponseOutputItem lacks HologramItem",
        ),
        (MessageWithANewStatus, "ResponseOutputMessage", "lacks the SDK's values ['daydreaming']"),
        (TextWithAnnotationsAsText, "ResponseOutputText", "the SDK's str is list[Annotation]"),
        (FunctionToolWithANewKey, "FunctionTool", "FunctionTool.brand_new: in the SDK's"),
        (EasyMessageWithTypeRequired, "EasyInputMessage", "EasyInputMessage.type: required"),
    ],
)
def test_a_change_in_the_sdk_fails_naming_the_type_and_key(
    model: type[Any], spec: str, expected: str
) -> None:
    problems = Comparison(FAMILY).run([(model, spec)]).problems
    assert any(expected in problem for problem in problems), problems


def test_a_new_sdk_model_is_caught_by_the_totality_check() -> None:
    """HologramItem has no spec type: the comparison never reaches it."""
    comparison = Comparison(FAMILY).run([(AddedNewItem, "ResponseOutputItemAddedEvent")])
    assert HologramItem in uncompared(comparison, [AddedNewItem])


def test_a_departure_the_spec_no_longer_makes_is_reported() -> None:
    allowed = Allowed(
        renamed=RENAMED,
        param_suffix="Param",
        looser={("ResponseUsage", "input_tokens"): "no server leaves it out"},
    )
    comparison = Comparison(Family("responses", FAMILY.file, allowed)).run(ROOTS)
    assert "ResponseUsage.input_tokens" in comparison.unused()


def test_an_enum_value_the_sdk_lacks_needs_a_comment() -> None:
    comparison = Comparison(FAMILY)
    comparison.enum_values["ResponseStatus"] = {"completed"}
    comparison.check_enums()
    assert any("value 'failed' is not the SDK's" in p for p in comparison.problems)
