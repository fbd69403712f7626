"""The benchmarks run (in quick mode); their numbers are read by people, not asserted."""

from __future__ import annotations

import pytest

from bench import accumulation, streams, throughput
from bench.targets import TARGETS


def test_the_accumulation_benchmark_reports_every_target(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert accumulation.main(["--quick"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[1:]] == [f"| {t}" for t in TARGETS]
    for row in rows[1:]:
        cells = row.strip("| ").split(" | ")
        assert [float(cell) for cell in cells[1:3]] and cells[3].split()[1] in ("flat", "NOT")


def test_the_throughput_benchmark_reports_every_path_and_goal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert throughput.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for path in [*throughput.PARSERS, *throughput.SERIALISERS, *throughput.MEMORY_PATHS]:
        assert f"| {path} |" in out, path
    for goal in throughput.GOALS:
        row = next(line for line in out.splitlines() if line.startswith(f"| {goal.name} |"))
        assert row.rstrip(" |").endswith(("yes", "**no**")), row


def test_the_streams_benchmark_reports_every_reader_and_goal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert streams.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for reader in [*streams.SYNC_READERS, *streams.ASYNC_READERS, *streams.BIG_READERS]:
        assert f"| {reader} |" in out, reader
    for goal in streams.GOALS:
        row = next(line for line in out.splitlines() if line.startswith(f"| {goal.name} |"))
        assert row.rstrip(" |").endswith(("held", "**missed**")), row
