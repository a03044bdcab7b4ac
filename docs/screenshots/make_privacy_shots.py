"""Screenshots of issue 43's window pieces at 1024x700 and 1600x1000: the Secrets dialog,
the consent dialog showing the redacted first request to a server marked remote, and the
proposal card naming the bigger model that took the step after "Ask bigger model".

The window runs the virtual phone in its own process-less mode (``virtual_phone=window``)
and talks to two scripted model servers on loopback (``evaluation.scripted_model``): the
"small" one proposes a step the user does not want, the "bigger" one a good step.  The
shots are taken of the whole screen (dialogs included) and cut to the window, so this
runs under an X server.  From the repository root:

    Xvfb :94 -screen 0 1920x1200x24 -nolisten tcp &
    DISPLAY=:94 .venv/bin/python docs/screenshots/make_privacy_shots.py 1024x700
    DISPLAY=:94 .venv/bin/python docs/screenshots/make_privacy_shots.py 1600x1000
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
OUT = Path(__file__).resolve().parent
TMP = Path(tempfile.mkdtemp(prefix="tapwise-privacy-shots-"))
os.environ["TAPWISE_CONFIG_DIR"] = str(TMP / "config")  # the shots' own vault and consents
os.environ["TAPWISE_DATA_DIR"] = str(TMP / "data")

import widgets  # noqa: E402,F401  (PySide6 guard)

sys.path.insert(0, str(OUT))
from make_screenshots import finish, pump, virtual_window  # noqa: E402  (the sibling script)


def shoot(win, name: str) -> None:  # type: ignore[no-untyped-def]
    """The screen cut to the window (its dialogs lie over it), as the user sees it."""
    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()
    time.sleep(0.3)
    QApplication.processEvents()
    g = win.frameGeometry()
    path = OUT / name
    subprocess.run(["import", "-window", "root", "-crop", f"{g.width()}x{g.height()}+{g.x()}+{g.y()}", str(path)],
                   check=True)
    print("saved", path)  # noqa: T201


def small_model(prompt: str) -> str:
    return "tap Battery"


def big_model(prompt: str) -> str:
    return "tap Network & internet"


def main() -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from agent.types import DecisionKind
    from app.settings import (
        AgentSettings,
        DeviceSettings,
        EscalationSettings,
        LLMSettings,
        PrivacySettings,
        Settings,
        VisionSettings,
    )
    from app.vault import open_vault
    from evaluation.scripted_model import ScriptedLLMServer

    size = sys.argv[1] if len(sys.argv) > 1 else "1024x700"
    width, height = (int(v) for v in size.split("x"))
    _app = QApplication.instance() or QApplication(sys.argv[:1])  # kept alive for the whole run
    small = ScriptedLLMServer(responder=small_model, models=("smollm2-135m",)).start()
    big = ScriptedLLMServer(responder=big_model, models=("qwen2.5-coder-0.5b",)).start()
    vault = open_vault(use_keyring=False)
    vault.set("library_password", "Tulip7Harbor")
    vault.set("bank_pin", "4711")
    base = Settings(
        data_dir=TMP / "data", device=DeviceSettings(virtual_phone="window"),
        llm=LLMSettings(backend="openai", openai_base_url=f"{small.url}/v1", model="smollm2-135m", timeout_s=30,
                        retries=0),
        vision=VisionSettings(use_hierarchy="only"),
        agent=AgentSettings(planner="zeroshot-", constrained_replies=False, screen_evidence=False))
    win = virtual_window(base, width, height)
    win.ensure_model = lambda model, then=None: True  # the scripted servers stand in for the models
    phone = win.session.device

    # 1. the Secrets dialog
    phone.reset({"library": {}})
    phone.open_app("Library")
    pump(1.0)
    dlg = win.open_secrets()
    dlg.boxes.name.setText("email_password")
    dlg.boxes.value.setText("correct horse")
    dlg.boxes.again.setText("correct horse")
    pump(0.5)
    shoot(win, f"{size}-secrets-vault.png")
    dlg.close()
    pump(0.3)

    # 2. the first request to a server marked remote: the user sees exactly what would go
    win.session.settings = base.model_copy(update={"privacy": PrivacySettings(treat_as_remote=True,
                                                                               redact_contact_names=True)})
    phone.open_app("Messages")
    pump(1.0)

    def when_asked(then) -> None:  # type: ignore[no-untyped-def]
        gate = getattr(win.run, "consent_gate", None)
        shown = gate.dialog if gate is not None else None
        if shown is not None and shown.isVisible():
            then(shown)
        else:
            QTimer.singleShot(100, lambda: when_asked(then))

    def consent_shot(shown) -> None:  # type: ignore[no-untyped-def]
        shown.resize(min(760, width - 40), min(600, height - 60))
        box = shown.sent
        at = box.toPlainText().find("<phone-")
        cursor = box.textCursor()
        cursor.setPosition(min(len(box.toPlainText()), at + 400) if at >= 0 else 0)
        box.setTextCursor(cursor)
        box.ensureCursorVisible()
        pump(0.4)
        shoot(win, f"{size}-consent-redacted-request.png")
        shown.findChild(object, "consent_no").click()

    QTimer.singleShot(100, lambda: when_asked(consent_shot))
    win.task_panel.goal.setPlainText("Open the conversation with the number that sent me a verification code")
    win.task_panel.planner.setCurrentIndex(win.task_panel.planner.findData("zeroshot-"))
    win.task_panel.start.click()
    pump(40, until=lambda: win.run.driver is None and not win.run.active, must=False)
    pump(1.0)

    # 3. "Ask bigger model": the card names the model that took the step
    win.session.settings = base.model_copy(update={"escalation": EscalationSettings(
        model="qwen2.5-coder-0.5b", base_url=f"{big.url}/v1", backend="openai")})
    win.notifications.clear()  # the refused run's notices
    phone.go_home()
    phone.open_app("Settings")
    pump(1.0)
    win.task_panel.goal.setPlainText("Turn off Wi-Fi")
    win.task_panel.start.click()
    pump(30, until=lambda: win.decision_bar.enabled)
    pump(0.5)
    QTimer.singleShot(100, lambda: when_asked(lambda d: (shoot(win, f"{size}-escalation-consent.png"),
                                                        d.findChild(object, "consent_once").click())))
    win.decision_bar.trigger(DecisionKind.ESCALATE)
    pump(30, until=lambda: win.decision_bar.enabled and "bigger model" in win.proposal_card.model.text())
    pump(0.8)
    shoot(win, f"{size}-escalated-card.png")
    win.run.abort()
    pump(10, until=lambda: win.run.driver is None)
    return finish(win, small.stop, big.stop)


if __name__ == "__main__":
    raise SystemExit(main())
