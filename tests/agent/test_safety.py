"""Which actions wait for approval, in every language, and why (``agent.safety``).

The screens come from the virtual phone parsed from its accessibility tree, so the
element kinds, labels and resource ids are the ones a real ``uiautomator`` dump gives.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from agent.safety import Category, LexiconError, SignalKind, assess, load_lexicon, sensitivity
from agent.types import Action, ActionType, RiskSignal, Target
from phone.virtual import system
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import load_tasks, tasks_by_id
from vision.config import PipelineConfig
from vision.geometry import Rect, Size
from vision.pipeline import ScreenParser
from vision.types import Element, ElementKind, ScreenParse

TREE = ScreenParser(PipelineConfig(mode="tree"))
TASKS = tasks_by_id(load_tasks())


def _tap(words: str) -> Action:
    return Action(ActionType.TAP, target=Target(description=words))


def _parse_with(*elements: Element) -> ScreenParse:
    return ScreenParse(Size(1080, 2400), elements=elements)


def _button(eid: str, text: str = "", label: str = "", rect: Rect = Rect(100, 100, 300, 200), **kw) -> Element:
    return Element(id=eid, kind=kw.pop("kind", ElementKind.BUTTON), rect=rect, text=text, label=label, clickable=True,
                   **kw)


def _at(el: Element) -> Action:
    """A tap on the element's centre with no words of the agent's own."""
    c = el.rect.center
    return Action.tap(c.x, c.y)


@pytest.mark.parametrize(("words", "category", "language"), [
    ("Delete", Category.DELETING, "English"), ("Löschen", Category.DELETING, "German"),
    ("Senden", Category.SENDING, "German"), ("Kaufen", Category.PAYING, "German"),
    ("Bezahlen", Category.PAYING, "German"), ("Supprimer", Category.DELETING, "French"),
    ("Enviar", Category.SENDING, "Spanish"), ("删除", Category.DELETING, "Chinese"),
    ("Excluir", Category.DELETING, "Portuguese"), ("Acquista ora", Category.PAYING, "Italian"),
    ("送信", Category.SENDING, "Japanese"), ("결제하기", Category.PAYING, "Korean"),
    ("Удалить", Category.DELETING, "Russian"), ("Installieren", Category.INSTALLING, "German"),
    ("Bildschirmsperre", Category.SECURITY, "German"), ("Débogage USB", Category.SECURITY, "French"),
])
def test_the_word_on_the_target_gates_in_the_phones_language(words, category, language):
    a = assess(_tap(words))
    assert a.sensitive and a.category is category
    assert a.reason == f"{category.value} — the agent's target is '{words}' ({language})"


def test_the_reason_is_a_sentence_quoting_the_screen():
    el = _button("1", text="Löschen")
    assert sensitivity(_at(el), _parse_with(el)) == "deleting — the target reads 'Löschen' (German)"


def test_an_icon_only_button_labelled_trash_is_deleting():
    el = _button("1", label="trash", kind=ElementKind.IMAGE)
    a = assess(_at(el), _parse_with(el))
    assert a.category is Category.DELETING and a.signals[0].kind is SignalKind.ICON
    assert "icon showing 'trash'" in a.reason


@pytest.mark.parametrize("words", ["Display", "Security & privacy", "Settings", "Pin", "Email", "Einstellungen",
                                   "Sicherheit & Datenschutz", "Bei Anrufen vibrieren", "Vibrate for calls",
                                   "Notifications on lock screen", "Cart", "Warenkorb"])
def test_ordinary_controls_are_not_gated(words):
    assert sensitivity(_tap(words)) is None


def test_navigation_and_scrolling_are_never_gated():
    for a in (Action.simple(ActionType.BACK), Action.simple(ActionType.HOME), Action.scroll("down", Size(1080, 2400)),
              Action.open_app("Shop")):
        assert sensitivity(a) is None


def test_long_screen_content_is_not_read_as_a_control_name():
    note = _button("1", text="Call the dentist about the appointment on Friday and send the form")
    assert sensitivity(_at(note), _parse_with(note)) is None


def test_english_resource_ids_gate_on_a_phone_in_any_language():
    el = _button("1", text="Weg damit", resource_id="com.example:id/btnDeleteItem")
    a = assess(_at(el), _parse_with(el))
    assert a.category is Category.DELETING and "btn Delete Item" in a.reason


def _bench():
    path = Path(__file__).resolve().parents[2] / "bench" / "bench_safety.py"
    spec = importlib.util.spec_from_file_location("bench_safety", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_safety", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_marked_reference_step_is_gated_in_english_and_german_and_no_other_step_is():
    """The benchmark's own protocol (bench/bench_safety.py), on the phone profile."""
    result = _bench().gating(("en", "de"), ("phone",))
    for (lang, _), t in result.items():
        assert t.sensitive == 40, (lang, t.sensitive, t.skipped_tasks)
        assert (t.gated, t.gated_point_only) == (40, 40), (lang, t.missed)
        assert (t.false_gated, t.false_gated_point_only) == (0, 0), (lang, dict(t.false))
        assert t.other > 300


