"""The record of a run, measured on the virtual phone served over adb/scrcpy.

Serves the virtual phone in its own process (toasts and snackbars last their seconds, as
on a phone), mirrors it over scrcpy v3 and runs tasks through the real runner
(``agent.runner.run_episode``) with a scripted planner that taps each task's reference
steps (resolved on an in-process twin of the phone) and then says "done" — for the
toast-only tasks only once a screen's description tells it what flashed.  Each run is
stored (SQLite) with its record (``app.run_record``): flashes in the steps and a video.

It prints and writes (``--json``):

* **recall**: the share of toasts and snackbars the phone showed (its own log,
  ``tapwise-bench shown``) that are in the stored step of the action that showed them;
  **false**: flashes stored on steps after which the phone showed none;
* **record ms per step**: the time the runner spent in the record's calls (the step's
  ``record`` timing) — the record's share of a step's critical path; and the step's wall
  time (think time excluded) with and without the record, from a second pass without it;
* **memory**: the process's peak resident memory during the runs minus its peak during the
  pass without the record (run first), and the frame ring's peak bytes;
* **video**: per run, ``ffprobe``'s duration of the MP4 against the run's wall time;
* **told**: toast-only tasks the planner ended "done" from the flashed line (vs. gave up).

Usage: ``PYTHONPATH=. python bench/bench_run_record.py [--tasks ID,...|toasts|yardstick]
[--think 1.0] [--parse tree|fusion] [--json out.json]``.  Long: run it under ``flock /tmp/tapwise-llm.lock``.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from agent.planners.base import PlanContext
from agent.transient import FLASHED, SHOWING
from agent.types import Action, ActionType, Episode, Proposal

log = logging.getLogger("bench_run_record")

TOAST_TASKS = ("toasts.call_carla", "toasts.force_stop_shop", "toasts.reset_app_preferences",
               "toasts.copy_link_speaker", "toasts.wishlist_mug", "toasts.delete_gym_alarm")
#: Other tasks: steps that show no message (the false-flash check) and some that show one.
OTHER_TASKS = ("settings.wifi_off", "settings.dark_theme_on", "clock.enable_gym_alarm", "contacts.favorite_david",
               "calendar.show_april", "notes.create_packing_list", "shop.three_bottles", "clock.delete_7am_alarm",
               "launcher.open_settings_icon", "notes.delete_dentist")
#: Tasks never run while the flash tracker was written (held out): other apps, other
#: messages, a running stopwatch, a slider, typing and sending, five toasts in a row.
HELD_OUT = ("calendar.lunch_on_14th", "calendar.delete_dentist", "files.delete_setup_guide", "clock.alarm_645am",
            "shop.order_mug", "shop.remove_case", "contacts.create_maria", "contacts.delete_zoe",
            "messages.delete_code_thread", "settings.connect_wifi", "settings.pair_speaker", "settings.developer_mode",
            "files.new_folder_receipts", "clock.timer_5min", "clock.stopwatch_start", "notes.checklist_two_items",
            "messages.reply_alice", "settings.bluetooth_on", "settings.brightness_half",
            "launcher.drawer_search_calendar", "contacts.search_and_text_kenji")


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return 0.0


class PeakRss:
    """Samples this process's resident memory every 50 ms; ``peak`` is the highest seen."""

    def __init__(self) -> None:
        self.peak = rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, rss_mb())

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return max(self.peak, rss_mb())


