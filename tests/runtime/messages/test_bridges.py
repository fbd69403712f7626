"""The judges of the bridges between chat and Messages, in every target: each captured
chat stream written as Messages is read by anthropic-sdk-python and the Vercel AI SDK
with the meanings our `summary()` reads from the original, and reads back to the same
summary; each captured Messages stream written as chat is read by openai-python with
the meanings anthropic-sdk-python reads from the capture."""

from __future__ import annotations

import json
import warnings
from types import ModuleType
from typing import Any

import openai
import pytest
from jiter import from_json
from openai.lib.streaming.chat import ChatCompletionStreamState

from tests.helpers.loopback import StreamSpec, serve, stream_app
from tests.helpers.messages_invariants import check_messages
from tests.helpers.messages_judges import (
    meanings_of_ai_sdk_reading,
    meanings_of_sdk_message,
    read_many_with_ai_sdk,
    read_many_with_anthropic_sdk,
)
from tests.helpers.support import FIXTURE_STREAMS, REPORT, TARGETS, Stream
from tests.runtime.messages.test_events import CAPTURES

STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}
STOP["content_filter"] = "refusal"
"""Chat's finish reasons as a Messages stream says them."""
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}
FINISH |= {"tool_use": "tool_calls", "refusal": "content_filter"}
"""Anthropic's stop reasons in chat's terms."""
AI_SDK_FINISH: dict[str | None, str] = {"end_turn": "stop", "max_tokens": "length"}
AI_SDK_FINISH |= {"tool_use": "tool-calls", "refusal": "content-filter", None: "unknown"}
"""The AI SDK's finish reason for each stop reason our writer writes."""


def chat_body(stream: Stream) -> bytes:
    return b"".join(f"data: {text}\n\n".encode() for _, text in stream.chunks) + b"data: [DONE]\n\n"


def chat_summary(module: ModuleType, data: bytes) -> Any:
    accumulator = module.ChunkAccumulator()
    for chunk in module.iter_chunks(data):
        accumulator.add(chunk)
    return accumulator.summary()


def to_messages(module: ModuleType, data: bytes) -> bytes:
    """A chat stream bridged to Messages (what Messages cannot hold is said in a
    warning, which the tests of the writer look at)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return b"".join(module.write_parts(module.iter_parts(data), protocol="messages"))


def arguments(text: str) -> Any:
    """A call's arguments as a Messages input holds them."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {"_raw_arguments": text}
    return value if isinstance(value, dict) else {"_raw_arguments": text}


def expected_of(summary: Any) -> dict[str, Any]:
    """The meanings a Messages judge should read from a chat stream's bridge, from its
    summary: the first choice's (a message is one), a refusal as text of its own block,
    and the counts the source did not say as 0 (Messages requires them)."""
    usage = summary.usage
    choice = summary.choices[0] if summary.choices else None
    return {
        "reasoning": choice.reasoning if choice else "",
        "text": (choice.text + choice.refusal) if choice else "",
        "tool_calls": [
            (t.name or "", arguments(t.arguments)) for t in (choice.tool_calls if choice else ())
        ],
        "stop_reason": STOP.get(choice.finish_reason, choice.finish_reason) if choice else None,
        "usage": {
            "prompt_tokens": usage.prompt_tokens or 0,
            "completion_tokens": usage.completion_tokens or 0,
            "cached_prompt_tokens": usage.cached_prompt_tokens,
        },
    }


