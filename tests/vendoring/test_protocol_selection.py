"""A selection of protocols, like one of vendors, trims what a user generates and
vendors: chat's module alone holds no other protocol's code, and a bridge vendors as one
unit (the chat module and each other protocol's beside it) that works copied on its own
and is checked as a whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.project import REPO, copy_project, run_generator

CAPTURE = REPO / "tests" / "fixtures" / "messages" / "anthropic__thinking-signature-text.sse"


def test_chat_alone_makes_no_other_module_and_names_no_other_protocol(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    result = run_generator(root, "generate", "--protocols", "chat")
    assert result.returncode == 0, result.stderr
    assert not list((root / "generated").glob("*/messages.py")), "the old ones removed"
    assert "generated/pydantic/messages.py (removed: the selection" in result.stdout
    assert "generated/pydantic/_runtime/messages/reader.py (removed" in result.stdout
    assert not (root / "generated/msgspec/_runtime/responses").exists()
    text = (root / "generated" / "msgspec" / "chat.py").read_text()
    assert "Protocols: chat." in text
    for absent in ("_PROTOCOLS", "def iter_events", "def write_parts", "_protocol("):
        assert absent not in text, absent


def test_an_unknown_protocol_is_refused_where_it_is_named(tmp_path: Path) -> None:
    result = run_generator(REPO, "vendor", "--target", "pydantic", "--protocols", "smoke",
                           "--out", str(tmp_path / "x"))  # fmt: skip
    assert result.returncode == 1
    assert (
        result.stderr
        == "error: --protocols: unknown protocol smoke (known: chat, messages, responses)\n"
    )
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("target", ["pydantic", "msgspec"])
def test_a_vendored_bridge_is_one_unit_that_works_alone(tmp_path: Path, target: str) -> None:
    package = tmp_path / "app" / "llm"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    out = package / "wire"
    result = run_generator(
        REPO, "vendor", "--target", target, "--protocols", "messages", "--out", str(out)
    )
    assert result.returncode == 0, result.stderr
    companion = out / "messages.py"
    assert companion.exists() and not (out / "responses.py").exists()
    assert not (out / "_runtime" / "responses").exists()
    assert run_generator(REPO, "check", "--vendored", str(out)).returncode == 0
    # A fresh interpreter, from the app's folder: the unit imports nothing of chunkspec.
    script = (
        "import sys, warnings; sys.modules['generated'] = None; sys.modules['generator'] = None\n"
        "from llm import wire\n"
        f"body = open({str(CAPTURE)!r}, 'rb').read()\n"
        "events = list(wire.iter_events(body, protocol='messages'))\n"
        "chat = b''.join(wire.write_parts(wire.iter_parts(body, protocol='messages')))\n"
        "print(len(events), type(wire.MessageAccumulator()).__module__, chat.endswith(b'[DONE]\\n\\n'))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path / "app",
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr
    events = CAPTURE.read_bytes().count(b"data:")
    assert run.stdout.split() == [str(events), "llm.wire.messages", "True"]
    # Edited by hand, the companion is caught like the chat module would be.
    companion.write_text(
        companion.read_text().replace("    return _write_messages(parts)", "    return iter(())")
    )
    result = run_generator(REPO, "check", "--vendored", str(out))
    assert result.returncode == 1
    assert f"error: {out}: stale or edited: 1 file(s) differ" in result.stderr
    assert "    messages.py: +1 -1 lines, from line " in result.stderr


def test_vendor_writes_chat_alone_by_default_and_every_protocol_for_all(tmp_path: Path) -> None:
    out = tmp_path / "wire"
    args = ("vendor", "--target", "typeddicts", "--out", str(out))
    assert run_generator(REPO, *args, "--protocols", "all").returncode == 0
    assert {"chat.py", "messages.py", "responses.py"} <= {p.name for p in out.iterdir()}
    assert "--protocols all" in (out / "__init__.py").read_text()
    assert run_generator(REPO, "check", "--vendored", str(out)).returncode == 0
    # Written again without the flag: chat alone, and what it no longer writes is gone.
    result = run_generator(REPO, *args)
    assert result.returncode == 0, result.stderr
    assert not (out / "messages.py").exists() and not (out / "_runtime" / "responses").exists()
    assert "--protocols" not in (out / "__init__.py").read_text()
    assert run_generator(REPO, "check", "--vendored", str(out)).returncode == 0


def test_the_chat_module_reads_another_protocols_names_from_its_module_only() -> None:
    # In a fresh interpreter: importing the package asks the chat module for dunders
    # (`__path__`), which must not import the other protocols.
    script = (
        "import sys, generated.pydantic as p\n"
        "others = [f'generated.pydantic.{p}{m}' for p in ('', '_runtime.')"
        " for m in ('messages', 'responses')]\n"
        "print(sorted(k for k in sys.modules if k in others))\n"
        "print(p.MessageAccumulator.__module__, p.chat.ResponseAccumulator.__module__)\n"
        "try:\n    p.chat.NoSuchName\nexcept AttributeError as exc:\n    print(exc)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=REPO,
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "[]",
        "generated.pydantic.messages generated.pydantic.responses",
        "module 'generated.pydantic.chat' has no attribute 'NoSuchName'",
    ]