class ReplayPlanner:
    """Taps the task's reference actions in order; then "done" — after a flash-only task,
    only once the screen's description names what flashed (waiting up to ``patience`` steps)."""

    name = "replay"
    uses_latent = False

    def __init__(self, actions: list[Action], needs_flash: bool, patience: int = 3) -> None:
        self.actions = list(actions)
        self.needs_flash = needs_flash
        self.patience = patience
        self.told = False
        self.waited = 0

    def propose(self, ctx: PlanContext) -> Proposal:
        if self.actions:
            return Proposal(self.actions.pop(0), rationale="the reference step", planner=self.name)
        if self.needs_flash and FLASHED not in ctx.screen and SHOWING not in ctx.screen:
            if self.waited < self.patience:
                self.waited += 1
                return Proposal(Action(ActionType.WAIT, duration_ms=2000), rationale="waiting for a confirmation",
                                planner=self.name)
            return Proposal(Action.simple(ActionType.IMPOSSIBLE), rationale="no confirmation seen", planner=self.name)
        self.told = self.needs_flash
        return Proposal(Action.simple(ActionType.COMPLETE), rationale="done", planner=self.name)


@dataclass
class TaskRun:
    task: str
    status: str
    steps: int
    wall_s: float
    step_ms: list[float] = field(default_factory=list)  # per step: wall time minus think and execute
    record_ms: list[float] = field(default_factory=list)
    shown: list[dict[str, Any]] = field(default_factory=list)  # the phone's log, each with its step
    found: list[dict[str, Any]] = field(default_factory=list)  # stored flashes
    video: dict[str, Any] = field(default_factory=dict)
    told: bool | None = None
    capture: dict[str, Any] = field(default_factory=dict)


def same_message(shown: str, seen: str) -> bool:
    """The phone's text and a stored flash name the same message (an ellipsis may be read as
    dots; a snackbar's flash also carries its action's word)."""
    def norm(t: str) -> str:
        return " ".join("".join(c if c.isalnum() else " " for c in t.casefold()).split())

    a, b = norm(shown), norm(seen)
    return bool(a) and (a in b or SequenceMatcher(None, a, b.split(" · ")[0] if " · " in seen else b).ratio() >= 0.8
                        or any(SequenceMatcher(None, a, norm(part)).ratio() >= 0.8 for part in seen.split("·")))


def step_of(at: float, actions: list[tuple[int, float]]) -> int:
    step = -1
    for index, started in actions:
        if started <= at + 0.05:
            step = index
    return step


