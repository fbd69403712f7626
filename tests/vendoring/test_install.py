"""chunkspec installed the way a user installs it, and used from another repository.

The checkout (as it is now, uncommitted changes included) is committed into a temporary
git repository (tests/helpers/checkout.py) and pip-installed from there into an empty venv; the
application is another temporary git repository. Spec edits are made in the copy and
installed again, as a user updates chunkspec to a new revision.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import venv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from generator.render.header import recorded_command
from tests.helpers.checkout import commit_all, committed_copy, git, isolated_environment
from tests.helpers.gateways import free_port, wait_healthy
from tests.helpers.loopback import serve

TIMEOUT = 300  # seconds for any one command; an install fetches its build tools
ENV = isolated_environment()
"""Nothing of this checkout leaks in (PYTHONPATH, its venv): the installed package must
stand alone."""


def run(*args: str | Path, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        env=ENV,
    )
    if check:
        assert result.returncode == 0, f"{args}:\n{result.stdout}\n{result.stderr}"
    return result


@dataclass
class Setup:
    source: Path
    """The copy of the checkout chunkspec is installed from."""
    env: Path
    app: Path
    """The application repository; it vendors the package app/chunks/."""

    def chunkspec(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return run(self.env / "bin" / "chunkspec", *args, cwd=cwd or self.app, check=False)

    def install(self, requirement: str) -> None:
        python = self.env / "bin" / "python"
        pip = (python, "-m", "pip", "install", "-q", "--disable-pip-version-check")
        run(*pip, "--no-deps", "--force-reinstall", requirement, cwd=self.app)

    def edit(self, name: str, old: str, new: str) -> str:
        path = self.source / name
        text = path.read_text(encoding="utf-8")
        assert old in text, (name, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
        return commit_all(self.source, f"edit {name}", ENV)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    base = tmp_path_factory.mktemp("install")
    source = base / "chunkspec"
    committed_copy(source, ENV)
    env = base / "venv"
    venv.create(env, with_pip=True)
    pip = (env / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check")
    run(*pip, source, cwd=base)
    app = base / "application"
    (app / "app" / "inner").mkdir(parents=True)
    git("init", "-q", cwd=app, env=ENV)
    yield Setup(source, env, app)


def test_installs_one_package_named_chunkspec(setup: Setup) -> None:
    python = setup.env / "bin" / "python"
    result = run(python, "-c", "import generator", cwd=setup.app, check=False)
    assert result.returncode == 1
    assert "ModuleNotFoundError: No module named 'generator'" in result.stderr
    site = run(
        python,
        "-c",
        "import chunkspec, os; print(os.path.dirname(chunkspec.__file__))",
        cwd=setup.app,
    )
    package = Path(site.stdout.strip())
    top = {p.name for p in package.parent.iterdir() if not p.name.endswith((".dist-info", ".pth"))}
    # Only chunkspec and its dependencies (and what venv puts there).
    assert "chunkspec" in top and not top & {"generator", "spec", "templates", "tests", "share"}
    assert (package / "spec" / "vendors" / "vllm.yaml").is_file()
    assert (package / "templates" / "_module.jinja").is_file()
    assert (package / "runtime" / "sse.py").is_file()
    usage = run(python, "-m", "chunkspec", "--help", cwd=setup.app)
    assert usage.stdout.startswith("usage: python -m chunkspec ")


def test_vendors_from_the_application_and_checks(setup: Setup) -> None:
    # Run from a folder inside the application: the header records the path from its root.
    result = setup.chunkspec(
        "vendor", "--target", "pydantic", "--vendors", "vllm", "--out", "../chunks",
        cwd=setup.app / "app" / "inner",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(
        r"wrote \.\./chunks/ \(\d+ files, \d+ changed\); check it later with:"
        r" chunkspec check --vendored \.\./chunks\n",
        result.stdout,
    ), result.stdout
    text = (setup.app / "app" / "chunks" / "__init__.py").read_text(encoding="utf-8")
    command = "chunkspec vendor --target pydantic --vendors vllm --out app/chunks"
    assert recorded_command(text) == command
    assert "/" + setup.app.name not in text  # no path of this machine
    checked = setup.chunkspec("check", "--vendored", "app/chunks")
    assert (checked.returncode, checked.stdout) == (
        0,
        "app/chunks: up to date\n",
    ), checked.stderr


def test_a_project_command_needs_a_project(setup: Setup) -> None:
    result = setup.chunkspec("generate")
    assert result.returncode == 1
    assert "`generate` works on a chunkspec project" in result.stderr
    assert not list(setup.env.glob("lib/*/site-packages/chunkspec/generated"))


def test_an_update_of_chunkspec_stales_a_package_only_when_it_writes_it_otherwise(
    setup: Setup,
) -> None:
    # The package as the installed chunkspec writes it before the update (this test
    # writes its own: it does not rely on another test having run before it).
    vendor = ("vendor", "--target", "pydantic", "--vendors", "vllm", "--out", "app/chunks")
    assert setup.chunkspec(*vendor).returncode == 0
    # A doc of a vendor the package left out: still up to date after the update.
    setup.edit(
        "spec/vendors/groq.yaml",
        "Seconds the request waited in Groq's queue",
        "Seconds the request sat in Groq's queue",
    )
    setup.install(str(setup.source))
    checked = setup.chunkspec("check", "--vendored", "app/chunks")
    assert (checked.returncode, checked.stdout) == (
        0,
        "app/chunks: up to date\n",
    ), checked.stderr

    # A doc of the selected vendor, installed from the repository's URL at the new commit.
    revision = setup.edit(
        "spec/vendors/vllm.yaml", "Token ids of the rendered prompt", "Token ids of the prompt"
    )
    url = f"file://{setup.source}"
    setup.install(f"git+{url}@{revision}")
    checked = setup.chunkspec("check", "--vendored", "app/chunks")
    assert checked.returncode == 1
    message = checked.stderr
    shown = re.match(
        r"error: app/chunks: stale or edited: 1 file\(s\) differ from what its command writes"
        r" now \(chunkspec \S+, revision ([0-9a-f]+); \+: lines here it does not write, -:"
        r" lines it writes\):\n    chat\.py: \+\d+ -\d+ lines, from line \d+\n",
        message,
    )
    assert shown is not None and revision.startswith(shown[1]), message
    assert (
        f'    1. install the chunkspec this check ran: pip install "git+{url}@{shown[1]}"\n'
        in message
    )
    assert message.endswith(
        "    2. chunkspec vendor --target pydantic --vendors vllm --out app/chunks\n"
    )

    # The steps, followed, make it current again.
    assert setup.chunkspec(*vendor).returncode == 0
    checked = setup.chunkspec("check", "--vendored", "app/chunks")
    assert checked.returncode == 0, checked.stderr


def test_the_gateway_serves_from_a_wheel_built_without_git(setup: Setup, tmp_path: Path) -> None:
    # The tree as a tarball of it would be: no .git, so nothing but the configuration
    # decides what the wheel holds. Installed with its extra, `chunkspec serve` runs alone.
    tree = tmp_path / "chunkspec"
    shutil.copytree(setup.source, tree, ignore=shutil.ignore_patterns(".git"))
    python = setup.env / "bin" / "python"
    pip = (python, "-m", "pip", "install", "-q", "--disable-pip-version-check")
    run(*pip, "--force-reinstall", f"{tree}[gateway]", cwd=tmp_path)
    with serve(_hello_upstream()) as base:
        port = free_port()
        process = subprocess.Popen(
            [setup.env / "bin" / "chunkspec", "serve", "--upstream", f"{base}/v1",
             "--model", "served", "--port", str(port)],
            cwd=setup.app, env=ENV, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, process)
            body = {
                "model": "claude-x",
                "max_tokens": 9,
                "messages": [{"role": "user", "content": "hi"}],
            }
            message = httpx.post(f"{url}/v1/messages", json=body, timeout=10).json()
            response = httpx.post(
                f"{url}/v1/responses", json={"model": "gpt-x", "input": "hi"}, timeout=10
            ).json()
        finally:
            process.terminate()
            _, stderr = process.communicate(timeout=30)
    assert message["content"] == [{"type": "text", "text": "Hi"}], stderr
    assert response["output"][0]["content"][0]["text"] == "Hi", stderr
    site = run(
        python,
        "-c",
        "import chunkspec, os; print(os.path.dirname(chunkspec.__file__))",
        cwd=setup.app,
    )
    package = Path(site.stdout.strip())
    for folder in ("runtime/responses", "runtime/requests", "gateway", "_generated"):
        assert list((package / folder).glob("*.py")), folder


def _hello_upstream() -> Starlette:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "served"}
    pieces = [
        {
            **chunk,
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": "Hi"},
                    "finish_reason": "stop",
                }
            ],
        },
        {
            **chunk,
            "choices": [],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        },
    ]
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in pieces) + "data: [DONE]\n\n"

    async def chat(request: Request) -> Response:
        return Response(body, media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
