"""The SDK's client drives Tapwise's MCP server over streamable HTTP (loopback, bearer
token) against the virtual phone, with a person answering the approval questions."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ImageContent, Implementation

from agent.types import Decision, DecisionKind
from app import compose
from app.mcp.clients import NotLoopback
from app.mcp.episodes import EpisodeBook, episode_goal
from app.mcp.server import HttpServer, build_server
from app.mcp.service import PhoneService
from app.mcp.supervisor import Policy, PolicySupervisor
from app.settings import load_settings
from app.storage import Store
from phone.virtual.phone import VirtualPhone
from tests.mcp.support import Person, element_id, text_of

TOKEN = "test-token-0123456789abcdef"


class Served:
    def __init__(self, tmp_path: Any, policy: Policy) -> None:
        self.phone = VirtualPhone()
        self.person = Person()
        self.store = Store(tmp_path / "tapwise.db")
        settings, _ = load_settings()
        self.book = EpisodeBook(self.store, device="sim")
        self.service = PhoneService(self.phone, compose.make_parser(settings, mode="tree").parse,
                                    PolicySupervisor(policy, self.person), self.book, store=self.store)
        self.http = HttpServer(build_server(self.service), TOKEN, port=0)
        self.http.start()

    def close(self) -> None:
        self.http.stop()
        self.service.close()
        self.store.close()
        self.phone.close()


@pytest.fixture
def served(tmp_path: Any) -> Iterator[Served]:
    s = Served(tmp_path, Policy.AUTO)
    yield s
    s.close()


@pytest.fixture
def asked(tmp_path: Any) -> Iterator[Served]:
    s = Served(tmp_path, Policy.ASK)
    yield s
    s.close()


def client(url: str, name: str = "test-agent", token: str = TOKEN) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(url, http_client=http), client_info=Implementation(name=name, version="1"))


def run(coro_fn: Any) -> Any:
    return anyio.run(coro_fn)


def test_lists_tools_observes_taps_by_id_and_types_unicode(served: Served) -> None:
    async def go() -> None:
        async with client(served.http.url) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert {"observe", "tap", "long_press", "scroll", "swipe", "type_text", "press_key", "open_app",
                    "list_apps", "list_macros", "run_macro", "run_task", "read_episode"} <= names
            seen = await c.call_tool("observe", {"with_image": True})
            assert not seen.is_error
            assert "com.google.android.apps.nexuslauncher" in text_of(seen)
            assert any(isinstance(b, ImageContent) and b.mime_type == "image/png" for b in seen.content)
            tapped = await c.call_tool("tap", {"element_id": element_id(seen, "Messages")})
            assert not tapped.is_error, text_of(tapped)
            assert "com.google.android.apps.messaging" in text_of(tapped)  # the new observation comes back
            chat = await c.call_tool("tap", {"element_id": element_id(tapped, "Alice Johnson", "button")})
            typed = await c.call_tool("type_text", {"text": "Grüße 👋 日本語", "element_id":
                                                    element_id(chat, "Text message", "edit_text")})
            assert not typed.is_error, text_of(typed)
            assert "Grüße 👋 日本語" in text_of(typed)

    run(go)
    assert served.phone.foreground()[0] == "com.google.android.apps.messaging"
    served.book.flush()
    rows = [r for r in served.store.list_episodes() if r["goal"] == episode_goal("test-agent")]
    assert len(rows) == 1 and rows[0]["steps"] == 4  # every tool call is a step of the client's episode
    episode = served.store.load_episode(rows[0]["id"])
    assert [s.executed.describe() if s.executed else "observe" for s in episode.steps][:2] == [
        "observe", "tap Messages"]


def test_a_stale_element_id_is_refused_with_a_clear_error(served: Served) -> None:
    async def go() -> None:
        async with client(served.http.url) as c:
            first = await c.call_tool("observe", {})
            old = element_id(first, "Settings")
            await c.call_tool("observe", {})
            refused = await c.call_tool("tap", {"element_id": old})
            assert refused.is_error
            assert "stale" in text_of(refused) and "observe again" in text_of(refused)
            # the screen changed under the client (the user pressed Home on the phone): also stale
            now = await c.call_tool("tap", {"element_id": element_id(await c.call_tool("observe", {}), "Clock")})
            assert served.phone.foreground()[0] != "com.google.android.apps.nexuslauncher"
            served.phone.go_home()
            refused = await c.call_tool("tap", {"element_id": element_id(now, "", None)})
            assert refused.is_error and "stale" in text_of(refused)

    run(go)
    assert served.phone.foreground()[0] == "com.google.android.apps.nexuslauncher"


async def _open_chat(c: Client) -> Any:
    home = await c.call_tool("observe", {})
    msgs = await c.call_tool("tap", {"element_id": element_id(home, "Messages")})
    chat = await c.call_tool("tap", {"element_id": element_id(msgs, "Alice Johnson", "button")})
    return await c.call_tool("type_text", {"text": "see you at noon",
                                           "element_id": element_id(chat, "Text message", "edit_text")})


def _sent(phone: VirtualPhone) -> bool:
    return any(m["me"] and m["text"] == "see you at noon"
               for t in phone.state["messages"]["threads"] for m in t["messages"])


def test_a_sensitive_tap_waits_for_approval_and_a_rejection_is_a_tool_error_with_the_reason(served: Served) -> None:
    results: dict[str, Any] = {}

    async def go() -> None:
        async with client(served.http.url) as c:
            typed = await _open_chat(c)
            assert not served.person.seen  # --auto: ordinary steps were not asked
            results["send"] = await c.call_tool("tap", {"element_id": element_id(typed, "Send SMS")})

    worker = threading.Thread(target=run, args=(go,))
    worker.start()
    review = served.person.next_review()
    assert review.sensitive and review.tool == "tap" and "sending" in review.reason
    assert review.client == "test-agent"
    assert worker.is_alive() and not _sent(served.phone)  # held: nothing reached the phone yet
    served.person.answer(Decision(DecisionKind.REJECT, feedback="do not message Alice today"))
    worker.join(60)
    refused = results["send"]
    assert refused.is_error and "do not message Alice today" in text_of(refused)
    assert not _sent(served.phone)
    served.book.flush()
    episode = served.store.load_episode(served.book.episode_id("test-agent") or "")
    last = episode.steps[-1]
    assert last.outcome.value == "rejected" and last.decision is not None
    assert last.decision.feedback == "do not message Alice today"


def _tap_clock_on_a_thread(asked: Served, results: dict[str, Any],
                           then: tuple[str, str, dict[str, Any]] | None = None) -> threading.Thread:
    """An MCP client on a thread that observes and taps the Clock icon (the call waits for the
    person's review), then makes the call ``then`` (result name, tool, arguments), if any;
    each call's result goes into ``results``.  The thread, started."""

    async def go() -> None:
        async with client(asked.http.url) as c:
            seen = await c.call_tool("observe", {})
            results["tap"] = await c.call_tool("tap", {"element_id": element_id(seen, "Clock")})
            if then is not None:
                name, tool, arguments = then
                results[name] = await c.call_tool(tool, arguments)

    worker = threading.Thread(target=run, args=(go,))
    worker.start()
    return worker


def test_approving_a_held_call_carries_it_out_and_edit_is_reported(asked: Served) -> None:
    results: dict[str, Any] = {}
    worker = _tap_clock_on_a_thread(asked, results, then=("edited", "press_key", {"key": "back"}))
    review = asked.person.next_review()
    assert review.proposal.action.describe() == "tap Clock" and not review.sensitive
    asked.person.answer(Decision(DecisionKind.APPROVE))
    review = asked.person.next_review()
    from agent.types import Action, ActionType

    asked.person.answer(Decision(DecisionKind.EDIT, action=Action.simple(ActionType.HOME)))
    worker.join(60)
    assert "com.google.android.deskclock" in text_of(results["tap"])
    edited = text_of(results["edited"])
    assert not results["edited"].is_error and "edited" in edited and "go home" in edited
    assert asked.phone.foreground()[0] == "com.google.android.apps.nexuslauncher"


def test_unauthenticated_requests_are_refused(served: Served) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx2.Client(timeout=10) as h:
        assert h.post(served.http.url, json=body, headers=headers).status_code == 401
        wrong = {**headers, "Authorization": "Bearer not-the-token"}
        answer = h.post(served.http.url, json=body, headers=wrong)
        assert answer.status_code == 401 and answer.headers["www-authenticate"] == "Bearer"
        assert "bearer token" in answer.json()["error_description"]

    async def go() -> None:
        with pytest.raises(Exception):  # noqa: B017 - the SDK's client fails to connect at all
            async with client(served.http.url, token="wrong-token-0123456789") as c:
                await c.list_tools()

    run(go)
    assert served.person.seen == []


def test_the_server_listens_on_loopback_only(served: Served) -> None:
    assert served.http.bound_address[0] == "127.0.0.1"
    assert served.http.url.startswith("http://127.0.0.1:")
    others = [str(a) for a in {i[4][0] for i in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
              if not str(a).startswith("127.")]
    for address in others:  # the port is closed on every other interface
        with socket.socket() as s:
            s.settimeout(2)
            assert s.connect_ex((address, served.http.port)) != 0
    for host in ("0.0.0.0", "192.168.1.10", "example.com", "::"):
        with pytest.raises(NotLoopback):
            HttpServer(build_server(served.service), TOKEN, host=host, port=0)


def test_an_approved_sensitive_tap_is_carried_out(served: Served) -> None:
    results: dict[str, Any] = {}

    async def go() -> None:
        async with client(served.http.url) as c:
            typed = await _open_chat(c)
            results["send"] = await c.call_tool("tap", {"element_id": element_id(typed, "Send SMS")})

    worker = threading.Thread(target=run, args=(go,))
    worker.start()
    assert served.person.next_review().sensitive
    assert not _sent(served.phone)
    served.person.answer(Decision(DecisionKind.APPROVE))
    worker.join(60)
    assert not results["send"].is_error and _sent(served.phone)


def test_a_clients_episode_becomes_a_macro_that_run_macro_replays(served: Served) -> None:
    out: dict[str, Any] = {}

    async def go() -> None:
        async with client(served.http.url, name="macro-maker") as c:
            home = await c.call_tool("observe", {})
            await c.call_tool("tap", {"element_id": element_id(home, "Clock")})
            out["saved"] = await c.call_tool("save_as_macro", {"name": "open the clock"})
            await c.call_tool("press_key", {"key": "home"})
            out["macros"] = await c.call_tool("list_macros", {})
            out["run"] = await c.call_tool("run_macro", {"name": "open the clock"})

    run(go)
    assert not out["saved"].is_error and "open the clock" in text_of(out["saved"])
    assert "open the clock" in text_of(out["macros"])
    assert not out["run"].is_error, text_of(out["run"])
    assert "succeeded" in text_of(out["run"])
    assert served.phone.foreground()[0] == "com.google.android.deskclock"


def test_an_acting_call_is_refused_while_another_run_drives_the_phone(tmp_path: Any) -> None:
    s = Served(tmp_path, Policy.AUTO)
    s.service.busy = lambda: "Tapwise's own agent is running a task on this phone"
    out: dict[str, Any] = {}

    async def go() -> None:
        async with client(s.http.url) as c:
            seen = await c.call_tool("observe", {})  # observing is always allowed
            out["tap"] = await c.call_tool("tap", {"element_id": element_id(seen, "Clock")})

    try:
        run(go)
        assert out["tap"].is_error and "own agent is running" in text_of(out["tap"])
        assert s.phone.foreground()[0] == "com.google.android.apps.nexuslauncher"
    finally:
        s.close()


def test_a_tap_approved_after_the_screen_changed_is_not_carried_out(asked: Served) -> None:
    results: dict[str, Any] = {}
    worker = _tap_clock_on_a_thread(asked, results)
    asked.person.next_review()
    asked.phone.open_app("Settings")  # while the card waits, the phone moves on
    asked.person.answer(Decision(DecisionKind.APPROVE))
    worker.join(60)
    refused = text_of(results["tap"])
    assert results["tap"].is_error and "changed while" in refused and "observe again" in refused
    assert asked.phone.foreground()[0] == "com.android.settings"  # the Clock icon's place was not tapped
