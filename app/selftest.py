"""``run_self_test``: prove that an installed Tapwise (or the desktop bundle) works end to end.

Stages, each timed and reported on one line:

1. **window**: a QApplication and the main window (offscreen unless ``QT_QPA_PLATFORM``
   is set), connected to the virtual phone until its first frame is mirrored;
2. **virtual phone**: a ``VirtualPhone`` and one screenshot;
3. **screen parse**: the screenshot's pixels parsed by ``ScreenParser`` with its default
   configuration (rapidocr's bundled models, the shipped ONNX models when present);
4. **agent step**: one step of the ``zeroshot-`` planner over the Ollama API, against a
   scripted LLM server on loopback that this module starts and stops itself.

It must not touch the user's phones, settings or database (the window gets a throw-away
database in a temporary folder), and must not reach the network (the LLM server listens on
127.0.0.1 only).  It returns 0 only if every stage passed.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from evaluation.scripted_model import ScriptedLLMServer

log = logging.getLogger(__name__)

SCRIPTED_MODEL = "tapwise-selftest:latest"
SCRIPTED_REPLY = "open Settings"
GOAL = "Open the Settings app"
SETTINGS_PACKAGE = "com.android.settings"


@dataclass(frozen=True, slots=True)
class StageResult:
    """The outcome of one stage: passed or not, how long it took, and what it saw."""

    name: str
    ok: bool
    seconds: float
    detail: str
    skipped: bool = False


class StageFailed(RuntimeError):
    """A stage ran but did not see what it must see."""


def _ensure_offscreen() -> str:
    """Use Qt's offscreen platform unless the caller chose one; returns the platform."""
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if not platform:
        os.environ["QT_QPA_PLATFORM"] = platform = "offscreen"
    return platform


def _gui_available() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("app.gui.window") is not None and importlib.util.find_spec("PySide6") is not None
    except (ImportError, ValueError):
        return False


def stage_window(timeout_s: float = 60.0) -> str:
    """Show the main window offscreen and wait for the virtual phone's first mirrored frame."""
    from PySide6.QtCore import qInstallMessageHandler

    # Qt's own chatter (e.g. the offscreen platform's "does not support
    # propagateSizeHints()") goes to the debug log, not into the report.
    previous = qInstallMessageHandler(lambda mode, context, message: log.debug("Qt: %s", message))
    try:
        return _show_main_window(timeout_s)
    finally:
        qInstallMessageHandler(previous)


def _show_main_window(timeout_s: float) -> str:
    from PySide6.QtWidgets import QApplication

    from app.gui.devices import VIRTUAL_CHOICE
    from app.gui.window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    if not isinstance(app, QApplication):
        raise StageFailed(f"this process already runs a {type(app).__name__}, not a QApplication: "
                          "widgets cannot be created")
    # a throw-away database: the self-test must not create or touch the user's
    from app.storage import Store

    with tempfile.TemporaryDirectory(prefix="tapwise-selftest-") as tmp, Store(Path(tmp) / "selftest.sqlite") as store:
        return _window_round_trip(app, MainWindow(None, "sim", store=store, discover=False, live_parse=False),
                                  VIRTUAL_CHOICE, timeout_s)


def _window_round_trip(app: Any, win: Any, choice: Any, timeout_s: float) -> str:
    """Show ``win``, connect ``choice`` and wait for its first mirrored frame; always closes ``win``."""
    try:
        win.show()
        app.processEvents()
        shown = time.perf_counter()
        if not win.isVisible():
            raise StageFailed("the main window did not become visible")
        win.connect_device(choice)
        deadline = shown + timeout_s
        while win.view.frame is None and time.perf_counter() < deadline:
            app.processEvents()
            time.sleep(0.02)
        if win.view.frame is None:
            raise StageFailed(f"the virtual phone's first frame did not reach the window within {timeout_s:g} s")
        h, w = win.view.frame.shape[:2]
        return (f"window shown ({os.environ.get('QT_QPA_PLATFORM')}), first {w}x{h} frame of the virtual phone "
                f"mirrored {time.perf_counter() - shown:.2f} s later")
    finally:
        win.close()
        app.processEvents()
        win.deleteLater()
        app.processEvents()


