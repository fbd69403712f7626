"""Pictures of the benchmarks' ratios, drawn from a run's JSON files; then every goal.

Reads bench/results.json (`python -m bench.throughput`), bench/streams.json
(`python -m bench.streams`), bench/frames.json (`python -m bench.frames`) and
bench/protocols.json (`python -m bench.protocols`) and draws, beside bench/results.md:

- bench/ratios.svg: every path's loads, dumps and memory per held chunk, on each corpus,
  as a ratio to the standard library (json.loads, json.dumps) and to openai-python;
- bench/streams.svg: every stream reader, sync and async, on both streams, as a ratio to
  the floor (httpx lines + json.loads) and to openai-python;
- bench/frames.svg: a server's frame per token and a chunk built and written, per
  target, as a ratio of speed to a dict plus `json.dumps` and to openai-python;
- bench/protocols.svg: chat bridged to Anthropic Messages and to OpenAI Responses, bytes
  to bytes, as a ratio to a floor (each chunk read and written again) and to
  martian-linguafranca; Messages events read typed, as a ratio to `json.loads` and to
  anthropic-sdk-python; Responses events read typed, as a ratio to `json.loads` and to
  openai-python.

Bars grow from 1x (as fast, or as big, as the anchor) on a log scale, so 0.5x and 2x lie
as far from it; a mark across a path's bars is its goal. Then the goals of every benchmark
are printed, one row each, held or missed: the last thing `make bench` prints.

    python -m bench.charts
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.typing import RcKeyType

from bench.common import GoalRecord, Row, Section, shown, table, verdict

HERE = Path(__file__).resolve().parent

# Figures are made without pyplot: no backend is chosen, nothing needs a screen, and the
# settings below hold only while drawing (matplotlib.rc_context).
STYLE: dict[RcKeyType, Any] = {
    "svg.hashsalt": "chunkspec",  # ids from a fixed salt: the same run, the same bytes
    "svg.fonttype": "none",  # text stays text: a small file, its labels searchable
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
METADATA: dict[str, Any] = {"Date": None, "Creator": None}  # nothing that changes per run
WIDTH = 14.0  # inches: two panels side by side, each with its long path names
BAR_INCH = 0.11  # the height of one bar
GROUP = 0.7  # the share of a path's row its bars fill; the rest parts it from the next
COLOURS = ("#0072B2", "#56B4E9", "#009E73", "#CC79A7")  # Okabe-Ito: kind to colour blindness
GOAL_COLOUR = "#D55E00"
TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)

Ratio = Literal["vs_floor", "vs_openai"]


@dataclass(frozen=True)
class Panel:
    """One chart: a section's rows as ratios to one of its two anchors."""

    title: str
    section: Section
    ratio: Ratio

    @property
    def anchor(self) -> str:
        return self.section["floor"] if self.ratio == "vs_floor" else self.section["openai"]

    def rows(self) -> list[Row]:
        """Every row but the anchor's own, whose ratio is 1 by definition."""
        return [row for row in self.section["rows"] if row["path"] != self.anchor]

    def goals(self, goals: Sequence[GoalRecord]) -> list[GoalRecord]:
        """The goals this panel shows: of its kind, against its anchor, on one of its rows."""
        paths = {row["path"] for row in self.rows()}
        kind, anchor = self.section["kind"], self.anchor
        return [
            g for g in goals if g["kind"] == kind and g["anchor"] == anchor and g["path"] in paths
        ]


def pair(what: str, section: Section) -> list[Panel]:
    """`what` as a ratio to the floor, and to openai-python."""
    return [
        Panel(f"{what}\n÷ {section['floor']}", section, "vs_floor"),
        Panel(f"{what}\n÷ {section['openai']}", section, "vs_openai"),
    ]


# Drawing --------------------------------------------------------------------------------


