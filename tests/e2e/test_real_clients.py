"""Real clients read a stream re-spelled by our writer (issue 23): for every captured
stream that carries reasoning, every target's `iter_sse(..., dialect=...)` writes it in
the dialects those clients read, a loopback HTTP server serves it, and

- the Vercel AI SDK's OpenAI-compatible provider (`@ai-sdk/openai-compatible`, under
  Node, pinned by tests/clients/package-lock.json and installed by the Makefile) sees the
  same reasoning and answer text as our summary. It normalises reasoning by reading
  `reasoning_content ?? reasoning`, and nothing else: served as they came, OpenRouter's
  `reasoning_details`, Mistral's thinking parts and inline `<think>` tags are lost to it;
- openai-python reads the same streams without an error.

Chosen for being the most used JavaScript client of OpenAI-compatible servers that
reads reasoning at all, and a real second implementation of the protocol (its own SSE
parser, eventsource-parser, and its own JSON schema checks)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import openai

from tests.helpers.loopback import StreamSpec, serve, stream_app
from tests.helpers.support import FIXTURE_STREAMS, TARGETS
from tests.runtime.chat.test_meanings import body, summary_of

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
DIALECTS = ("reasoning_content", "reasoning")
"""The dialects the Vercel provider reads."""
TIMEOUT = 120


def with_reasoning() -> list[Any]:
    module = TARGETS["dataclasses"]
    return [
        stream
        for stream in FIXTURE_STREAMS
        if any(c.reasoning for c in summary_of(module, (t for _, t in stream.chunks)).choices)
    ]


def vercel(urls: list[str]) -> dict[str, dict[str, Any]]:
    node = shutil.which("node")
    assert node, "Node.js is needed for the real-client tests (see README)"
    assert (CLIENTS / "node_modules").is_dir(), "run `make test`: it installs tests/clients"
    result = subprocess.run(
        [node, str(CLIENTS / "vercel_ai.mjs"), *urls],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    seen = [json.loads(line) for line in result.stdout.splitlines()]
    return {entry["baseURL"]: entry for entry in seen}


def test_the_vercel_ai_sdk_and_openai_python_read_re_spelled_streams_right() -> None:
    streams = with_reasoning()
    assert len(streams) >= 6, [s.name for s in streams]
    served: dict[str, StreamSpec] = {}
    expected: dict[str, tuple[str, str]] = {}
    for target, module in TARGETS.items():
        for stream in streams:
            data = body(text for _, text in stream.chunks)
            [choice] = summary_of(module, (text for _, text in stream.chunks)).choices
            for dialect in DIALECTS:
                name = f"{target}-{stream.name}-{dialect}"
                served[name] = StreamSpec(
                    list(module.iter_sse(module.iter_chunks([data]), dialect=dialect))
                )
                expected[name] = (choice.reasoning, choice.text)
    app = stream_app(served)
    with serve(app) as base:
        url = {name: f"{base}/streams/{name}/v1" for name in served}
        seen = vercel(list(url.values()))
        for name, (reasoning, text) in expected.items():
            got = seen[url[name]]
            assert got["error"] is None, (name, got["error"])
            assert (got["reasoning"], got["text"]) == (reasoning, text), name
        for name in served:
            with openai.OpenAI(base_url=url[name], api_key="x", max_retries=0) as client:
                events = client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "hi"}], stream=True
                )
                assert sum(1 for _ in events) > 0, name


def test_the_vercel_ai_sdk_loses_what_it_does_not_read_unless_re_spelled() -> None:
    """The reason for the writer: OpenRouter's reasoning is read (it is in `reasoning`
    too), Mistral's thinking parts are not, as they came; re-spelled, they are."""
    [mistral] = [s for s in FIXTURE_STREAMS if s.name == "mistral__magistral-content-array-short"]
    module = TARGETS["pydantic"]
    data = body(text for _, text in mistral.chunks)
    [choice] = summary_of(module, (text for _, text in mistral.chunks)).choices
    assert choice.reasoning
    respelled = list(module.iter_sse(module.iter_chunks([data]), dialect="reasoning_content"))
    app = stream_app({"raw": StreamSpec([data]), "respelled": StreamSpec(respelled)})
    with serve(app) as base:
        raw, fixed = f"{base}/streams/raw/v1", f"{base}/streams/respelled/v1"
        seen = vercel([raw, fixed])
    assert seen[raw]["reasoning"] == "", "the parts are lost to it as they came"
    assert seen[fixed]["reasoning"] == choice.reasoning
    assert seen[fixed]["text"] == choice.text
