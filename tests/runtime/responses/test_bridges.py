"""The judges of the bridges between chat, Messages and Responses, in every target: each
captured chat stream written as Responses is read by openai-python and the Vercel AI
SDK with the meanings our `summary()` reads from the original, and reads back (as chat,
and through Messages) to the same summary; each captured Responses stream written as
chat and as Messages is read by openai-python and anthropic-sdk-python with the
meanings openai-python reads from the capture itself."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import openai
import pytest

from tests.helpers.loopback import StreamSpec, serve, stream_app
from tests.helpers.messages_judges import meanings_of_sdk_message, read_many_with_anthropic_sdk
from tests.helpers.responses_invariants import check_responses
from tests.helpers.responses_judges import (
    meanings_of_ai_sdk_reading,
    meanings_of_response,
    read_many_with_ai_sdk,
    read_many_with_openai_sdk,
)
from tests.helpers.support import FIXTURE_STREAMS, REPORT, TARGETS
from tests.runtime.messages.test_bridges import (
    _read_chat,
    chat_body,
    chat_meanings,
    chat_summary,
    plain,
)

CAPTURES = sorted((Path(__file__).parents[2] / "fixtures" / "responses").glob("*.sse"))
INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}
"""The finish reasons a response ends `incomplete` for, and why, in Responses' terms."""
AI_SDK_FINISH = {"stop": "stop", "tool_calls": "tool-calls", "length": "length"}
AI_SDK_FINISH["content_filter"] = "content-filter"


