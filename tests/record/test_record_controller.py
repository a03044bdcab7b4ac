"""The window's record of a run loads the flashes' OCR once, even when the GUI thread (as
Start is pressed) and the worker that builds the run ask for it at the same time."""

from __future__ import annotations

import os
import threading
import time
from types import SimpleNamespace

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
pytest.importorskip("pytestqt", reason="the controller's timer needs a Qt application")

from app.settings import Settings

pytestmark = pytest.mark.gui


class Panel:
    """The two parts of the task panel the controller touches at its start."""

    def __init__(self) -> None:
        self.recordToggled = SimpleNamespace(connect=lambda fn: None)

    def set_record(self, on: bool) -> None:
        pass


def test_two_threads_warming_up_at_once_load_one_ocr(qtbot, monkeypatch, tmp_path):
    import app.run_record
    import phone.record.capture
    from app.gui.record_controller import RecordController

    loads: list[object] = []

    def slow_reader(parser):  # loading the OCR takes a while
        time.sleep(0.3)
        loads.append(parser)
        return lambda image: []

    monkeypatch.setattr(app.run_record, "streams", lambda device: True)
    monkeypatch.setattr(phone.record.capture, "reader_beside", slow_reader)
    session = SimpleNamespace(device=object(), settings=Settings(data_dir=tmp_path), parser=lambda: "parser")
    controller = RecordController(SimpleNamespace(session=session, task_panel=Panel()))  # type: ignore[arg-type]
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(controller.warm_up())) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(loads) == 1 and len(got) == 2 and got[0] is got[1] is not None