def test_a_confirmation_dialog_warning_of_deletion_gates_its_ok_but_not_its_cancel():
    ph = VirtualPhone()
    ph.open_app("Notes")
    ph.show_dialog(system.Dialog(title="Clean up?", message="All notes will be deleted permanently.",
                                 buttons=[("Cancel", None), ("OK", None)]))
    parse = TREE.parse(ph.screenshot(with_hierarchy=True))
    ok = next(e for e in parse.elements if e.text == "OK")
    cancel = next(e for e in parse.elements if e.text == "Cancel")
    a = assess(_at(ok), parse, "com.google.android.keep")
    assert a.category is Category.DELETING and a.signals[0].kind is SignalKind.DIALOG
    assert "All notes will be deleted permanently." in a.reason
    assert sensitivity(_at(cancel), parse, "com.google.android.keep") is None


@pytest.mark.parametrize("lang", ["en", "de"])
def test_typing_into_the_wifi_password_field_is_gated(lang):
    ph = VirtualPhone(lang=lang)
    task = TASKS["settings.connect_wifi"]
    task.setup(ph)
    for step in task.solution[:4]:  # the English targets resolve on the phone in its own language
        step.execute(ph)
    screen = ph.screenshot(with_hierarchy=True)
    a = assess(Action.type_text("latte2026"), TREE.parse(screen), screen.foreground_package)
    assert a.category is Category.SECRET, a
    assert a.signals[0].kind is SignalKind.SECRET_FIELD


def test_typing_into_a_field_that_asks_for_a_pin_is_gated_even_without_the_password_flag():
    field = Element(id="1", kind=ElementKind.EDIT_TEXT, rect=Rect(0, 0, 500, 100), text="", label="Kennwort",
                    focused=True)
    a = assess(Action.type_text("1234"), _parse_with(field))
    assert a.category is Category.SECRET and "(German)" in a.reason


def test_typing_a_note_is_not_gated():
    field = Element(id="1", kind=ElementKind.EDIT_TEXT, rect=Rect(0, 0, 500, 100), text="Note", focused=True)
    assert sensitivity(Action.type_text("Delete everything and send money"), _parse_with(field)) is None


def test_enter_in_a_message_field_sends_but_enter_in_a_search_field_does_not():
    msg = Element(id="1", kind=ElementKind.EDIT_TEXT, rect=Rect(0, 0, 500, 100), text="Hi there", label="",
                  resource_id="com.google.android.apps.messaging:id/compose_message_text", focused=True)
    search = Element(id="1", kind=ElementKind.EDIT_TEXT, rect=Rect(0, 0, 500, 100), text="earbuds",
                     resource_id="com.tapwise.shop:id/search_src_text", focused=True)
    enter = Action.simple(ActionType.ENTER)
    assert (assess(enter, _parse_with(msg)).category is Category.SENDING)
    assert sensitivity(enter, _parse_with(search), "com.tapwise.shop") is None
    # without a parse, Enter in a messaging app still asks
    assert assess(enter, None, "com.google.android.apps.messaging").category is Category.SENDING


def test_an_agreeing_button_in_a_store_app_is_paying_but_not_in_settings():
    ok = _button("1", text="Weiter")
    assert assess(_at(ok), _parse_with(ok), "com.tapwise.shop").category is Category.PAYING
    assert sensitivity(_at(ok), _parse_with(ok), "com.android.settings") is None