def judged(meanings: dict[str, Any]) -> dict[str, Any]:
    """What a judge read, in the terms of `expected_of` (ids are the writer's)."""
    return {
        "reasoning": meanings["reasoning"],
        "text": meanings["text"],
        "tool_calls": [(name, given) for _, name, given in meanings["tool_calls"]],
        "stop_reason": meanings.get("stop_reason"),
        "usage": meanings["usage"],
    }


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_chat_capture_bridged_to_messages_is_read_by_anthropic_sdk_python(
    target: str,
) -> None:
    module = TARGETS[target]
    bodies = [to_messages(module, chat_body(stream)) for stream in FIXTURE_STREAMS]
    for stream, data in zip(FIXTURE_STREAMS, bodies, strict=True):
        assert check_messages(data).error is None, stream.name
    read = read_many_with_anthropic_sdk(bodies)
    same = 0
    for stream, seen in zip(FIXTURE_STREAMS, read, strict=True):
        assert not isinstance(seen, Exception), (stream.name, seen)
        want = expected_of(chat_summary(module, chat_body(stream)))
        assert judged(meanings_of_sdk_message(seen["message"])) == want, stream.name
        same += 1
    REPORT[f"chat -> Messages, anthropic-sdk-python, {target}"] = (
        f"{same}/{len(FIXTURE_STREAMS)} captured chat streams read with their meanings"
    )


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_chat_capture_bridged_to_messages_and_back_says_the_same(target: str) -> None:
    """chat -> Messages -> chat: the same summary, but for what Messages cannot hold:
    choices after the first, tools the server ran, cited sources (a Messages citation
    is a place in a document the request gave), counts the source did not say (0
    there), and the ids of calls that had none."""
    module = TARGETS[target]
    for stream in FIXTURE_STREAMS:
        data = chat_body(stream)
        before = chat_summary(module, data)
        messages = to_messages(module, data)
        again = b"".join(
            module.write_parts(module.iter_parts(messages, protocol="messages"), protocol="chat")
        )
        after = chat_summary(module, again)
        assert plain(after) == plain(before), stream.name


def plain(summary: Any) -> dict[str, Any]:
    choices = summary.choices[:1]
    usage = summary.usage
    return {
        "choices": [
            {
                "text": c.text,
                "reasoning": c.reasoning,
                "refusal": c.refusal,
                "finish_reason": c.finish_reason,
                "tool_calls": [(t.name or None, arguments(t.arguments)) for t in c.tool_calls],
            }
            for c in choices
        ],
        "usage": {
            "prompt_tokens": usage.prompt_tokens or 0,
            "completion_tokens": usage.completion_tokens or 0,
            "cached_prompt_tokens": usage.cached_prompt_tokens,
            "reasoning_tokens": usage.reasoning_tokens or None,
            "cost_usd": usage.cost_usd,
        },
    }


def test_the_vercel_ai_sdk_reads_every_chat_capture_bridged_to_messages() -> None:
    bodies, wanted = [], []
    for module in TARGETS.values():
        for stream in FIXTURE_STREAMS:
            bodies.append(to_messages(module, chat_body(stream)))
            wanted.append((stream.name, expected_of(chat_summary(module, chat_body(stream)))))
    for (name, want), seen in zip(wanted, read_many_with_ai_sdk(bodies), strict=True):
        got = meanings_of_ai_sdk_reading(seen)
        assert got["errors"] == [], (name, got["errors"])
        assert (got["reasoning"], got["text"]) == (want["reasoning"], want["text"]), name
        calls = [(name_, given) for _, name_, given in got["tool_calls"]]
        assert calls == want["tool_calls"], name
        assert got["finish_reason"] == AI_SDK_FINISH.get(want["stop_reason"], "other"), name
        if got["usage"] is not None:
            assert got["usage"] == want["usage"], name


def sdk_meanings(capture: bytes) -> dict[str, Any] | Exception:
    [seen] = read_many_with_anthropic_sdk([capture])
    return seen if isinstance(seen, Exception) else meanings_of_sdk_message(seen["message"])


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_messages_capture_bridged_to_chat_is_read_by_openai_python(target: str) -> None:
    """openai-python reads each Messages capture written as chat with the meanings
    anthropic-sdk-python reads from the capture itself; a capture that ends in an error
    or is cut off before `message_stop` ends in an error for it too."""
    module = TARGETS[target]
    captures = [path.read_bytes() for path in CAPTURES]
    theirs = read_many_with_anthropic_sdk(captures)
    bridged = {
        path.stem: b"".join(
            module.write_parts(module.iter_parts(data, protocol="messages"), protocol="chat")
        )
        for path, data in zip(CAPTURES, captures, strict=True)
    }
    complete = {
        path.stem: _complete(module, data) for path, data in zip(CAPTURES, captures, strict=True)
    }
    app = stream_app({name: StreamSpec([data]) for name, data in bridged.items()})
    same = 0
    with serve(app) as base:
        for path, seen in zip(CAPTURES, theirs, strict=True):
            name = path.stem
            client = openai.OpenAI(base_url=f"{base}/streams/{name}/v1", api_key="x", max_retries=0)
            with client:
                if isinstance(seen, Exception) or not complete[name]:
                    with pytest.raises(openai.APIError):
                        _read_chat(client)
                    continue
                final = _read_chat(client)
            want = judged(meanings_of_sdk_message(seen["message"]))
            got = chat_meanings(final)
            several = captures[CAPTURES.index(path)].count(b'"message_start"') > 1
            if several and got != chat_terms(want):
                # One body, several messages: the SDK keeps the first message's blocks
                # and puts the later deltas in them by index, losing their text; we
                # keep every message's, in order.
                assert got["text"].startswith(want["text"]), name
                assert len(got["text"]) > len(want["text"]), name
                continue
            assert got == chat_terms(want), name
            same += 1
    REPORT[f"Messages -> chat, openai-python, {target}"] = (
        f"{same} of {len(CAPTURES)} Messages captures read with the anthropic SDK's meanings;"
        " the others end in an error, as they do, or hold several messages"
    )


