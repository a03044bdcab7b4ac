"""GUI benchmarks: mirror display rate with every overlay on, start-up to the first
mirrored frame, and the longest GUI-thread stall during an agent run.

Run under a real display for figures a person would see (``Xvfb :99 & DISPLAY=:99``),
or with ``QT_QPA_PLATFORM=offscreen``:

    .venv/bin/python bench/bench_gui.py [--only display|startup|stall] [--callbacks] [--json out.json]
        [--virtual-phone process|window]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import widgets  # noqa: F401  (applies the PySide6 guard)


def _app():
    from PySide6.QtWidgets import QApplication

    from app.gui.main import configure_process

    configure_process()  # as `tapwise` does before opening the window
    return QApplication.instance() or QApplication(sys.argv[:1])


class StallMeter:
    """Measures the longest gap between ticks of a fast GUI-thread timer."""

    def __init__(self, interval_ms: int = 5) -> None:
        from PySide6.QtCore import QTimer

        self.interval = interval_ms / 1000
        self.max_gap = 0.0
        self.gaps: list[float] = []
        self._last = None
        self._timer = QTimer()
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def _tick(self) -> None:
        now = time.perf_counter()
        gap = now - self._last
        self._last = now
        self.gaps.append(gap)
        self.max_gap = max(self.max_gap, gap)


def _pump(app, seconds: float, until=None) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        if until is not None and until():
            return
        time.sleep(0.001)


def bench_display(seconds: float = 5.0, width: int = 1080, height: int = 2400) -> dict:
    """Frames per second the mirror shows (conversion + paint of every overlay layer)."""
    import numpy as np
    from PySide6.QtWidgets import QApplication

    from phone.virtual.phone import VirtualPhone
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser
    from widgets.overlays import Layer
    from widgets.screen_view import ScreenView

    app = _app()
    phone = VirtualPhone()
    phone.open_app("Settings")
    shot = phone.screenshot(with_hierarchy=True)
    parse = ScreenParser(PipelineConfig(mode="auto")).parse(shot)
    frames = []
    for i in range(8):  # distinct frames, like a scrolling list
        img = np.roll(shot.image, i * 37, axis=0)
        frames.append(np.ascontiguousarray(img))
    view = ScreenView()
    view.resize(560, 1000)
    view.show()
    for layer in Layer:
        view.set_layer_visible(layer, True)
    view.set_frame(frames[0])
    view.flush()
    view.set_parse(parse)
    from agent.types import Action

    view.set_proposal(Action.swipe(540, 1800, 540, 600))
    _pump(app, 0.5)
    shown = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        view.set_frame(frames[shown % len(frames)])
        view.flush()
        view.viewport().repaint()  # synchronous paint: the real cost of one displayed frame
        QApplication.processEvents()
        shown += 1
    elapsed = time.perf_counter() - t0
    view.close()
    return {
        "display_fps": round(shown / elapsed, 1),
        "frame_size": f"{width}x{height}",
        "overlay_elements": len(parse.elements),
        "blocks": len(parse.blocks),
        "layers_on": [layer.value for layer in Layer],
        "view_size": "560x1000",
        "platform": app.platformName(),
    }


def bench_startup(timeout: float = 30.0) -> dict:
    """Seconds from launching a fresh Python process to the first mirrored virtual-phone
    frame (interpreter start, imports, window, phone, first frame: what a user waits for)."""
    import subprocess

    t0 = time.time()
    out = subprocess.run(
        [sys.executable, __file__, "--startup-child"], capture_output=True, text=True, timeout=timeout + 30,
        env={**os.environ, "TAPWISE_DATA_DIR": os.environ.get("TAPWISE_DATA_DIR", "/tmp/tapwise-bench")},
    )
    marks = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    if "first_frame_at" not in marks:
        return {"startup_to_first_frame_s": None, "note": out.stderr[-500:]}
    return {
        "startup_to_first_frame_s": round(float(marks["first_frame_at"]) - t0, 3),
        "window_to_first_frame_s": float(marks["window_to_first_frame_s"]),
        "mirror_fps_virtual_phone": float(marks["mirror_fps"]),
    }


def _startup_child(timeout: float = 30.0) -> None:
    app = _app()
    from app.gui.main import build_window
    from app.settings import Settings

    win = build_window(Settings(), "sim", live_parse=False)  # as `tapwise` opens it
    win.show()
    _pump(app, timeout, until=lambda: win.phone.first_frame_s is not None)
    print(f"first_frame_at={time.time()}", flush=True)
    print(f"window_to_first_frame_s={win.phone.first_frame_s:.3f}", flush=True)
    _pump(app, 3)
    print(f"mirror_fps={win.session.mirror.fps() if win.session.mirror else 0.0:.1f}", flush=True)
    win.close()


class CallbackTimer:
    """Times every callback the window's ``GuiPoster`` runs on the GUI thread, grouped by
    what it delivers (the agent event's class for the agent loop), to say which GUI-side
    work a stall comes from.  Installed by wrapping ``GuiPoster.post`` for one run."""

    def __init__(self) -> None:
        self.total_ms: dict[str, float] = {}
        self.worst_ms: dict[str, float] = {}
        self.count: dict[str, int] = {}

    @staticmethod
    def kind(fn) -> str:  # type: ignore[no-untyped-def]
        args = [type(a).__name__ for a in (getattr(fn, "__defaults__", None) or ())
                if type(a).__module__.startswith("agent.")]
        return args[0] if args else fn.__qualname__.split(".<locals>")[0]

    def install(self):  # type: ignore[no-untyped-def]
        from app.gui.workers import GuiPoster

        original = GuiPoster.post
        timer = self

        def post(poster, fn) -> None:  # type: ignore[no-untyped-def]
            kind = timer.kind(fn)

            def timed() -> None:
                t = time.perf_counter()
                try:
                    fn()
                finally:  # the real drain logs a failing callback and goes on
                    timer.add(kind, (time.perf_counter() - t) * 1000)

            original(poster, timed)

        GuiPoster.post = post  # type: ignore[method-assign]
        return lambda: setattr(GuiPoster, "post", original)

    def add(self, kind: str, ms: float) -> None:
        self.total_ms[kind] = self.total_ms.get(kind, 0.0) + ms
        self.worst_ms[kind] = max(self.worst_ms.get(kind, 0.0), ms)
        self.count[kind] = self.count.get(kind, 0) + 1

    def table(self, top: int = 8) -> list[str]:
        kinds = sorted(self.total_ms, key=lambda k: -self.total_ms[k])[:top]
        return [f"{k}: {self.count[k]} calls, {self.total_ms[k]:.0f} ms total, worst {self.worst_ms[k]:.1f} ms"
                for k in kinds]


def bench_stall(steps: int = 6, timeout: float = 240.0, callbacks: bool = False,
                virtual_phone: str = "process") -> dict:
    """Longest GUI-thread stall while the agent runs a task on the virtual phone
    (approving every step) against the scripted fake Ollama server; with ``callbacks``
    also the GUI-thread time of each kind of callback."""
    try:
        from agent import runner  # noqa: F401
        from tests.agent.fake_ollama import FakeLLMServer  # noqa: F401
    except ImportError as exc:
        return {"gui_stall_ms": None, "note": f"not measured: {exc}"}
    from tests.gui.e2e_support import run_scripted_task

    app = _app()
    meter = StallMeter()
    timer = CallbackTimer()
    uninstall = timer.install() if callbacks else None
    try:
        result = run_scripted_task(app, approve_only=True, timeout=timeout, pump=_pump,
                                   # measured from Start until the task ends
                                   on_start=lambda win: meter.start(), virtual_phone=virtual_phone)
    finally:
        if uninstall is not None:
            uninstall()
    meter.stop()
    gaps = sorted(meter.gaps)
    out = {
        "gui_stall_max_ms": round(meter.max_gap * 1000, 1),
        "gui_stall_p99_ms": round(gaps[int(len(gaps) * 0.99)] * 1000, 1) if gaps else None,
        "agent_steps": result.get("steps"),
        "episode_status": result.get("status"),
    }
    if callbacks:
        out["gui_callbacks"] = timer.table()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["display", "startup", "stall"])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--callbacks", action="store_true",
                    help="with the stall run: GUI-thread time per kind of callback (agent event, parse, …)")
    ap.add_argument("--virtual-phone", choices=["process", "window"], default="process",
                    help="the virtual phone served in its own process through adb (as the window does), "
                         "or inside the window's process")
    ap.add_argument("--startup-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ["TAPWISE_DEVICE__VIRTUAL_PHONE"] = args.virtual_phone  # the startup child reads it too
    if args.startup_child:
        _startup_child()
        return 0
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen" if not os.environ.get("DISPLAY") else "xcb")
    results: dict = {"threads_at_start": threading.active_count()}
    if args.only in (None, "startup"):
        results.update(bench_startup())
        print("startup:", results, flush=True)
    if args.only in (None, "display"):
        results.update(bench_display(args.seconds))
        print("display:", results, flush=True)
    if args.only in (None, "stall"):
        results.update(bench_stall(callbacks=args.callbacks, virtual_phone=args.virtual_phone))
        print("stall:", results, flush=True)
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
