"""Sharing a run: a stored episode exported as one self-contained HTML page, opened in a
real headless Chromium with the network switched off."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from agent.events import AwaitingDecision
from agent.planners.base import PlanContext
from agent.runner import run_episode
from agent.types import (
    Action,
    Decision,
    DecisionKind,
    EpisodeStatus,
    LatentState,
    Proposal,
    StepOutcome,
    Target,
)
from app.episode_html import MARK, episode_html, export_html
from app.storage import Store
from tests.macros.fakephone import FakePhone
from tests.share.headless_chromium import Chromium, chromium_binary

CHROMIUM = chromium_binary()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="needs a real browser: install Debian's chromium (apt-get install -y chromium)")


class _Planner:
    """Proposes the tab, a wrong button, the add button, then done; with a latent estimate."""

    name = "script"
    uses_latent = False

    def __init__(self, phone: FakePhone) -> None:
        self.plan = [("tab_alarm", "open the alarms"), ("tab_timer", "maybe the timer?"), ("add", "add one")]
        self.phone = phone

    def propose(self, ctx: PlanContext) -> Proposal:
        latent = LatentState(performed_action="tapped" if ctx.history else "", screen_summary="a clock app <b>",
                             progression=f"{len(ctx.history)} of 2 done", completion=False, confidence=0.7)
        if not self.plan:
            return Proposal(Action.simple("complete"), rationale="the alarm form is open", planner=self.name,
                            latent=latent)
        what, why = self.plan.pop(0)
        el = next(e for e in ctx.parse.elements if e.id.split("#")[0] == what)
        return Proposal(Action.tap(el.rect.center.x, el.rect.center.y, Target(element_id=el.id)), rationale=why,
                        planner=self.name, latent=latent, evidence=("scripted",))


def stored_run(store: Store) -> str:
    """A run with an approved, a rejected (with a reason) and an edited step, then done."""
    phone = FakePhone()
    run = run_episode("make a new alarm", phone, phone.parser, _Planner(phone), store)
    answers = iter([lambda: Decision(DecisionKind.APPROVE),
                    lambda: Decision(DecisionKind.REJECT, feedback="not the timer, the add button"),
                    lambda: Decision(DecisionKind.EDIT, action=Action.tap(*phone.center_of("add"))),
                    lambda: Decision(DecisionKind.APPROVE)])
    event = next(run)
    try:
        while True:
            event = run.send(next(answers)() if isinstance(event, AwaitingDecision) else None)
    except StopIteration as stop:
        episode = stop.value
    assert episode.status is EpisodeStatus.SUCCEEDED
    return episode.id


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "runs.sqlite")
    yield s
    s.close()


def _png_of(src: str) -> np.ndarray:
    assert src.startswith("data:image/png;base64,")
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1]))).convert("RGB"))


def test_the_page_holds_every_step_with_its_frame_marked_and_the_users_words(store, tmp_path):
    episode_id = stored_run(store)
    episode = store.load_episode(episode_id)
    path = export_html(store, episode_id, tmp_path / "run.html")
    page = path.read_text(encoding="utf-8")
    assert page.count('<section class="step"') == len(episode.steps) == 4
    assert "not the timer, the add button" in page  # the user's reason for the rejection
    assert "rejected" in page and "edit" in page and "Latent state" in page
    assert "a clock app &lt;b&gt;" in page  # model text is escaped, never markup
    assert "http://" not in page and "https://" not in page and "<script" not in page
    # the acted element is marked on the frame of the approved step
    first = page.split('<section class="step"')[1]
    src = first.split('src="', 1)[1].split('"', 1)[0]
    frame = _png_of(src)
    marked = np.all(frame == np.array(MARK, np.uint8), axis=-1)
    assert marked.sum() > 50
    assert episode.steps[1].outcome is StepOutcome.REJECTED


def test_a_frame_that_cannot_be_read_leaves_the_step_in_the_page(store, tmp_path):
    episode_id = stored_run(store)
    episode = store.load_episode(episode_id)
    lost = store.media_dir / episode.steps[0].screenshot.path
    lost.unlink()
    page = export_html(store, episode_id, tmp_path / "run.html").read_text(encoding="utf-8")
    assert page.count('<section class="step"') == 4 and "no frame stored" in page


def test_an_episode_without_steps_is_still_a_page():
    from agent.types import Episode

    page = episode_html(Episode(goal="nothing <done>"), {})
    assert "This run has no steps" in page and "nothing &lt;done&gt;" in page


def test_tapwise_episodes_export_writes_the_page(tmp_path):
    from typer.testing import CliRunner

    from app.cli import app
    from app.settings import load_settings

    settings, _ = load_settings()  # the test's own data folder (tests/conftest.py)
    settings.database_path.parent.mkdir(parents=True, exist_ok=True)
    with Store(settings.database_path) as s:
        episode_id = stored_run(s)
    out = tmp_path / "shared.html"
    result = CliRunner().invoke(app, ["episodes", "export", episode_id, "--html", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").count('<section class="step"') == 4
    missing = CliRunner().invoke(app, ["episodes", "export", "no-such-run", "--html", "-o", str(tmp_path / "x.html")])
    assert missing.exit_code == 2 and "No stored run" in missing.output
    assert not (tmp_path / "x.html").exists()


@needs_chromium
def test_chromium_opens_the_page_offline_shows_every_step_and_decodes_every_image(store, tmp_path):
    episode_id = stored_run(store)
    episode = store.load_episode(episode_id)
    path = export_html(store, episode_id, tmp_path / "run.html")
    assert CHROMIUM is not None
    browser = Chromium(CHROMIUM)
    try:
        browser.open(path)
        steps = browser.evaluate("document.querySelectorAll('section.step').length")
        images = browser.evaluate(
            "Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight])")
        shown = browser.evaluate(
            "Array.from(document.querySelectorAll('section.step')).map(s => s.getBoundingClientRect().height > 0)")
        text = browser.evaluate("document.body.innerText")
        elsewhere = [u for u in browser.requested_urls() if not u.startswith(("file:", "data:"))]
        shots = os.environ.get("TAPWISE_SHOTS_DIR")
        if shots:  # docs/screenshots, when asked for
            for w, h in ((1600, 1000), (1024, 700)):
                browser.screenshot(Path(shots) / f"{w}x{h}-exported-run.png", w, h)
    finally:
        browser.close()
    assert steps == len(episode.steps) == 4 and all(shown)
    frames = sum(1 for s in episode.steps if s.screenshot is not None)
    assert len(images) == frames and frames >= 3
    assert all(ok and w > 0 and h > 0 for ok, w, h in images), images
    assert elsewhere == []  # nothing but the file itself and its embedded images
    assert "not the timer, the add button" in text and "make a new alarm" in text


def test_text_typed_into_a_password_field_and_credentials_in_urls_stay_out_of_the_page():
    from agent.types import Episode, Step
    from vision.geometry import Rect, Size
    from vision.types import Element, ElementKind, ScreenParse

    field = Element(id="pw", kind=ElementKind.EDIT_TEXT, rect=Rect(10, 10, 200, 60), password=True, focused=True)
    parse = ScreenParse(Size(400, 800), (field,))
    typed = Action.type_text("hunter2-secret")
    step = Step(0, parse=parse, proposal=Proposal(typed, rationale="log in at https://bob:KEY123@example.org"),
                executed=typed)
    page = episode_html(Episode(goal="log in", steps=(step,)), {0: np.zeros((800, 400, 3), np.uint8)})
    assert "hunter2-secret" not in page and "••••••••" in page
    assert "KEY123" not in page and "https://***@example.org" in page