def _complete(module: ModuleType, data: bytes) -> bool:
    events = module.iter_events(data, protocol="messages")
    try:
        for _ in events:
            pass
    except module.StreamError:
        return False
    return bool(events.done)


def _read_chat(client: openai.OpenAI) -> Any:
    """openai-python's own accumulation of a chat stream (the state its `stream()`
    helper keeps, read as it stands: the helper refuses a `length` finish)."""
    state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
    chunks = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    with chunks:
        for chunk in chunks:
            state.handle_chunk(chunk)
    return state.current_completion_snapshot


def chat_meanings(final: Any) -> dict[str, Any]:
    """What openai-python's final completion holds, in the terms of `judged`."""
    [choice] = final.choices
    message = choice.message
    extra = message.model_extra or {}
    usage = final.usage
    details = usage.prompt_tokens_details if usage else None
    return {
        "reasoning": extra.get("reasoning_content") or "",
        "text": (message.content or "") + (message.refusal or ""),
        "tool_calls": [
            # As anthropic-sdk-python reads a call's input: a JSON text cut short (a
            # stream that hit max_tokens) is read as far as it goes.
            (
                call.function.name,
                from_json((call.function.arguments or "{}").encode(), partial_mode=True),
            )
            for call in message.tool_calls or []
        ],
        "stop_reason": choice.finish_reason,
        "usage": {
            "prompt_tokens": usage.prompt_tokens if usage else 0,
            "completion_tokens": usage.completion_tokens if usage else 0,
            "cached_prompt_tokens": details.cached_tokens if details else None,
        },
    }


def chat_terms(want: dict[str, Any]) -> dict[str, Any]:
    """What a Messages judge read, as a chat client reads it."""
    stop = want["stop_reason"]
    return {**want, "stop_reason": FINISH.get(stop, stop)}


@pytest.mark.parametrize("dialect", ["reasoning_content", "reasoning", "think_tags"])
def test_a_messages_capture_written_as_chat_in_each_dialect_says_the_same(dialect: str) -> None:
    """Messages -> chat in each dialect reads back, with the dialect's reader, to what
    the Messages stream says: reasoning where the dialect puts it, text, calls, the
    finish in chat's terms, usage, and signatures and redacted reasoning as
    `reasoning_items`."""
    module = TARGETS["msgspec"]
    tags = ("<think>", "</think>") if dialect == "think_tags" else None
    for path in CAPTURES:
        data = path.read_bytes()
        if not _complete(module, data) or data.count(b'"message_start"') > 1:
            continue  # an error ends it (tested above); several messages: one choice
        accumulator = module.MessageAccumulator()
        for event in module.iter_events(data, protocol="messages"):
            accumulator.add(event)
        want = accumulator.summary()
        parts = module.iter_parts(data, protocol="messages")
        chat = b"".join(module.write_parts(parts, dialect=dialect))
        chunks = module.ChunkAccumulator(think_tags=tags)
        for chunk in module.iter_chunks(chat):
            chunks.add(chunk)
        got = chunks.summary()
        [mine], [theirs] = got.choices, want.choices
        assert (mine.reasoning, mine.text, mine.refusal) == (
            theirs.reasoning,
            theirs.text,
            theirs.refusal,
        ), (path.name, dialect)
        assert mine.finish_reason == theirs.finish_reason, path.name
        assert [(t.name, arguments(t.arguments)) for t in mine.tool_calls] == [
            (t.name, arguments(t.arguments)) for t in theirs.tool_calls
        ], path.name
        assert [(i.kind, i.value) for i in mine.reasoning_items] == [
            (i.kind, i.value) for i in theirs.reasoning_items
        ], path.name
        assert (got.usage.prompt_tokens, got.usage.completion_tokens) == (
            want.usage.prompt_tokens,
            want.usage.completion_tokens,
        ), path.name
