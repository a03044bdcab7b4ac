"""A macro recorded while signing in: the password the user types into the password field
is asked a name for, kept in the vault, and recorded as ``{{secret:NAME}}``; the stored
and exported macro hold only the reference, and the macro replays the sign-in on a fresh
phone with the value from the vault."""

from __future__ import annotations

import pytest

from agent.codec import dumps
from agent.macros.recorder import Observation, Recorder, SecretNotNamed
from agent.macros.replay import Replayer
from agent.runner import drive
from agent.types import Action, Decision, DecisionKind, EpisodeStatus
from app.compose import agent_device, make_parser
from app.settings import Settings
from app.storage import Store
from app.vault import open_vault
from phone.virtual.phone import VirtualPhone

SECRET = "Tulip7Harbor"
PARSER = make_parser(Settings(), mode="tree")


def _observe(phone: VirtualPhone) -> Observation:
    s = phone.screenshot(with_hierarchy=True)
    return Observation.of(PARSER.parse(s), s, s.foreground_package)


def _at(obs: Observation, *, text: str = "", rid: str = "") -> Action:
    el = next(e for e in obs.parse.elements if (text and e.text == text) or (rid and e.resource_id.endswith(rid)))
    return Action.tap(el.rect.center.x, el.rect.center.y)


def _record(phone: VirtualPhone, recorder: Recorder) -> None:
    """The user's demonstration: open Library from the app drawer's search, fill the form, sign in."""
    phone.open_app("Library")  # (the launcher tap itself is covered by the macro tests)
    steps: list[tuple[str, Action | None]] = [("user", None), ("type", Action.type_text("maria.k")),
                                              ("pass", None), ("type", Action.type_text(SECRET)), ("sign", None)]
    for what, action in steps:
        before = _observe(phone)
        if what == "user":
            action = _at(before, rid="/username")
        elif what == "pass":
            action = _at(before, rid="/password")
        elif what == "sign":
            action = _at(before, rid="/sign_in")
        assert action is not None
        recorded = recorder.record(action, before)
        # the window executes what was recorded (the reference is typed from the vault)
        from agent.execute import execute

        execute(recorded.action, agent_device(phone))
        recorder.observe_after(_observe(phone))


def test_a_password_typed_while_recording_becomes_a_secret_and_the_macro_replays(tmp_path) -> None:
    vault = open_vault(use_keyring=False)
    asked: list[tuple[str, str]] = []

    def name_it(value: str, field) -> str:  # the window asks the user, then keeps the value
        asked.append((value, field.resource_id))
        vault.set("library_password", value)
        return "library_password"

    phone = VirtualPhone(seed=0)
    phone.reset({"library": {}})
    recorder = Recorder(secret_name=name_it)
    _record(phone, recorder)
    assert phone.state["library"]["signed_in"]  # the demonstration itself signed in
    assert asked == [(SECRET, "com.tapwise.library:id/password")]  # asked once, for the password field only
    macro = recorder.build("library sign-in", app="com.tapwise.library")
    typed = [s.action.text for s in macro.steps if s.action.text]
    assert typed == ["maria.k", "{{secret:library_password}}"]
    assert SECRET not in dumps(macro)

    store = Store(tmp_path / "db.sqlite")
    saved = store.save_macro(macro)
    fresh = VirtualPhone(seed=1)
    fresh.reset({"library": {}})
    replay = Replayer(agent_device(fresh), PARSER).start(store.load_macro(saved.id), store=store)
    events = list(drive(replay.events, lambda q: Decision(DecisionKind.APPROVE)))
    assert events[-1].status is EpisodeStatus.SUCCEEDED, events[-1]
    assert fresh.state["library"]["signed_in"] and fresh.state["library"]["user"] == "maria.k"
    store.close()
    for f in tmp_path.rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f


def test_without_a_name_the_password_is_not_recorded() -> None:
    phone = VirtualPhone(seed=0)
    phone.reset({"library": {}})
    phone.open_app("Library")
    recorder = Recorder()
    before = _observe(phone)
    tap = _at(before, rid="/password")
    recorder.record(tap, before)
    phone.tap(tap.touch.x, tap.touch.y)
    with pytest.raises(SecretNotNamed):
        recorder.record(Action.type_text(SECRET), _observe(phone))
    assert all(SECRET not in (s.action.text or "") for s in recorder.steps)
    # text typed into an ordinary field is recorded as typed
    recorder.record(_at(_observe(phone), rid="/username"), _observe(phone))
    phone.tap(*_xy(_at(_observe(phone), rid="/username")))
    assert recorder.record(Action.type_text("maria.k"), _observe(phone)).action.text == "maria.k"


def _xy(action: Action) -> tuple[int, int]:
    assert action.touch is not None
    return action.touch.x, action.touch.y