def ffprobe_duration(path: Path) -> float | None:
    exe = shutil.which("ffprobe")
    if exe is None or not path.is_file():
        return None
    out = subprocess.run([exe, "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)],
                         capture_output=True, text=True, timeout=60)
    try:
        return float(out.stdout.strip())
    except ValueError:
        return None


def run_task(task: Any, device: Any, sim: Any, store: Any, *, record: bool, think_s: float, read: Any = None,
             parser: Any = None) -> TaskRun:
    from agent.events import AwaitingDecision, RunSettings
    from agent.runner import drive, run_episode
    from agent.types import Autonomy, Decision, DecisionKind
    from app.run_record import recording_for, video_of
    from phone.virtual.phone import VirtualPhone
    from phone.virtual.tasks import replay
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    twin = VirtualPhone()  # in English: the reference steps name English words; the layout is the same
    actions = [a for a in replay(task, twin) if a is not None and not a.is_terminal]
    sim.reset(task.initial_state or None)
    time.sleep(0.8)  # the mirror shows the fresh phone
    needs_flash = task.id.startswith("toasts.")
    planner = ReplayPlanner(actions, needs_flash)
    parser = parser if parser is not None else ScreenParser(PipelineConfig(mode="tree"))
    sink = recording_for(device, store, flashes=True, video=True, read=read) if record else None
    settings = RunSettings(mode=Autonomy.APPROVE, max_steps=len(actions) + 6, allow_sensitive=True)
    run = run_episode(task.goals[0], device, parser, planner, sink if sink is not None else store, settings=settings,
                      record=sink.capture if sink is not None else None)
    step_ms: list[float] = []
    t_step = time.perf_counter()

    def decide(ev: AwaitingDecision) -> Decision:  # the user's think time, excluded from the step's time
        nonlocal t_step
        step_ms.append((time.perf_counter() - t_step) * 1000)
        time.sleep(think_s)
        t_step = time.perf_counter()
        return Decision(DecisionKind.APPROVE)

    episode: Episode | None = None
    t0 = time.time()
    try:
        for ev in drive(run, decide):
            final = getattr(ev, "episode", None)
            if final is not None:
                episode = final
    finally:
        if sink is not None:
            sink.stop()
    wall = time.time() - t0
    assert episode is not None
    episode = store.load_episode(episode.id)
    out = TaskRun(task.id, episode.status.value, len(episode.steps), wall, step_ms=step_ms,
                  told=planner.told if needs_flash else None)
    out.record_ms = [s.timing("record") or 0.0 for s in episode.steps if s.timing("record") is not None]
    acts = [(s.index, s.started_at) for s in episode.steps if s.executed is not None and not s.executed.is_terminal]
    if sink is not None and sink.summary is not None and sink.summary.side_file is not None:
        side = json.loads(sink.summary.side_file.read_text())
        acts = [(int(s["index"]), side["started_at"] + s["at_s"]) for s in side["steps"]]
    for m in sim.shown():
        out.shown.append({**m, "step": step_of(m["shown_at"], acts)})
    for s in episode.steps:
        out.found.extend({"step": s.index, "text": t.text, "seconds": round(t.seconds, 2)} for t in s.transients)
    if sink is not None and sink.summary is not None:
        out.capture = {"ring_peak_bytes": sink.summary.ring.peak_bytes, "reads": sink.summary.reads,
                       "frames_examined": sink.summary.frames_examined, "skipped": sink.summary.ring.skipped,
                       "hook_ms_max": round(sink.summary.hook_ms_max, 3)}
    if sink is not None:
        v = video_of(store, episode)
        if v is not None:
            run_s = (episode.finished_at or time.time()) - episode.started_at
            out.video = {"path": str(v.path), "ffprobe_s": ffprobe_duration(v.path), "run_s": round(run_s, 3),
                         "bytes": v.path.stat().st_size}
    return out


def run_model_task(task: Any, device: Any, sim: Any, store: Any, settings: Any, *, record: bool,
                   read: Any = None) -> dict[str, Any]:
    """``task`` run by the real model (``--builtin``), fully automatic, no oracle: did the
    agent itself end it "done", did the phone reach the goal, and did the prompt of the step
    that said "done" name what flashed."""
    from agent.runner import drive
    from app.compose import RunRequest, build_run, make_parser
    from app.run_record import recording_for

    sim.reset(task.initial_state or None)
    time.sleep(0.8)
    sink = recording_for(device, store, flashes=True, video=True, read=read) if record else None
    built = build_run(RunRequest(goal=task.goals[0], autonomy="auto", allow_sensitive=True, learn=False,
                                 max_steps=task.step_budget * 2),
                      settings, device=device, parser=make_parser(settings, mode="tree"), store=store, recorded=sink)
    episode = None
    t0 = time.time()
    try:
        for ev in drive(built.events):
            episode = getattr(ev, "episode", episode)
    finally:
        if sink is not None:
            sink.stop()
    assert episode is not None
    last = episode.steps[-1] if episode.steps else None
    prompts = " ".join(c.prompt for c in (last.proposal.llm_calls if last and last.proposal else ()))
    said_done = bool(last and last.executed is not None and last.executed.type is ActionType.COMPLETE)
    return {"task": task.id, "status": episode.status.value, "steps": len(episode.steps),
            "agent_said_done": said_done, "goal_reached": bool(task.is_success(sim)),
            "done_prompt_named_flash": said_done and (FLASHED in prompts or SHOWING in prompts),
            "flashes": [t.text for s in episode.steps for t in s.transients], "wall_s": round(time.time() - t0, 1)}


def score(runs: list[TaskRun]) -> dict[str, Any]:
    shown = [(r.task, m) for r in runs for m in r.shown if m["step"] >= 0]
    hit = [(t, m) for t, m in shown if any(f["step"] == m["step"] and same_message(m.get("on_screen") or m["text"],
                                                                                    f["text"])
                                           for r in runs if r.task == t for f in r.found)]
    steps_with = {(r.task, m["step"]) for r in runs for m in r.shown}
    false = [(r.task, f) for r in runs for f in r.found if (r.task, f["step"]) not in steps_with]
    steps_without = sum(r.steps for r in runs) - len(steps_with)
    return {"shown": len(shown), "found": len(hit), "recall": len(hit) / len(shown) if shown else None,
            "missed": [{"task": t, **m} for t, m in shown if (t, m) not in hit],
            "false": [{"task": t, **f} for t, f in false], "steps_without_message": steps_without}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="all", help="'all' (toasts + others), 'toasts', 'held-out', 'yardstick' or ids")
    ap.add_argument("--lang", default="en", help="the served phone's language (en, de)")
    ap.add_argument("--theme", default="light", help="the served phone's theme (light, dark)")
    ap.add_argument("--think", type=float, default=1.0, help="seconds the scripted user takes to approve")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--parse", default="tree", help="the screen parser's mode: tree (no OCR in the step), or fusion "
                    "(the window's default: the parser reads the screen with PP-OCR, whose models the record shares)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the pass without the record")
    ap.add_argument("--builtin", default="", help="run the tasks with this built-in model (e.g. qwen2.5-coder-0.5b) "
                    "instead of the scripted replay: does the agent itself end them done?")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    from app.storage import Store
    from phone.virtual.launcher import launch_device
    from phone.virtual.remote import ServedSimPhone
    from phone.virtual.task_sets import expand_task_set
    from phone.virtual.tasks import load_tasks

    tasks = {t.id: t for t in load_tasks()}
    ids = {"all": TOAST_TASKS + OTHER_TASKS, "toasts": TOAST_TASKS, "held-out": HELD_OUT}.get(args.tasks) \
        or expand_task_set(args.tasks) or tuple(args.tasks.split(","))
    chosen = [tasks[i] for i in ids]
    tmp = Path(tempfile.mkdtemp(prefix="tapwise-record-bench-"))
    device = launch_device(theme=args.theme, lang=args.lang)
    results: dict[str, Any] = {"tasks": list(ids), "think_s": args.think, "parse": args.parse, "lang": args.lang, "theme": args.theme, "date": time.strftime("%Y-%m-%d %H:%M"),
                               "load": Path("/proc/loadavg").read_text().split()[:3]}
    try:
        device.start_mirror()
        while device.mirror is None or device.mirror.latest() is None:
            time.sleep(0.1)
        sim = ServedSimPhone(device.inner)
        if args.builtin:
            return model_runs(args, chosen, device, sim, tmp, results)
        from vision.config import PipelineConfig
        from vision.pipeline import ScreenParser

        parser = ScreenParser(PipelineConfig(mode=args.parse))  # one for every run, as the window keeps it
        base_rss = rss_mb()
        read = None
        passes = [("without", False), ("with", True)] if not args.no_baseline else [("with", True)]
        for name, record in passes:
            store = Store(tmp / f"{name}.sqlite")
            meter = PeakRss()
            if record and read is None:  # one OCR for every run, as the window keeps it (its load is measured)
                import numpy as np

                from phone.record.capture import reader_beside

                read = reader_beside(parser)
                read(np.zeros((16, 16, 3), np.uint8))
            runs = []
            for task in chosen:
                r = run_task(task, device, sim, store, record=record, think_s=args.think, read=read, parser=parser)
                runs.append(r)
                print(f"{name:8s} {r.task:32s} {r.status:10s} {r.steps} steps  shown "
                      f"{[m['text'] for m in r.shown]}  found {[f['text'] for f in r.found]}  "
                      f"video {r.video.get('ffprobe_s')} vs {r.video.get('run_s')}", flush=True)
            peak = meter.stop()
            store.close()
            step_ms = [ms for r in runs for ms in r.step_ms]
            rec_ms = [ms for r in runs for ms in r.record_ms]
            results[name] = {
                "peak_rss_mb": round(peak, 1), "base_rss_mb": round(base_rss, 1),
                "step_ms_median": round(statistics.median(step_ms), 1) if step_ms else None,
                "step_ms_mean": round(statistics.fmean(step_ms), 1) if step_ms else None,
                "record_ms_max": round(max(rec_ms), 3) if rec_ms else None,
                "record_ms_mean": round(statistics.fmean(rec_ms), 3) if rec_ms else None,
                "runs": [r.__dict__ for r in runs],
            }
            if record:
                results[name]["score"] = score(runs)
                videos = [r.video for r in runs if r.video]
                results[name]["video_max_diff_s"] = max((abs(v["ffprobe_s"] - v["run_s"]) for v in videos
                                                         if v.get("ffprobe_s") is not None), default=None)
                told = [r.told for r in runs if r.told is not None]
                results[name]["toast_tasks_done_from_flash"] = f"{sum(told)}/{len(told)}"
                results[name]["ring_peak_mb"] = round(max(r.capture.get("ring_peak_bytes", 0) for r in runs) / 2**20, 2)
    finally:
        device.close()
    w = results.get("with", {})
    s = w.get("score", {})
    print(json.dumps({k: v for k, v in s.items() if k not in ("missed", "false")}, indent=1))
    print("missed:", s.get("missed"))
    print("false:", s.get("false"))
    print(f"record ms/step: mean {w.get('record_ms_mean')} max {w.get('record_ms_max')}; step ms median "
          f"{results.get('without', {}).get('step_ms_median')} without, {w.get('step_ms_median')} with")
    if "without" in results:
        print(f"memory: peak {w.get('peak_rss_mb')} MB with the record, {results['without']['peak_rss_mb']} MB "
              f"without: +{w['peak_rss_mb'] - results['without']['peak_rss_mb']:.1f} MB (frame ring peak "
              f"{w.get('ring_peak_mb')} MB)")
    print(f"video: largest |ffprobe - run wall time| {w.get('video_max_diff_s')} s; toast tasks done from the "
          f"flash: {w.get('toast_tasks_done_from_flash')}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    return 0


def model_runs(args: Any, chosen: list[Any], device: Any, sim: Any, tmp: Path, results: dict[str, Any]) -> int:
    """``--builtin``: each task with and without the record, the built-in model deciding."""
    import numpy as np

    from app.builtin_model.catalog import by_alias
    from app.builtin_model.server import BuiltinServer, ServerOptions
    from app.settings import LLMSettings, Settings
    from app.storage import Store
    from phone.record.capture import default_reader

    bundled = by_alias(args.builtin)
    server = BuiltinServer(bundled, ServerOptions(n_ctx=4096))
    url = server.start()
    read = default_reader()
    read(np.zeros((16, 16, 3), np.uint8))
    settings = Settings(data_dir=tmp, llm=LLMSettings(backend="openai", openai_base_url=url, model=bundled.alias,
                                                      timeout_s=300))
    try:
        for name, record in (("with", True), ("without", False)) if not args.no_baseline else (("with", True),):
            store = Store(tmp / f"model-{name}.sqlite")
            rows = []
            for task in chosen:
                r = run_model_task(task, device, sim, store, settings, record=record, read=read)
                rows.append(r)
                print(f"{name:8s} {json.dumps(r)}", flush=True)
            store.close()
            done = [r for r in rows if r["agent_said_done"] and r["goal_reached"]]
            results[f"model_{name}"] = {"rows": rows, "done_and_reached": f"{len(done)}/{len(rows)}",
                                        "from_the_flash": sum(r["done_prompt_named_flash"] for r in done)}
            print(f"{name}: the agent said done with the goal reached on {len(done)}/{len(rows)} "
                  f"({results[f'model_{name}']['from_the_flash']} with the flash in the prompt)")
    finally:
        server.stop()
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
