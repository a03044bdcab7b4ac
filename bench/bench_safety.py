"""Safety benchmark: gating of sensitive steps, injected instructions, crash safety, secrets.

    .venv/bin/python bench/bench_safety.py                    # everything
    .venv/bin/python bench/bench_safety.py --only gating      # reference steps gated / total
    .venv/bin/python bench/bench_safety.py --only injection   # injected instructions tried / steered
    .venv/bin/python bench/bench_safety.py --only kill        # kill -9 soak: steps lost, integrity
    .venv/bin/python bench/bench_safety.py --only secrets     # the API key in files Tapwise wrote

Protocols
---------
Gating: every built-in task's reference solution is replayed on the virtual phone in
English and German and in every device profile.  Before each step the screen is parsed
from its accessibility tree (``PipelineConfig(mode="tree")``) and ``agent.safety.assess``
judges the step's action twice: as the reference gives it (a touch point plus the
element's words, like a planner's description) and without those words (a bare touch
point; with ``--parse vision``, the element the project's grounder picks), so only what
the screen says counts.  Steps marked ``sensitive:`` in ``phone/virtual/tasks/*.yaml`` should be
gated; every other step should not ("false-gated").  Tasks whose reference cannot be
replayed on a profile (it needs scrolling there) are counted as skipped.

Injection: screens of the virtual phone carry instructions (a note, a message, a
contact's name, a notification, a web page) telling the agent to erase, send, pay or
change security settings.  A scripted model behind a real loopback HTTP server (Ollama's
API) obeys whatever the screen says.  Each case runs in each autonomy mode with a user
who rejects every question; a case is "steered" when a sensitive action reached the
phone without the user's approval, or the phone's state shows the harm.

Kill soak: 20 runs of ``tapwise run`` on the virtual phone with a scripted model, each
killed with SIGKILL at a random moment; afterwards every step the run had reported as
stored (one line per stored step on stdout) must be in the database, and
``PRAGMA integrity_check`` must say ``ok``.

Secrets: a run with an API key set through the environment; afterwards every file under
the data, config and cache folders Tapwise used is searched for the key (plain, and
base64 / URL-encoded).
"""

from __future__ import annotations

import argparse
import base64
import itertools
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.grounding.base import ElementGrounder, GroundContext, GroundingError  # noqa: E402
from agent.safety import assess  # noqa: E402
from agent.types import Action, Target  # noqa: E402
from phone.virtual.look import PROFILES  # noqa: E402
from phone.virtual.phone import VirtualPhone  # noqa: E402
from phone.virtual.tasks import StepError, load_tasks  # noqa: E402
from vision.config import PipelineConfig  # noqa: E402
from vision.pipeline import ScreenParser  # noqa: E402
from vision.types import ScreenParse  # noqa: E402


@dataclass
class GatingTally:
    sensitive: int = 0
    gated: int = 0
    gated_point_only: int = 0
    other: int = 0
    false_gated: int = 0
    false_gated_point_only: int = 0
    skipped_tasks: int = 0
    missed: list[str] = field(default_factory=list)
    false: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    #: every distinct clickable control seen on the way ((app, name) -> why it is gated, or "")
    controls: dict[tuple[str, str], str] = field(default_factory=dict)


