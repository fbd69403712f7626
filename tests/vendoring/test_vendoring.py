"""Vendor selection, vendoring one module into another repository, the strict profile,
a new vendor in one edit, and the generated vendor reference."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from generator.ir.build import build_spec
from generator.ir.load import load_spec
from generator.render.targets import module_names
from tests.helpers.project import REPO, copy_project, run_generator
from tests.helpers.support import FIXTURE_STREAMS, Stream, assert_same_json, load_module, normalised

TARGETS = ("dataclasses", "typeddicts", "pydantic", "msgspec")


def run_tests(root: Path, *paths: str) -> subprocess.CompletedProcess[str]:
    """pytest in a project copy, against the copy's own generated modules and tests."""
    shutil.copytree(
        REPO / "tests",
        root / "tests",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("generated", "__pycache__"),
    )
    # The tests name the targets from the generator's registry.
    shutil.copytree(
        REPO / "generator",
        root / "generator",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths],
        cwd=root,
        env={**os.environ, "HYPOTHESIS_PROFILE": "copy"},  # tests/conftest.py says why
        capture_output=True,
        text=True,
        check=False,
    )


# --- vendor selection ---------------------------------------------------------------


@pytest.fixture(scope="module")
def vllm_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_project(tmp_path_factory.mktemp("select") / "project")
    result = run_generator(root, "generate", "--vendors", "vllm")
    assert result.returncode == 0, result.stderr
    return root


def test_selection_types_only_the_chosen_vendors(vllm_only: Path) -> None:
    source = (vllm_only / "generated/dataclasses/chat.py").read_text()
    assert re.search(r"^    prompt_token_ids: list\[int\] \| _Unset \| None = UNSET$", source, re.M)
    assert "Vendors: vllm. Profile: lenient." in source
    for left_out in ("nvext", "prompt_filter_results", "x_groq"):
        assert not re.search(rf"^    {left_out}: ", source, re.M), left_out
    assert "class AzureContentFilterResults" not in source
    module = load_module(vllm_only / "generated/dataclasses/chat.py")
    chunk = module.loads(
        '{"id":"c","model":"m","created":1,"object":"chat.completion.chunk","choices":[],"prompt_token_ids":[1],"x_groq":{"id":"r"},"nvext":{"a":1}}'
    )
    assert chunk.prompt_token_ids == [1]
    assert chunk.extra == {"x_groq": {"id": "r"}, "nvext": {"a": 1}}


def test_fields_of_vendors_left_out_still_merge_by_their_rules(vllm_only: Path) -> None:
    module = load_module(vllm_only / "generated/dataclasses/chat.py")
    accumulator = module.ChunkAccumulator()
    for text, ids in (("a", [1]), ("b", [2])):
        detail = {"index": 0, "type": "reasoning.text", "text": text}
        payload = {
            "id": "c",
            "model": "m",
            "choices": [{"index": 0, "delta": {"reasoning_details": [detail]}}],
            "nvext": {"completion_token_ids": ids},
        }
        accumulator.add(module.loads(json.dumps(payload)))
    completion = accumulator.result()
    assert completion.extra == {"nvext": {"completion_token_ids": [1, 2]}}  # appended
    details = completion.choices[0].message.extra["reasoning_details"]
    assert details == [{"index": 0, "type": "reasoning.text", "text": "ab"}]  # by index


def test_selection_still_round_trips_every_fixture(vllm_only: Path) -> None:
    result = run_tests(vllm_only, "tests/generated")
    assert result.returncode == 0, result.stdout[-3000:]
    total = sum(len(stream.chunks) for stream in FIXTURE_STREAMS)
    assert f"{total} of {total} chunks" in result.stdout


