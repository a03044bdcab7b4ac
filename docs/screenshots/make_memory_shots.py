"""Screenshots for issue 41 (supervision that compounds) at two window sizes: the card
proposing a remembered step ("From memory: you approved this on …"), the Knowledge tab's
decision memory per app, and a healed macro step waiting for approval after Run on… a
German phone whose list rows changed places.

The window is driven as a user drives it: a first run of "Turn on airplane mode" where the
user approves, rejects "Display" with a reason, edits "Apps" into "Network & internet" and
demonstrates the switch on the mirror; then the same goal again.  The model is the scripted model server over real
HTTP (no LLM here); it answers a heal by naming the element that reads "Dark theme" in
German.  Needs a real X display; from the repository root:

    xvfb-run -s "-screen 0 1700x1100x24" .venv/bin/python docs/screenshots/make_memory_shots.py 1024x700
    xvfb-run -s "-screen 0 1700x1100x24" .venv/bin/python docs/screenshots/make_memory_shots.py 1600x1000
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
OUT = Path(__file__).resolve().parent

import widgets  # noqa: E402,F401  (PySide6 guard)

sys.path.insert(0, str(OUT))
from make_screenshots import finish, grab, start_app  # noqa: E402  (the sibling script; run from anywhere)
from make_screenshots import pump as _pump  # noqa: E402

pump = functools.partial(_pump, must=False)  # a state not reached is seen in the shot, not raised

SCRIPT = ("open Settings", "tap Display", "tap Apps", "tap Battery")


class Model:
    """The scripted model: the script's replies for planning prompts, a German-reading
    choice for heals, "none" for "is this a task taught before?"."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self, prompt: str) -> str:
        if "not found again by its recorded clues" in prompt:
            from phone.virtual.i18n import translate

            listed = json.loads(prompt.split("size [w, h]):\n", 1)[1].split("\n\n")[0])["UI elements"]
            want = translate("Dark theme", "de")
            hit = next((e["id"] for e in listed if e["text"] == want), None)
            return json.dumps({"element": hit, "reason": "the dark theme switch, in German"})
        if "Choose one:" in prompt:  # "is this a task taught before?": none
            import re

            n = re.search(r"^(\d+)\. none of these", prompt, re.M)
            return json.dumps({"same": int(n.group(1)) if n else 1, "reason": "a new task"})
        reply = SCRIPT[min(self.n, len(SCRIPT) - 1)]
        self.n += 1
        return reply


def dark_theme_macro():  # type: ignore[no-untyped-def]
    """Settings, Display, Dark theme, recorded on the English virtual phone."""
    from phone.virtual.phone import VirtualPhone
    from tests.macros.sim_support import record_taps

    rec = record_taps(VirtualPhone(), ("Settings", "Display", "Dark theme"))
    return rec.build("dark theme", description="turn on the dark theme")