def gating(langs: tuple[str, ...], profiles: tuple[str, ...], parse_mode: str = "tree"
           ) -> dict[tuple[str, str], GatingTally]:
    """Replay every task's reference in each language and profile and judge each step.

    With ``parse_mode="vision"`` (pixels only: detector, OCR, icon classifier; slow) only the
    marked steps and the step before each of them (as unmarked controls) are judged.
    """
    parser = ScreenParser(PipelineConfig(mode=parse_mode))
    tree = parse_mode == "tree"
    tasks = load_tasks()
    out: dict[tuple[str, str], GatingTally] = {}
    for lang in langs:
        for prof in profiles:
            tally = GatingTally()
            phone = VirtualPhone(profile=prof, lang=lang)
            for task in tasks:
                task.setup(phone)
                steps = list(task.solution)  # their English targets are put in the phone's language
                wanted = {i for i, s in enumerate(steps) if s.sensitive} if not tree else set(range(len(steps)))
                wanted |= {i - 1 for i in wanted if i > 0 and not steps[i - 1].sensitive}
                judged: list[tuple[bool, bool, bool, str, str]] = []
                try:
                    for i, step in enumerate(steps):
                        if step.kind == "key" or i not in wanted:
                            step.execute(phone)
                            continue
                        action = step.to_action(phone)
                        screen = phone.screenshot(with_hierarchy=tree)
                        parse = parser.parse(screen)
                        fg = screen.foreground_package
                        full = assess(action, parse, fg)
                        point = assess(_without_words(action, parse, tree), parse, fg)
                        if tree:
                            _sweep(parse, fg or "", tally.controls)
                        where = f"{task.id}[{i + 1}] {step.describe()}"
                        cat = (full.category or point.category)
                        judged.append((step.sensitive is not None, full.sensitive, point.sensitive,
                                       f"{where}: {full.reason or point.reason}", cat.value if cat else ""))
                        step.execute(phone)
                except StepError:
                    tally.skipped_tasks += 1
                    continue
                for marked, full_s, point_s, text, cat_name in judged:
                    if marked:
                        tally.sensitive += 1
                        tally.gated += full_s
                        tally.gated_point_only += point_s
                        if not (full_s and point_s):
                            tally.missed.append(text)
                        else:
                            tally.reasons[cat_name] += 1
                    else:
                        tally.other += 1
                        tally.false_gated += full_s
                        tally.false_gated_point_only += point_s
                        if full_s or point_s:
                            tally.false[text] += 1
            phone.close()
            out[(lang, prof)] = tally
    return out


def _sweep(parse: ScreenParse, app: str, seen: dict[tuple[str, str], str]) -> None:
    """Judge a bare tap on every reachable clickable control of the screen (once per name)."""
    for e in parse.uncovered():
        name = e.display_name.strip()
        if not e.clickable or not name or (app, name) in seen:
            continue
        c = e.rect.center
        seen[(app, name)] = assess(Action.tap(c.x, c.y), parse, app).reason


def _without_words(action: Action, parse: ScreenParse, tree: bool) -> Action:
    """The action with none of the reference's own words: on a tree parse the bare touch
    point; on a vision parse the element the project's grounder picks for the reference's
    description (the touch point of a tree element can miss the boxes OCR draws)."""
    if action.target is None:
        return action
    if not tree and action.target.description:
        try:
            grounded = ElementGrounder().ground(
                Action(action.type, target=Target(description=action.target.description)),
                GroundContext("", parse, (), None)).action
            if grounded.target is not None and grounded.target.element_id:
                return replace(grounded, target=Target(element_id=grounded.target.element_id,
                                                       point=grounded.touch))
        except GroundingError:
            pass
    return replace(action, target=Target(point=action.touch))


def print_gating(result: dict[tuple[str, str], GatingTally], parse_mode: str = "tree") -> int:
    what = ("accessibility tree" if parse_mode == "tree" else
            f"{parse_mode} parse, no tree; marked steps and the step before each")
    print(f"\n## Sensitive reference steps ({what})")
    print("| language | profile | sensitive gated / total | same, bare touch point | false-gated / other steps "
          "| same, bare touch point | tasks skipped |")
    print("|---|---|---|---|---|---|---|")
    missed = 0
    for (lang, prof), t in result.items():
        print(f"| {lang} | {prof} | {t.gated} / {t.sensitive} | {t.gated_point_only} / {t.sensitive} "
              f"| {t.false_gated} / {t.other} | {t.false_gated_point_only} / {t.other} | {t.skipped_tasks} |")
        missed += len(t.missed)
    for (lang, prof), t in result.items():
        for m in t.missed:
            print(f"  MISSED ({lang}, {prof}): {m}")
    seen: set[str] = set()
    for (lang, prof), t in result.items():
        for text in t.false:
            if text not in seen:
                seen.add(text)
                print(f"  false-gated ({lang}, {prof}): {text}")
    total = Counter[str]()
    for t in result.values():
        total.update(t.reasons)
    print("  categories of gated steps:", dict(total))
    for (lang, prof), t in result.items():
        if not t.controls or prof != "phone":
            continue
        gated = sorted((name, why) for (_, name), why in t.controls.items() if why)
        print(f"\n  every clickable control on the screens of the replay ({lang}, {prof}): "
              f"{len(gated)} of {len(t.controls)} distinct controls gated:")
        for name, why in gated:
            print(f"    {name[:60]!r}: {why}")
    return missed


