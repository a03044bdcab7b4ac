"""Macros on the virtual phone: launcher taps become "open app", the `tapwise macro`
commands, and repairs that stay repaired."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.macros.recorder import Recorder
from agent.types import Action
from app.storage import Store
from tests.macros.sim_support import TreeParser, observer, record_taps

sim = pytest.importorskip("phone.virtual.phone")


def _record_airplane_macro():
    phone = sim.VirtualPhone()

    rec = record_taps(phone, ("Settings", "Network & internet", "Airplane mode"))
    return rec.build("airplane on", app="com.android.settings", description="turn on airplane mode")


@pytest.fixture
def cli_db(monkeypatch, tmp_path):
    monkeypatch.setenv("TAPWISE_DATA_DIR", str(tmp_path))
    from app.settings import load_settings

    settings, _ = load_settings()
    s = Store(settings.database_path)
    macro = s.save_macro(_record_airplane_macro())
    s.close()
    return settings.database_path, macro


def test_launcher_tap_is_recorded_as_opening_the_app():
    m = _record_airplane_macro()
    assert m.steps[0].action.type.value == "open_app" and m.steps[0].action.app == "com.android.settings"
    assert m.steps[2].description == "turn on the 'Airplane mode' switch in the list"
    assert m.steps[2].expect_checked is True


def test_cli_lists_shows_exports_and_reimports(cli_db, tmp_path):
    from app.cli.macro import macro_app

    runner = CliRunner()
    out = runner.invoke(macro_app, ["list"])
    assert out.exit_code == 0 and "airplane on" in out.output
    out = runner.invoke(macro_app, ["show", "airplane on"])
    assert "turn on the 'Airplane mode' switch" in out.output
    f = tmp_path / "m.json"
    assert runner.invoke(macro_app, ["export", "airplane on", "-o", str(f)]).exit_code == 0
    out = runner.invoke(macro_app, ["import", str(f)])
    assert out.exit_code == 0 and "as version 2" in out.output
    aitw = json.loads(runner.invoke(macro_app, ["export", "airplane on", "--format", "aitw"]).output)
    assert aitw["steps"][-1]["action_type"] == 10
    bad = tmp_path / "bad.json"
    doc = json.loads(f.read_text())
    doc["version"] = 7
    bad.write_text(json.dumps(doc))
    out = runner.invoke(macro_app, ["import", str(bad)])
    assert out.exit_code == 2 and "upgrade Tapwise" in out.output


def test_cli_replays_on_the_german_tablet_and_diffs_versions(cli_db):
    from app.cli.macro import macro_app

    runner = CliRunner()
    out = runner.invoke(macro_app, ["replay", "airplane on", "--profile", "tablet", "--lang", "de",
                                    "--theme", "dark", "--no-interactive"])
    assert out.exit_code == 0, out.output
    assert "succeeded" in out.output
    out = runner.invoke(macro_app, ["diff", "airplane on"])
    assert out.exit_code == 0 and "no step differences" in out.output


def test_on_the_virtual_phone_a_repaired_step_stays_repaired_and_versions_diff():
    from dataclasses import replace

    from agent.macros.diff import diff_macros
    from agent.macros.editing import replace_step
    from agent.macros.replay import Replayer, run_unattended
    from agent.types import Fingerprint, Target

    macro = _record_airplane_macro()
    broken = replace(macro.steps[1], target=Target(element_id="zzz", description="tap the gizmo",
                                                  fingerprint=Fingerprint(text="Gizmo", kind="image", block_role="x")),
                     description="tap the gizmo")
    macro = replace(replace_step(macro, 1, broken), version=1)

    def replayer(phone):
        return Replayer(device=phone, parser=TreeParser())

    phone = sim.VirtualPhone(lang="de")

    def demonstrate(ev):
        el = [e for e in ev.observation.parse.elements if e.text == "Netzwerk & Internet"][0]
        return Action.tap(el.rect.center.x, el.rect.center.y)

    first = run_unattended(replayer(phone), macro, demonstrate=demonstrate)
    assert first.succeeded and first.repaired and first.macro.version == 2
    assert phone.state["settings"]["airplane_mode"] is True
    again_phone = sim.VirtualPhone(lang="de")
    again = run_unattended(replayer(again_phone), first.macro)
    assert again.succeeded and not again.repaired
    assert again_phone.state["settings"]["airplane_mode"] is True
    changes = [c for c in diff_macros(macro, first.macro) if c.kind != "same"]
    assert [c.kind for c in changes] == ["changed"] and changes[0].new_index == 1


def test_after_screen_given_later_still_turns_a_launcher_tap_into_open_app():
    phone = sim.VirtualPhone()

    observe = observer(phone)

    rec = Recorder()
    before = observe()
    el = [e for e in before.parse.elements if e.text == "Settings"][0]
    act = Action.tap(el.rect.center.x, el.rect.center.y)
    rec.record(act, before)  # the GUI records first, executes, then reports the screen
    assert rec.steps[-1].action.type.value == "tap"
    phone.tap(act.touch.x, act.touch.y)
    rec.observe_after(observe())
    step = rec.steps[-1]
    assert step.action.type.value == "open_app" and step.expected_package == "com.android.settings"
    assert step.screen_after