def main() -> int:
    app, tmp, size, width, height = start_app("tapwise-memory-shots-", private=True)
    from PySide6.QtCore import Qt

    from agent.types import DecisionKind
    from app.gui.devices import VIRTUAL_CHOICE
    from app.gui.window import MainWindow
    from app.settings import DeviceSettings, LLMSettings, Settings, VisionSettings
    from app.storage import Store
    from evaluation.scripted_model import ScriptedLLMServer
    from phone.virtual.tasks import load_tasks
    from tests.gui.e2e_support import AIRPLANE_SWITCH, NETWORK_ROW, click_mirror, run_on

    airplane = next(t for t in load_tasks() if t.id == "settings.airplane_on")
    server = ScriptedLLMServer(models=("fake-model:latest",), responder=Model()).__enter__()
    # the phone inside the window's process, so that each run can start from the task's state
    settings = Settings(data_dir=tmp, vision=VisionSettings(use_hierarchy="only"),
                        device=DeviceSettings(virtual_phone="window"),
                        llm=LLMSettings(ollama_host=server.url, model="fake-model:latest", timeout_s=10, retries=1))
    store = Store(settings.database_path)
    store.save_macro(dark_theme_macro())
    win = MainWindow(settings, "sim", discover=False, store=store)
    win.resize(width, height)
    win.move(0, 0)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    pump(30, lambda: win.session.device is not None and win.view.parse is not None)
    win.task_panel.set_models(["fake-model:latest"], current="fake-model:latest")
    win.task_panel.planner.setCurrentIndex(win.task_panel.planner.findData("zeroshot-"))
    bar = win.decision_bar

    def question() -> None:
        if not pump(60, lambda: bar.enabled or not win.run.active):
            raise TimeoutError("no question came")

    def answered() -> None:
        pump(10, lambda: not bar.enabled)

    def start() -> None:
        win.session.executor.call(lambda: airplane.setup(win.session.device))
        pump(10, lambda: not win.run.active)
        win.task_panel.goal.setPlainText("Turn on airplane mode")
        win.task_panel.start.click()

    # ---- the first run: approve, reject with a reason, approve, demonstrate -----------------
    start()
    for kind in ("approve", "reject", "edit", "demonstrate"):
        question()
        if kind == "approve":
            bar.trigger(DecisionKind.APPROVE)
        elif kind == "reject":
            bar.feedback.setText("airplane mode is under Network & internet")
            bar.trigger(DecisionKind.REJECT)
        elif kind == "edit":  # "Apps" edited into a tap on "Network & internet", picked on the mirror
            bar.trigger(DecisionKind.EDIT)
            win._editor.pick_touch.click()
            click_mirror(win, NETWORK_ROW)
            win._editor._try_accept()
        else:
            bar.trigger(DecisionKind.DEMONSTRATE)
            click_mirror(win, AIRPLANE_SWITCH)
        answered()
    pump(30, lambda: win.run.driver is None)

    # ---- the same goal again: proposed from memory ---------------------------------------------
    start()
    question()
    question_at = 0
    while win.proposal_card.source.isVisible() and question_at < 1:  # the second step: Settings' page
        bar.trigger(DecisionKind.APPROVE)
        answered()
        question()
        question_at += 1
    win.agent_dock.raise_()
    grab(win, f"{size}-memory-proposal.png")
    while win.run.active:
        bar.trigger(DecisionKind.APPROVE)
        answered()
        pump(20, lambda: bar.enabled or not win.run.active)
    pump(30, lambda: win.run.driver is None)
    win.timeline.list.scrollToBottom()

    # ---- the Knowledge tab's memory list --------------------------------------------------------
    win.knowledge_dock.show()
    win.knowledge_dock.raise_()
    win.resizeDocks([win.knowledge_dock], [int(width * 0.55)], Qt.Orientation.Horizontal)
    panel = win.knowledge_panel
    panel.tabs.setCurrentWidget(panel.memory)
    pump(10, lambda: panel.memory.tree.topLevelItemCount() >= 2)
    pump(2)  # the list is read again when the dock shows: select after that
    tree = panel.memory.tree
    branch = next(tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
                  if tree.topLevelItem(i).text(0).startswith("Settings"))
    tree.setCurrentItem(branch.child(0))
    grab(win, f"{size}-memory-list.png")

    # ---- Run on… a German phone whose rows changed places: a healed step -------------------------
    win.macro_dock.raise_()
    mp = win.macro_panel
    pump(10, lambda: mp.list.count() == 1)
    mp.list.setCurrentRow(0)
    run_on(win, language="de", layout_choice="reordered")
    pump(90, lambda: bar.enabled)
    win.agent_dock.raise_()
    grab(win, f"{size}-macro-healed.png")
    bar.trigger(DecisionKind.APPROVE)
    pump(60, lambda: win.macros.result is not None)
    win.macro_dock.raise_()
    pump(5, lambda: mp.versions.count() >= 2)
    grab(win, f"{size}-macro-healed-version.png")
    return finish(win, lambda: server.__exit__(None, None, None))


if __name__ == "__main__":
    raise SystemExit(main())
