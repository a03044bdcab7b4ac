"""Done-when bar of issue 43, redaction: a run on the virtual phone's Contacts and Messages
screens against a recording model server on loopback that the settings mark as remote.
Every phone number and e-mail address those screens show is replaced in what the server
receives (the raw request bodies, reply forms included), the user is asked once, before
the first request, with exactly what is sent, the model's placeholders are mapped back so
the run completes on the right conversation, and the stored run says what was replaced."""

from __future__ import annotations

import json
import re

from agent.events import Finished
from agent.privacy import Consent, ConsentAnswer, ConsentKind, ConsentQuestion
from agent.runner import drive
from agent.types import EpisodeStatus
from app.compose import RunRequest, build_run, make_client, make_parser
from app.settings import AgentSettings, PrivacySettings, Settings
from app.storage import Store
from evaluation.scripted_model import ScriptedLLMServer
from phone.virtual.phone import VirtualPhone

VERIFY_SENDER = "+1 555-0199"


class Asked:
    """The consent gate of the test: records each question, answers "send"."""

    def __init__(self) -> None:
        self.questions: list[ConsentQuestion] = []

    def ask(self, question: ConsentQuestion) -> ConsentAnswer:
        self.questions.append(question)
        return ConsentAnswer.ONCE


def _screen(prompt: str) -> str:
    return prompt.split("<screen>")[-1].split("</screen>")[0] if "<screen>" in prompt else prompt


class Model:
    """A scripted model that reads the redacted screens: Contacts -> Elena Rossi's details ->
    Messages -> the new-conversation picker (every contact's number) -> back -> the
    conversation whose title is a phone number, named by its placeholder -> done."""

    def __init__(self) -> None:
        self.picker_seen = False

    def __call__(self, prompt: str) -> str:
        screen = _screen(prompt)
        if "Your verification code" in screen and "Text message" in screen:
            return "done"
        if "New conversation" in screen:
            self.picker_seen = True
            return "go back"
        if "Start chat" in screen:
            if not self.picker_seen:
                return "tap Start chat"
            named = re.search(r"<phone-\d+>", screen)
            return "tap " + (named.group(0) if named else "nothing")
        if "Contact info" in screen:
            return "open Messages"
        if "Search contacts" in screen:
            return "tap Elena Rossi"
        return "open Contacts"


def _private_values(phone: VirtualPhone) -> tuple[set[str], set[str]]:
    people = phone.state["contacts"]["people"]
    phones = {p["phone"] for p in people} | {t["contact"] for t in phone.state["messages"]["threads"]
                                           if t["contact"][:1] == "+"}
    return phones, {p["email"] for p in people if p["email"]}


def test_a_remote_server_receives_placeholders_only_and_the_run_completes(tmp_path) -> None:
    phone = VirtualPhone(seed=0)
    phones, emails = _private_values(phone)
    shown: set[str] = set()
    asked = Asked()
    # the model decides every step (no shortcut from the screen's evidence), so every screen is sent
    settings = Settings(privacy=PrivacySettings(treat_as_remote=True), agent=AgentSettings(screen_evidence=False))
    store = Store(tmp_path / "db.sqlite")
    with ScriptedLLMServer(responder=Model(), models=("remote-model",)) as server:
        client = make_client(settings, model="remote-model", backend="openai", base_url=server.url)
        built = build_run(RunRequest("Find Elena Rossi, then open the conversation with the number that texted "
                                     "me a verification code", planner="zeroshot-", autonomy="auto", learn=False,
                                     max_steps=12),
                          settings, device=phone, parser=make_parser(settings, mode="tree"), store=store,
                          client=client, consent=Consent(asked), max_wait_s=0.0)
        finished = None
        for ev in drive(built.events):
            if isinstance(ev, Finished):
                finished = ev
            truth = phone.ground_truth()
            shown |= {e.text for e in truth.elements if e.text in phones | emails}
        bodies = [json.dumps(s.body, ensure_ascii=False) for s in server.requests]
        url = server.url

    assert finished is not None and finished.status is EpisodeStatus.SUCCEEDED, finished
    page = phone.apps["com.google.android.apps.messaging"].page  # the placeholder reached the right thread
    assert (page.name, page.args.get("contact")) == ("thread", VERIFY_SENDER)
    # the screens showed many numbers and addresses (the picker lists the contacts with their numbers) ...
    assert len(shown & phones) >= 10 and shown & emails and VERIFY_SENDER in shown
    # ... and not one of them reached the server, in prompts or reply forms
    leaked = [v for v in shown for body in bodies if v in body]
    assert not leaked, leaked
    assert not any(re.search(r"\d{7,}", re.sub(r"[\s().-]", "", b)) for b in bodies)
    assert all(re.search(r"<phone-\d+>", b) for b in bodies if "Start chat" in b)
    # asked once, before the first request, with exactly what the first request sent
    assert [q.kind for q in asked.questions] == [ConsentKind.SEND]
    first = asked.questions[0]
    assert first.remote and first.server == url
    sent = server.requests[0].body
    assert all(m["content"] in first.sent for m in sent["messages"])
    schema = sent["response_format"]["schema"]
    assert json.loads(first.sent.split("[reply form (JSON schema)]\n")[1]) == schema
    # the stored run says what was replaced, and keeps the prompts as they were sent
    episode = store.load_episode(finished.episode.id)
    calls = [c for s in episode.steps if s.proposal for c in s.proposal.llm_calls]
    noted = {n for c in calls for n in c.redacted}
    assert any(n.endswith("phone number") for n in noted) and any(n.endswith("e-mail address") for n in noted)
    assert not any(v in c.prompt for c in calls for v in shown)
    store.close()