def test_pyproject_setting_selects_like_the_flag(vllm_only: Path, tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    (root / "pyproject.toml").write_text('[tool.chunkspec]\nvendors = ["vllm"]\n')
    assert run_generator(root, "generate").returncode == 0
    for target in TARGETS:
        path = f"generated/{target}/chat.py"
        configured, flagged = (root / path).read_text(), (vllm_only / path).read_text()
        # Each header names the command that reproduces it; the rest is the same.
        assert "# Regenerate with: make generate\n" in configured
        assert "# Regenerate with: python -m generator generate --vendors vllm\n" in flagged

        def body(text: str) -> list[str]:
            return [line for line in text.splitlines() if not line.startswith("# Regenerate with")]

        assert body(configured) == body(flagged), path


def test_unknown_vendor_is_an_error(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    result = run_generator(root, "generate", "--vendors", "vllm,nobody")
    assert result.returncode == 1
    assert result.stderr.startswith("error: --vendors: unknown vendor 'nobody' (known: ")


# --- vendoring ----------------------------------------------------------------------


def test_a_vendored_package_is_checked_and_edits_are_caught(tmp_path: Path) -> None:
    out = tmp_path / "elsewhere" / "chunks"
    result = run_generator(
        REPO, "vendor", "--target", "dataclasses", "--vendors", "vllm", "--out", str(out)
    )
    assert result.returncode == 0, result.stderr
    from generator.render.header import recorded_command

    command = f"python -m generator vendor --target dataclasses --vendors vllm --out {out}"
    for module in ("__init__.py", "chat.py"):
        assert recorded_command((out / module).read_text()) == command
    assert (out / "py.typed").is_file() and (out / "_runtime" / "sse.py").is_file()
    assert not (out / "messages.py").exists(), "chat alone unless --protocols says more"
    assert run_generator(REPO, "check", "--vendored", str(out)).returncode == 0

    package = load_module(out)  # self-contained: works where it was written
    chunk = package.loads(
        '{"id":"c","model":"m","created":1,"object":"o","choices":[],"prompt_text":"p"}'
    )
    assert chunk.prompt_text == "p"

    chat = out / "chat.py"
    chat.write_text(
        chat.read_text().replace("        return out\n", "        return dict(out)\n", 1)
    )
    sse = out / "_runtime" / "sse.py"
    sse.write_text(sse.read_text() + "# mine\n")
    (out / "_runtime" / "mine.py").write_text("x = 1\n")
    # A pre-commit hook passes the files that changed: the package is checked once.
    result = run_generator(REPO, "check", "--vendored", str(chat), str(sse))
    assert result.returncode == 1
    assert result.stderr.count("error: ") == 1, result.stderr
    assert f"error: {out}: stale or edited: 3 file(s) differ" in result.stderr
    assert "    _runtime/sse.py: +1 -0 lines, from line" in result.stderr
    assert "    chat.py: +1 -1 lines, from line" in result.stderr
    assert "    _runtime/mine.py: not written by its command" in result.stderr
    assert f"    2. {command}\n" in result.stderr
    # Written again, it is current again, and the file it does not write is gone.
    assert run_generator(REPO, *command.split()[3:]).returncode == 0
    assert run_generator(REPO, "check", "--vendored", str(out)).returncode == 0
    assert not (out / "_runtime" / "mine.py").exists()


def test_out_names_the_package_folder_not_a_module(tmp_path: Path) -> None:
    result = run_generator(REPO, "vendor", "--target", "msgspec", "--out", str(tmp_path / "c.py"))
    assert result.returncode == 1
    assert result.stderr == (
        "error: --out: chunkspec writes a package now, not one module: give its folder,"
        f" `--out {tmp_path / 'c'}/` (imports of `c` keep working)\n"
    )
    assert not list(tmp_path.iterdir())


# An edit of the project a vllm-only pydantic package is made from: (file, old, new).
# Each is checked against the truth: whether the package chunkspec now writes differs
# from the one on disk, file by file.
EDITS = {
    "a doc of a vendor left out": (
        "spec/vendors/groq.yaml",
        "Seconds the request waited in Groq's queue",
        "Seconds the request sat in Groq's queue",
    ),
    "a merge rule of a vendor left out": (
        "spec/vendors/groq.yaml",
        "type: list[GroqExecutedTool]\n      merge: by_index",
        "type: list[GroqExecutedTool]\n      merge: last",
    ),
    "the title of a vendor credited beside vllm": (
        "spec/vendors/groq.yaml",
        "title: Groq",
        "title: GroqCloud",
    ),
    "a doc of the selected vendor": (
        "spec/vendors/vllm.yaml",
        "Token ids of the rendered prompt",
        "Token ids of the prompt",
    ),
    "a comment of the selected vendor": (
        "spec/vendors/vllm.yaml",
        "vendor: vllm",
        "# edited\nvendor: vllm",
    ),
    "a doc of the core spec": ("spec/chat_completion_chunk.yaml", "doc: ", "doc: Edited. "),
    "another target's template": ("templates/msgspec.py.jinja", "{#", "{# edited #}\n{#"),
    "a comment in the target's own template": (
        "templates/_module.jinja",
        "{#",
        "{# edited: a refactor that writes the same code #}\n{#",
    ),
}
STALE = {
    "a doc of the selected vendor": ["chat.py"],
    "a merge rule of a vendor left out": ["chat.py"],
    "the title of a vendor credited beside vllm": ["chat.py"],
    "a doc of the core spec": ["chat.py"],
}
"""The edits that change what the package holds, and the files the message names."""


@pytest.mark.parametrize("edit", EDITS)
def test_a_vendored_package_is_stale_exactly_when_its_output_changed(
    tmp_path: Path, edit: str
) -> None:
    from generator.render.header import recorded_command
    from generator.vendoring.check import problems
    from generator.vendoring.vendored import parse_command, render_vendored

    root = copy_project(tmp_path / "project")
    out = tmp_path / "chunks"
    args = ("vendor", "--target", "pydantic", "--vendors", "vllm", "--out", str(out))
    assert run_generator(root, *args).returncode == 0
    name, old, new = EDITS[edit]
    edited = root / name
    assert old in edited.read_text(), edit
    edited.write_text(edited.read_text().replace(old, new, 1))
    request = parse_command(recorded_command((out / "__init__.py").read_text()) or "")
    written_now = {o.path: o.content for o in render_vendored(root, request)}
    on_disk = {path: (out / path).read_text() for path in written_now}
    problem = problems(root, out, "chunkspec")
    if edit not in STALE:
        assert problem is None, problem
        assert written_now == on_disk  # up to date means: chunkspec writes it the same
        return
    assert problem is not None and problem.startswith("stale or edited: ")
    named = re.findall(r"^    (\S+): \+\d+ -\d+ lines, from line \d+$", problem, re.M)
    assert named == STALE[edit]
    assert named == sorted(p for p in written_now if written_now[p] != on_disk[p])
    assert "    1. install the chunkspec this check ran: pip install " in problem
    assert (
        f"    2. chunkspec vendor --target pydantic --root {root} --vendors vllm --out {out}"
        in problem
    )


def test_vendored_from_another_root_records_it(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    out = tmp_path / "m"
    assert (
        run_generator(root, "vendor", "--target", "typeddicts", "--out", str(out)).returncode == 0
    )
    assert f"--root {root}" in (out / "__init__.py").read_text()
    assert run_generator(REPO, "check", "--vendored", str(out)).returncode == 0


def test_a_root_inside_the_repository_is_recorded_relative_to_it(tmp_path: Path) -> None:
    from generator.render.header import recorded_command

    app = tmp_path / "application"
    (app / ".git").mkdir(parents=True)  # a repository's root, as far as chunkspec looks
    root = copy_project(app / "our-spec")
    (app / "src").mkdir()
    here = {"PYTHONPATH": str(REPO)}  # run from the application, not this checkout
    result = run_generator(
        root, "vendor", "--target", "msgspec", "--out", "../chunks", cwd=app / "src", env=here
    )
    assert result.returncode == 0, result.stderr
    command = recorded_command((app / "chunks" / "__init__.py").read_text()) or ""
    assert command.endswith("vendor --target msgspec --root our-spec --out chunks"), command
    # Checked from the repository's root with chunkspec's own spec, it still reads ours.
    vllm = root / "spec/vendors/vllm.yaml"
    vllm.write_text(vllm.read_text().replace("Token ids of the rendered prompt", "Token ids"))
    result = run_generator(REPO, "check", "--vendored", "chunks", cwd=app, env=here)
    assert "    chat.py: +" in result.stderr, result.stderr


def test_an_unreadable_header_command_is_reported_not_raised(tmp_path: Path) -> None:
    out = tmp_path / "m"
    assert (
        run_generator(REPO, "vendor", "--target", "dataclasses", "--out", str(out)).returncode == 0
    )
    init = out / "__init__.py"
    init.write_text(init.read_text().replace("--out ", "--out 'unclosed "))
    result = run_generator(REPO, "check", "--vendored", str(out))
    assert result.returncode == 1
    assert "its header's command cannot be read" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_module_of_an_older_chunkspec_says_to_write_a_package(tmp_path: Path) -> None:
    out = tmp_path / "m.py"
    out.write_text(
        "# Code generated by chunkspec. DO NOT EDIT.\n# Checksum: 0123456789abcdef\n"
        f"# Regenerate with: chunkspec vendor --target msgspec --out {out}\nx = 1\n"
    )
    result = run_generator(REPO, "check", "--vendored", str(out))
    assert result.returncode == 1
    assert f"error: {out}: one module, as an older chunkspec wrote it" in result.stderr
    assert f"--out {tmp_path / 'm'}/` and delete this file" in result.stderr


def test_new_vendor_refuses_selection_words(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    result = run_generator(root, "new-vendor", "all")
    assert result.returncode == 1
    assert "not a usable vendor name" in result.stderr


def test_a_file_that_is_not_vendored_is_reported(tmp_path: Path) -> None:
    other = tmp_path / "other.py"
    other.write_text("x = 1\n")
    result = run_generator(REPO, "check", "--vendored", str(other))
    assert result.returncode == 1
    assert "not a package written by `python -m generator vendor`" in result.stderr


# --- strict profile -----------------------------------------------------------------


@pytest.fixture(scope="module")
def strict_modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleType]:
    folder = tmp_path_factory.mktemp("strict")
    modules = {}
    for target in TARGETS:
        out = folder / f"strict_{target}"
        args = (
            "vendor",
            "--target",
            target,
            "--profile",
            "strict",
            "--vendors",
            "none",
            "--out",
            str(out),
        )
        result = run_generator(REPO, *args)
        assert result.returncode == 0, result.stderr
        modules[target] = load_module(out)
    return modules


SURPRISE = (
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"surprise":1}'
)

# What the strict profile (OpenAI's spec, no vendor) rejects in each captured stream:
# the first rejected line, the path, and why that is off-spec for OpenAI. Every stream
# not listed is accepted whole.
STRICT_REJECTIONS = {
    "azure__docs-async-filter-prompt-annotations-elided": (
        1,
        "$.object",
        "Azure's filter chunk has object ''",
    ),
    "azure__foundry-default-filter-latency-checkpoint-routing": (1, "$.object", "object ''"),
    "azure__model-router-prompt-filter-first-chunk": (1, "$.object", "object ''"),
    "deepseek__reasoner-reasoning-then-tool-call": (
        1,
        "$.choices[0].delta.reasoning_content",
        "a vendor key",
    ),
    "deepseek__reasoner-thinking-cache-hit-miss": (
        1,
        "$.choices[0].delta.reasoning_content",
        "a vendor key",
    ),
    "groq__gpt-oss-reasoning-channel-tool-call": (1, "$.x_groq", "a vendor key"),
    "groq__llama33-tool-call-x-groq-usage": (1, "$.x_groq", "a vendor key"),
    "groq__qwen3-32b-reasoning-field": (1, "$.x_groq", "a vendor key"),
    "llamacpp__gptoss-raw-harmony-usage-timings": (43, "$.timings", "a vendor key"),
    "llamacpp__tool-args-tail-timings-verbose": (4, "$.timings", "a vendor key"),
    "mistral__glm-incremental-tool-call-delta-index": (
        1,
        "$.choices[0].delta.index",
        "a vendor key",
    ),
    "mistral__magistral-content-array-short": (
        1,
        "$.choices[0].delta.content",
        "content as a list of parts",
    ),
    "mistral__tool-call-no-index-no-type": (
        2,
        "$.choices[0].delta.tool_calls[0].index",
        "tool call without index",
    ),
    "openrouter__bedrock-cache-usage": (1, "$.choices[0].native_finish_reason", "a vendor key"),
    "openrouter__reasoning-details": (1, "$.choices[0].delta.reasoning", "a vendor key"),
    "openrouter__web-search-annotations": (1, "$.choices[0].delta.annotations", "a vendor key"),
    "qwen-dashscope__qwen3-max-reasoning": (
        1,
        "$.choices[0].delta.reasoning_content",
        "a vendor key",
    ),
    "vllm__named-tool-choice-finish-stop-reasoning-field": (
        1,
        "$.prompt_token_ids",
        "a vendor key",
    ),
    "vllm__qwen-tool-call-empty-model-stop-reason": (6, "$.choices[0].stop_reason", "a vendor key"),
    "zai__glm47-thinking-no-finish-key": (
        1,
        "$.choices[0].delta.reasoning_content",
        "a vendor key",
    ),
}


@pytest.mark.parametrize("target", TARGETS)
def test_strict_rejects_an_unknown_key_by_path(
    strict_modules: dict[str, ModuleType], target: str
) -> None:
    module = strict_modules[target]
    with pytest.raises(module.ChunkDecodeError) as caught:
        module.loads(SURPRISE)
    assert caught.value.path == "$.surprise"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("text", "path"),
    [
        (
            '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"abort"}]}',
            "$.choices[0].finish_reason",
        ),
        (
            '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"service_tier":"on_demand"}',
            "$.service_tier",
        ),
        ('{"id":"c","object":"chat.completion.chunk","model":"m","choices":[]}', "$.created"),
        (
            '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0}]}',
            "$.choices[0].delta",
        ),
        ('{"id":"c","object":"chat.completion.chunk","created":1,"model":"m"}', "$.choices"),
        (
            '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":null}',
            "$.choices",
        ),
        ('{"id":"c","object":"chat.completion.chunk","created":1,"choices":[]}', "$.model"),
        (
            '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],'
            '"obfuscation":null}',
            "$.obfuscation",
        ),
        (
            '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],'
            '"usage":{"prompt_tokens":1,"completion_tokens":null,"total_tokens":1}}',
            "$.usage.completion_tokens",
        ),
        (
            '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":'
            '[{"index":0,"delta":{},"logprobs":{"content":[{"token":"a","top_logprobs":[]}]}}]}',
            "$.choices[0].logprobs.content[0].logprob",
        ),
    ],
    ids=[
        "unknown finish_reason",
        "unknown service_tier",
        "missing created",
        "choice without delta",
        "missing choices",
        "null choices",
        "missing model",
        "null obfuscation",
        "null completion_tokens",
        "missing logprob",
    ],
)
def test_strict_rejects_what_lenient_accepts(
    strict_modules: dict[str, ModuleType], target: str, text: str, path: str
) -> None:
    module = strict_modules[target]
    with pytest.raises(module.ChunkDecodeError) as caught:
        module.loads(text)
    assert caught.value.path == path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"id":"c","object":"chat.completion.chunk","created":1,"model":null,"choices":[]}',
            "$.model: must not be null",
        ),
        (
            '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],'
            '"obfuscation":null}',
            "$.obfuscation: must not be null",
        ),
    ],
    ids=["null for a required key", "null where a key may only be absent"],
)
def test_strict_pydantic_says_that_null_is_refused(
    strict_modules: dict[str, ModuleType], text: str, message: str
) -> None:
    module = strict_modules["pydantic"]
    with pytest.raises(module.ChunkDecodeError) as caught:
        module.loads(text)
    assert str(caught.value) == message