def stage_phone() -> tuple[Any, Any, str]:
    """Start the virtual phone (its fonts and icon fonts found) and take one screenshot (pixels only)."""
    from phone.virtual.assets import mdi_dir, roboto_dir
    from phone.virtual.phone import VirtualPhone

    if roboto_dir() is None:
        raise StageFailed("the Roboto fonts (font-roboto) are missing: the phone would draw with a fallback font")
    if not mdi_dir().is_dir():
        raise StageFailed(f"qtawesome's icon fonts are missing ({mdi_dir()})")
    phone = VirtualPhone()
    screen = phone.screenshot(with_hierarchy=False)
    h, w = screen.image.shape[:2]
    if h < 100 or w < 100:
        raise StageFailed(f"the screenshot is only {w}x{h} pixels")
    return phone, screen, f"{w}x{h} screenshot of {screen.foreground_package or 'the home screen'}"


def stage_parse(screen: Any) -> tuple[Any, str]:
    """Parse the screenshot's pixels with the default backends; OCR must read the launcher."""
    from vision.assets import model_path
    from vision.pipeline import ScreenParser

    parser = ScreenParser()
    parse = parser.parse(screen)
    texts = [s.text for s in parse.text_spans]
    if parse.warnings:  # e.g. a backend that failed on this frame: the parse is then incomplete
        raise StageFailed(f"the parse reported problems: {'; '.join(parse.warnings)}")
    if not parse.elements:
        raise StageFailed("no elements found on the home screen")
    if not any("Settings" in t for t in texts):
        raise StageFailed(f"OCR did not read 'Settings' on the home screen (read: {texts[:8]})")
    ocr = type(parser.ocr_backend()).__name__
    icons = parser.icon_classifier()
    icon_name = type(icons).__name__ if icons is not None else "none"
    # a model that ships in resources/models must really be used, not silently skipped
    config = parser.config
    if model_path(config.detector_model) is not None and parser.detector_name not in ("yolo", "hybrid"):
        raise StageFailed(f"{config.detector_model} ships but the {parser.detector_name} detector was used")
    if model_path(config.icon_model) is not None and icons is None:
        raise StageFailed(f"{config.icon_model} ships but no icon classifier was loaded")
    return parser, (f"{len(parse.elements)} elements, {len(texts)} text spans "
                    f"(OCR {ocr}, detector {parser.detector_name}, icons {icon_name})")


def stage_agent(phone: Any, parser: Any) -> str:
    """One ``zeroshot-`` step over the Ollama API against the scripted server, assembled
    by ``app.compose`` like every other run."""
    from agent.events import ErrorEvent, Executed
    from agent.runner import drive
    from agent.types import ActionType
    from app.compose import RunRequest, build_run, close_client
    from app.settings import AgentSettings, LLMSettings, Settings

    with ScriptedLLMServer(default=SCRIPTED_REPLY, models=(SCRIPTED_MODEL,)) as server:
        settings = Settings(llm=LLMSettings(backend="ollama", ollama_host=server.url, model=SCRIPTED_MODEL,
                                            retries=1, timeout_s=20.0),
                            agent=AgentSettings(screen_evidence=False))  # the model's path, not the screen's
        request = RunRequest(GOAL, planner="zeroshot-", autonomy="auto", max_steps=1, learn=False)
        run = build_run(request, settings, device=phone, parser=parser, max_wait_s=0.0)
        try:
            models = run.client.list_models()
            if SCRIPTED_MODEL not in models:
                raise StageFailed(f"the client listed {models}, not {SCRIPTED_MODEL}")
            events = list(drive(run.events))
        finally:
            close_client(run.client)
        errors = [e.message for e in events if isinstance(e, ErrorEvent)]
        executed = [e.action for e in events if isinstance(e, Executed)]
        if errors:
            raise StageFailed(f"the step failed: {errors[0]}")
        if not executed or executed[0].type is not ActionType.OPEN_APP:
            raise StageFailed(f"expected one 'open Settings' action, got {[a.describe() for a in executed]}")
        package = phone.foreground()[0]
        if package != SETTINGS_PACKAGE:
            raise StageFailed(f"after '{executed[0].describe()}' the phone shows {package}, not {SETTINGS_PACKAGE}")
        return (f"{server.chat_requests} LLM call(s) to {server.url} -> {executed[0].describe()!r}; "
                f"phone now shows {package}")