def draw_panel(ax: Axes, panel: Panel, goals: Sequence[GoalRecord]) -> None:
    rows, on = panel.rows(), panel.section["on"]
    height = GROUP / len(on)
    values: list[float] = [1.0]
    for j, name in enumerate(on):
        ys = [i - GROUP / 2 + height * (j + 0.5) for i in range(len(rows))]
        ratios = [row[panel.ratio][name] for row in rows]
        ax.barh(ys, [r - 1 for r in ratios], left=1, height=height * 0.9, color=COLOURS[j])
        for y, r in zip(ys, ratios, strict=True):
            _value_label(ax, y, r)
        values += ratios
    paths = [row["path"] for row in rows]
    for goal in panel.goals(goals):
        values.append(_mark_goal(ax, paths.index(goal["path"]), goal))
    _style(ax, panel.title, paths, values)


def _value_label(ax: Axes, y: float, ratio: float) -> None:
    """The ratio at the end of its bar, on the side away from 1x."""
    right = ratio >= 1
    ax.annotate(
        f"{ratio:.2f}",
        (ratio, y),
        xytext=(2 if right else -2, 0),
        textcoords="offset points",
        ha="left" if right else "right",
        va="center",
        fontsize=6,
    )


def _mark_goal(ax: Axes, row: int, goal: GoalRecord) -> float:
    """A line across the row's bars at the goal's bound, named; returns the bound."""
    bound = goal["at_least"] if goal["at_least"] is not None else goal["at_most"]
    assert bound is not None
    top, bottom = row - GROUP / 2 - 0.06, row + GROUP / 2 + 0.06
    ax.plot([bound, bound], [top, bottom], color=GOAL_COLOUR, linewidth=2)
    sign = ">=" if goal["at_least"] is not None else "<="
    ax.annotate(
        f"goal {sign} {bound:g}x",
        (bound, top),
        xytext=(2, 0),
        textcoords="offset points",
        ha="left",
        va="bottom",
        fontsize=6.5,
        color=GOAL_COLOUR,
    )
    return bound


def _style(ax: Axes, title: str, paths: list[str], values: list[float]) -> None:
    """A log ratio axis wide enough for the labels, the paths top to bottom, 1x marked."""
    low, high = min(values) / 2.2, max(values) * 2.2
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    ticks = [t for t in TICKS if low <= t <= high]
    ax.set_xticks(ticks, labels=[f"{t:g}x" for t in ticks])
    ax.set_xticks([], minor=True)
    ax.set_yticks(range(len(paths)), labels=paths)
    ax.set_ylim(len(paths) - 0.5, -0.6)
    ax.axvline(1, color="#333333", linewidth=0.8)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.tick_params(axis="y", length=0)
    ax.set_title(title)


def figure(title: str, panels: list[list[Panel]], goals: Sequence[GoalRecord]) -> Figure:
    """Rows of two panels, each row as tall as its bars need, above one legend."""
    on = panels[0][0].section["on"]
    row_inch = BAR_INCH * len(on) / GROUP
    heights = [max(len(p.rows()) for p in row) for row in panels]
    fig = Figure(figsize=(WIDTH, sum(heights) * row_inch + 0.9 * len(panels) + 1.2))
    fig.set_layout_engine("constrained")
    grid = fig.add_gridspec(len(panels), 2, height_ratios=heights)
    for r, row in enumerate(panels):
        for c, panel in enumerate(row):
            draw_panel(fig.add_subplot(grid[r, c]), panel, goals)
    fig.suptitle(title, fontsize=12)
    handles: list[Any] = [Patch(color=COLOURS[j], label=name) for j, name in enumerate(on)]
    handles.append(Line2D([], [], color=GOAL_COLOUR, linewidth=2, label="goal"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), frameon=False)
    return fig


def ratios_figure(data: dict[str, Any]) -> Figure:
    panels = [
        pair("loads, chunks/s", data["parse"]),
        pair("dumps, chunks/s", data["dump"]),
        pair("memory held per chunk (lower is better)", data["memory"]),
    ]
    title = (
        f"chunkspec throughput, Python {data['python']}: each path as a ratio to the standard "
        f"library (left) and to openai-python (right)\n{data['chunks']:,} chunks per corpus, "
        "one run; bars grow from 1x on a log scale"
    )
    return figure(title, panels, data["goals"])


