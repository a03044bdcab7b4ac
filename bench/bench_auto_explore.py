"""Automatic exploration (issue 40, part 4): how long a fresh window takes to map every app
of the virtual phone by itself, and whether the GUI stays responsive meanwhile.

A window is opened on the virtual phone as `tapwise` opens it (``--virtual-phone process``:
served in its own process and reached through adb; ``window``: inside the window's
process), with automatic exploration on and its own budget (600 actions per app).  From
the moment the phone is connected until every app has a map, a 5 ms GUI-thread timer
measures the longest gap between its ticks (``bench_gui.StallMeter``); the same is
measured for ``--idle`` seconds on the same window with nothing exploring, as the
baseline.  Printed: per app the steps, seconds, screens and transitions of its map, the
wall time of the whole pass, the stall figures both ways and the mirror's frame rate.
``--german`` then switches the phone to German (as a user would, in its Settings) and
measures the pass that makes the German maps.

    flock /tmp/tapwise-llm.lock nice .venv/bin/python bench/bench_auto_explore.py [--virtual-phone process|window]
        [--german] [--json out.json]

Nothing is asserted; figures go to docs/results/maps-automatic.md with the command.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench_gui import StallMeter, _app, _pump

import widgets  # noqa: F401  (applies the PySide6 guard)


def _maps(win, language: str) -> dict:  # type: ignore[no-untyped-def]
    from agent.knowledge.guide import AppMaps
    from agent.knowledge.map_language import LanguageMaps
    from app.knowledge_store import SqliteKnowledgeStore

    return {m.package: m for m in AppMaps(LanguageMaps(SqliteKnowledgeStore(win.session.store()), language)).all()}


def _pass(app, win, language: str, timeout: float) -> dict:  # type: ignore[no-untyped-def]
    """From now until every app has a map in ``language`` (and nothing runs)."""
    auto = win.auto_explore
    meter = StallMeter()
    meter.start()
    t0 = time.perf_counter()
    fps: list[float] = []
    sampled = [t0]

    def done() -> bool:  # cheap: called every millisecond on the GUI thread
        now = time.perf_counter()
        mirror = win.session.mirror
        if now - sampled[0] >= 0.5 and mirror is not None and mirror.running:
            sampled[0] = now
            fps.append(mirror.fps())
        plan = auto.plan
        return (plan is not None and plan.language == language and not auto.running
                and "apps mapped" in auto.status.text())

    _pump(app, timeout, until=done)
    wall = time.perf_counter() - t0
    meter.stop()
    gaps = sorted(meter.gaps)
    maps = _maps(win, language)
    return {
        "language": language,
        "wall_s": round(wall, 1),
        "apps": len(maps),
        "steps": sum(m.steps_used for m in maps.values()),
        "explore_s": round(sum(m.seconds_used for m in maps.values()), 1),
        "per_app": {m.label or pkg: {"steps": m.steps_used, "s": round(m.seconds_used, 1),
                                     "screens": len(m.screens), "transitions": len(m.edges),
                                     "finished": m.complete} for pkg, m in maps.items()},
        "gui_stall_max_ms": round(meter.max_gap * 1000, 1),
        "gui_stall_p99_ms": round(gaps[int(len(gaps) * 0.99)] * 1000, 1) if gaps else None,
        "gui_gaps_over_100ms": sum(g > 0.1 for g in gaps),
        "mirror_fps_median": sorted(fps)[len(fps) // 2] if fps else None,
    }


def _idle(app, seconds: float) -> dict:  # type: ignore[no-untyped-def]
    meter = StallMeter()
    meter.start()
    _pump(app, seconds)
    meter.stop()
    gaps = sorted(meter.gaps)
    return {"seconds": seconds, "gui_stall_max_ms": round(meter.max_gap * 1000, 1),
            "gui_stall_p99_ms": round(gaps[int(len(gaps) * 0.99)] * 1000, 1) if gaps else None,
            "gui_gaps_over_100ms": sum(g > 0.1 for g in gaps)}


def _to_german(win) -> None:  # type: ignore[no-untyped-def]
    """Switch the phone the user sees to German, as its Settings app would."""
    device = win.session.device
    inner = getattr(device, "inner", None)
    if inner is not None and hasattr(inner, "adb"):  # served: the phone's own side channel
        from phone.virtual.remote import ServedSimPhone

        win.session.executor.call(lambda: ServedSimPhone(inner).reset({"settings": {"language": "de"}}))
    else:
        device.state["settings"]["language"] = "de"
    win.task_ended()  # looked over again at once (else within the minute)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--virtual-phone", choices=["process", "window"], default="process")
    ap.add_argument("--german", action="store_true", help="then switch the phone to German and map it again")
    ap.add_argument("--idle", type=float, default=30.0, help="seconds of the idle baseline")
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    app = _app()
    from app.gui.devices import VIRTUAL_CHOICE
    from app.gui.main import build_window
    from app.settings import AgentSettings, DeviceSettings, Settings, VisionSettings

    tmp = Path(tempfile.mkdtemp(prefix="tapwise-bench-auto-"))
    settings = Settings(data_dir=tmp, device=DeviceSettings(virtual_phone=args.virtual_phone),
                        vision=VisionSettings(use_hierarchy="only"), agent=AgentSettings(explore_automatically=True))
    win = build_window(settings, "sim", discover=False)
    win.resize(1600, 1000)
    win.show()
    auto = win.auto_explore
    auto.delay_ms = 10 ** 9  # the idle baseline first; exploring starts when the bench says
    win.connect_device(VIRTUAL_CHOICE)
    _pump(app, 60, until=lambda: win.view.frame is not None)
    out: dict = {"virtual_phone": args.virtual_phone, "budget_steps": auto.budget.max_steps,
                 "load_1min": os.getloadavg()[0]}
    try:
        out["idle"] = _idle(app, args.idle)
        auto.delay_ms = 0
        auto.check()
        out["english"] = _pass(app, win, "en", args.timeout)
        if args.german:
            _to_german(win)
            out["german"] = _pass(app, win, "de", args.timeout)
        out["load_1min_end"] = os.getloadavg()[0]
    finally:
        win.close()
    print(json.dumps(out, indent=1, ensure_ascii=False))
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