# ---------------------------------------------------------------------------- driver
def _timed(name: str, fn: Callable[[], Any]) -> tuple[StageResult, Any]:
    t0 = time.perf_counter()
    try:
        value = fn()
    except Exception as exc:  # every failure becomes a report line, never a traceback
        log.debug("self-test stage %s failed", name, exc_info=True)
        message = str(exc) if isinstance(exc, StageFailed) else f"{type(exc).__name__}: {exc}"
        return StageResult(name, False, time.perf_counter() - t0, message), None
    detail = value[-1] if isinstance(value, tuple) else value
    return StageResult(name, True, time.perf_counter() - t0, str(detail)), value


def run_stages(*, gui: bool | None = None, on_result: Callable[[StageResult], None] | None = None) -> list[StageResult]:
    """Run every stage in order and return their results (later stages skip when an input is missing)."""
    results: list[StageResult] = []

    def keep(result: StageResult) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    if gui is None:
        gui = _gui_available()
    if gui:
        keep(_timed("window", stage_window)[0])
    else:
        keep(StageResult("window", True, 0.0, "skipped: the GUI (app.gui, PySide6) is not installed", skipped=True))

    result, value = _timed("virtual phone", stage_phone)
    keep(result)
    phone, screen = (value[0], value[1]) if value else (None, None)
    try:
        parser = None
        if screen is not None:
            result, value = _timed("screen parse", lambda: stage_parse(screen))
            keep(result)
            parser = value[0] if value else None
        else:
            keep(StageResult("screen parse", False, 0.0, "not run: the virtual phone did not start", skipped=True))
        if phone is not None and parser is not None:
            keep(_timed("agent step", lambda: stage_agent(phone, parser))[0])
        else:
            keep(StageResult("agent step", False, 0.0, "not run: needs the virtual phone and the screen parser",
                             skipped=True))
    finally:
        if phone is not None:
            phone.close()
    return results


def run_self_test(stream: TextIO | None = None, *, gui: bool | None = None) -> int:
    """Run the self-test, write a short report to ``stream`` (stdout), return 0 only if all passed."""
    out = stream or sys.stdout
    platform = _ensure_offscreen()
    frozen = bool(getattr(sys, "frozen", False))
    out.write(f"Tapwise self-test ({'desktop bundle' if frozen else 'Python ' + sys.version.split()[0]}, "
              f"Qt platform {platform})\n")
    out.flush()
    t0 = time.perf_counter()

    def line(r: StageResult) -> None:
        mark = "skip" if r.skipped and r.ok else ("ok" if r.ok else "FAIL")
        out.write(f"  [{mark:>4}] {r.name:<14} {r.seconds:6.2f} s  {r.detail}\n")
        out.flush()

    results = run_stages(gui=gui, on_result=line)
    total = time.perf_counter() - t0
    failed = [r for r in results if not r.ok]
    if failed:
        first = failed[0]
        out.write(f"Self-test FAILED at stage '{first.name}': {first.detail} ({total:.1f} s)\n")
        return 1
    out.write(f"Self-test passed: {len(results)} stages in {total:.1f} s\n")
    return 0


if __name__ == "__main__":  # pragma: no cover - `python -m app.selftest`
    sys.exit(run_self_test())
