"""The window's MCP server: any MCP client drives the connected phone, and every acting call
waits on the window's own approval card.

The "MCP" dock starts and stops ``app.mcp``'s streamable-HTTP server on 127.0.0.1, shows
its address, bearer token and a client configuration to copy, the policy (ask / auto /
read-only) and the calls as they come.  A client's acting call becomes a proposal on the
same card and decision bar as Tapwise's own agent (``DecisionRouter``): Approve carries it
out and the client receives the new observation; Edit opens the action editor; Reject
sends the typed reason back as the tool's error; Demonstrate lets the user do the step on
the mirror.  While the agent or a macro holds the bar, a client's proposal waits its turn.
Calls are stored as episodes named after the client, listed on the Episodes tab.

All phone and parsing work runs on the MCP server's threads through the session's device
executor and parser lock; this controller only touches widgets on the GUI thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from agent.device import DeviceError
from agent.explain import confidence_of
from agent.types import Action, ActionType, Decision, DecisionKind, Step
from app.mcp.clients import as_json, http_config, new_token, stdio_config
from app.mcp.supervisor import POLICY_WORDS, Policy, Review
from widgets.icons import button, icon
from widgets.notifications import Level
from widgets.screen_view import ViewMode

log = logging.getLogger(__name__)

#: The port the window serves on when free (a client's configuration then stays valid).
DEFAULT_PORT = 8765
#: How often a waiting proposal checks whether the decision bar is free.
BAR_POLL_MS = 300


class _LiveDevice:
    """The window's phone at the moment of each call (the user may switch phones)."""

    def __init__(self, ui: Any) -> None:
        self._ui = ui

    def _device(self) -> Any:
        try:
            return self._ui.agent_device()
        except RuntimeError:
            raise DeviceError("no phone is connected in Tapwise's window",
                              "connect one in the window, then call again") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._device(), name)


@dataclass(eq=False)
class _Pending:
    """A client's proposal waiting for the user."""

    review: Review
    done: threading.Event = field(default_factory=threading.Event)
    decision: Decision | None = None


class WindowSupervisor:
    """``app.mcp``'s supervisor backed by the window's card: called on the server's thread,
    waits for the user's decision made on the GUI thread."""

    def __init__(self, controller: McpController) -> None:
        self._c = controller

    def review(self, review: Review) -> Decision:
        pending = _Pending(review)
        self._c.ui.session.poster.post(lambda: self._c.enqueue(pending))
        while not pending.done.wait(0.2):
            if self._c.stopping:
                return Decision(DecisionKind.ABORT, feedback="Tapwise's MCP server was stopped in the window",
                                decided_by="policy")
        if pending.decision is None:  # the server stopped while it waited
            return Decision(DecisionKind.ABORT, feedback="Tapwise's MCP server was stopped in the window",
                            decided_by="policy")
        return pending.decision


