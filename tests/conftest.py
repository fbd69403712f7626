"""Prints how many captured chunks each target round-tripped, and what the corpus, property
and fuzzing tests ran."""

from __future__ import annotations

import os

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
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


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