def test_a_no_sends_nothing_and_ends_the_run(tmp_path) -> None:
    class No:
        def ask(self, question: ConsentQuestion) -> ConsentAnswer:
            return ConsentAnswer.NO

    settings = Settings(privacy=PrivacySettings(treat_as_remote=True), agent=AgentSettings(screen_evidence=False))
    phone = VirtualPhone(seed=0)
    with ScriptedLLMServer(default="open Contacts", models=("m",)) as server:
        client = make_client(settings, model="m", backend="openai", base_url=server.url)
        built = build_run(RunRequest("Open Contacts", planner="zeroshot-", autonomy="auto", learn=False),
                          settings, device=phone, parser=make_parser(settings, mode="tree"), client=client,
                          consent=Consent(No()), max_wait_s=0.0)
        events = list(drive(built.events))
        assert server.chat_requests == 0
    end = events[-1]
    assert isinstance(end, Finished) and end.status is EpisodeStatus.ERROR
    assert "did not allow" in end.note


def test_a_server_on_this_machine_is_not_redacted_unless_marked() -> None:
    from agent.privacy import RedactingClient, is_remote
    from app.compose import guarded_client, run_redactor

    assert not is_remote("http://127.0.0.1:8080/v1") and not is_remote("http://localhost:11434")
    assert not is_remote("http://[::1]:8080") and is_remote("https://api.example.com/v1")
    assert is_remote("http://192.168.1.20:11434")
    settings = Settings()
    phone = VirtualPhone(seed=0)
    local = make_client(settings, model="m", backend="openai", base_url="http://127.0.0.1:9/v1")
    assert guarded_client(local, settings, Consent(Asked()), run_redactor(settings, phone)) is local
    remote = make_client(settings, model="m", backend="openai", base_url="https://llm.example.net/v1")
    assert isinstance(guarded_client(remote, settings, Consent(Asked()), run_redactor(settings, phone)),
                      RedactingClient)


class CountingPhone(VirtualPhone):
    """The virtual phone, counting how often its contacts are read."""

    def __init__(self) -> None:
        super().__init__(seed=0)
        self.reads = 0

    def contact_names(self) -> list[str]:
        self.reads += 1
        return super().contact_names()


def test_contact_names_are_read_only_for_a_request_to_a_remote_server() -> None:
    from agent.llm.base import ChatRequest
    from app.compose import guarded_client, run_redactor

    settings = Settings(privacy=PrivacySettings(redact_contact_names=True))
    phone = CountingPhone()
    local = make_client(settings, model="m", backend="openai", base_url="http://127.0.0.1:9/v1")
    assert guarded_client(local, settings, Consent(Asked()), run_redactor(settings, phone)) is local
    assert phone.reads == 0  # nothing is redacted for a server on this machine: the contacts stay unread
    with ScriptedLLMServer(default="open Contacts", models=("m",)) as server:
        remote_settings = Settings(privacy=PrivacySettings(redact_contact_names=True, treat_as_remote=True))
        remote = guarded_client(make_client(remote_settings, model="m", backend="openai", base_url=server.url),
                                remote_settings, Consent(Asked()), run_redactor(remote_settings, phone))
        assert phone.reads == 0
        remote.chat(ChatRequest("Call Elena Rossi"))
        remote.chat(ChatRequest("Call Elena Rossi again"))
        sent = [json.dumps(r.body) for r in server.requests]
    assert phone.reads == 1 and len(sent) == 2 and not any("Elena" in s or "Rossi" in s for s in sent)
