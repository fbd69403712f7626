"""Prints how many captured chunks each target round-tripped, and what the corpus, property
and fuzzing tests ran. Under pytest-xdist each worker counts its own tests and hands its
counts to the controller, which prints the sum. Runs the slowest files first."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers.support import EXAMPLES_RUN, FIXTURE_STREAMS, REPORT, ROUND_TRIPS

# `make test`: 500 examples per property test, the same ones on every run (CI must not
# pass or fail by luck); `make fuzz`: ten times as many, new ones each run.
_SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(
    "ci",
    max_examples=500,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=_SLOW_DATA,
)
settings.register_profile(
    "fuzz", max_examples=5_000, deadline=None, suppress_health_check=_SLOW_DATA
)
# The generated tests run again in project copies (a vendor selection, a new vendor
# file: tests/vendoring/test_vendoring.py): there every property runs on 50 examples,
# since the same properties of the whole spec ran on 500 in the run that made the copy.
settings.register_profile("copy", settings.get_profile("ci"), max_examples=50)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The gateway keeps Responses state in a SQLite file of the user's state folder unless
# told otherwise: in the tests (and the gateways they start) a folder of this process's,
# removed when it ends, never the user's.
_STATE = tempfile.mkdtemp(prefix="chunkspec-tests-state-")
os.environ["XDG_STATE_HOME"] = _STATE
atexit.register(shutil.rmtree, _STATE, ignore_errors=True)


# The files that take longest on one worker, slowest first (rough seconds each under
# `make test` on 2 cores; only their order matters): they are collected first, the rest
# after them in their usual order. Under `--dist loadfile` each file runs whole on one
# worker, and the Makefile's `--no-loadscope-reorder` makes xdist hand files out in
# collection order (by default it hands out the files with the most tests first, so a
# slow file of few tests started last and the other worker sat idle until it ended).
# Only the order changes: a file missing here still runs, after these. A new slow file
# (the real agents' tests) goes here, by its time.
SLOWEST_FIRST = (
    "tests/captures/test_drafting.py",  # 145
    "tests/generated/test_properties.py",  # 125
    "tests/e2e/test_bench.py",  # 95
    "tests/runtime/requests/test_roundtrip.py",  # 80
    "tests/vendoring/test_vendored_tools.py",  # 75
    "tests/vendoring/test_install.py",  # 65
    "tests/gateway/test_state_load.py",  # 80: 10,000 turns through real processes
    "tests/test_generator.py",  # 60
    "tests/agents/test_claude_code.py",  # 55: the real agents, a second or two a run
    "tests/agents/test_codex.py",  # 50
    "tests/runtime/chat/test_token_frames.py",  # 40
    "tests/runtime/responses/test_bridges.py",  # 35
    "tests/runtime/test_hostile_properties.py",  # 30
    "tests/vendoring/test_pre_commit.py",  # 30
    "tests/ir/test_spec_errors.py",  # 30
    "tests/vendoring/test_vendoring.py",  # 25
    "tests/runtime/messages/test_bridges.py",  # 20
    "tests/vendoring/test_protocol_selection.py",  # 20
    "tests/gateway/test_example.py",  # 15
    "tests/agents/test_openai_agents.py",  # 15
    "tests/gateway/test_load.py",  # 15
    "tests/gateway/test_gateway.py",  # 15
    "tests/gateway/test_state_judges.py",  # 12
    "tests/gateway/test_state.py",  # 10
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of SLOWEST_FIRST first, in its order; each file's tests keep theirs."""
    rank = {path: index for index, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


_COUNTS = "chunkspec_counts"


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: its counts go to the controller
        counts = {"examples": EXAMPLES_RUN, "report": REPORT, "round_trips": ROUND_TRIPS}
        workeroutput[_COUNTS] = json.dumps(counts)


def pytest_testnodedown(node: Any, error: object) -> None:
    """The controller adds up what a worker counted (an xdist hook)."""
    output: dict[str, Any] = getattr(node, "workeroutput", {})
    if _COUNTS in output:
        counts = json.loads(output[_COUNTS])
        EXAMPLES_RUN.update(counts["examples"])
        REPORT.update(counts["report"])
        ROUND_TRIPS.update(counts["round_trips"])


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if REPORT or EXAMPLES_RUN:
        terminalreporter.section("what the corpus, property and fuzzing tests ran")
        for test, count in sorted(EXAMPLES_RUN.items()):
            terminalreporter.write_line(f"property test, {test}: {count} examples")
        for topic, line in sorted(REPORT.items()):
            terminalreporter.write_line(f"{topic}: {line}")
    if not ROUND_TRIPS:
        return
    total = sum(len(s.chunks) for s in FIXTURE_STREAMS)
    terminalreporter.section("lossless round trips of captured chunks")
    for target, count in sorted(ROUND_TRIPS.items()):
        terminalreporter.write_line(
            f"{target}: {count} of {total} chunks from {len(FIXTURE_STREAMS)} streams"
        )