@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=lambda s: s.name)
def test_strict_profile_on_every_fixture(
    strict_modules: dict[str, ModuleType], stream: Stream
) -> None:
    for target, module in strict_modules.items():
        rejected = None
        for line, text in stream.chunks:
            try:
                out = module.dumps(module.loads(text))
            except module.ChunkDecodeError as exc:
                rejected = rejected or (line, exc.path)
                continue
            assert_same_json(json.loads(out), normalised(json.loads(text), {"choices": []}))
        expected = STRICT_REJECTIONS.get(stream.name)
        assert rejected == (expected[:2] if expected else None), f"{target}: {rejected}"


def test_strict_accepts_every_openai_fixture() -> None:
    openai = [s.name for s in FIXTURE_STREAMS if s.name.startswith("openai__")]
    assert len(openai) == 9
    assert not set(openai) & set(STRICT_REJECTIONS)


def test_strict_modules_accumulate_openai_streams_as_the_lenient_ones_do(
    strict_modules: dict[str, ModuleType],
) -> None:
    lenient = load_module(REPO / "generated/dataclasses/chat.py")
    for stream in (s for s in FIXTURE_STREAMS if s.name.startswith("openai__")):
        results = set()
        for module in (lenient, *strict_modules.values()):
            accumulator = module.ChunkAccumulator()
            for _, text in stream.chunks:
                accumulator.add(module.loads(text))
            results.add(module.dumps(accumulator.result()))
        assert len(results) == 1, stream.name


