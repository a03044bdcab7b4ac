"""Done-when bar of issue 43, secrets: the agent signs in on the virtual phone's Library app
with ``{{secret:library_password}}`` kept in the user's vault, and the value appears in
none of the database, the logs (DEBUG, every logger), the exported JSON and HTML, the
prompts and replies the model server received and sent, the MCP responses a client
reads, or the stored frames (bytes, and OCR of every frame).  The checks can fail: the
same OCR finds the value on the unmasked screen, and the phone did get the value."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from agent.codec import dumps
from agent.events import AwaitingDecision, Finished
from agent.runner import drive
from agent.types import Decision, DecisionKind, EpisodeStatus
from app.compose import RunRequest, build_run, make_client, make_parser
from app.episode_html import export_html
from app.mcp.episodes import EpisodeBook
from app.mcp.service import PhoneService
from app.mcp.supervisor import Policy, PolicySupervisor
from app.settings import AgentSettings, Settings
from app.storage import Store
from app.vault import open_vault
from evaluation.scripted_model import ScriptedLLMServer
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import load_tasks, tasks_by_id

TASK = tasks_by_id(load_tasks())["login.library_sign_in"]
SECRET = TASK.secrets["library_password"]  # what the user keeps in their vault
REF = "{{secret:library_password}}"


def _screen(prompt: str) -> str:
    return prompt.split("<screen>")[-1].split("</screen>")[0] if "<screen>" in prompt else prompt


def library_model(prompt: str) -> str:
    """A scripted model for the sign-in: it reads the (fenced) screen and its own history,
    types the user name, then the password by its reference as the goal gives it, shows
    the password once ("Show password") and signs in."""
    screen, done = _screen(prompt), prompt.rsplit("<screen>", 1)[0]
    if "Welcome," in screen:
        return "done"
    if "Show password" in screen:
        if "type 'maria.k'" not in done:
            return "type 'maria.k' in Username"
        if f"type '{REF}'" not in done:
            return f"type '{REF}' in Password"
        if "tap Show password" not in done:
            return "tap Show password"
        return "tap Sign in"
    return "open Library"


def _approve(q: AwaitingDecision) -> Decision:
    return Decision(DecisionKind.APPROVE)


def _ocr_words(image: np.ndarray) -> str:
    from vision.ocr import RapidOcrBackend

    return " ".join(s.text for s in RapidOcrBackend(min_confidence=0.5).read(image))


def _tap(phone: VirtualPhone, *, desc: str = "", rid: str = "") -> None:
    el = next(e for e in phone.ground_truth().elements
              if (desc and e.label == desc) or (rid and e.resource_id.endswith("/" + rid)))
    phone.tap(el.rect.center.x, el.rect.center.y)


@pytest.fixture()
def vault():
    v = open_vault(use_keyring=False)  # the test's own settings folder (conftest isolates it)
    v.set("library_password", SECRET)
    return v


def _sign_in(tmp_path: Path, caplog: pytest.LogCaptureFixture, phone: VirtualPhone):
    settings = Settings(data_dir=tmp_path, agent=AgentSettings(screen_evidence=False))
    store = Store(tmp_path / "tapwise.sqlite")
    TASK.setup(phone)
    shown_in_clear: list[np.ndarray] = []
    with ScriptedLLMServer(responder=library_model, models=("scripted",)) as server:
        client = make_client(settings, model="scripted", backend="openai", base_url=server.url)
        # the window's own parser: the tree fused with the pixels (OCR reads the screen too)
        built = build_run(RunRequest(TASK.goals[0], planner="zeroshot-", autonomy="approve", learn=False,
                                     max_steps=10), settings, device=phone,
                          parser=make_parser(settings), store=store, client=client, max_wait_s=0.0)
        finished = None
        for ev in drive(built.events, _approve):
            if isinstance(ev, Finished):
                finished = ev
            app = phone.apps.get("com.tapwise.library")
            if app is not None and app.page.args.get("show") and app.page.args.get("password"):
                shown_in_clear.append(phone.screenshot().image.copy())
        traffic = [json.dumps(s.body, ensure_ascii=False) for s in server.requests]
        replies = [library_model(s.prompt) for s in server.requests]
    return store, finished, traffic, replies, shown_in_clear


def test_signing_in_with_a_secret_leaves_its_value_nowhere(tmp_path, caplog, vault) -> None:
    caplog.set_level(logging.DEBUG)
    phone = VirtualPhone(seed=0)
    store, finished, traffic, replies, shown_in_clear = _sign_in(tmp_path, caplog, phone)

    assert finished is not None and finished.status is EpisodeStatus.SUCCEEDED, finished
    assert phone.state["library"]["signed_in"] and phone.state["library"]["user"] == "maria.k"
    typed = [s.executed.text for s in finished.episode.steps if s.executed is not None and s.executed.text]
    assert REF in typed  # the model and the record know the secret by its name only
    # the model saw the name, never the value
    assert any(REF in t for t in traffic) and not any(SECRET in t for t in traffic)
    assert not any(SECRET in r for r in replies)
    # the database file, its WAL and every stored frame's bytes
    store.close()
    for f in tmp_path.rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f
    # the logs, every logger at DEBUG
    assert caplog.records and not any(SECRET in r.getMessage() for r in caplog.records)
    assert not any(SECRET in (r.exc_text or "") for r in caplog.records)
    # the exports
    store = Store(tmp_path / "tapwise.sqlite")
    episode = store.load_episode(finished.episode.id)
    exported_json = dumps(episode)
    html = export_html(store, episode.id, tmp_path / "run.html").read_text(encoding="utf-8")
    assert REF in exported_json and SECRET not in exported_json and SECRET not in html
    # the stored frames, read by OCR; the same OCR reads the value off the unmasked glass
    assert shown_in_clear, "the run never showed the password in clear: the frame check would prove nothing"
    assert SECRET in _ocr_words(shown_in_clear[-1]).replace(" ", "")
    frames = [np.asarray(Image.open(store.media_dir / s.screenshot.path).convert("RGB"))
              for s in episode.steps if s.screenshot is not None]
    assert len(frames) == len(episode.steps)
    for frame in frames:
        words = _ocr_words(frame).replace(" ", "")
        assert SECRET not in words and not re.search(r"Tulip7", words), words
    store.close()


@pytest.mark.parametrize("through", ["service", "mcp sdk"])
def test_the_mcp_client_reads_no_value(tmp_path, vault, through) -> None:
    """The MCP tools' answers (run_task, read_episode, observe with its picture): as the
    service hands them to the server, and as the official MCP SDK's client receives them
    from our server (in-memory transport)."""
    from app.mcp.tasks import task_runner

    if through == "mcp sdk":
        pytest.importorskip("mcp", reason="the MCP SDK (pip install 'tapwise[mcp]')")
    phone = VirtualPhone(seed=0)
    TASK.setup(phone)

    class Person:
        def review(self, review):  # the user at the window approves each step
            return Decision(DecisionKind.APPROVE)

    with ScriptedLLMServer(responder=library_model, models=("scripted",)) as server:
        settings = Settings(data_dir=tmp_path, agent=AgentSettings(screen_evidence=False, planner="zeroshot-"))
        settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={
            "backend": "openai", "openai_base_url": server.url, "model": "scripted"})})
        store = Store(tmp_path / "t.sqlite")
        parser = make_parser(settings, mode="tree")
        service = PhoneService(phone, parser.parse, PolicySupervisor(Policy.ASK, Person()), EpisodeBook(store),
                               store=store, task_runner=task_runner(settings, phone, parser, store, Policy.ASK))
        try:
            if through == "mcp sdk":
                answers, png = _over_the_sdk(service, phone)
            else:
                told = service.run_task("bot", TASK.goals[1], max_steps=10)
                assert "succeeded" in told, told
                _show_the_password(phone)
                answers = [told, json.dumps(service.read_episode("bot")), service.observe("bot").text()]
                png = service.latest.marks_png()
        finally:
            service.close()
            store.close()
    assert "succeeded" in answers[0], answers[0]
    for text in answers:
        assert SECRET not in text
    assert SECRET not in _ocr_words(np.asarray(Image.open(__import__("io").BytesIO(png)).convert("RGB")))
    assert SECRET in _ocr_words(phone.screenshot().image).replace(" ", "")  # it was on the glass


def _show_the_password(phone: VirtualPhone) -> None:
    """The user signs out, types the password on the form and shows it in clear."""
    _tap(phone, desc="Sign out")
    _tap(phone, rid="password")
    phone.input_text(SECRET)
    _tap(phone, rid="show_password")


def _over_the_sdk(service: PhoneService, phone: VirtualPhone) -> tuple[list[str], bytes]:
    """run_task, then (the password shown on the glass) read_episode and observe with its
    picture, each called by the MCP SDK's client on our server: the texts and the PNG it got."""
    import base64

    import anyio
    from mcp import Client
    from mcp.types import Implementation

    from app.mcp.server import build_server

    got: dict[str, object] = {}

    def texts(result: object) -> str:
        return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")  # type: ignore[attr-defined]

    async def go() -> None:
        async with Client(build_server(service), client_info=Implementation(name="bot", version="1")) as c:
            got["told"] = texts(await c.call_tool("run_task", {"goal": TASK.goals[1], "max_steps": 10}))
            await anyio.to_thread.run_sync(_show_the_password, phone)
            got["episode"] = texts(await c.call_tool("read_episode", {}))
            seen = await c.call_tool("observe", {"with_image": True})
            got["observed"] = texts(seen)
            got["png"] = base64.b64decode(next(x.data for x in seen.content if getattr(x, "type", "") == "image"))

    anyio.run(go)
    return [str(got["told"]), str(got["episode"]), str(got["observed"])], got["png"]  # type: ignore[return-value]
