"""The benchmarks run (in quick mode); their numbers are read by people, not asserted."""

from __future__ import annotations

import pytest

from bench import accumulation


def test_the_accumulation_benchmark_reports_every_target(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert accumulation.main(["--quick"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[1:]] == [f"| {t}" for t in accumulation.TARGETS]
    for row in rows[1:]:
        cells = row.strip("| ").split(" | ")
        assert [float(cell) for cell in cells[1:3]] and cells[3].split()[1] in ("flat", "NOT")
