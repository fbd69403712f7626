"""Each generated package, copied alone into an empty folder, imports, round-trips a
chunk, reads a server-sent-event stream sync and async, writes one and accumulates it,
in a Python that sees no site-packages: only the standard library, plus the one
dependency of its target (typing_extensions; pydantic with what pydantic requires)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.support import DEPENDENCIES

GENERATED = Path(__file__).resolve().parents[2] / "generated"

CHUNK = (
    '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
    '"delta":{"content":"Hi","reasoning_content":null,"zz":[1]},"finish_reason":null}],'
    '"usage":null,"x_groq":{"id":"req_1"},"seed":18446744073709551617}'
)

SCRIPT = """
import importlib.util, json, sys
for name in ABSENT:
    assert importlib.util.find_spec(name) is None, name + " must not be importable here"
import MODULE as m
text = CHUNK
out = m.dumps(m.loads(text))
assert json.loads(out) == json.loads(text), out
try:
    m.loads('{"error": {"message": "boom"}}')
except m.ChunkDecodeError as exc:
    assert exc.path == "$.error", exc.path
else:
    raise AssertionError("an error payload must not decode")
stream = [b"data: " + text.encode() + b"\\n\\n", b"data: " + text.encode() + b"\\n\\ndata: [DONE]\\n"]
accumulator = m.ChunkAccumulator()
chunks = m.iter_chunks(stream)
for chunk in chunks:
    accumulator.add(chunk)
assert chunks.done
completion = json.loads(m.dumps(accumulator.result()))
assert completion["choices"][0]["message"]["content"] == "HiHi", completion
assert json.loads(m.dumps(m.loads_completion(json.dumps(completion)))) == completion
assert "asyncio" not in sys.modules, "the module must not import an event loop library"
import asyncio

async def read_async():
    async def source():
        for piece in stream:
            yield piece
    async with m.aiter_chunks(source()) as chunks:
        texts = [m.dumps(chunk) async for chunk in chunks]
    assert chunks.done and len(texts) == 2, texts
    return texts

assert asyncio.run(read_async()) == [m.dumps(c) for c in m.iter_chunks(stream)]
written = b"".join(m.iter_sse(m.iter_chunks(stream)))
assert written.endswith(m.SSE_DONE) and [m.dumps(c) for c in m.iter_chunks([written])] == [m.dumps(c) for c in m.iter_chunks(stream)]
others = [k for k in sys.modules if k.startswith(("MODULE.messages", "MODULE.responses",
          "MODULE._runtime.messages", "MODULE._runtime.responses"))]
assert not others, f"reading chat imported another protocol's code: {others}"
print("ok", sorted(k for k in sys.modules if k.split(".")[0] in DEPS))
"""

# Distributions each target may use, by import name: pydantic's own requirements included.
ABSENT = ("pydantic", "msgspec", "typing_extensions", "yaml", "jinja2", "generator", "generated")


def copy_dependency(name: str, dest: Path) -> None:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    origin = Path(spec.origin)
    if origin.name == "__init__.py":
        shutil.copytree(origin.parent, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copy2(origin, dest / origin.name)


@pytest.mark.parametrize("target", DEPENDENCIES)
def test_package_works_alone(tmp_path: Path, target: str) -> None:
    module = f"wire_{target}"
    shutil.copytree(
        GENERATED / target, tmp_path / module, ignore=shutil.ignore_patterns("__pycache__")
    )
    deps = DEPENDENCIES[target]
    for name in deps:
        copy_dependency(name, tmp_path)
    absent = tuple(name for name in ABSENT if name not in deps)
    script = tmp_path / "check.py"
    code = SCRIPT.replace("MODULE", module).replace("ABSENT", repr(absent))
    script.write_text(code.replace("CHUNK", repr(CHUNK)).replace("DEPS", repr(deps)))
    # -S: no site-packages; -E: no PYTHON* variables; -s: no user site. The script's
    # own folder is the only thing on the path besides the standard library.
    result = subprocess.run(
        [sys.executable, "-S", "-E", "-s", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")
