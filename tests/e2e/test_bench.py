"""The benchmarks run (in quick mode); their numbers are read by people, not asserted."""

from __future__ import annotations

import gc
import io
import json
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench import (
    accumulation,
    charts,
    frames,
    gateway,
    meanings,
    protocols,
    state,
    streams,
    throughput,
)
from bench.common import Goal
from bench.targets import TARGETS


@dataclass(frozen=True)
class QuickRun:
    """What a benchmark printed in quick mode, and the JSON it wrote where it was told."""

    out: str
    json: Path


def quick_run(main: Callable[[Sequence[str]], int], json_path: Path) -> QuickRun:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["--quick", "--json", str(json_path)]) == 0
    return QuickRun(out.getvalue(), json_path)


@pytest.fixture(scope="module", autouse=True)
def frozen_heap() -> Iterator[None]:
    """The benchmarks collect garbage before they time (`gc.collect()`, many times): the
    objects the earlier tests of this process left are not theirs to walk (after the
    property tests, the accumulation benchmark took 11 s instead of 1). Frozen while the
    module runs (`gc.freeze()`: the collector skips them), then given back."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


# Each benchmark runs once for the whole file: the reports and the charts read that run.
@pytest.fixture(scope="module")
def quick_throughput(tmp_path_factory: pytest.TempPathFactory) -> QuickRun:
    return quick_run(throughput.main, tmp_path_factory.mktemp("bench") / "results.json")


@pytest.fixture(scope="module")
def quick_frames(tmp_path_factory: pytest.TempPathFactory) -> QuickRun:
    return quick_run(frames.main, tmp_path_factory.mktemp("bench") / "frames.json")


@pytest.fixture(scope="module")
def quick_streams(tmp_path_factory: pytest.TempPathFactory) -> QuickRun:
    return quick_run(streams.main, tmp_path_factory.mktemp("bench") / "streams.json")


@pytest.fixture(scope="module")
def quick_protocols(tmp_path_factory: pytest.TempPathFactory) -> QuickRun:
    return quick_run(protocols.main, tmp_path_factory.mktemp("bench") / "protocols.json")


@pytest.fixture(scope="module")
def quick_gateway(tmp_path_factory: pytest.TempPathFactory) -> QuickRun:
    return quick_run(gateway.main, tmp_path_factory.mktemp("bench") / "gateway.json")


def goal_row(out: str, goal: Goal) -> str:
    """The first row of `goal` in a report; it ends with its verdict."""
    row = next(line for line in out.splitlines() if line.startswith(f"| {goal.name} |"))
    assert row.rstrip(" |").endswith(("held", "**missed**")), row
    return row


def test_the_accumulation_benchmark_reports_every_target(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert accumulation.main(["--quick"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[1:]] == [f"| {t}" for t in TARGETS]
    for row in rows[1:]:
        cells = row.strip("| ").split(" | ")
        assert [float(cell) for cell in cells[1:3]] and cells[3].split()[1] in ("flat", "NOT")


def test_the_meanings_benchmark_reports_every_target_and_goal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert meanings.main(["--quick"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[1:]] == [f"| {t}" for t in TARGETS]
    for row in rows[1:]:
        cells = row.strip("| ").split(" | ")[1:]
        assert len(cells) == len(meanings.GOALS)
        for cell in cells:
            ratio, verdict = cell.split()
            assert float(ratio) > 0 and verdict in ("(held)", "(missed)")


def test_the_throughput_benchmark_reports_every_path_and_goal(quick_throughput: QuickRun) -> None:
    out = quick_throughput.out
    for path in [*throughput.PARSERS, *throughput.SERIALISERS, *throughput.MEMORY_PATHS]:
        assert f"| {path} |" in out, path
    assert "pydantic loads, --vendors none" in throughput.PARSERS
    for goal in throughput.GOALS:
        goal_row(out, goal)
    assert f"wrote {quick_throughput.json}" in out  # and nothing else: a quick run
    assert "results.md" not in out


def test_the_streams_benchmark_reports_every_reader_and_goal(quick_streams: QuickRun) -> None:
    out = quick_streams.out
    for reader in [*streams.SYNC_READERS, *streams.ASYNC_READERS, *streams.BIG_READERS]:
        assert f"| {reader} |" in out, reader
    for goal in streams.GOALS:
        goal_row(out, goal)
    assert "streams.md" not in out


def test_the_json_results_hold_every_row_and_goal(
    quick_throughput: QuickRun, quick_streams: QuickRun
) -> None:
    results = json.loads(quick_throughput.json.read_text())
    assert [row["path"] for row in results["parse"]["rows"]] == list(throughput.PARSERS)
    assert [goal["goal"] for goal in results["goals"]] == [g.name for g in throughput.GOALS]
    stream_results = json.loads(quick_streams.json.read_text())
    assert [row["path"] for row in stream_results["async"]["rows"]] == list(streams.ASYNC_READERS)
    assert [goal["goal"] for goal in stream_results["goals"]] == [g.name for g in streams.GOALS]
    for path in (quick_throughput.json, quick_streams.json):
        text = path.read_text()
        assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"


def test_the_charts_draw_every_benchmark_and_print_every_goal_last(
    quick_throughput: QuickRun,
    quick_streams: QuickRun,
    quick_frames: QuickRun,
    quick_protocols: QuickRun,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def draw(out: Path) -> dict[str, bytes]:
        inputs = ["--results", str(quick_throughput.json), "--streams", str(quick_streams.json)]
        inputs += ["--frames", str(quick_frames.json), "--protocols", str(quick_protocols.json)]
        assert charts.main([*inputs, "--out", str(out)]) == 0
        names = ("ratios.svg", "streams.svg", "frames.svg", "protocols.svg")
        return {name: (out / name).read_bytes() for name in names}

    drawn = draw(tmp_path / "once")
    out = capsys.readouterr().out
    for svg in drawn.values():
        assert svg.startswith(b"<?xml") and b"<svg" in svg
        for target in TARGETS:
            assert target.encode() in svg, target
    assert draw(tmp_path / "twice") == drawn  # the same results, the same bytes
    goals = [*throughput.GOALS, *streams.GOALS, *protocols.GOALS]
    rows = [goal_row(out, goal) for goal in goals]
    frame_goals = json.loads(quick_frames.json.read_text())["goals"]
    assert len(frame_goals) == len(TARGETS) * len(frames.GOALS)
    for goal in frame_goals:
        assert any(line.startswith(f"| {goal['goal']} |") for line in out.splitlines())
    assert out.rstrip().splitlines()[-1] == rows[-1]  # the last goal of bench.protocols


def test_the_frames_benchmark_reports_every_target_and_goal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert frames.main(["--quick"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    ceiling = re.search(rf"\({re.escape(frames.CEILING)}\): ([0-9.]+)x\.$", out, re.MULTILINE)
    assert ceiling and 0 < float(ceiling[1]) < 1  # padded, openai-python itself is slower
    assert [row.split(" | ")[0] for row in rows[1:]] == [f"| {t}" for t in TARGETS]
    for row in rows[1:]:
        cells = row.strip("| ").split(" | ")[1:]
        assert len(cells) == len(frames.GOALS)
        for cell in cells:
            ratio, verdict = cell.split(" ")
            assert float(ratio.rstrip("x")) > 0 and verdict in ("(held)", "(missed)")


def test_the_protocols_benchmark_reports_every_path_and_goal(quick_protocols: QuickRun) -> None:
    out = quick_protocols.out
    results = json.loads(quick_protocols.json.read_text())
    paths = [protocols.BRIDGE_FLOOR, protocols.LINGUAFRANCA]
    paths += [protocols.bridge_path(t) for t in TARGETS]
    assert [row["path"] for row in results["bridge"]["rows"]] == paths
    assert results["bridge"]["on"] == [protocols.ON, protocols.ALIKE]
    typed = [protocols.TYPED_FLOOR, protocols.SDK, *(protocols.typed_path(t) for t in TARGETS)]
    assert [row["path"] for row in results["typed"]["rows"]] == typed
    for path in [*paths, *typed]:
        assert f"| {path} |" in out, path
    assert set(results["to_chat"]["events_per_s"]) == set(TARGETS)
    for target in TARGETS:
        assert f"| {target} |" in out, target  # Messages -> chat, for the record
    # Every stream is read by us; those linguafranca refuses are named and counted.
    read = results["streams"][protocols.ON]
    assert len(read) + len(results["refused"]) == len(protocols.chat_streams())
    assert set(results["streams"][protocols.ALIKE]) <= set(read)
    for goal in protocols.GOALS:
        goal_row(out, goal)
    assert [goal["goal"] for goal in results["goals"]] == [g.name for g in protocols.GOALS]
    text = quick_protocols.json.read_text()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert "protocols.md" not in out


def test_the_gateway_benchmark_reports_every_path_and_its_goals(quick_gateway: QuickRun) -> None:
    out = quick_gateway.out
    results = json.loads(quick_gateway.json.read_text())
    cases = [f"{p}/{size}" for size in gateway.SIZES for p in gateway.PROTOCOLS]
    assert set(results["ttfb"]) == set(cases)
    for case in cases:
        protocol, size = case.split("/")
        assert f"| {gateway.WHAT[protocol]} | {size} |" in out, case
        assert results["ttfb"][case]["rounds"] == gateway.QUICK.rounds
    assert set(results["relay"][gateway.OURS]) == set(gateway.PROTOCOLS)
    assert set(results["memory"][gateway.OURS]) == set(gateway.PROTOCOLS)
    for memory in results["memory"][gateway.OURS].values():
        assert memory["identical"] == memory["streams"] == gateway.QUICK.held
    # A quick run leaves LiteLLM out and says so; its goals are those of the first byte.
    assert "LiteLLM: not run (--quick)." in out
    ttfb_goals = [goal for goal in gateway.GOALS if goal.kind == "ttfb"]
    for goal in ttfb_goals:
        goal_row(out, goal)
    assert [goal["goal"] for goal in results["goals"]] == [g.name for g in ttfb_goals]
    load = results["load"]
    assert load["requests"] == gateway.QUICK.requests and load["statuses"] == {"200": 60}
    assert load["identical"] == load["finished"] == 54 and load["prefixes"] == 6
    assert load["upstream_open"] == 0
    text = quick_gateway.json.read_text()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert "gateway.md" not in out


def test_the_state_benchmark_measures_each_store_against_resending_the_history(
    tmp_path: Path,
) -> None:
    run = quick_run(state.main, tmp_path / "state.json")
    measured = json.loads(run.json.read_text())["stores"]
    assert sorted(measured) == ["postgresql", "sqlite"]
    for store in measured.values():
        for answer in ("streamed", "unstreamed"):
            row = store[answer]
            assert row["history_whole"] == row["conversations"] > 0  # the same whole history
            assert row["resend_ms_per_turn"] > 0 and row["store_ms_per_turn"] > 0
