"""Item 10: files and replies that are too big, too deep, not UTF-8 or carry odd numbers
are refused with a clear message (no traceback); EXIF orientation is honoured; API keys
written into a server address never reach the terminal or the database."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image

from agent.macros.io import MacroImportError, export_json, import_json
from agent.macros.types import Macro, MacroStep
from agent.types import Action
from app.storage import MAX_CALL_CHARS, Store
from tests.reliability.support import alternating, run_args, scripted, tapwise
from vision.imageio import load_rgb


def _macro_doc(**data_changes) -> dict:
    doc = json.loads(export_json(Macro("m", steps=(MacroStep(Action.tap(5, 6), "tap"),))))
    doc["data"].update(data_changes)
    return doc


BAD_MACROS = {
    "not UTF-8": b'{"schema": "macro", "version": 1, "data": {"name": "\xff\xfe"}}',
    "100k deep": ("[" * 100_000 + "]" * 100_000).encode(),
    "version true": json.dumps(_macro_doc(version=True)).encode(),
    "envelope version true": json.dumps({**_macro_doc(), "version": True}).encode(),
    "NaN created_at": json.dumps(_macro_doc(created_at=float("nan"))).encode(),
    "1e999 created_at": json.dumps(_macro_doc()).replace('"created_at": ', '"created_at": 1e999, "x": ').encode(),
    "point off every screen": json.dumps(_macro_doc(steps=[{"action": {"type": "tap", "touch": {
        "x": -10**12, "y": 10**40}}, "description": "tap"}])).encode(),
    "3000 steps": json.dumps(_macro_doc(steps=_macro_doc()["data"]["steps"] * 3000)).encode(),
}


@pytest.mark.parametrize("name", list(BAD_MACROS))
def test_a_bad_macro_file_is_refused_clearly(name, tmp_path):
    with pytest.raises(MacroImportError, match="cannot import"):
        import_json(BAD_MACROS[name])
    path = tmp_path / "m.json"
    path.write_bytes(BAD_MACROS[name])
    out = tapwise("macro", "import", str(path))
    assert out.returncode == 2 and "Traceback" not in out.stdout + out.stderr, out.stdout + out.stderr
    assert "cannot import" in out.stdout
    assert tapwise("macro", "list").stdout.count("\n") < 8, "nothing was stored"


def test_a_200k_step_macro_is_refused_without_being_read_whole(tmp_path):
    step = json.dumps(_macro_doc()["data"]["steps"][0])
    doc = json.dumps(_macro_doc()).replace('"steps": [', '"steps": [' + ",".join([step] * 200_000) + ",", 1)
    path = tmp_path / "huge.json"
    path.write_text(doc)
    out = tapwise("macro", "import", str(path))
    assert out.returncode == 2 and "Traceback" not in out.stdout + out.stderr
    assert "MB" in out.stdout and "at most" in out.stdout


@pytest.fixture()
def screenshot(tmp_path):
    path = tmp_path / "s.png"
    Image.new("RGB", (1080, 1920), "white").save(path)
    return path


@pytest.mark.parametrize("content, words", [
    (b'{"views": [{"text": "\xff\xfe"}]}', "not UTF-8"),
    (("{\"views\":" + "[" * 100_000 + "]" * 100_000 + "}").encode(), "levels deep"),
])
def test_parse_refuses_a_tree_file_that_is_not_utf8_or_absurdly_deep(tmp_path, screenshot, content, words):
    tree = tmp_path / "t.json"
    tree.write_bytes(content)
    out = tapwise("parse", str(screenshot), "--hierarchy", str(tree), "--mode", "tree")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and words in out.stderr


def test_a_droidbot_state_with_a_width_that_is_not_a_number_parses_with_a_warning(tmp_path, screenshot):
    state = {"tag": "x", "width": "abc", "height": 1920, "views": [
        {"temp_id": 0, "parent": -1, "children": [1], "bounds": [[0, 0], [1080, 1920]],
         "class": "android.widget.FrameLayout", "visible": True, "enabled": True},
        {"temp_id": 1, "parent": 0, "children": [], "bounds": [[100, 100], [500, 200]], "class": "android.widget.Button",
         "text": "Wi-Fi", "clickable": True, "visible": True, "enabled": True}]}
    tree = tmp_path / "state_x.json"
    tree.write_text(json.dumps(state))
    out = tapwise("parse", str(screenshot), "--hierarchy", str(tree), "--mode", "tree", "--describe")
    assert out.returncode == 0, out.stderr
    assert "'width' is not a number" in out.stderr and "Wi-Fi" in out.stdout


def _sideways_jpeg() -> bytes:
    """A 200x100 JPEG, red left and blue right, tagged EXIF Orientation=6 (shown turned 90° clockwise)."""
    img = Image.new("RGB", (200, 100), (255, 0, 0))
    img.paste((0, 0, 255), (100, 0, 200, 100))
    exif = Image.Exif()
    exif[0x0112] = 6
    buf = io.BytesIO()
    img.save(buf, format="JPEG", exif=exif, quality=95)
    return buf.getvalue()


def test_a_jpeg_is_read_upright_by_its_exif_orientation(tmp_path):
    rgb = load_rgb(_sideways_jpeg())
    assert rgb.shape == (200, 100, 3), "tall, as the tag says it is shown"
    top, bottom = rgb[:90].reshape(-1, 3).mean(0), rgb[110:].reshape(-1, 3).mean(0)
    assert top[0] > 200 > top[2], "the left (red) half is on top after a clockwise turn"
    assert bottom[2] > 200 > bottom[0]
    path = tmp_path / "photo.jpg"
    path.write_bytes(_sideways_jpeg())
    out = tapwise("parse", str(path), "--mode", "tree")
    assert "100x200" in out.stdout or "Size(width=100, height=200)" in out.stdout, out.stdout


def test_an_api_key_in_the_server_address_is_never_printed_or_stored(tmp_path):
    db = tmp_path / "t.sqlite"
    secret = "sk-SECRETKEY12345"
    url = f"http://user:{secret}@127.0.0.1:9"  # nothing listens on the discard port
    out = tapwise(*run_args(url, steps=4, db=db), "--timeout", "2")
    assert out.returncode == 2, out.stdout[-2000:]
    assert secret not in out.stdout + out.stderr
    assert "***@127.0.0.1" in out.stdout, "the address is still shown, without the key"
    for f in tmp_path.rglob("*"):
        if f.is_file():
            assert secret.encode() not in f.read_bytes(), f"the key reached {f.name}"


def test_huge_replies_are_stored_cut_and_marked(tmp_path):
    db = tmp_path / "t.sqlite"
    huge = "scroll down\n" + "x" * 2_000_000
    with scripted(alternating(huge, "scroll up\n" + "y" * 2_000_000)) as llm:
        out = tapwise(*run_args(llm.url, steps=3, db=db))
    assert out.returncode == 1, out.stdout[-2000:]
    with Store(db) as store:
        (row,) = store.list_episodes()
        episode = store.load_episode(row["id"])
    replies = [c.reply for s in episode.steps for c in s.proposal.llm_calls]
    assert len(replies) == 3
    assert all(len(r) < MAX_CALL_CHARS + 200 and "truncated by Tapwise" in r for r in replies)
    assert all(len(s.proposal.rationale) < MAX_CALL_CHARS + 200 for s in episode.steps)
    size = sum(f.stat().st_size for f in tmp_path.glob("t.sqlite*"))
    assert size < 3 * 2_000_000 / 4, f"the database grew to {size} bytes"


def test_screens_are_not_cut(tmp_path):
    # the cap applies to LLM text only: a stored screenshot is the frame as captured
    with Store(tmp_path / "t.sqlite") as store:
        from vision.types import Screen

        ref = store.save_screenshot(Screen(image=np.zeros((64, 32, 3), dtype=np.uint8)), "a/b")
        assert store.load_screenshot(ref).image.shape == (64, 32, 3)
