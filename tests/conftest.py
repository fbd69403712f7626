"""Prints how many captured chunks each target round-tripped, and what the corpus, property
and fuzzing tests ran. Under pytest-xdist each worker counts its own tests and hands its
counts to the controller, which prints the sum."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.support import EXAMPLES_RUN, FIXTURE_STREAMS, REPORT, ROUND_TRIPS

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
# file: tests/test_vendoring.py): there every property runs on 50 examples, since the
# same properties of the whole spec ran on 500 in the run that made the copy.
settings.register_profile("copy", settings.get_profile("ci"), max_examples=50)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


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
