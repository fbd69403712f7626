"""Prints how many captured chunks each target round-tripped, and what the corpus, property
and fuzzing tests ran."""

from __future__ import annotations

import pytest

from tests.support import FIXTURE_STREAMS, REPORT, ROUND_TRIPS


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if REPORT:
        terminalreporter.section("what the corpus, property and fuzzing tests ran")
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
