"""Token frames (issue 24): `TokenFrames(probe).frame(text)` is, byte for byte, what the
module's writer writes of the probe with that text in its token field, in all four
targets, for probes drawn from the whole spec (vendor and unknown keys) and any text."""

from __future__ import annotations

import copy
import itertools
import json
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.generated.strategies import chat_completion_chunk, choice_delta
from tests.helpers.project import REPO, run_generator
from tests.helpers.support import TARGETS, load_module

MODULES = list(TARGETS.values())
TOKEN_KEYS = ("content", "refusal", "reasoning_content", "reasoning")
DIALECTS = (None, "reasoning_content", "reasoning")
"""No dialect, and every dialect without tags."""
TEXTS = st.text(st.characters(codec=None, exclude_categories=()), max_size=40) | st.sampled_from(
    ["", '"', "\\", "\n\t\r\b\f", "\x00\x1f\x7f", "\u2028\u2029", "\U0001f600", "a" * 5000]
)


def probe_data(chunk: dict[str, Any], delta: dict[str, Any], key: str, text: str) -> dict[str, Any]:
    """A chunk with one choice whose delta sets `key` (and no other token key) to a text."""
    delta = {k: v for k, v in delta.items() if k not in TOKEN_KEYS or v is None}
    choice = {"index": 0, "delta": {**delta, key: text}}
    return {**chunk, "choices": [choice]}


def with_text(module: ModuleType, probe: Any, key: str, text: str) -> Any:
    """The probe with `text` at `key`, set as a user would: copies down to the delta."""
    if module is TARGETS["typeddicts"]:
        choice = probe["choices"][0]
        return {**probe, "choices": [{**choice, "delta": {**choice["delta"], key: text}}]}
    choice = copy.copy(probe.choices[0])
    choice.delta = copy.copy(choice.delta)
    setattr(choice.delta, key, text)
    changed = copy.copy(probe)
    changed.choices = [choice]
    return changed


def written(module: ModuleType, chunk: Any) -> bytes | type[Exception]:
    try:
        event: bytes = module.sse_chunk(chunk)
        return event
    except Exception as exc:  # the writer refuses it: the frame must refuse it alike
        return type(exc)


