"""Recording a macro on the mirror of the virtual phone, saving it, and replaying it with
approval of each step."""

from __future__ import annotations

import pytest

pytest.importorskip("phone.virtual.phone", reason="needs the virtual phone")

from PySide6.QtWidgets import QInputDialog

from agent.types import DecisionKind
from app.gui.devices import VIRTUAL_CHOICE
from app.gui.window import MainWindow
from app.settings import Settings, VisionSettings
from widgets.macro_panel import ID_ROLE

from .e2e_support import click_mirror, run_on


def _element_point(win, text):
    el = next(e for e in win.view.parse.elements if text in (e.text or e.label))
    return el.rect.center


@pytest.mark.slow
def test_record_then_replay_with_approval(qtbot, tmp_path, monkeypatch):
    settings = Settings(data_dir=tmp_path, vision=VisionSettings(use_hierarchy="only"))
    win = MainWindow(settings, "sim", discover=False)
    qtbot.addWidget(win)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    qtbot.waitUntil(lambda: win.view.parse is not None and "nexuslauncher" in win.view.parse.description, timeout=20000)

    win.session.executor.call(lambda: win.session.device.open_app("Settings"))
    qtbot.waitUntil(lambda: win.view.parse is not None and "com.android.settings" in win.view.parse.description,
                    timeout=20000)
    win.macro_panel.record.click()
    assert win.macros.recorder is not None
    click_mirror(win, _element_point(win, "Network & internet"))
    qtbot.waitUntil(lambda: "(1 step)" in win.macro_panel.record.text(), timeout=20000)
    qtbot.waitUntil(lambda: win.view.parse is not None and "Airplane mode" in win.view.parse.description,
                    timeout=20000)
    switch = next(e for e in win.view.parse.elements if e.kind.value == "switch" and e.label == "Airplane mode")
    click_mirror(win, switch.rect.center)
    qtbot.waitUntil(lambda: "2 steps" in win.macro_panel.record.text(), timeout=20000)
    assert win.session.device.state["settings"]["airplane_mode"] is True
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("airplane mode on", True)))
    win.macro_panel.record.click()
    # the recording started inside Settings: saving warns; this test keeps it as recorded
    qtbot.waitUntil(lambda: win.macros.dialog is not None, timeout=5000)
    win.macros.dialog.keep.click()
    qtbot.waitUntil(lambda: win.macro_panel.list.count() == 1, timeout=10000)
    assert "2 steps" in win.macro_panel.list.item(0).text()
    # the recording is kept as a demonstration, and the Knowledge tab shows it
    win.knowledge_dock.raise_()
    table = win.knowledge_panel.task_table
    qtbot.waitUntil(lambda: table.rowCount() == 1, timeout=10000)
    assert (table.item(0, 0).text(), table.item(0, 1).text()) == ("airplane mode on", "demonstration")
    win.session.executor.call(lambda: win.session.device.reset())  # a fresh phone: airplane mode off, home screen
    assert win.session.device.state["settings"]["airplane_mode"] is False
    win.macro_panel.list.setCurrentRow(0)
    win.macro_panel.run_approve.click()
    # a replay is a run of the agent loop: opening the app, each recorded step and the
    # finishing step are proposals on the same decision bar, each approved by the user
    asked = []
    while win.macros.result is None:
        qtbot.waitUntil(lambda: win.decision_bar.enabled or win.macros.result is not None, timeout=20000)
        if win.macros.result is not None:
            break
        assert win.proposal_card.proposal.planner == "macro"
        assert win.macros.needs_you is None, win.macros.needs_you
        asked.append(win.proposal_card.proposal.action.type.value)
        win.decision_bar.trigger(DecisionKind.APPROVE)
        assert len(asked) < 8, asked
    assert asked[-1] == "complete" and len(asked) >= 3, asked
    assert win.macros.result.status == "succeeded", win.macros.result
    assert win.session.device.state["settings"]["airplane_mode"] is True
    win.close()