def streams_figure(data: dict[str, Any]) -> Figure:
    panels = [pair("sync, chunks/s", data["sync"]), pair("async, chunks/s", data["async"])]
    title = (
        f"chunkspec streams over loopback HTTP, Python {data['python']}: each reader as a ratio "
        f"to the floor (left) and to openai-python (right)\n{data['chunks']:,} chunks per "
        "stream, one run; bars grow from 1x on a log scale"
    )
    return figure(title, panels, data["goals"])


def frames_figure(data: dict[str, Any]) -> Figure:
    panels = [pair("frames/s", data["frames"])]
    title = (
        f"chunkspec token frames, Python {data['python']}: each path as a ratio of speed to "
        f"a dict plus json.dumps (left) and to openai-python (right)\n{data['tokens']:,} "
        "tokens a run, median of paired rounds; bars grow from 1x on a log scale"
    )
    return figure(title, panels, data["goals"])


def protocols_figure(data: dict[str, Any]) -> Figure:
    panels = [
        pair("chat -> Messages, bytes to bytes, chunks/s", data["bridge"]),
        pair("Messages events read typed, events/s", data["typed"]),
        pair("chat -> Responses, bytes to bytes, chunks/s", data["responses_bridge"]),
        pair("Responses events read typed, events/s", data["responses_typed"]),
    ]
    title = (
        f"chunkspec's other protocols, Anthropic Messages and OpenAI Responses, Python "
        f"{data['python']}: each path "
        "as a ratio of speed to a floor (left) and to another library (right)\nthe captured "
        f"streams from memory, median of {data['rounds']} paired rounds; bars grow from 1x on "
        "a log scale"
    )
    return figure(title, panels, data["goals"])


def save(fig: Figure, path: Path) -> None:
    fig.savefig(path, format="svg", metadata=METADATA)
    print(f"wrote {shown(path)}")


# The goals ------------------------------------------------------------------------------


def goal_lines(benchmark: str, data: dict[str, Any]) -> list[str]:
    """A markdown table of a benchmark's goals, one row each, ending held or **missed**."""
    goals: list[GoalRecord] = data["goals"]
    rows = [
        [
            goal["goal"],
            goal["target"],
            ", ".join(f"{m['on']}: {m['value']:.2f}" for m in goal["measured"]),
            verdict(goal["held"]),
        ]
        for goal in goals
    ]
    return [
        f"## Goals of {benchmark} (Python {data['python']})",
        "",
        *table(["goal", "target", "measured", "held"], rows),
    ]


def load(path: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SystemExit(f"{shown(path)} is missing: run `make bench` first") from None
    return data


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--results", type=Path, default=HERE / "results.json", metavar="PATH")
    parser.add_argument("--streams", type=Path, default=HERE / "streams.json", metavar="PATH")
    parser.add_argument("--frames", type=Path, default=HERE / "frames.json", metavar="PATH")
    parser.add_argument("--protocols", type=Path, default=HERE / "protocols.json", metavar="PATH")
    parser.add_argument("--out", type=Path, default=HERE, help="the folder of the SVG files")
    args = parser.parse_args(argv)
    throughput, streams, frames = load(args.results), load(args.streams), load(args.frames)
    protocols = load(args.protocols)
    args.out.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context(STYLE):
        save(ratios_figure(throughput), args.out / "ratios.svg")
        save(streams_figure(streams), args.out / "streams.svg")
        save(frames_figure(frames), args.out / "frames.svg")
        save(protocols_figure(protocols), args.out / "protocols.svg")
    lines = [*goal_lines("bench.throughput", throughput), ""]
    lines += [*goal_lines("bench.streams", streams), ""]
    lines += [*goal_lines("bench.frames", frames), ""]
    print("\n" + "\n".join(lines + goal_lines("bench.protocols", protocols)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
