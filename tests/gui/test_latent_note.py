"""The latent-state panel always says something: the estimates, or why there are none and
the one click that turns them on for this model, remembered per model."""

from __future__ import annotations

from agent.types import LatentState
from app.compose import planner_for_model
from app.gui.latent_note import Offer, note_for, turn_on
from app.gui.window import MainWindow
from app.model_prefs import PrefsStore
from widgets.latent_panel import WAITING

BUILTIN = "qwen2.5-coder-0.5b"


def test_a_slow_model_under_the_automatic_planner_is_told_off_with_a_way_to_turn_on(tmp_path):
    prefs = PrefsStore.load(tmp_path / "models.json")
    used = planner_for_model("auto", BUILTIN, prefs)
    assert used == "visiontasker"  # one call per step for the built-in model on a CPU
    note = note_for("auto", used, BUILTIN, prefs)
    assert not note.estimates and note.offer is Offer.TURN_ON
    assert note.text == "Off for this model (one call per step is faster)"
    turn_on(prefs, BUILTIN)
    again = PrefsStore.load(tmp_path / "models.json")  # kept on disk, per model
    assert planner_for_model("auto", BUILTIN, again) == "zeroshot+"
    assert planner_for_model("auto", "another-model", again) == "zeroshot+"  # unknown speed: estimates
    on = note_for("auto", "zeroshot+", BUILTIN, again)
    assert on.estimates and on.offer is Offer.TURN_OFF


def test_a_planner_without_estimates_says_so_and_a_planner_with_them_says_nothing(tmp_path):
    prefs = PrefsStore.load(tmp_path / "models.json")
    off = note_for("visiontasker", "visiontasker", "llama3.2", prefs)
    assert off.text == "Off: the “VisionTasker step planner” makes no estimates" and off.offer is Offer.TURN_ON
    assert note_for("react-", "react-", "llama3.2", prefs).text == "Off: the “ReAct” planner makes no estimates"
    assert note_for("zeroshot+", "zeroshot+", "llama3.2", prefs).text == ""
    built_without = note_for("zeroshot+", "zeroshot+", "llama3.2", prefs, estimator=False)
    assert not built_without.estimates


def test_the_window_says_it_and_one_click_turns_them_on_for_the_model(qtbot, tmp_path):
    w = MainWindow(None, discover=False, live_parse=False)
    qtbot.addWidget(w)
    try:
        w.session.prefs = PrefsStore.load(tmp_path / "models.json")
        w.task_panel.set_models([BUILTIN, "llama3.2"], current=BUILTIN)
        w.task_panel.set_defaults(planner="auto")
        w.run.latent.refresh()
        panel = w.latent_panel
        assert panel.note_text.startswith("Off for this model (one call per step is faster)")
        assert "turn on" in panel.note_text and panel.off
        assert all(panel.text_of(a) == "—" for a in panel.values)
        panel.linkActivated.emit("turn on")
        assert PrefsStore.load(tmp_path / "models.json").get(BUILTIN).latent == "on"
        assert panel.note_text.startswith("On for this model") and not panel.off
        # another model keeps its own choice; coming back shows this one's again
        w.task_panel.set_models([BUILTIN, "llama3.2"], current="llama3.2")
        assert panel.note_text == WAITING  # estimates on: it says where they will appear
        w.task_panel.set_models([BUILTIN, "llama3.2"], current=BUILTIN)
        assert panel.note_text.startswith("On for this model")
        panel.set_state(LatentState(screen_summary="Settings, the main list"))
        assert panel.text_of("screen_summary") == "Settings, the main list"
        w.task_panel.set_models([BUILTIN, "llama3.2"], current="llama3.2")
        assert panel.note_text == "", "with estimates shown there is nothing more to say"
    finally:
        w.close()
