"""Responses state in the gateway (generator/gateway/state.py, resources.py, store/), over
real HTTP, judged by openai-python: `previous_response_id` through a tool loop against a
chat upstream that answers with what it was sent (tests/helpers/echo_upstream.py), so
that each answer says whether the upstream saw the whole history with the reasoning
replayed in its dialect; the stored responses (`GET`, `?stream=true`, `/input_items`,
`DELETE`), conversations, isolation between keys, expiry, the schema's version, and the
`[store]` configuration. The same tests run on SQLite and on a PostgreSQL server they
start (`store`)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from generated.msgspec import chat
from generator.gateway.app import create_app
from generator.gateway.config import ConfigError, Upstream, load
from generator.gateway.store import (
    ConversationRecord,
    Missing,
    Record,
    StoreSettings,
    StoreUnavailable,
    open_store,
    owner_of,
)
from generator.gateway.store.sql import MIGRATIONS, SCHEMA_TABLE
from tests.helpers.echo_upstream import TOOL, EchoUpstream
from tests.helpers.gateways import config
from tests.helpers.loopback import serve
from tests.helpers.postgres import PostgresServer
from tests.helpers.project import REPO
from tests.helpers.support import runtime

WAIT = 10.0
TOOLS: list[Any] = [
    {
        "type": "function",
        "name": TOOL,
        "description": "Look a thing up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
]


@dataclass
class Stack:
    """The echo upstream and a gateway in front of it (DeepSeek's dialect), its store at
    `url`."""

    upstream: EchoUpstream
    gateway: str
    url: str

    def client(self, key: str = "key-a") -> openai.OpenAI:
        return openai.OpenAI(
            base_url=f"{self.gateway}/v1", api_key=key, max_retries=0, timeout=WAIT
        )

    def get(self, path: str, key: str = "key-a", **params: Any) -> httpx.Response:
        headers = {"authorization": f"Bearer {key}"}
        return httpx.get(f"{self.gateway}{path}", headers=headers, params=params, timeout=WAIT)


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    with PostgresServer() as server:
        yield server


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('store') / 'store.sqlite3'}"
    else:
        url = request.getfixturevalue("postgres").url
    upstream = EchoUpstream()
    with serve(upstream) as base:
        upstreams = {"up": Upstream("up", "chat", f"{base}/v1", dialect="deepseek")}
        app = create_app(config(upstreams, {"*": "up/*"}, store=StoreSettings(url=url)))
        with serve(app) as gateway:
            yield Stack(upstream, gateway, url)


def seen(response: Any) -> dict[str, Any]:
    """What the echo upstream said it was sent, from a response's text."""
    answer: dict[str, Any] = json.loads(response.output_text)
    return answer


def texts_of(items: Sequence[Any]) -> list[str]:
    """The text of each message of a list of input items."""
    return [item.model_dump()["content"][0]["text"] for item in items]


def test_a_tool_loop_continued_by_previous_response_id_replays_every_turn(stack: Stack) -> None:
    client = stack.client()
    with client.responses.stream(model="m", input="use the tool on cats", tools=TOOLS) as events:
        first = events.get_final_response()
    call = next(item for item in first.output if item.type == "function_call")
    assert (call.name, json.loads(call.arguments)) == (TOOL, {"q": "use the tool on cats"})
    result: Any = {"type": "function_call_output", "call_id": call.call_id, "output": "9 lives"}
    second = client.responses.create(
        model="m", previous_response_id=first.id, input=[result], tools=TOOLS
    )
    assert seen(second) == {
        "users": ["use the tool on cats"],
        "assistants": [""],
        "reasoning": ["thought 0"],
        "tools": ["9 lives"],
        "system": [],
    }
    with client.responses.stream(
        model="m", previous_response_id=second.id, input="and dogs?", instructions="Be brief."
    ) as events:
        third = events.get_final_response()
    assert seen(third) == {
        "users": ["use the tool on cats", "and dogs?"],
        "assistants": ["", second.output_text],
        "reasoning": ["thought 0", "thought 1"],
        "tools": ["9 lives"],
        "system": ["Be brief."],  # the new turn's instructions only, as OpenAI's
    }
    sent = stack.upstream.requests[-1]["messages"]
    assert sent[0] == {"role": "system", "content": "Be brief."}
    assert sent[2] == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "thought 0",
        "tool_calls": [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": TOOL, "arguments": call.arguments},
            }
        ],
    }
    assert sent[3] == {"role": "tool", "tool_call_id": call.call_id, "content": "9 lives"}
    assert sent[4]["reasoning_content"] == "thought 1"
    assert len({first.id, second.id, third.id}) == 3
    assert all(r.id.startswith("resp_") for r in (first, second, third))


