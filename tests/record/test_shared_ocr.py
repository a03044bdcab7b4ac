"""The record's OCR runs the screen parser's PP-OCR models instead of loading a second
copy: the same onnxruntime sessions, its own settings, reading alike, and both backends
reading at once without waiting for each other."""

from __future__ import annotations

import threading

import pytest

from agent.execute import execute
from phone.record.capture import default_reader, reader_beside
from phone.record.ring import FrameRing, RingFrame
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import load_tasks, replay
from vision.config import PipelineConfig
from vision.ocr import RapidOcrBackend
from vision.pipeline import ScreenParser

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def snackbar():
    """The bottom of the virtual phone's Clock with a snackbar, as the record keeps frames."""
    task = next(t for t in load_tasks() if t.id == "toasts.delete_gym_alarm")
    phone = VirtualPhone()
    task.setup(phone)
    for action in replay(task, VirtualPhone()):
        if action is not None and not action.is_terminal:
            execute(action, phone)
    image = FrameRing().shrink(RingFrame(phone.screenshot().image, 0.0, 0.0)).image
    return image[image.shape[0] - 200:image.shape[0] - 40]


def test_a_backend_given_anothers_models_runs_the_same_sessions_with_its_own_settings():
    parser_ocr = RapidOcrBackend(0.95, 1280, rec_batch=6)
    record_ocr = RapidOcrBackend(0.8, 640, rec_batch=1, models_of=parser_ocr)
    mine, theirs = record_ocr._get(), parser_ocr._get()
    assert mine.text_det.session is theirs.text_det.session
    assert mine.text_rec.session is theirs.text_rec.session
    assert (mine.text_det.limit_side_len, mine.text_rec.rec_batch_num) == (640, 1)
    assert (theirs.text_det.limit_side_len, theirs.text_rec.rec_batch_num) == (1280, 6)


def test_the_records_reader_beside_the_parser_reads_as_its_own_would_even_at_once(snackbar):
    parser = ScreenParser(PipelineConfig(mode="fusion"))
    shared, own = reader_beside(parser), default_reader()
    expected = [s.text for s in own(snackbar)]
    assert any("Alarm deleted" in t for t in expected)
    assert [s.text for s in shared(snackbar)] == expected
    out: dict[str, list[str]] = {}

    def parse_side() -> None:
        out["parser"] = [s.text for s in parser.ocr_backend().read(snackbar)]

    t = threading.Thread(target=parse_side)
    t.start()
    out["record"] = [s.text for s in shared(snackbar[4:].copy())]  # other pixels: read again, not remembered
    t.join(60)
    assert any("Alarm deleted" in x for x in out["parser"]) and out["record"] == expected


def test_a_parser_that_reads_no_pixels_leaves_the_record_its_own_reader(snackbar):
    for parser in (ScreenParser(PipelineConfig(mode="tree")), ScreenParser(PipelineConfig(mode="fusion", ocr="none"))):
        read = reader_beside(parser)
        assert any("Alarm deleted" in s.text for s in read(snackbar))
    tree = ScreenParser(PipelineConfig(mode="tree"))
    reader_beside(tree)
    assert tree._ocr is None  # the tree parser's OCR is not loaded for the record's sake