# --- a new vendor in one edit -------------------------------------------------------

PROBE_FIELDS = """
fields:
  ChatCompletionChunk:
    probe_trace:
      type: ProbeTrace
      nullable: true
      doc: Where the probe vendor served the request.
  ChoiceDelta:
    probe_hint:
      type: string
      merge: append
      doc: A hint the probe vendor streams beside the content.
types:
  ProbeTrace:
    doc: The probe vendor's record of how it served a request.
    fields:
      region:
        type: string
        required: true
        doc: The region that answered.
      hops:
        type: list[int]
        merge: append
        doc: Latency of each hop, in milliseconds.
"""


def test_a_new_vendor_field_needs_one_yaml_edit(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    shutil.copytree(
        REPO / "generator", root / "generator", ignore=shutil.ignore_patterns("__pycache__")
    )
    untouched = {
        p: p.read_bytes()
        for p in sorted([*(root / "templates").glob("*"), *(root / "generator").rglob("*.py")])
    }

    result = run_generator(root, "new-vendor", "e2e_probe")
    assert result.returncode == 0, result.stderr
    vendor_file = root / "spec/vendors/e2e_probe.yaml"
    # Chat's modules alone: the probe's fields are chat's (the others are made alike).
    assert run_generator(root, "generate", "--protocols", "chat").returncode == 0
    vendor_file.write_text(
        vendor_file.read_text().replace("title: e2e_probe ", 'title: "Probe AI" ') + PROBE_FIELDS
    )
    result = run_generator(root, "generate", "--protocols", "chat")
    assert result.returncode == 0, result.stderr
    assert untouched == {p: p.read_bytes() for p in untouched}, "no template or generator change"

    text = (
        '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","probe_trace":'
        '{"region":"eu","hops":[3,4],"zz":1},"choices":[{"index":0,"delta":{"probe_hint":"h"}}]}'
    )
    later = text.replace('"eu","hops":[3,4],"zz":1', '"us","hops":[5]').replace('"h"', '"i"')
    dumped, merged = set(), set()
    for target in TARGETS:
        path = root / f"generated/{target}/chat.py"
        source = path.read_text()
        assert (
            "Where the probe vendor served the request." in source and "Sent by Probe AI" in source
        )
        module = load_module(path)
        chunk = module.loads(text)
        dumped.add(module.dumps(chunk))
        accumulator = module.ChunkAccumulator()
        accumulator.add(chunk)
        accumulator.add(module.loads(later))
        completion = accumulator.result()
        merged.add(module.dumps(completion))
        if target == "typeddicts":
            assert chunk["probe_trace"]["region"] == "eu"
        else:
            assert isinstance(chunk.probe_trace, module.ProbeTrace)
            assert chunk.choices[0].delta.probe_hint == "h"
            assert isinstance(completion.probe_trace, module.ProbeTrace)  # typed there too
            assert completion.choices[0].message.probe_hint == "hi"
    assert len(dumped) == 1 and json.loads(dumped.pop()) == json.loads(text)
    # The completion merges the new fields by their rules: text and lists appended.
    [result] = merged
    assert json.loads(result)["probe_trace"] == {"region": "us", "hops": [3, 4, 5], "zz": 1}
    assert json.loads(result)["choices"][0]["message"]["probe_hint"] == "hi"

    examples = (root / "tests/generated/examples.py").read_text()
    assert re.search(r'\(\s*"ProbeTrace",\s*"maximal",', examples) and '"probe_hint"' in examples
    result = run_tests(root, "tests/generated")
    assert result.returncode == 0, result.stdout[-3000:]


# --- the vendor reference -----------------------------------------------------------


def test_vendor_reference_lists_every_vendor_field() -> None:
    spec = build_spec(load_spec(REPO), reserved=module_names())
    doc = (REPO / "docs/vendors.md").read_text()
    for vendor in spec.vendors:
        assert f"(`{vendor.name}`)" in doc, vendor.name
    for model in spec.models:
        for field in model.fields:
            if field.origin is not None or model.origin is not None or field.relaxations:
                assert f"{field.wire}`" in doc, f"{model.name}.{field.wire}"