def test_a_stored_response_is_read_replayed_listed_and_deleted(stack: Stack) -> None:
    client = stack.client()
    with client.responses.stream(model="m", input="hello") as events:
        first = events.get_final_response()
    items: Any = [{"role": "user", "content": f"line {n}"} for n in range(5)]
    second = client.responses.create(model="m", previous_response_id=first.id, input=items)
    got = client.responses.retrieve(second.id)
    assert (got.id, got.previous_response_id, got.output_text) == (
        second.id,
        first.id,
        second.output_text,
    )
    replay = stack.get(f"/v1/responses/{first.id}", stream="true")
    assert replay.headers["content-type"].startswith("text/event-stream")
    names = [line[7:] for line in replay.text.splitlines() if line.startswith("event: ")]
    assert names[0] == "response.created" and names[-1] == "response.completed"
    later = stack.get(f"/v1/responses/{first.id}", stream="true", starting_after=2).text
    numbers = [
        json.loads(line[6:])["sequence_number"]
        for line in later.splitlines()
        if line.startswith("data: ")
    ]
    assert numbers == list(range(3, len(names)))

    page = client.responses.input_items.list(second.id, limit=2)  # newest first
    texts = texts_of(page.data)
    assert texts == ["line 4", "line 3"] and page.has_more
    rest = client.responses.input_items.list(second.id, after=page.data[-1].id, limit=10)
    assert texts_of(rest.data) == ["line 2", "line 1", "line 0"]
    assert not rest.has_more
    ordered = client.responses.input_items.list(second.id, order="asc", limit=100)
    assert texts_of(ordered.data) == [f"line {n}" for n in range(5)]
    assert len({item.id for item in ordered.data}) == 5

    deleted = httpx.delete(
        f"{stack.gateway}/v1/responses/{first.id}",
        headers={"authorization": "Bearer key-a"},
        timeout=WAIT,
    )
    assert deleted.json() == {"id": first.id, "object": "response", "deleted": True}
    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.retrieve(first.id)
    assert missing.value.body == {
        "message": f"Response with id '{first.id}' not found.",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    with pytest.raises(openai.NotFoundError) as broken:  # its continuation lost its start
        client.responses.create(model="m", previous_response_id=second.id, input="more")
    assert isinstance(broken.value.body, dict)
    assert broken.value.body["code"] == "previous_response_not_found"
    assert first.id in broken.value.body["message"]


def test_a_missing_previous_response_is_openais_404_and_nothing_goes_upstream(
    stack: Stack,
) -> None:
    before = len(stack.upstream.requests)
    with pytest.raises(openai.NotFoundError) as missing:
        stack.client().responses.create(model="m", previous_response_id="resp_nope", input="x")
    assert missing.value.body == {
        "message": "Previous response with id 'resp_nope' not found.",
        "type": "invalid_request_error",
        "param": "previous_response_id",
        "code": "previous_response_not_found",
    }
    assert len(stack.upstream.requests) == before


def test_a_key_never_reads_continues_or_deletes_another_keys_response(stack: Stack) -> None:
    mine = stack.client("key-mine").responses.create(model="m", input="secret")
    other = stack.client("key-other")
    with pytest.raises(openai.NotFoundError):
        other.responses.retrieve(mine.id)
    with pytest.raises(openai.NotFoundError):
        other.responses.input_items.list(mine.id)
    with pytest.raises(openai.NotFoundError):
        other.responses.create(model="m", previous_response_id=mine.id, input="tell me")
    with pytest.raises(openai.NotFoundError):
        other.responses.delete(mine.id)
    assert stack.get(f"/v1/responses/{mine.id}", key="key-other").status_code == 404
    assert stack.get(f"/v1/responses/{mine.id}", key="key-mine").status_code == 200
    again = stack.client("key-mine").responses.create(
        model="m", previous_response_id=mine.id, input="still mine"
    )
    assert seen(again)["users"] == ["secret", "still mine"]


def test_the_store_holds_a_hash_of_the_key_never_the_key(tmp_path: Path) -> None:
    upstream = EchoUpstream()
    path = tmp_path / "store.sqlite3"
    with serve(upstream) as base:
        upstreams = {"up": Upstream("up", "chat", f"{base}/v1")}
        app = create_app(config(upstreams, {"*": "up/*"}, store=StoreSettings(f"sqlite:///{path}")))
        with serve(app) as gateway:
            key = "sk-very-secret-key-0123456789"
            openai.OpenAI(base_url=f"{gateway}/v1", api_key=key, max_retries=0).responses.create(
                model="m", input="hi"
            )
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert key.encode() not in raw
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT owner FROM responses").fetchall() == [(owner_of(key),)]


def test_store_false_keeps_nothing_and_the_upstream_gets_the_request_as_before(
    stack: Stack,
) -> None:
    client = stack.client()
    unkept = client.responses.create(model="m", input="forget me", store=False)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(unkept.id)
    assert stack.upstream.requests[-1]["messages"] == [{"role": "user", "content": "forget me"}]


def test_a_conversation_collects_its_turns_and_serves_them(stack: Stack) -> None:
    client = stack.client()
    conversation = client.conversations.create(
        items=[{"type": "message", "role": "user", "content": "I am Ada."}],
        metadata={"topic": "names"},
    )
    assert conversation.id.startswith("conv_") and conversation.metadata == {"topic": "names"}
    first = client.responses.create(model="m", conversation=conversation.id, input="Who am I?")
    assert seen(first)["users"] == ["I am Ada.", "Who am I?"]
    second = client.responses.create(model="m", conversation=conversation.id, input="Again?")
    assert seen(second)["users"] == ["I am Ada.", "Who am I?", "Again?"]
    assert seen(second)["reasoning"] == ["thought 0"]
    items = client.conversations.items.list(conversation.id, order="asc")
    kinds = [(item.type, getattr(item, "role", None)) for item in items.data]
    assert kinds == [
        ("message", "user"),
        ("message", "user"),
        ("reasoning", None),
        ("message", "assistant"),
        ("message", "user"),
        ("reasoning", None),
        ("message", "assistant"),
    ]
    added = client.conversations.items.create(
        conversation.id, items=[{"type": "message", "role": "user", "content": "Bye."}]
    )
    added_id = added.data[0].id
    assert isinstance(added_id, str)
    one = client.conversations.items.retrieve(added_id, conversation_id=conversation.id)
    assert one.id == added_id
    client.conversations.items.delete(added_id, conversation_id=conversation.id)
    assert len(client.conversations.items.list(conversation.id, limit=100).data) == 7
    unkept = client.responses.create(
        model="m", conversation=conversation.id, input="Off the record?", store=False
    )
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(unkept.id)  # not kept, but its turn is the conversation's
    listed = client.conversations.items.list(conversation.id, limit=100, order="asc").data
    assert texts_of(listed[7:8]) == ["Off the record?"] and len(listed) == 10
    assert client.conversations.update(conversation.id, metadata={"a": "b"}).metadata == {"a": "b"}
    with pytest.raises(openai.NotFoundError):
        stack.client("key-other").conversations.retrieve(conversation.id)
    with pytest.raises(openai.BadRequestError) as both:
        client.responses.create(
            model="m", conversation=conversation.id, previous_response_id=first.id, input="x"
        )
    assert isinstance(both.value.body, dict)
    assert both.value.body["code"] == "mutually_exclusive_parameters"
    assert client.conversations.delete(conversation.id).deleted
    with pytest.raises(openai.NotFoundError) as gone:
        client.responses.create(model="m", conversation=conversation.id, input="x")
    assert isinstance(gone.value.body, dict) and gone.value.body["param"] == "conversation"


def test_what_outlives_its_time_is_gone_and_swept(tmp_path: Path) -> None:
    asyncio.run(_expiry(tmp_path))


async def _expiry(tmp_path: Path) -> None:
    settings = StoreSettings(url=f"sqlite:///{tmp_path / 'ttl.sqlite3'}", ttl=1)
    store = open_store(settings)
    assert store is not None
    await store.open()
    try:
        record = Record("resp_old", "o", None, None, 0, [], [], {"id": "resp_old"}, b"")
        await store.save(record, [])
        await store.create_conversation("o", ConversationRecord("conv_old", 0, {}), [])
        assert await store.get("o", "resp_old") is not None
        time.sleep(2.1)
        assert await store.get("o", "resp_old") is None  # expired: unread before the sweep
        assert await store.conversation("o", "conv_old") is None
        assert await store.sweep() == 2
        assert await store.sweep() == 0
    finally:
        await store.close()


def test_the_schema_is_made_once_and_a_newer_one_is_refused(tmp_path: Path) -> None:
    asyncio.run(_schema(tmp_path))


async def _schema(tmp_path: Path) -> None:
    path = tmp_path / "schema.sqlite3"
    for _ in range(2):  # made, then found made
        store = open_store(StoreSettings(url=f"sqlite:///{path}"))
        assert store is not None
        await store.open()
        await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute(f"SELECT version FROM {SCHEMA_TABLE}").fetchall() == [(len(MIGRATIONS),)]
        db.execute(f"UPDATE {SCHEMA_TABLE} SET version = 99")
    store = open_store(StoreSettings(url=f"sqlite:///{path}"))
    assert store is not None
    with pytest.raises(StoreUnavailable, match="schema is version 99, made by a newer chunkspec"):
        await store.open()


def test_the_state_keys_are_refused_when_the_store_is_none() -> None:
    upstream = EchoUpstream()
    with serve(upstream) as base:
        upstreams = {"up": Upstream("up", "chat", f"{base}/v1")}
        app = create_app(config(upstreams, {"*": "up/*"}, store=StoreSettings(url="none")))
        with serve(app) as gateway:
            client = openai.OpenAI(base_url=f"{gateway}/v1", api_key="k", max_retries=0)
            with pytest.raises(openai.BadRequestError) as refused:
                client.responses.create(model="m", previous_response_id="resp_1", input="x")
            answer = httpx.get(f"{gateway}/v1/responses/resp_1", timeout=WAIT)
    assert isinstance(refused.value.body, dict)
    assert refused.value.body["message"] == (
        'not translated: previous_response_id: this gateway keeps no state ([store] url = "none")'
    )
    assert upstream.requests == []
    assert answer.status_code == 404


@pytest.mark.parametrize(
    ("table", "line", "said"),
    [
        (['url = "mysql://x"'], 7, "store.url must be sqlite:///PATH"),
        (['ttl = "30 days"'], 7, 'store.ttl must be a time of a second or more, such as "30d"'),
        (['ttl = "0.5s"'], 7, "store.ttl must be a time of a second or more"),
        (["max_response_mb = -1"], 7, "store.max_response_mb must be a number above 0"),
        (['url = "none"', "size = 1"], 8, "unknown key 'store.size'"),
    ],
)
def test_a_store_table_it_cannot_use_is_refused_at_its_line(
    tmp_path: Path, table: list[str], line: int, said: str
) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(
        '[upstreams.up]\nprotocol = "chat"\nbase_url = "http://127.0.0.1:1/v1"\n'
        '[models]\n"*" = "up/*"\n[store]\n' + "\n".join(table) + "\n"
    )
    with pytest.raises(ConfigError) as raised:
        load(path)
    assert str(raised.value).startswith(f"{path}:{line}: {said}")


def test_a_store_table_sets_the_url_time_to_live_and_size(tmp_path: Path) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(
        '[upstreams.up]\nprotocol = "chat"\nbase_url = "http://127.0.0.1:1/v1"\n'
        '[models]\n"*" = "up/*"\n'
        '[store]\nurl = "postgresql://u@db/chunkspec"\nttl = "12h"\nmax_response_mb = 1.5\n'
    )
    loaded = load(path).store
    assert (loaded.url, loaded.ttl, loaded.max_bytes) == (
        "postgresql://u@db/chunkspec",
        12 * 3600,
        int(1.5 * 2**20),
    )
    assert load(path, {"store": "none"}).store.url == "none"


def test_serve_says_why_its_store_cannot_open_before_it_serves(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    path = tmp_path / "gateway.toml"
    path.write_text(
        '[upstreams.up]\nprotocol = "chat"\nbase_url = "http://127.0.0.1:1/v1"\n'
        '[models]\n"*" = "up/*"\n'
        f'[store]\nurl = "sqlite:///{tmp_path / "file" / "store.sqlite3"}"\n'
    )
    command = [sys.executable, "-m", "generator", "serve", "--config", str(path)]
    ran = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=60)
    assert ran.returncode == 2
    assert ran.stderr.splitlines()[-1] == (
        f"chunkspec serve: [store] SQLite at {tmp_path / 'file' / 'store.sqlite3'}: "
        f"[Errno 17] File exists: '{tmp_path / 'file'}'"
    )


def test_item_references_are_the_kept_items_they_name(stack: Stack) -> None:
    """The Vercel AI SDK's tool loop while `store` is true: its earlier steps' reasoning,
    text and calls go back as `item_reference`s, with no `previous_response_id`."""
    client = stack.client()
    first = client.responses.create(model="m", input="use the tool on owls", tools=TOOLS)
    reasoning, call = first.output
    assert (reasoning.type, call.type) == ("reasoning", "function_call")
    assert call.type == "function_call"
    steps: Any = [
        {"role": "user", "content": "use the tool on owls"},
        {"type": "item_reference", "id": reasoning.id},
        {"type": "item_reference", "id": call.id},
        {"type": "function_call_output", "call_id": call.call_id, "output": "they hoot"},
    ]
    second = client.responses.create(model="m", input=steps, tools=TOOLS)
    assert seen(second)["reasoning"] == ["thought 0"]
    assert seen(second)["tools"] == ["they hoot"]
    assert stack.upstream.requests[-1]["messages"][1]["tool_calls"][0]["id"] == call.call_id
    for unknown in ("rs_" + "0" * 32 + "_0", "msg_elsewhere", reasoning.id):
        key = "key-other" if unknown == reasoning.id else "key-a"  # another key's: unknown
        reference: Any = {"type": "item_reference", "id": unknown}
        with pytest.raises(openai.NotFoundError) as missing:
            stack.client(key).responses.create(model="m", input=[reference])
        assert missing.value.body == {
            "message": f"Item with id '{unknown}' not found.",
            "type": "invalid_request_error",
            "param": "input",
            "code": None,
        }


def test_a_response_above_the_size_limit_is_not_kept_and_says_so(tmp_path: Path) -> None:
    upstream = EchoUpstream()
    settings = StoreSettings(url=f"sqlite:///{tmp_path / 'small.sqlite3'}", max_bytes=3000)
    with serve(upstream) as base:
        upstreams = {"up": Upstream("up", "chat", f"{base}/v1")}
        with serve(create_app(config(upstreams, {"*": "up/*"}, store=settings))) as gateway:
            client = openai.OpenAI(base_url=f"{gateway}/v1", api_key="k", max_retries=0)
            with pytest.raises(openai.APIStatusError) as large_input:
                client.responses.create(model="m", input="x" * 4000)
            assert len(upstream.requests) == 0  # refused before the upstream
            with pytest.raises(openai.APIStatusError) as large_answer:
                client.responses.create(model="m", input="y" * 1400)
            body = {"model": "m", "input": "z" * 1400, "stream": True}
            streamed = httpx.post(f"{gateway}/v1/responses", json=body, timeout=WAIT).text
            kept = sqlite3.connect(tmp_path / "small.sqlite3").execute(
                "SELECT COUNT(*) FROM responses"
            )
            assert kept.fetchone() == (0,)
            with_store_false = client.responses.create(model="m", input="y" * 4000, store=False)
    assert large_input.value.status_code == 413
    assert isinstance(large_input.value.body, dict)
    assert large_input.value.body["code"] == "response_too_large"
    assert large_answer.value.status_code == 413
    assert "above the store's limit of 3000" in large_answer.value.message
    names = [line[7:] for line in streamed.splitlines() if line.startswith("event: ")]
    assert names[-1] == "error" and "response.completed" not in names
    error = json.loads(streamed.splitlines()[-2][6:])
    assert error["code"] == "response_too_large"
    assert json.loads(with_store_false.output_text)["users"] == ["y" * 4000]  # no limit


def test_turns_at_once_on_one_conversation_are_each_added_whole(stack: Stack) -> None:
    """Appends to one conversation wait for each other (its row is locked first): on
    PostgreSQL's READ COMMITTED two would otherwise read the same last position."""
    client = stack.client()
    conversation = client.conversations.create()

    def turn(number: int) -> str:
        return client.responses.create(
            model="m", conversation=conversation.id, input=f"at once {number}"
        ).id

    with ThreadPoolExecutor(10) as pool:
        ids = list(pool.map(turn, range(20)))
    assert len(set(ids)) == 20
    items = client.conversations.items.list(conversation.id, limit=100, order="asc").data
    assert len(items) == 60  # each turn's input, reasoning and answer
    users = texts_of([i for i in items if getattr(i, "role", "") == "user"])
    assert sorted(users) == sorted(f"at once {n}" for n in range(20))
    assert len({item.id for item in items}) == 60


def state_of(response: Any) -> tuple[object, object]:
    """Whether a response says it is kept (openai-python's model has no `store`: an
    extra key), and what it continues."""
    said: dict[str, Any] = response.model_dump()
    return said.get("store"), said.get("previous_response_id")


def test_the_live_response_says_what_it_continues_and_whether_it_is_kept(stack: Stack) -> None:
    client = stack.client()
    first = client.responses.create(model="m", input="one")
    assert state_of(first) == (True, None)
    with client.responses.stream(
        model="m", input="two", previous_response_id=first.id, store=False
    ) as events:
        seen_first = [e.response for e in events if e.type == "response.created"]
        second = events.get_final_response()
    assert state_of(second) == (False, first.id)
    assert [state_of(r) for r in seen_first] == [(False, first.id)]
    assert state_of(client.responses.retrieve(first.id)) == (True, None)


def test_items_a_conversation_could_not_send_are_refused_and_ids_stay_one_each(
    stack: Stack,
) -> None:
    client = stack.client()
    conversation = client.conversations.create()
    for items, status in [
        ([1], 400),
        ({"a": 1}, 400),
        ([{"type": "message", "role": "user", "content": 5}], 400),
    ]:
        answer = httpx.post(
            f"{stack.gateway}/v1/conversations/{conversation.id}/items",
            json={"items": items},
            headers={"authorization": "Bearer key-a"},
            timeout=WAIT,
        )
        assert answer.status_code == status, answer.text
        assert answer.json()["error"]["type"] == "invalid_request_error"
    again: Any = [{"id": "msg_mine", "type": "message", "role": "user", "content": "hi"}] * 2
    client.conversations.items.create(conversation.id, items=again)
    client.conversations.items.create(conversation.id, items=again)
    listed = client.conversations.items.list(conversation.id, limit=100).data
    assert len(listed) == 4 and len({item.id for item in listed}) == 4
    assert "msg_mine" in {item.id for item in listed}
    page = client.conversations.items.list(conversation.id, limit=1)
    paged: list[str] = []
    while True:  # pages end, each item once
        paged += [item.id for item in page.data if item.id]
        if not page.has_more:
            break
        page = client.conversations.items.list(conversation.id, limit=1, after=paged[-1])
    assert sorted(paged) == sorted(item.id for item in listed if item.id)
    reply = client.responses.create(model="m", conversation=conversation.id, input="next")
    assert seen_users(reply) == ["hi"] * 4 + ["next"]


def seen_users(response: Any) -> list[str]:
    users: list[str] = seen(response)["users"]
    return users


DIALECTS = {rules.name: rules for rules in runtime(chat, "_REQUEST_DIALECTS")}
"""Every chat request dialect of the spec, with the key it takes reasoning back in."""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_store_replays_what_a_client_resending_its_history_would_send(
    dialect: str, tmp_path: Path
) -> None:
    """In every dialect, a turn continued by `previous_response_id` reaches the upstream
    exactly as the same turn from a client that resends its history (`store: false`,
    the items it got back): the reasoning in the dialect's own spelling included."""
    upstream = EchoUpstream()
    settings = StoreSettings(url=f"sqlite:///{tmp_path / 'store.sqlite3'}")
    with serve(upstream) as base:
        upstreams = {"up": Upstream("up", "chat", f"{base}/v1", dialect=dialect)}
        with serve(create_app(config(upstreams, {"*": "up/*"}, store=settings))) as gateway:
            client = openai.OpenAI(base_url=f"{gateway}/v1", api_key="k", max_retries=0)
            first = client.responses.create(model="m", input="use the tool here", tools=TOOLS)
            call = next(item for item in first.output if item.type == "function_call")
            result: Any = {"type": "function_call_output", "call_id": call.call_id, "output": "1"}
            client.responses.create(
                model="m", previous_response_id=first.id, input=[result], tools=TOOLS
            )
            replayed = upstream.requests[-1]
            history: Any = [
                {"role": "user", "content": "use the tool here"},
                *(item.model_dump(exclude_none=True) for item in first.output),
                result,
            ]
            client.responses.create(model="m", input=history, tools=TOOLS, store=False)
            resent = upstream.requests[-1]
    assert replayed["messages"] == resent["messages"]
    assert replayed["messages"][1]["tool_calls"][0]["id"] == call.call_id
    spelling = DIALECTS[dialect].reasoning or DIALECTS[dialect].details
    if spelling is not None:  # the dialect's own key holds the first turn's reasoning
        assert "thought 0" in json.dumps(replayed["messages"][1][spelling])


def test_a_turn_whose_previous_response_went_meanwhile_is_not_kept(tmp_path: Path) -> None:
    """Deleted (or expired) while the model answered: kept, the turn would name a
    conversation that cannot be replayed. Its client is told instead."""

    async def scenario() -> None:
        store = open_store(StoreSettings(url=f"sqlite:///{tmp_path / 'gone.sqlite3'}"))
        assert store is not None
        await store.open()
        try:
            record = Record("resp_new", "o", "resp_gone", None, 0, [], [], {}, b"")
            with pytest.raises(Missing) as missing:
                await store.save(record, ["resp_gone"])
            assert missing.value.response_id == "resp_gone"
            assert await store.get("o", "resp_new") is None
        finally:
            await store.close()

    asyncio.run(scenario())
