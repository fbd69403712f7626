"""A real PostgreSQL server for tests: a cluster made by initdb in a temporary folder of its
own, served by pg_ctl on a free port of 127.0.0.1 (and a unix socket in that folder), with
a database `chunkspec`. Several may run at once (one per pytest-xdist worker).

    with PostgresServer() as server:
        psycopg.connect(server.url)     # postgresql://postgres@127.0.0.1:PORT/chunkspec
        server.stop()                   # the store taken away mid-run, its data kept
        server.start()                  # and brought back, on the same port

PostgreSQL refuses to run as root, and the tests run as root here and on CI: then the
folder belongs to the `postgres` user and initdb and pg_ctl run as that user.
"""

from __future__ import annotations

import atexit
import os
import pwd
import shlex
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import NoReturn

import psycopg
import pytest

from tests.helpers.gateways import free_port

HOST = "127.0.0.1"  # never anything else: the server is for this machine only
USER = "postgres"
"""The cluster's superuser, and the system user the server runs as under root."""
DATABASE = "chunkspec"
START = 30.0
"""Seconds the server may take to accept connections, or to stop."""
TOOLS = ("initdb", "pg_ctl", "postgres")
SETTINGS = {
    "listen_addresses": HOST,
    # Durability is not what the tests are about, and syncing makes every write slow.
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    # Room for the pools of several gateway processes at once (the default is 100).
    "max_connections": "200",
}


def _has_tools(folder: Path) -> bool:
    return all((folder / tool).is_file() for tool in TOOLS)


def _from_pg_config() -> Path | None:
    pg_config = shutil.which("pg_config")
    if pg_config is None:
        return None
    done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10)
    return Path(done.stdout.strip()) if done.returncode == 0 else None


def _debian_newest() -> Path | None:
    """The newest of Debian's side-by-side versions, /usr/lib/postgresql/<major>/bin."""
    versions = [p for p in Path("/usr/lib/postgresql").glob("*/bin") if p.parent.name.isdigit()]
    return max(versions, key=lambda p: int(p.parent.name), default=None)


def _from_path() -> Path | None:
    # Resolved: a symlink in PATH (/usr/local/bin/pg_ctl) stands for the folder of them all.
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).resolve().parent if pg_ctl is not None else None


def bindir() -> Path:
    """The folder of PostgreSQL's initdb, pg_ctl and postgres; fails the test (never skips
    it) when there is none."""
    for found in (_from_pg_config(), _debian_newest(), _from_path()):
        if found is not None and _has_tools(found):
            return found
    pytest.fail(
        "no PostgreSQL server binaries (initdb, pg_ctl, postgres) were found: not via "
        "pg_config --bindir, not in /usr/lib/postgresql/*/bin, not in PATH. Install the "
        "PostgreSQL server (Debian: apt-get install postgresql)."
    )