def framed(frames: Any, text: str) -> bytes | type[Exception]:
    try:
        return frames.frame(text)  # type: ignore[no-any-return]
    except Exception as exc:
        return type(exc)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    chunk=chat_completion_chunk,
    delta=choice_delta,
    key=st.sampled_from(TOKEN_KEYS),
    texts=st.lists(TEXTS, min_size=1, max_size=4),
)
def test_a_frame_is_what_the_writer_writes(
    module: ModuleType, chunk: dict[str, Any], delta: dict[str, Any], key: str, texts: list[str]
) -> None:
    data = probe_data(chunk, delta, key, "probe")
    try:
        probe = module.loads(json.dumps(data))
    except module.ChunkDecodeError:
        return  # not a chunk (an error report, say): not a probe either
    try:
        frames = module.TokenFrames(probe)
    except module.TokenFramesError as exc:
        assert "elsewhere" in str(exc), exc  # only a probe that holds the cut's text
        return
    for text in texts:
        assert framed(frames, text) == written(module, with_text(module, probe, key, text))


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_a_probe_built_with_the_classes_frames_what_they_write(module: ModuleType) -> None:
    def chunk(text: str) -> Any:  # keywords out of spec order, as a server may give them
        choice = module.Choice(finish_reason=None, delta=module.ChoiceDelta(content=text), index=0)
        return module.ChatCompletionChunk(model="m", choices=[choice], id="c", created=1)

    frames = module.TokenFrames(chunk(""))
    for text in ["", "a", '"\\', "\u2028 é \U0001f600"]:
        assert frames.frame(text) == module.sse_chunk(chunk(text))
    if module is not TARGETS["typeddicts"]:  # a TypedDict is the dict as it was made
        assert frames.frame("a").startswith(b'data: {"id":"c","choices":[{"index":0,"delta":')


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_probes_it_cannot_frame_are_refused(module: ModuleType) -> None:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    cases = {
        "one choice, not 0": {**base, "choices": []},
        "one choice, not 2": {
            **base,
            "choices": [{"index": i, "delta": {"content": "a"}} for i in range(2)],
        },
        "sets content, reasoning": {
            **base,
            "choices": [{"index": 0, "delta": {"content": "a", "reasoning": "b"}}],
        },
        "sets none": {**base, "choices": [{"index": 0, "delta": {"role": "assistant"}}]},
        "elsewhere": {
            **base,
            "model": "chunkspec:token-frame",
            "choices": [{"index": 0, "delta": {"content": "a"}}],
        },
    }
    for says, data in cases.items():
        with pytest.raises(module.TokenFramesError, match=says.split(", ")[-1]):
            module.TokenFrames(module.loads(json.dumps(data)))
    probe = module.loads(
        json.dumps(
            cases["one choice, not 2"] | {"choices": [{"index": 0, "delta": {"content": "a"}}]}
        )
    )
    with pytest.raises(module.TokenFramesError, match="across frames"):
        module.TokenFrames(probe, dialect="think_tags")
    with pytest.raises(TypeError, match="a token is a str"):
        module.TokenFrames(probe).frame(5)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_the_frames_around_the_tokens_and_other_choices(module: ModuleType) -> None:
    """The first frame (the role), the finish frame (with usage), a frame of another
    choice and a frame in a dialect are what the writer writes of those chunks."""
    data = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "system_fingerprint": "fp",
        "choices": [{"index": 0, "delta": {"reasoning": "r"}, "logprobs": None}],
    }
    probe = module.loads(json.dumps(data))
    frames = module.TokenFrames(probe)
    events = [frames.first("a"), frames.frame("b", index=2), frames.finish("stop")]
    usage = module.loads(
        json.dumps(
            {**data, "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}
        )
    )
    events.append(
        frames.finish(
            "length", usage=usage.usage if module is not TARGETS["typeddicts"] else usage["usage"]
        )
    )
    read = [json.loads(e[6:]) for e in events]
    assert [c["delta"] for r in read for c in r["choices"]] == [
        {"role": "assistant", "reasoning": "a"},
        {"reasoning": "b"},
        {},
        {},
    ]
    assert [c["index"] for r in read for c in r["choices"]] == [0, 2, 0, 0]
    assert [c.get("finish_reason") for r in read for c in r["choices"]][2:] == ["stop", "length"]
    assert read[3]["usage"]["total_tokens"] == 3
    assert all(r["system_fingerprint"] == "fp" for r in read)
    in_dialect = module.TokenFrames(probe, dialect="reasoning_content").frame('x"y')
    assert json.loads(in_dialect[6:])["choices"][0]["delta"] == {"reasoning_content": 'x"y'}
    expected = b"".join(
        module.iter_sse([with_text(module, probe, "reasoning", 'x"y')], dialect="reasoning_content")
    )
    assert expected.startswith(in_dialect)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_an_empty_text_is_framed_as_the_dialect_writes_it(module: ModuleType) -> None:
    """A dialect's writer leaves an empty text where it came (docs/meanings.md): the
    frame of "" is that event too, byte for byte, for every token key, dialect without
    tags and choice."""
    dialects = [dialect.name for dialect in module._DIALECTS if dialect.tags is None]
    assert dialects == ["reasoning_content", "reasoning"]

    def chunk(key: str, text: str, index: int = 0) -> Any:
        delta = {"role": None, key: text}
        data = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        data["choices"] = [{"index": index, "delta": delta, "finish_reason": None}]
        return module.loads(json.dumps(data | {"system_fingerprint": "fp"}))

    for key in TOKEN_KEYS:
        for dialect in [None, *dialects]:
            frames = module.TokenFrames(chunk(key, "probe"), dialect=dialect)
            for text, index in itertools.product(["", "a"], [0, 2]):
                [event, _] = module.iter_sse([chunk(key, text, index)], dialect=dialect)
                assert frames.frame(text, index=index or None) == event, (key, dialect)


@pytest.fixture(scope="module")
def vendorless(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleType]:
    """Each target generated with `--vendors none`: no field spells reasoning."""
    folder = tmp_path_factory.mktemp("vendorless")
    modules = {}
    for target in TARGETS:
        out = folder / f"none_{target}"
        args = ("vendor", "--target", target, "--vendors", "none", "--out", str(out))
        result = run_generator(REPO, *args)
        assert result.returncode == 0, result.stderr
        modules[target] = load_module(out)
    return modules


@pytest.mark.parametrize("target", list(TARGETS))
def test_a_module_without_vendors_frames_the_dialects_keys_it_keeps_unknown(
    vendorless: dict[str, ModuleType], target: str
) -> None:
    """With `--vendors none`, `reasoning_content` and `reasoning` are unknown keys of a
    delta that the module reads, writes and re-spells (they are dialects' keys): a probe
    that sets one frames what the writer writes of it, in every dialect without tags."""
    module = vendorless[target]
    assert not {"reasoning_content", "reasoning"} & set(module.ChoiceDelta.__annotations__)

    def chunk(key: str, text: str, index: int = 0, role: str | None = None) -> Any:
        delta = {"role": role, key: text, "unknown": 1}
        choice = {"index": index, "delta": delta, "finish_reason": None}
        data = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        return module.loads(json.dumps(data | {"choices": [choice], "zz": {"a": 1}}))

    for key, dialect in itertools.product(["reasoning_content", "reasoning"], DIALECTS):
        frames = module.TokenFrames(chunk(key, "probe"), dialect=dialect)
        texts = ["", "a", '"\\\u2028 é 😀', "\ud83d"]  # a half of a pair: the writer's own
        for text, index in itertools.product(texts, [0, 2]):
            [event, _] = module.iter_sse([chunk(key, text, index)], dialect=dialect)
            assert frames.frame(text, index=index or None) == event, (key, dialect, text)
        [event, _] = module.iter_sse([chunk(key, "a", role="assistant")], dialect=dialect)
        assert frames.first("a") == event
        moved = key if dialect is None else dialect
        assert json.loads(frames.frame("b")[6:])["choices"][0]["delta"][moved] == "b"


def test_the_serving_example_streams_what_openai_python_and_our_reader_read() -> None:
    """examples/serving.py, over loopback HTTP: openai-python reads its frames as the
    chunks they were made from, and so does the module's own reader."""
    import openai

    from examples.serving import app
    from generated.msgspec import chat as chunk_msgspec
    from tests.helpers.loopback import serve

    prompt = 'Say "hi"\n\tand\u2028bye 😀'
    with serve(app) as base_url:
        with openai.OpenAI(base_url=f"{base_url}/v1", api_key="x", max_retries=0) as client:
            stream = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": prompt}], stream=True
            )
            theirs = [c.model_dump(exclude_unset=True) for c in stream]
        body = httpx_post(f"{base_url}/v1/chat/completions", prompt)
    ours = [json.loads(chunk_msgspec.dumps(c)) for c in chunk_msgspec.iter_chunks([body])]
    for read in (theirs, ours):  # two requests, two streams: each its own id and time
        for key in ("id", "created"):
            assert len({chunk.pop(key) for chunk in read}) == 1
    assert theirs == ours
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in ours) == prompt
    assert ours[0]["choices"][0]["delta"]["role"] == "assistant"
    assert ours[-1]["choices"][0]["finish_reason"] == "stop"
    assert ours[-1]["usage"]["completion_tokens"] == len(ours) - 2


def httpx_post(url: str, prompt: str) -> bytes:
    import httpx

    payload = {"model": "m", "messages": [{"role": "user", "content": prompt}], "stream": True}
    return httpx.post(url, json=payload, timeout=10).content
