"""The whole pipeline in order: load → build → render → format. Writing is the caller's."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from .ir.build import build_specs
from .ir.format_schema import SCHEMA_PATH, render_format_schema
from .ir.load import load_spec
from .ir.model import Options, Spec
from .render.emit import Output, finish
from .render.header import PROJECT_COMMAND
from .render.schema import render_schema
from .render.targets import TARGETS, module_names
from .render.templating import render_shared, render_target
from .render.vendor_docs import render_vendor_docs


def generate(
    root: Path, options: Options | None = None, command: str = PROJECT_COMMAND
) -> list[Output]:
    """Every generated file of the project, formatted, in memory; raises SpecError on a
    bad spec. The vendor reference always covers the whole spec."""
    raw = load_spec(root)
    # The selection, OpenAI's own spec (for the differential tests) and the whole spec
    # (for the vendor reference), each built once.
    spec, openai, whole = build_specs(
        raw,
        options or Options(),
        Options(vendors=(), profile="strict"),
        Options(),
        reserved=module_names(),
    )
    chosen = options or Options()
    families = [
        build_specs(raw.family(other.family), chosen, reserved=module_names())[0]
        for other in raw.families
        if chosen.speaks(other.family)
    ]
    every_family = (
        families
        if chosen == Options()
        else [
            build_specs(raw.family(other.family), Options(), reserved=module_names())[0]
            for other in raw.families
        ]
    )
    with _Targets(spec, families, root, command) as targets:
        # What the targets share is made here while the workers make the targets.
        shared = finish(render_shared(spec, openai, root, command))
        shared.append(render_schema(spec))
        shared.append(render_vendor_docs(whole, every_family))
        # What editors complete a spec file with: the format's schema, from the loader.
        shared.append(Output(SCHEMA_PATH, render_format_schema()))
        return targets.outputs() + shared


_WORK: tuple[Spec, Sequence[Spec], Path, str] | None = None
"""What `_one_target` renders, set before the worker processes fork, which inherit it:
nothing of it is sent to them."""


class _Targets:
    """Each target's files, rendered and formatted side by side: one worker process per
    core, forked (where the system forks) once the specs are built. Rendering is most of
    `make generate`, and it is the same work for each target."""

    def __init__(self, spec: Spec, families: Sequence[Spec], root: Path, command: str) -> None:
        global _WORK
        _WORK = (spec, families, root, command)
        cores = min(len(TARGETS), os.cpu_count() or 1)
        self._pool: ProcessPoolExecutor | None = None
        self._done: dict[str, Future[list[Output]]] = {}
        # Forked from one thread only: a thread of the caller (a test runner's) may hold
        # a lock the child would wait for.
        forks = "fork" in multiprocessing.get_all_start_methods()
        if cores > 1 and forks and threading.active_count() == 1:
            context = multiprocessing.get_context("fork")
            self._pool = ProcessPoolExecutor(max_workers=min(cores, 2), mp_context=context)
            # The largest first, so that the workers end together.
            for name in sorted(TARGETS, key=lambda name: -TARGETS[name].render_cost):
                self._done[name] = self._pool.submit(_one_target, name)

    def outputs(self) -> list[Output]:
        """The targets' files, in the targets' order."""
        if self._pool is None:
            return [output for name in TARGETS for output in _one_target(name)]
        return [output for name in TARGETS for output in self._done[name].result()]

    def __enter__(self) -> _Targets:
        return self

    def __exit__(self, *_: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)


def _one_target(name: str) -> list[Output]:
    assert _WORK is not None
    spec, families, root, command = _WORK
    return finish(render_target(spec, families, root, TARGETS[name](spec), command))