def _run_as() -> pwd.struct_passwd | None:
    """The user to run initdb and pg_ctl as: `postgres` when this process is root (which
    PostgreSQL refuses), else None (this process's user)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        pytest.fail(f"running as root, and there is no `{USER}` user to run PostgreSQL as")


class PostgresServer:
    """A PostgreSQL cluster in a temporary folder, started on entry, removed on exit."""

    def __init__(self) -> None:
        self.bin = bindir()
        self.as_user = _run_as()
        self.folder = Path(tempfile.mkdtemp(prefix="postgres-"))
        # From here on: a test that fails half-way, even in setup, leaves no server behind.
        atexit.register(self.close)
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self.port = free_port()
        self.url = self._url(DATABASE)

    def _url(self, database: str) -> str:
        return f"postgresql://{USER}@{HOST}:{self.port}/{database}"

    def __enter__(self) -> PostgresServer:
        try:
            self._init()
            self._start_on_a_free_port()
            with psycopg.connect(
                self._url("postgres"), autocommit=True, connect_timeout=10
            ) as conn:
                conn.execute(f"CREATE DATABASE {DATABASE}")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self, *command: str) -> subprocess.CompletedProcess[str]:
        """A command of the server's, as its user, bounded in time."""
        return subprocess.run(
            [str(self.bin / command[0]), *command[1:]],
            capture_output=True,
            text=True,
            cwd=self.folder,  # the postgres user may not enter this process's folder
            timeout=START + 10,
            check=False,
            # Popen switches user itself: no runuser or setpriv, no preexec_fn.
            user=None if self.as_user is None else self.as_user.pw_uid,
            group=None if self.as_user is None else self.as_user.pw_gid,
            extra_groups=None if self.as_user is None else [],
        )

    def _init(self) -> None:
        if self.as_user is not None:
            os.chown(self.folder, self.as_user.pw_uid, self.as_user.pw_gid)
        done = self._run(
            "initdb",
            *("-D", str(self.data), "-U", USER, "--auth=trust"),
            *("--encoding=UTF8", "--locale=C", "--no-sync"),
        )
        if done.returncode != 0:
            raise AssertionError(f"initdb failed ({done.returncode}):\n{done.stdout}{done.stderr}")

    def _settings(self) -> list[str]:
        """pg_ctl's log file and postgres's options (-o: a shell reads them, so quoted)."""
        settings = {**SETTINGS, "unix_socket_directories": str(self.folder)}
        options = ["-p", str(self.port)]
        for name, value in settings.items():
            options += ["-c", f"{name}={value}"]
        return ["-l", str(self.log), "-o", shlex.join(options)]

    def _start_on_a_free_port(self) -> None:
        done = self._pg_ctl_start()
        # The port was free when picked; another process may have taken it since.
        for _ in range(2):
            if done.returncode == 0 or "Address already in use" not in self._log():
                break
            self.port = free_port()
            self.url = self._url(DATABASE)
            done = self._pg_ctl_start()
        if done.returncode != 0:
            self._not_started(done)

    def _pg_ctl_start(self) -> subprocess.CompletedProcess[str]:
        """pg_ctl start, which returns once the server accepts connections (or failed, or
        START seconds passed)."""
        wait = ["-w", "-t", str(int(START))]
        return self._run("pg_ctl", "start", *wait, "-D", str(self.data), *self._settings())

    def _not_started(self, done: subprocess.CompletedProcess[str]) -> NoReturn:
        raise AssertionError(
            f"PostgreSQL did not start (pg_ctl waits up to {START} s; exit {done.returncode}):\n"
            f"{done.stdout}{done.stderr}\n{self._log()}"
        )

    def _log(self) -> str:
        return self.log.read_text(errors="replace") if self.log.is_file() else ""

    def start(self) -> None:
        """Start the server again after stop(): the same data, the same port; returns once
        it accepts connections."""
        done = self._pg_ctl_start()
        if done.returncode != 0:
            self._not_started(done)

    def stop(self) -> None:
        """Stop the server, its data kept: connections end, new ones are refused."""
        if not self._stopped("fast"):
            raise AssertionError(f"PostgreSQL did not stop within {START} s:\n{self._log()}")

    def close(self) -> None:
        """Stop the server at once if it runs and remove its folder; safe to call twice."""
        atexit.unregister(self.close)
        if self.data.is_dir() and not self._stopped("immediate") and self._running():
            self._kill()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _stopped(self, mode: str) -> bool:
        try:
            done = self._run(
                "pg_ctl", "stop", "-m", mode, "-w", "-t", str(int(START)), "-D", str(self.data)
            )
        except subprocess.TimeoutExpired:
            return False
        return done.returncode == 0

    def _running(self) -> bool:
        """Whether pg_ctl sees the postmaster of the pid file alive."""
        return self._run("pg_ctl", "status", "-D", str(self.data)).returncode == 0

    def _kill(self) -> None:
        """Kill the postmaster, which did not stop when asked to."""
        try:
            pid = int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])
            os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            pass  # it is gone already