def test_the_models_own_risk_signal_gates_and_says_so():
    el = _button("1", text="Continue")
    risk = RiskSignal(risky=True, category="sending", reason="shares the contact list", score=0.9)
    a = assess(_at(el), _parse_with(el), "com.android.settings", risk=risk)
    assert a.category is Category.SENDING and a.signals[0].kind is SignalKind.MODEL
    assert "the model itself flagged this step (shares the contact list, score 0.90)" in a.reason
    assert sensitivity(_at(el), _parse_with(el), risk=RiskSignal(risky=False)) is None
    with pytest.raises(ValueError, match="score"):
        RiskSignal(risky=True, score=3.0)
    unknown = assess(_at(el), _parse_with(el), risk=RiskSignal(risky=True, category="weird"))
    assert unknown.category is Category.RISKY


def test_every_signal_is_listed_not_just_the_first():
    el = _button("1", label="trash")
    c = el.rect.center
    action = Action.tap(c.x, c.y, target=Target(description="Delete"))
    a = assess(action, _parse_with(el), risk=RiskSignal(risky=True, category="deleting", reason="erases a note"))
    assert {s.kind for s in a.signals} == {SignalKind.WORDS, SignalKind.ICON, SignalKind.MODEL}
    assert a.categories == (Category.DELETING,)


def test_a_new_language_is_a_new_word_file(tmp_path):
    (tmp_path / "nl.toml").write_text('language = "Dutch"\n[act]\ndeleting = ["verwijderen"]\n', encoding="utf-8")
    lex = load_lexicon([tmp_path])
    assert any(lang.name == "Dutch" for lang in lex.languages)
    a = assess(_tap("Verwijderen"), lexicon=lex)
    assert a.reason == "deleting — the agent's target is 'Verwijderen' (Dutch)"
    assert sensitivity(_tap("Verwijderen")) is None  # the shipped lexicon has no Dutch


def test_a_malformed_word_file_names_the_file_and_the_field(tmp_path):
    (tmp_path / "xx.toml").write_text('language = "X"\n[act]\nwrecking = ["boom"]\n', encoding="utf-8")
    with pytest.raises(LexiconError, match=r"xx\.toml.*wrecking"):
        load_lexicon([tmp_path])
    (tmp_path / "xx.toml").write_text('language = "X"\n[act\n', encoding="utf-8")
    with pytest.raises(LexiconError, match=r"xx\.toml: not valid TOML"):
        load_lexicon([tmp_path])


def test_the_task_files_reject_an_unknown_sensitivity_mark(tmp_path):
    from phone.virtual.tasks import TaskError, load_task_file

    bad = tmp_path / "t.yaml"
    bad.write_text("id: x\ngoals: [g]\napp: a\nsuccess: {path: a, eq: 1}\nsolution:\n"
                   "  - {tap: Delete, sensitive: dangerous}\n", encoding="utf-8")
    with pytest.raises(TaskError, match="sensitive: must be one of"):
        load_task_file(bad)
    bad.write_text("id: x\ngoals: [g]\napp: a\nsuccess: {path: a, eq: 1}\nsolution:\n"
                   "  - {tap: Delete, sensitive: deleting}\n  - {enter: null, sensitive: sending}\n", encoding="utf-8")
    steps = load_task_file(bad)[0].solution
    assert [(s.kind, s.sensitive) for s in steps] == [("tap", "deleting"), ("enter", "sending")]


def test_a_grounded_text_inside_a_labelled_button_is_judged_with_its_button():
    row = _button("1", label="Diesen Kontakt löschen", rect=Rect(0, 0, 1000, 200))
    caption = Element(id="2", kind=ElementKind.TEXT, rect=Rect(20, 20, 300, 80), text="Zoe")
    action = Action.tap(160, 50, target=Target(element_id="2", description="Zoe"))
    assert sensitivity(action, _parse_with(row, caption)) == \
        "deleting — the target is labelled 'Diesen Kontakt löschen' (German)"


def test_the_models_risk_signal_is_stored_with_the_proposal():
    from agent import codec
    from agent.types import Proposal

    p = Proposal(Action.tap(10, 10), risk=RiskSignal(risky=True, category="paying", reason="buys", score=0.7))
    assert codec.decode(codec.encode(p)) == p


def test_tapping_a_text_field_that_holds_command_like_words_is_not_gated():
    item = Element(id="1", kind=ElementKind.EDIT_TEXT, rect=Rect(0, 0, 500, 100), text="Buy milk", clickable=True)
    c = item.rect.center
    assert sensitivity(Action.tap(c.x, c.y, target=Target(element_id="1", description="Buy milk")),
                       _parse_with(item)) is None
