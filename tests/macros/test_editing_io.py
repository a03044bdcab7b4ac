"""Editing, versioning, JSON import/export, AITW export and diffs of macros."""

from __future__ import annotations

import json

import pytest

from agent.macros.diff import diff_macros, render_diff
from agent.macros.editing import (
    MacroEditError,
    delete_step,
    fill_parameters,
    move_step,
    parameterize,
    redescribe,
)
from agent.macros.fingerprint import crop_hash, hash_similarity
from agent.macros.io import MacroImportError, export_json, import_json, to_aitw
from agent.macros.types import Macro, MacroStep
from agent.types import Action
from tests.macros.fakephone import FakePhone
from tests.macros.test_record_replay import record_new_alarm
from vision.geometry import Rect, Size


@pytest.fixture
def macro() -> Macro:
    return record_new_alarm(FakePhone())


def test_every_edit_makes_the_next_version_of_the_same_macro(macro):
    m2 = redescribe(macro, 0, "open the alarms tab")
    assert (m2.id, m2.version) == (macro.id, 2)
    assert m2.steps[0].description == "open the alarms tab" and m2.steps[0].target.description == "open the alarms tab"
    m3 = move_step(m2, 3, 2)
    assert m3.version == 3 and m3.steps[2].description.startswith("tap the 'Save'")
    m4 = delete_step(m3, 0)
    assert m4.version == 4 and len(m4.steps) == 3


def test_bad_edits_say_what_is_wrong(macro):
    with pytest.raises(MacroEditError, match="step 9 does not exist"):
        delete_step(macro, 8)
    with pytest.raises(MacroEditError, match="only typed text"):
        parameterize(macro, 0, "x")
    with pytest.raises(MacroEditError, match="bad parameter name"):
        parameterize(macro, 2, "two words")
    with pytest.raises(MacroEditError, match="cannot be empty"):
        redescribe(macro, 0, "  ")


def test_parameterized_text_is_filled_without_touching_the_stored_macro(macro):
    m = parameterize(macro, 2, "label")
    assert "{label}" in m.steps[2].description
    filled = fill_parameters(m, {"label": "Gym"})
    assert filled.steps[2].action.text == "Gym" and "Gym" in filled.steps[2].description
    assert m.steps[2].action.text == "{label}"


def test_json_round_trip_keeps_everything(macro):
    m = parameterize(macro, 2, "label")
    back = import_json(export_json(m))
    assert back == m


def test_import_of_a_newer_schema_version_says_to_upgrade(macro):
    doc = json.loads(export_json(macro))
    doc["version"] = 99
    with pytest.raises(MacroImportError, match="upgrade Tapwise"):
        import_json(json.dumps(doc), source="alarm.json")


def test_import_with_missing_fields_names_the_field(macro):
    doc = json.loads(export_json(macro))
    del doc["data"]["steps"][0]["action"]
    with pytest.raises(MacroImportError, match=r"steps\.0\.action"):
        import_json(json.dumps(doc))
    del doc["data"]["name"]
    with pytest.raises(MacroImportError, match="name"):
        import_json(json.dumps(doc))


def test_import_of_something_else_is_refused_clearly(macro):
    with pytest.raises(MacroImportError, match="not valid JSON"):
        import_json("{nope")
    with pytest.raises(MacroImportError, match="missing schema"):
        import_json(json.dumps({"name": "x"}))
    with pytest.raises(MacroImportError, match="expected a macro document"):
        import_json(json.dumps({"schema": "action", "version": 1, "data": {}}))


def test_import_refuses_undeclared_parameters(macro):
    m = parameterize(macro, 2, "label")
    doc = json.loads(export_json(m))
    doc["data"]["parameters"] = []
    with pytest.raises(MacroImportError, match=r"\{label\}"):
        import_json(json.dumps(doc))


def test_aitw_export_normalises_points_and_lists_what_it_cannot_express(macro):
    m = Macro(name="x", steps=(MacroStep(Action.open_app("Clock")), *macro.steps))
    ep = to_aitw(m, Size(1000, 2000))
    kinds = [s["action_type"] for s in ep["steps"]]
    assert kinds == [4, 4, 3, 4, 10]
    assert ep["steps"][0]["touch_point"] == [0.075, 0.166]
    assert ep["skipped"][0]["action"] == "open_app"


def test_diff_shows_a_repaired_step_as_changed(macro):
    m2 = redescribe(macro, 3, "tap OK")
    m3 = delete_step(m2, 0)
    text = render_diff(macro, m3)
    assert "- " in text and "tap the 'Alarm' tab" in text
    kinds = [c.kind for c in diff_macros(macro, m3)]
    assert kinds.count("removed") == 1
    assert "changed" in kinds or ("added" in kinds and kinds.count("removed") >= 1)
    assert render_diff(macro, macro).endswith("(no step differences)")


def test_crop_hash_survives_scaling_and_a_dark_theme():
    import numpy as np

    rng = np.random.default_rng(1)
    tile = (rng.random((8, 9)) * 255).astype(np.uint8)
    big = np.kron(tile, np.ones((20, 20), np.uint8))
    img = np.stack([big] * 3, axis=-1)
    h1 = crop_hash(img, Rect(0, 0, 180, 160))
    bigger = np.stack([np.kron(tile, np.ones((40, 40), np.uint8))] * 3, axis=-1)
    h2 = crop_hash(bigger, Rect(0, 0, 360, 320))
    h3 = crop_hash(255 - img, Rect(0, 0, 180, 160))
    assert hash_similarity(h1, h2) > 0.9
    assert hash_similarity(h1, h3) > 0.9
    other = crop_hash(np.stack([np.kron(tile[::-1], np.ones((20, 20), np.uint8))] * 3, axis=-1),
                      Rect(0, 0, 180, 160))
    assert hash_similarity(h1, other) < 0.85