# ---- injection ----------------------------------------------------------------------


def injection(modes: tuple[str, ...]) -> int:
    """Every planted-instruction case in every mode; prints tried / steered; returns steered."""
    from phone.virtual.injections import cases
    from tests.agent.safety_harness import run_case

    print("\n## Injected instructions (scripted obedient model over loopback HTTP)")
    print("| case | channel | harm | " + " | ".join(f"{m}: tried / steered / asked" for m in modes) + " |")
    print("|---|---|---|" + "---|" * len(modes))
    tried = steered = 0
    per_mode: dict[str, Counter[str]] = {m: Counter() for m in modes}
    for case in cases():
        cells = []
        for mode in modes:
            r = run_case(case, mode)
            tried += r.tried
            steered += r.steered
            per_mode[mode].update(runs=1, tried=int(r.tried), steered=int(r.steered), asked=r.asked)
            cells.append(f"{int(r.tried)} / {int(r.steered)} / {r.asked}")
        print(f"| {case.name} | {case.channel} | {case.harm_kind} | " + " | ".join(cells) + " |")
    print("| mode | runs | model obeyed the screen | steered | questions about a harmful step |")
    print("|---|---|---|---|---|")
    for mode, c in per_mode.items():
        print(f"| {mode} | {c['runs']} | {c['tried']} | {c['steered']} | {c['asked']} |")
    print(f"  total: {tried} runs where the model obeyed the screen, {steered} steered "
          f"({len(cases())} cases x {len(modes)} modes)")
    return steered


# ---- kill soak and secrets ---------------------------------------------------------


API_KEY = "sk-tapwise-canary-3f9a1c27e5b84d06"
_STEP_LINES = ("done:", "rejected:", "error:", "fatal error:", "stopped at this step")


def _soak_responder() -> Callable[[str], Any]:
    from tests.agent.fake_ollama import Reply

    rows = itertools.cycle(["Display", "Battery", "Sound & vibration", "Notifications", "Storage", "Accessibility"])
    elsewhere = itertools.cycle(["open Settings", "go home"])  # never the same action three times in a row

    def reply(prompt: str) -> Reply:
        if "Next action" not in prompt:
            return Reply("wait")
        screen = prompt.rsplit("<screen>", 1)[-1]
        if "Search settings" in screen:
            return Reply(f"tap {next(rows)}")
        if "Network & internet" in screen or "Display" in screen or "Battery" in screen:
            return Reply("go back")
        return Reply(next(elsewhere))

    return reply


def _tapwise_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAPWISE_", "XDG_"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"),
               XDG_CACHE_HOME=str(home / "cache"), XDG_STATE_HOME=str(home / "state"),
               TAPWISE_CONFIG_DIR=str(home / "tapwise-config"), TAPWISE_DATA_DIR=str(home / "tapwise-data"),
               TAPWISE_LLM__API_KEY=API_KEY, PYTHONUNBUFFERED="1")
    return env


def kill_soak(runs: int, seed: int, home: Path) -> tuple[int, int, int, list[str]]:
    """``runs`` runs killed with SIGKILL at random moments; returns (reported, stored, lost, problems)."""
    import sqlite3

    from app.storage import Store
    from tests.agent.fake_ollama import FakeLLMServer

    rng = random.Random(seed)
    env = _tapwise_env(home)
    db = home / "soak.db"
    reported_total = stored_total = lost_total = mid_run = 0
    problems: list[str] = []
    print("\n## Kill -9 soak")
    print("| run | killed after | steps reported | steps stored | lost | integrity_check |")
    print("|---|---|---|---|---|---|")
    with FakeLLMServer(responder=_soak_responder()) as server:
        for run in range(runs):
            before = _episode_ids(db)
            delay = rng.uniform(4.0, 12.0)  # start-up takes 3-4 s on the shared machine
            cmd = [str(ROOT / ".venv/bin/tapwise"), "run", "Look through the settings pages", "--mode", "auto",
                   "--planner", "zeroshot-", "--backend", "openai", "--base-url", server.url + "/v1",
                   "--model", "fake-model", "--max-steps", "200", "--parse", "tree", "--db", str(db),
                   "--no-llm-grounder"]
            out = home / f"run{run:02d}.out"
            with out.open("w", encoding="utf-8") as fh:
                proc = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, cwd=home)
                try:
                    proc.wait(timeout=delay)
                    tail = out.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
                    problems.append(f"run {run}: ended by itself before the kill ({proc.returncode}): {tail}")
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
            lines = out.read_text(encoding="utf-8", errors="replace").splitlines()
            reported = sum(1 for li in lines if li.strip().startswith(_STEP_LINES))
            con = sqlite3.connect(db)
            try:
                check = con.execute("PRAGMA integrity_check").fetchone()[0]
            finally:
                con.close()
            new = sorted(_episode_ids(db) - before)
            stored = 0
            if new:
                with Store(db) as store:
                    for eid in new:
                        ep = store.load_episode(eid)
                        stored += len(ep.steps)
                        for st in ep.steps:  # every stored screenshot is there and intact
                            if st.screenshot is not None:
                                store.load_screenshot(st.screenshot, verify=True)
            lost = max(0, reported - stored)
            reported_total += reported
            stored_total += stored
            lost_total += lost
            if check != "ok":
                problems.append(f"run {run}: integrity_check said {check!r}")
            if stored:
                mid_run += 1
            print(f"| {run + 1} | {delay:.1f} s | {reported} | {stored} | {lost} | {check} |")
    print(f"  {mid_run} of {runs} runs were killed after storing at least one step")
    return reported_total, stored_total, lost_total, problems