def to_responses(module: ModuleType, data: bytes, protocol: str = "chat") -> bytes:
    """A stream bridged to Responses (what Responses cannot hold is said in a warning,
    which the tests of the writer look at)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parts = module.iter_parts(data, protocol=protocol)
        return b"".join(module.write_parts(parts, protocol="responses"))


def json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def expected_of(summary: Any) -> dict[str, Any]:
    """The meanings a Responses judge should read from a chat stream's bridge, from its
    summary: the first choice's (a response is one), the finish as the response's
    status, and the counts the source did not say as 0 (the clients require them)."""
    usage = summary.usage
    choice = summary.choices[0]
    why = INCOMPLETE.get(choice.finish_reason or "")
    return {
        "reasoning": choice.reasoning,
        "text": choice.text,
        "refusal": choice.refusal,
        "tool_calls": [(t.name or "", json_or_text(t.arguments)) for t in choice.tool_calls],
        "status": "incomplete" if why else "completed",
        "incomplete_reason": why,
        "usage": {
            "prompt_tokens": usage.prompt_tokens or 0,
            "completion_tokens": usage.completion_tokens or 0,
            "cached_prompt_tokens": usage.cached_prompt_tokens or 0,
            "reasoning_tokens": usage.reasoning_tokens or 0,
        },
    }


def judged(meanings: dict[str, Any]) -> dict[str, Any]:
    """What openai-python read, in the terms of `expected_of` (ids are the writer's)."""
    return {
        "reasoning": meanings["reasoning"],
        "text": meanings["text"],
        "refusal": meanings["refusal"],
        "tool_calls": [(name, given) for _, name, given in meanings["tool_calls"]],
        "status": meanings["status"],
        "incomplete_reason": meanings["incomplete_reason"],
        "usage": meanings["usage"],
    }


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_chat_capture_bridged_to_responses_is_read_by_openai_python(target: str) -> None:
    module = TARGETS[target]
    bodies = [to_responses(module, chat_body(stream)) for stream in FIXTURE_STREAMS]
    for stream, data in zip(FIXTURE_STREAMS, bodies, strict=True):
        checked = check_responses(data)
        assert checked.terminal in ("response.completed", "response.incomplete"), stream.name
    read = read_many_with_openai_sdk(bodies, final=False)
    same = 0
    for stream, seen in zip(FIXTURE_STREAMS, read, strict=True):
        assert not isinstance(seen, Exception), (stream.name, seen)
        want = expected_of(chat_summary(module, chat_body(stream)))
        got = meanings_of_response(seen["response"])
        assert judged(got) == want, stream.name
        ids = [call_id for call_id, _, _ in got["tool_calls"]]
        assert all(ids) and len(set(ids)) == len(ids), stream.name
        same += 1
    REPORT[f"chat -> Responses, openai-python, {target}"] = (
        f"{same}/{len(FIXTURE_STREAMS)} captured chat streams read with their meanings"
    )


def test_openai_python_gets_the_final_response_of_every_completed_bridge() -> None:
    """`get_final_response()`, with openai-python's identity checks, for every bridge
    that ends `response.completed` (it raises for any other end, by design)."""
    module = TARGETS["msgspec"]
    bodies = [to_responses(module, chat_body(stream)) for stream in FIXTURE_STREAMS]
    completed = [body for body in bodies if b"event: response.completed" in body]
    assert len(completed) >= len(bodies) - 3
    for seen in read_many_with_openai_sdk(completed):
        assert not isinstance(seen, Exception), seen
        assert seen["response"]["status"] == "completed"


def test_the_vercel_ai_sdk_reads_every_chat_capture_bridged_to_responses() -> None:
    bodies, wanted = [], []
    for module in TARGETS.values():
        for stream in FIXTURE_STREAMS:
            bodies.append(to_responses(module, chat_body(stream)))
            wanted.append((stream.name, expected_of(chat_summary(module, chat_body(stream)))))
    for (name, want), seen in zip(wanted, read_many_with_ai_sdk(bodies), strict=True):
        got = meanings_of_ai_sdk_reading(seen)
        assert got["errors"] == [], (name, got["errors"])
        # The AI SDK has no refusal: it drops the refusal part.
        assert (got["reasoning"], got["text"]) == (want["reasoning"], want["text"]), name
        calls = [(name_, given) for _, name_, given in got["tool_calls"]]
        assert calls == [(n, a) for n, a in want["tool_calls"]], name
        finish = "length" if want["incomplete_reason"] == "max_output_tokens" else None
        if want["incomplete_reason"] == "content_filter":
            finish = "content-filter"
        elif finish is None:
            finish = "tool-calls" if want["tool_calls"] else "stop"
        assert got["finish_reason"] == finish, name
        assert got["usage"] == want["usage"], name


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_chat_capture_bridged_to_responses_and_back_says_the_same(target: str) -> None:
    """chat -> Responses -> chat, and chat -> Responses -> Messages -> chat: the same
    summary, but for what Responses (or Messages) cannot hold: choices after the first,
    tools another protocol's server ran, counts the source did not say (0 there), a
    finish reason (`counted`), and the ids of calls that had none."""
    module = TARGETS[target]
    for stream in FIXTURE_STREAMS:
        data = chat_body(stream)
        before = chat_summary(module, data)
        responses = to_responses(module, data)
        again = b"".join(
            module.write_parts(module.iter_parts(responses, protocol="responses"), protocol="chat")
        )
        assert counted(chat_summary(module, again)) == counted(before), stream.name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            messages = b"".join(
                module.write_parts(
                    module.iter_parts(responses, protocol="responses"), protocol="messages"
                )
            )
        through = b"".join(
            module.write_parts(module.iter_parts(messages, protocol="messages"), protocol="chat")
        )
        assert counted(chat_summary(module, through)) == counted(before), stream.name


def counted(summary: Any) -> dict[str, Any]:
    """`plain`, as Responses can say it: every count the source did not say as 0, and
    the finish as a response's status says it (Responses has no finish reason: a
    response ends incomplete for `length` or `content_filter`, and a reader takes
    "tool_calls" from its calls, else "stop")."""
    said = plain(summary)
    said["usage"] = {key: value or 0 for key, value in said["usage"].items()}
    for choice in said["choices"]:
        if choice["finish_reason"] not in INCOMPLETE:
            choice["finish_reason"] = "tool_calls" if choice["tool_calls"] else "stop"
    return said


def openai_meanings(captures: list[bytes]) -> list[dict[str, Any] | Exception]:
    """What openai-python reads from each capture: the meanings of the response its
    last terminal event holds (openai-python's own backfill of its output included);
    the `APIError` it raises for a stream that reports an error. Where it refuses a
    stream whose ids change (GitHub Copilot's, OpenAI's tool search), the meanings of
    the response our accumulator adds up, which tolerates that."""
    read = read_many_with_openai_sdk(captures, final=False)
    out: list[dict[str, Any] | Exception] = []
    for data, seen in zip(captures, read, strict=True):
        if isinstance(seen, openai.APIError):
            out.append(seen)
        elif isinstance(seen, Exception):
            assert "identity changed" in str(seen), seen
            out.append(meanings_of_response(accumulated(data)))
        else:
            out.append(meanings_of_response(seen["response"] or {}))
    return out


def accumulated(data: bytes) -> dict[str, Any]:
    module = TARGETS["typeddicts"]
    accumulator = module.ResponseAccumulator()
    for event in module.iter_events(data, protocol="responses"):
        accumulator.add(event)
    result: dict[str, Any] = accumulator.result()
    return result


def in_chat_terms(meanings: dict[str, Any]) -> dict[str, Any]:
    """What a Responses judge read, as a chat client reads it: reasoning, text and
    refusal, the calls (function and custom) by name and arguments, and the usage."""
    calls = meanings["tool_calls"] + meanings["custom_tool_calls"]
    usage = meanings["usage"] or {}
    return {
        "reasoning": meanings["reasoning"],
        "text": meanings["text"] + meanings["refusal"],
        "tool_calls": [(name, given) for _, name, given in calls],
        "prompt_tokens": usage.get("prompt_tokens") or 0,
        "completion_tokens": usage.get("completion_tokens") or 0,
    }


SAID_OTHERWISE = {"openai__shell-container-command-output"}
"""Captures whose `*.done` text is not what their deltas joined (the source's
fixture was edited by hand): a bridge writes the deltas as they come, and cannot take
them back when the done event says otherwise; openai-python keeps the done text."""


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_responses_capture_bridged_to_chat_is_read_by_openai_python(target: str) -> None:
    """openai-python reads each Responses capture written as chat with the meanings it
    reads from the capture itself; a capture that ends in an error ends in an error for
    it too."""
    module = TARGETS[target]
    captures = [path.read_bytes() for path in CAPTURES]
    theirs = openai_meanings(captures)
    bridged = {
        path.stem: b"".join(
            module.write_parts(module.iter_parts(data, protocol="responses"), protocol="chat")
        )
        for path, data in zip(CAPTURES, captures, strict=True)
    }
    app = stream_app({name: StreamSpec([data]) for name, data in bridged.items()})
    same = 0
    with serve(app) as base:
        for path, seen in zip(CAPTURES, theirs, strict=True):
            name = path.stem
            client = openai.OpenAI(base_url=f"{base}/streams/{name}/v1", api_key="x", max_retries=0)
            with client:
                if isinstance(seen, Exception):
                    with pytest.raises(openai.APIError):
                        _read_chat(client)
                    continue
                final = _read_chat(client)
            if name in SAID_OTHERWISE:
                continue
            got = chat_meanings(final)
            want = in_chat_terms(seen)
            assert (got["reasoning"], got["text"]) == (want["reasoning"], want["text"]), name
            calls = [(n, a) for n, a in got["tool_calls"]]
            assert calls == want["tool_calls"], name
            usage = got["usage"]
            assert (usage["prompt_tokens"], usage["completion_tokens"]) == (
                want["prompt_tokens"],
                want["completion_tokens"],
            ), name
            same += 1
    REPORT[f"Responses -> chat, openai-python, {target}"] = (
        f"{same} of {len(CAPTURES)} Responses captures read with openai-python's own"
        " meanings; the others end in an error, as they do, or say otherwise when done"
    )


def test_every_responses_capture_bridged_to_messages_is_read_by_anthropic_sdk_python() -> None:
    module = TARGETS["msgspec"]
    captures = [path.read_bytes() for path in CAPTURES]
    theirs = openai_meanings(captures)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bridged = [
            b"".join(
                module.write_parts(
                    module.iter_parts(data, protocol="responses"), protocol="messages"
                )
            )
            for data in captures
        ]
    same = 0
    read = read_many_with_anthropic_sdk(bridged)
    for path, seen, mine in zip(CAPTURES, theirs, read, strict=True):
        if isinstance(seen, Exception):
            assert isinstance(mine, Exception), path.name
            continue
        assert not isinstance(mine, Exception), (path.name, mine)
        if path.stem in SAID_OTHERWISE:
            continue
        got = meanings_of_sdk_message(mine["message"])
        want = in_chat_terms(seen)
        assert (got["reasoning"], got["text"]) == (want["reasoning"], want["text"]), path.name
        calls = [
            (n, a if isinstance(a, dict) else {"_raw_arguments": a}) for n, a in want["tool_calls"]
        ]
        assert [(n, a) for _, n, a in got["tool_calls"]] == calls, path.name
        same += 1
    REPORT["Responses -> Messages, anthropic-sdk-python, msgspec"] = (
        f"{same} of {len(CAPTURES)} Responses captures read with openai-python's meanings"
    )


def test_a_tool_the_server_ran_is_said_lost_when_written_as_chat() -> None:
    """A Responses stream's web search, written as chat (which has no place for a tool
    the server ran), is counted and said in a `ChatLossWarning`; the answer is not."""
    module = TARGETS["msgspec"]
    data = (CAPTURES[0].parent / "openai__web-search-reasoning.sse").read_bytes()
    with pytest.warns(module.ChatLossWarning, match=r"not written as chat: 1 server_tool"):
        written = b"".join(
            module.write_parts(module.iter_parts(data, protocol="responses"), protocol="chat")
        )
    accumulator = module.ChunkAccumulator()
    for chunk in module.iter_chunks(written):
        accumulator.add(chunk)
    assert accumulator.summary().choices[0].text
