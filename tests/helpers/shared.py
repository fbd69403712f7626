"""Expensive setup made once per test run and shared by every pytest-xdist worker.

A venv with a tool or a dependency takes seconds to make, and the tests that need one
may run on any worker. Each is a folder under the run's shared base (the parent of the
workers' own base folders under xdist, the base folder itself without it), named by a
digest of what it is made from; the first worker to ask makes it under a file lock,
the others wait for it and reuse it. A folder is only used once it is complete.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

_DONE = ".complete"


def _run_base(tmp_path_factory: pytest.TempPathFactory, worker: str | None) -> Path:
    """The folder every worker of this run sees: xdist gives each worker a base folder
    of its own inside one made for the run."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if worker is not None else base


def shared_folder(
    request: pytest.FixtureRequest,
    kind: str,
    inputs: object,
    make: Callable[[Path], None],
) -> Path:
    """The folder `make` fills for `inputs` (any JSON value: its digest names the folder),
    made once for the whole run. `make` must leave nothing it needs outside the folder."""
    worker: str | None = getattr(request.config, "workerinput", {}).get("workerid")
    tmp_path_factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
    key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]
    folder = _run_base(tmp_path_factory, worker) / "shared" / f"{kind}-{key}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{folder}.lock"):
        if not (folder / _DONE).is_file():
            shutil.rmtree(folder, ignore_errors=True)  # a make that failed half-way
            folder.mkdir()
            make(folder)
            (folder / _DONE).touch()
    return folder