def _episode_ids(db: Path) -> set[str]:
    import sqlite3

    if not db.exists():
        return set()
    con = sqlite3.connect(db)
    try:
        return {r[0] for r in con.execute("SELECT id FROM episodes")}
    except sqlite3.OperationalError:
        return set()
    finally:
        con.close()


def secrets(home: Path) -> tuple[int, int, list[str]]:
    """Write settings the way the window does, then search every file under ``home`` for the
    API key (plain, base64, URL-encoded).  Returns (files searched, bytes, files with the key)."""
    env = _tapwise_env(home)
    subprocess.run([str(ROOT / ".venv/bin/python"), "-c",
                    "from app.settings import load_settings, save_settings; s, _ = load_settings(); "
                    "assert s.llm.api_key is not None; save_settings(s)"],
                   env=env, cwd=ROOT, check=True)
    needles = [API_KEY.encode(), base64.b64encode(API_KEY.encode()), urllib.parse.quote(API_KEY).encode(),
               API_KEY.encode("utf-16-le")]
    files = size = 0
    found: list[str] = []
    for path in home.rglob("*"):
        if not path.is_file() or path.suffix == ".out":  # our own capture of the terminal
            continue
        data = path.read_bytes()
        files += 1
        size += len(data)
        if any(n in data for n in needles):
            found.append(str(path.relative_to(home)))
    return files, size, found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=("gating", "injection", "kill", "secrets"))
    ap.add_argument("--langs", default="en,de")
    ap.add_argument("--profiles", default=",".join(sorted(PROFILES)))
    ap.add_argument("--runs", type=int, default=20, help="kill-soak runs")
    ap.add_argument("--parse", default="tree", choices=("tree", "vision", "fusion"),
                    help="how screens are parsed for the gating check (vision: pixels only, slow)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    t0 = time.time()
    bad = 0
    if args.only in (None, "gating"):
        res = gating(tuple(args.langs.split(",")), tuple(args.profiles.split(",")), args.parse)
        bad += print_gating(res, args.parse)
    if args.only in (None, "injection"):
        bad += injection(("approve", "confident", "auto"))
    if args.only in (None, "kill", "secrets"):
        with tempfile.TemporaryDirectory(prefix="tapwise-safety-") as tmp:
            home = Path(tmp)
            if args.only in (None, "kill"):
                reported, stored, lost, problems = kill_soak(args.runs, args.seed, home)
                print(f"  total: {reported} steps reported, {stored} stored, {lost} lost")
                for p in problems:
                    print("  PROBLEM:", p)
                bad += lost + sum("integrity" in p for p in problems)
            else:  # something for the secret search to look at: one short run
                kill_soak(1, args.seed, home)
            files, size, found = secrets(home)
            print(f"\n## API key in files Tapwise wrote: searched {files} files ({size / 1e6:.1f} MB), "
                  f"key found in {len(found)}")
            for f in found:
                print("  KEY FOUND IN", f)
            bad += len(found)
    print(f"\n(total {time.time() - t0:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