def _airplane_macro_with_a_stray_step():
    """Recorded on the phone profile: open Settings, Network & internet, Airplane mode,
    then a stray Home press."""
    from agent.types import Action
    from phone.virtual.phone import VirtualPhone
    from tests.macros.sim_support import observe, record_taps

    phone = VirtualPhone()
    rec = record_taps(phone, ("Settings", "Network & internet", "Airplane mode"))
    size = phone.screen_size()
    before = observe(phone)
    phone.tap(size.width // 2, size.height - 20)
    rec.record(Action.tap(size.width // 2, size.height - 20), before, observe(phone))
    return rec.build("airplane on", app="com.android.settings")


def _window_with_one_macro(qtbot, settings, store):
    """The window on the virtual phone, its macro list showing the one stored macro."""
    win = MainWindow(settings, "sim", discover=False, store=store)
    qtbot.addWidget(win)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    qtbot.waitUntil(lambda: win.macro_panel.list.count() == 1 and win.session.device is not None, timeout=20000)
    return win


@pytest.mark.slow
def test_a_macro_step_is_edited_in_the_window_and_the_macro_replays_on_the_tablet(qtbot, tmp_path):
    from app.storage import Store

    settings = Settings(data_dir=tmp_path, vision=VisionSettings(use_hierarchy="only"))
    store = Store(settings.database_path)
    macro = store.save_macro(_airplane_macro_with_a_stray_step())
    assert macro.steps[3].description == "press Home"  # the nav bar tap became a key
    win = _window_with_one_macro(qtbot, settings, store)
    panel = win.macro_panel
    panel.list.setCurrentRow(0)
    # delete the stray step
    panel.steps.setCurrentRow(3)
    panel.step_delete.click()
    qtbot.waitUntil(lambda: "v2" in panel.list.item(0).text() and panel.steps.count() == 3, timeout=10000)
    # edit step 1 in the action editor: open the app by its name instead of its package
    panel.steps.setCurrentRow(0)
    panel.step_edit.click()
    editor = win._editor
    assert editor is not None and editor.app.text() == "com.android.settings"
    editor.app.setText("Settings")
    editor._try_accept()
    qtbot.waitUntil(lambda: "v3" in panel.list.item(0).text(), timeout=10000)
    assert panel.macro(panel.current_id()).steps[0].action.app == "Settings"
    # replay v3 on the tablet profile, from the window
    panel.run_on.click()
    dialog = win.macros.dialog
    dialog.profile.setCurrentIndex(dialog.profile.findData("tablet"))
    dialog.accept()
    qtbot.waitUntil(lambda: win.macros.result is not None, timeout=60000)
    assert win.macros.result.status == "succeeded", (win.macros.result, [n.message for n in win.notifications.history])
    assert win.session.device.profile.name == "tablet"
    assert win.session.device.state["settings"]["airplane_mode"] is True
    results = [panel.results.item(i).text() for i in range(panel.results.count())]
    assert len(results) == 4 and "Airplane mode" in results[2] and "succeeded" in results[3], results
    # the replay's steps are on the timeline; a step's stored frame can be looked at
    section = win.macros.section
    assert win.timeline.count(section) >= 4
    win.timeline.select_step(1, section)
    qtbot.waitUntil(lambda: win.session.viewing.name == section and win.session.viewing.step == 1, timeout=10000)
    assert not any("No screen was recorded" in n.message for n in win.notifications.history)
    # in words, not the cascade's codes ("exact_id · confirmed")
    assert "found by its" in results[1] and "no element needed" in results[0], results
    assert not any(code in r for r in results for code in ("exact_id", "not_needed", "confirmed", "·")), results
    win.close()
    store.close()


@pytest.mark.slow
def test_redo_keeps_every_version_visible_and_an_older_one_can_be_restored_or_the_change_undone(qtbot, tmp_path):
    """Issue 27: Redo of step 3 on the home screen used to overwrite it with no way back."""
    from app.storage import Store

    settings = Settings(data_dir=tmp_path, vision=VisionSettings(use_hierarchy="only"))
    store = Store(settings.database_path)
    v1 = store.save_macro(_airplane_macro_with_a_stray_step())
    win = _window_with_one_macro(qtbot, settings, store)
    panel = win.macro_panel
    qtbot.waitUntil(lambda: win.view.parse is not None and "Settings" in win.view.parse.description, timeout=20000)
    panel.list.setCurrentRow(0)
    assert not panel.undo.isEnabled()  # nothing to undo on a fresh recording
    # Redo step 3 while the phone shows the home screen: tap Settings
    panel.steps.setCurrentRow(2)
    panel.step_redemo.click()
    click_mirror(win, _element_point(win, "Settings"))
    qtbot.waitUntil(lambda: "v2" in panel.list.item(0).text(), timeout=20000)
    qtbot.waitUntil(lambda: panel.versions.count() == 2, timeout=10000)
    assert panel.versions.itemText(0) == "v2 · latest" and "step 3 changed" in panel.version_note.text()
    assert panel.versions.itemText(1).startswith("v1")
    said = [n.message for n in win.notifications.history]
    assert any("Step 3 replaced" in m and "Undo brings back v1" in m for m in said), said
    # the old version is visible: its steps are listed, read-only, with Restore offered
    panel.pick_version(1)
    assert panel.version_note.text().startswith("v1: recorded")
    assert panel.steps.item(2).text() == f"3. {v1.steps[2].description}"
    assert panel.restore.isEnabled() and not panel.step_redemo.isEnabled() and not panel.step_delete.isEnabled()
    panel.restore.click()
    qtbot.waitUntil(lambda: "v3" in panel.list.item(0).text(), timeout=10000)
    restored = panel.macro(panel.current_id())
    assert restored.version == 3 and restored.steps == v1.steps
    assert store.macro_versions(v1.id) == [1, 2, 3]  # nothing was lost
    # Undo takes the last change back (v2's steps return as v4)
    qtbot.waitUntil(lambda: panel.undo.isEnabled(), timeout=10000)
    panel.undo.click()
    qtbot.waitUntil(lambda: "v4" in panel.list.item(0).text(), timeout=10000)
    assert panel.macro(panel.current_id()).steps == store.load_macro(v1.id, 2).steps
    win.close()
    store.close()


@pytest.mark.slow
def test_run_on_names_the_mirrored_phone_needs_you_offers_no_approve_and_coming_back_restores_the_phone(
        qtbot, tmp_path):
    """Issue 27: after Run on… the device box named the old phone, choosing it again did
    nothing, and "needs you" enabled an Approve that ended the macro as failed."""
    from dataclasses import replace

    from agent.macros.editing import replace_step
    from agent.types import Fingerprint, Target
    from app.storage import Store

    settings = Settings(data_dir=tmp_path, vision=VisionSettings(use_hierarchy="only"))
    store = Store(settings.database_path)
    macro = _airplane_macro_with_a_stray_step()
    gizmo = replace(macro.steps[1], description="tap the gizmo",
                    target=Target(element_id="zzz", description="tap the gizmo",
                                  fingerprint=Fingerprint(text="Gizmo", kind="image", block_role="x")))
    store.save_macro(replace(replace_step(macro, 1, gizmo), version=1))
    win = _window_with_one_macro(qtbot, settings, store)
    panel, box, bar = win.macro_panel, win.device_combo, win.decision_bar
    phone = win.session.device
    win.session.executor.call(lambda: phone.open_app("Settings"))  # the phone as the user left it
    assert "Virtual phone" in box.currentText()
    panel.list.setCurrentRow(0)
    run_on(win, profile="tablet", theme="dark", language="de")
    qtbot.waitUntil(lambda: win.session.device is not None and win.session.device is not phone, timeout=30000)
    assert win.session.device.profile.name == "tablet"
    assert "tablet" in box.currentText() and "de" in box.currentText()  # the box names what is mirrored
    # the gizmo cannot be found: the replay waits for the user, with nothing to approve
    try:
        qtbot.waitUntil(lambda: win.macros.needs_you is not None or win.macros.result is not None, timeout=90000)
    except Exception:
        raise AssertionError([n.message for n in win.notifications.history]) from None
    assert win.macros.result is None, win.macros.result
    assert bar.enabled and not bar.buttons[DecisionKind.APPROVE].isEnabled()
    for kind in (DecisionKind.DEMONSTRATE, DecisionKind.REJECT, DecisionKind.ABORT):
        assert bar.buttons[kind].isEnabled(), kind
    assert not bar.buttons[DecisionKind.EDIT].isEnabled()  # only demonstrate, skip or abort
    assert "skips" in win.proposal_card.rationale.text()
    assert win.macros.needs_you.index == 1 and win.macros.demonstrating
    bar.trigger(DecisionKind.APPROVE)  # a stray Enter on Approve does nothing
    assert win.macros.result is None and win.macros.needs_you is not None
    # show the step on the mirror of the tablet
    qtbot.waitUntil(lambda: win.view.parse is not None and "Netzwerk & Internet" in win.view.parse.description,
                    timeout=20000)
    click_mirror(win, _element_point(win, "Netzwerk & Internet"))
    qtbot.waitUntil(lambda: win.macros.result is not None, timeout=60000)
    result = win.macros.result
    assert result.status == "succeeded" and result.repaired, result
    assert win.session.device.state["settings"]["airplane_mode"] is True
    results = [panel.results.item(i).text() for i in range(panel.results.count())]
    assert any("shown by you" in r for r in results), results
    assert not any("exact_id" in r or "not_needed" in r for r in results), results  # words, not codes
    # come back: pick the phone in the device box; it is the same phone, as it was left
    i = next(i for i in range(box.count()) if box.itemData(i) == VIRTUAL_CHOICE)
    box.setCurrentIndex(i)
    box.activated.emit(i)
    qtbot.waitUntil(lambda: win.session.device is phone, timeout=20000)
    assert "Virtual phone" in box.currentText()
    assert "settings" in phone.screenshot().foreground_package
    assert phone.state["settings"]["airplane_mode"] is False  # the tablet's replay did not touch it
    win.close()
    store.close()


@pytest.mark.slow
def test_saving_a_recording_that_depends_on_where_an_app_was_left_offers_a_known_start(
        qtbot, tmp_path, monkeypatch):
    """Issue 27: Settings came back on its inner screen while recording; on another phone
    the macro failed.  Saving now warns and can begin from the app opened fresh."""
    from agent.device import Key

    settings = Settings(data_dir=tmp_path, vision=VisionSettings(use_hierarchy="only"))
    win = MainWindow(settings, "sim", discover=False)
    qtbot.addWidget(win)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    qtbot.waitUntil(lambda: win.session.device is not None and win.view.parse is not None
                    and "nexuslauncher" in win.view.parse.description, timeout=20000)
    phone = win.session.device

    def leave_settings_inside(row):
        phone.open_app("Settings")
        s = phone.screenshot(with_hierarchy=True)
        from vision.hierarchy import parse_uiautomator

        el = next(e for e in parse_uiautomator(s.hierarchy_xml, s.size).elements if e.text == row)
        phone.tap(el.rect.center.x, el.rect.center.y)
        phone.key(Key.HOME)

    win.session.executor.call(lambda: leave_settings_inside("Network & internet"))
    qtbot.wait(500)  # the mirror and its parse catch up with the home screen
    qtbot.waitUntil(lambda: win.view.parse is not None and "nexuslauncher" in win.view.parse.description,
                    timeout=20000)
    panel = win.macro_panel
    panel.record.click()
    click_mirror(win, _element_point(win, "Settings"))  # comes back on Network & internet
    try:
        qtbot.waitUntil(lambda: "(1 step)" in panel.record.text(), timeout=20000)
    except Exception:
        raise AssertionError([n.message for n in win.notifications.history]) from None
    qtbot.waitUntil(lambda: win.view.parse is not None and "Internet" in win.view.parse.description, timeout=20000)
    click_mirror(win, _element_point(win, "Internet"))
    qtbot.waitUntil(lambda: "2 steps" in panel.record.text(), timeout=20000)
    names = iter(["airplane on"])
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: (next(names), True)))
    panel.record.click()  # stop: the recording depends on where Settings was left
    qtbot.waitUntil(lambda: win.macros.dialog is not None, timeout=5000)
    dialog = win.macros.dialog
    assert "inner screens" in dialog.findChildren(type(panel.details))[0].text()
    assert panel.list.count() == 0  # nothing saved yet
    dialog.fresh.click()  # open Settings fresh, record again
    qtbot.waitUntil(lambda: "(1 step)" in panel.record.text(), timeout=20000)
    qtbot.waitUntil(lambda: win.view.parse is not None and "Network & internet" in win.view.parse.description
                    and "Navigate up" not in win.view.parse.description, timeout=20000)
    click_mirror(win, _element_point(win, "Network & internet"))
    qtbot.waitUntil(lambda: "2 steps" in panel.record.text(), timeout=20000)
    qtbot.waitUntil(lambda: win.view.parse is not None and "Airplane mode" in win.view.parse.description,
                    timeout=20000)
    switch = next(e for e in win.view.parse.elements if e.kind.value == "switch" and e.label == "Airplane mode")
    click_mirror(win, switch.rect.center)
    qtbot.waitUntil(lambda: "3 steps" in panel.record.text(), timeout=20000)
    panel.record.click()  # begins from a known start: saved without a warning
    qtbot.waitUntil(lambda: panel.list.count() == 1, timeout=10000)
    macro = panel.macro(panel.list.item(0).data(ID_ROLE))
    assert macro.steps[0].description == "open Settings from its first screen"
    # replay on a fresh phone whose Settings was left on another inner screen
    win.session.executor.call(lambda: phone.reset())
    win.session.executor.call(lambda: leave_settings_inside("Connected devices"))
    panel.list.setCurrentRow(0)
    panel.run.click()
    qtbot.waitUntil(lambda: win.macros.result is not None, timeout=60000)
    assert win.macros.result.status == "succeeded", win.macros.result
    assert phone.state["settings"]["airplane_mode"] is True
    win.close()