class McpPanel(QWidget):
    """Start/stop, policy, address, token, client configuration and the recent calls."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = QLabel("Not serving. Start lets MCP clients (desktop assistants, coding agents) drive the "
                            "connected phone; every acting call waits for you here.")
        self.state.setWordWrap(True)
        self.policy = QComboBox()
        for p in Policy:
            self.policy.addItem(p.value, p)
            self.policy.setItemData(self.policy.count() - 1, POLICY_WORDS[p], Qt.ItemDataRole.ToolTipRole)
        self.start = QPushButton(icon("mdi6.play-network-outline"), "Start")
        self.start.setObjectName("mcpStart")
        self.address = QLineEdit(readOnly=True, placeholderText="shown when serving")
        self.token = QLineEdit(readOnly=True, placeholderText="shown when serving")
        self.token.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        self.copy_token = button("mdi6.content-copy", "", "Copy the bearer token")
        self.config = QPlainTextEdit(readOnly=True)
        self.config.setMaximumHeight(150)
        self.config.setToolTip("Paste into your MCP client's configuration (mcpServers)")
        self.copy_config = button("mdi6.content-copy", "Copy config",
                                  "Copy the client configuration above (HTTP, with the token)")
        self.copy_stdio = button("mdi6.console", "stdio config",
                                 "Copy a configuration for a client that launches `tapwise mcp` itself "
                                 "(no window needed; approvals are asked on its terminal)")
        self.calls = QListWidget()
        self.calls.setToolTip("The clients' calls, newest first")
        self.calls.setWordWrap(True)
        self.calls.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        form = QFormLayout()
        form.addRow("Policy", self.policy)
        token_row = QHBoxLayout()
        token_row.addWidget(self.token, 1)
        token_row.addWidget(self.copy_token)
        form.addRow("Address", self.address)
        form.addRow("Token", token_row)
        buttons = QVBoxLayout()  # one under the other: the dock stays narrow (1024x700)
        buttons.addWidget(self.copy_config)
        buttons.addWidget(self.copy_stdio)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.state)
        lay.addLayout(form)
        lay.addWidget(self.start)
        lay.addWidget(self.config)
        lay.addLayout(buttons)
        lay.addWidget(QLabel("Calls"))
        lay.addWidget(self.calls, 1)
        self.set_serving(False)

    def set_serving(self, serving: bool) -> None:
        self.start.setText("Stop" if serving else "Start")
        self.start.setIcon(icon("mdi6.stop-circle-outline" if serving else "mdi6.play-network-outline"))
        self.policy.setEnabled(not serving)
        for w in (self.copy_config, self.copy_token):
            w.setEnabled(serving)
        if not serving:
            self.address.clear()
            self.token.clear()
            self.config.clear()


class McpController:
    """The MCP dock and the window side of supervision (a ``DecisionTaker``)."""

    def __init__(self, ui: Any) -> None:
        self.ui = ui
        self.panel = McpPanel()
        self.dock = QDockWidget("MCP", ui)
        self.dock.setObjectName("mcpDock")
        self.dock.setWindowIcon(icon("mdi6.robot-outline"))
        self.dock.setWidget(self.panel)
        ui.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.dock)
        self.service: Any = None
        self.http: Any = None
        self.token = ""
        self.stopping = False
        self._queue: deque[_Pending] = deque()
        self._current: _Pending | None = None
        self._demonstrating = False
        self._refresh_due = False
        p = self.panel
        p.start.clicked.connect(self.toggle)
        p.copy_config.clicked.connect(lambda: self._copy(p.config.toPlainText(), "client configuration"))
        p.copy_token.clicked.connect(lambda: self._copy(self.token, "token"))
        p.copy_stdio.clicked.connect(lambda: self._copy(as_json(stdio_config(policy=self.policy.value)),
                                                        "stdio configuration"))
        ui.view.actionDemonstrated.connect(self._on_demonstrated)

    # ---- serving ------------------------------------------------------------------------------
    @property
    def serving(self) -> bool:
        return self.http is not None

    @property
    def policy(self) -> Policy:
        return Policy(self.panel.policy.currentData())

    @property
    def url(self) -> str:
        return self.http.url if self.http is not None else ""

    def toggle(self) -> None:
        if self.serving:
            self.stop()
        else:
            self.start()

    def start(self, port: int | None = None) -> bool:
        """Serve on 127.0.0.1 (``DEFAULT_PORT`` when free, else any free port)."""
        if self.serving:
            return True
        try:
            from app.mcp.server import HttpServer, build_server
        except ModuleNotFoundError as exc:
            self.ui.notify(Level.ERROR, "The MCP server is not installed", str(exc), key="mcp")
            return False
        from app.mcp.episodes import EpisodeBook
        from app.mcp.service import PhoneService
        from app.mcp.supervisor import PolicySupervisor
        from app.mcp.tasks import task_runner

        ui = self.ui
        policy = self.policy
        device = _LiveDevice(ui)
        store = ui.store()
        phone = ui.session.device
        serial = getattr(getattr(phone, "info", None), "serial", "") if phone is not None else ""
        from app.compose import recording
        from app.mcp.recording import SessionRecords

        settings = ui.session.settings
        read: list[Any] = []  # one OCR for every client's record, loaded when the first one begins

        def record() -> Any:
            from app.run_record import streams
            from phone.record.capture import reader_beside

            if not streams(phone):
                return None
            if not read:
                read.append(reader_beside(ui.session.parser()))  # the parser's OCR models, not a second copy
            return recording(settings, phone, store, read=read[0])

        records = SessionRecords(store, record)  # when the phone streams
        book = EpisodeBook(store, device=serial or "window", on_recorded=self._recorded, on_begin=records.begin)
        self.stopping = False
        self.service = PhoneService(device, ui.parse_screen, PolicySupervisor(policy, WindowSupervisor(self)), book,
                                    store=store, task_runner=task_runner(settings, device, _WindowParser(ui),
                                                                         store, policy),
                                    busy=self._phone_busy, records=records)
        self.token = new_token()
        server = build_server(self.service)
        ports = [port] if port is not None else [DEFAULT_PORT, 0]
        error: Exception | None = None
        for candidate in ports:
            try:
                self.http = HttpServer(server, self.token, port=candidate)
                self.http.start()
                break
            except (OSError, RuntimeError) as exc:
                self.http, error = None, exc
                server = build_server(self.service)  # an SDK server runs its HTTP sessions once
        if self.http is None:
            self.service.close()
            self.service = None
            ui.notify(Level.ERROR, "Could not start the MCP server", str(error), key="mcp")
            return False
        p = self.panel
        p.set_serving(True)
        p.address.setText(self.http.url)
        p.token.setText(self.token)
        p.config.setPlainText(as_json(http_config(self.http.url, self.token)))
        p.state.setText(f"Serving on {self.http.url}: {POLICY_WORDS[policy]}. Give clients the configuration "
                        "below; their proposals appear on the approval card.")
        ui.notify(Level.INFO, f"MCP server listening on {self.http.url}", key="mcp")
        return True

    def stop(self) -> None:
        """Stop serving: a waiting proposal is answered 'stopped', episodes are finished."""
        if not self.serving:
            return
        self.stopping = True
        http, service = self.http, self.service
        self.http = self.service = None
        while self._queue:
            self._queue.popleft().done.set()
        if self._current is not None:
            self._finish_current(None)
        http.stop()
        service.close()
        self.panel.set_serving(False)
        self.panel.state.setText("Stopped. Start serves again (with a new token).")
        self.ui.episodes_panel.request_refresh()

    def shutdown(self) -> None:
        self.stop()

    def _phone_busy(self) -> str | None:
        """Why a client may not act now (asked on the server's thread; reads two flags)."""
        if self.ui.run.active:
            return "Tapwise's own agent is running a task on this phone"
        if self.ui.macros.active:
            return "a macro is being replayed on this phone"
        return None

    # ---- proposals on the card (GUI thread) ------------------------------------------------------
    def enqueue(self, pending: _Pending) -> None:
        if self.stopping:
            pending.done.set()
            return
        self._queue.append(pending)
        r = pending.review
        self.panel.calls.insertItem(0, f"{time.strftime('%H:%M:%S')} {r.client}: {r.proposal.action.describe()} "
                                       "— waiting for you")
        self._show_next()

    def _show_next(self) -> None:
        if self._current is not None or not self._queue:
            return
        owner = self.ui.decisions.owner
        if owner is not None and owner is not self:  # the agent or a macro waits on the bar
            QTimer.singleShot(BAR_POLL_MS, self._show_next)
            return
        pending = self._current = self._queue.popleft()
        ui, r = self.ui, pending.review
        ui.proposal_card.set_proposal(r.proposal, confidence=confidence_of(r.proposal))
        if ui.session.viewing.live:
            ui.view.set_proposal(r.proposal.action)
        ui.decisions.claim(self)
        ui.agent_dock.show()
        ui.agent_dock.raise_()
        why = f" — {r.reason}" if r.proposal.sensitive else ""
        ui.notify(Level.WARNING if r.proposal.sensitive else Level.INFO,
                  f"The MCP client “{r.client}” asks to {r.proposal.action.describe()}{why}", key="mcp-ask")
        ui.decision_bar.buttons[DecisionKind.APPROVE].setFocus()

    def _finish_current(self, decision: Decision | None) -> None:
        pending, self._current = self._current, None
        if pending is None:
            return
        ui = self.ui
        ui.decisions.release(self)
        ui.proposal_card.set_proposal(None)
        ui.view.set_proposal(None)
        if self._demonstrating and ui.view.mode is ViewMode.DEMONSTRATE:
            ui.view.set_mode(ViewMode.INSPECT)
        self._demonstrating = False
        pending.decision = decision
        pending.done.set()
        if decision is not None:
            self.panel.calls.insertItem(0, f"{time.strftime('%H:%M:%S')} {pending.review.client}: "
                                           f"{decision.kind.value} — {pending.review.proposal.action.describe()}")
        QTimer.singleShot(0, self._show_next)

    # the decision router calls these while this controller holds the bar
    def decide(self, decision: Decision) -> None:
        if self._current is not None:
            self._finish_current(decision)

    def edit(self) -> None:
        if self._current is None:
            return
        action = self._current.review.proposal.action
        self.ui.open_action_editor(action if action.type is not ActionType.WAIT else None,
                                   lambda a: self.decide(Decision(DecisionKind.EDIT, action=a)))

    def demonstrate(self) -> None:
        if self._current is None:
            return
        self._demonstrating = True
        self.ui.show_live()
        self.ui.view.set_mode(ViewMode.DEMONSTRATE)
        self.ui.notify(Level.INFO, "Demonstrate: do the step on the mirror (tap, hold, drag, or type and press "
                       "Enter); the client receives your step", key="mcp-demo")

    def _on_demonstrated(self, action: Action) -> None:
        if self._demonstrating and self._current is not None:
            self.decide(Decision(DecisionKind.DEMONSTRATE, action=action))

    # ---- bookkeeping ---------------------------------------------------------------------------
    def _recorded(self, _episode_id: str, _step: Step) -> None:
        """A call was stored (writer thread): refresh the Episodes list, at most twice a second."""
        if self._refresh_due:
            return
        self._refresh_due = True

        def refresh() -> None:
            self._refresh_due = False
            self.ui.episodes_panel.request_refresh()

        self.ui.session.poster.post(lambda: QTimer.singleShot(500, refresh))

    def _copy(self, text: str, what: str) -> None:
        if not text:
            return
        QGuiApplication.clipboard().setText(text)
        self.ui.notify(Level.INFO, f"Copied the {what}", key="mcp-copy")


class _WindowParser:
    """The session's parser as an object with ``parse`` (what the agent's runner expects)."""

    def __init__(self, ui: Any) -> None:
        self._ui = ui

    def parse(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        return self._ui.parse_screen(screen, *args, **kwargs)

    def ocr_backend(self) -> Any:
        """The session parser's OCR engine (a run's closer second look reads with it)."""
        return self._ui.parser().ocr_backend()
