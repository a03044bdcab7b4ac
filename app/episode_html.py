"""A stored run as one self-contained HTML page people can open and share.

``episode_html`` renders an ``Episode`` and the frames of its steps into a single page: a
header (goal, how it ended and why, planner, model, phone, duration) and a timeline with
one card per step — its frame with the acted element marked, the proposal (action,
rationale, evidence, confidence), the user's decision and reason, the latent-state rows,
the timings, the model calls and what flashed on the screen after it.  Images are PNGs
embedded as ``data:`` URIs and the style sheet is inline: the page needs no network and
no other file.  A run recorded on video gets the MP4 embedded the same way, with a marker
per step (``app.episode_video_html``: its few lines of script are the page's only ones).

``export_html`` reads the episode and its frames from the store and writes the page
atomically.  Qt-free; all user and model text is HTML-escaped, credentials in URLs are
hidden and text typed into a password field is shown as dots.
"""

from __future__ import annotations

import base64
import html
import io
import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from agent.redact import redact_url
from agent.types import Action, ActionType, Episode, EpisodeStatus, LatentState, Step
from app import episode_video_html as vid
from app.run_record import EpisodeVideo, video_of

log = logging.getLogger(__name__)

#: Frames are scaled to at most this height in the page (pixels).
FRAME_HEIGHT = 560
MARK = (230, 0, 120)

STATUS_WORDS = {
    EpisodeStatus.SUCCEEDED: "✔ succeeded", EpisodeStatus.FAILED: "✘ failed",
    EpisodeStatus.IMPOSSIBLE: "⊘ impossible", EpisodeStatus.ABORTED: "■ aborted",
    EpisodeStatus.ERROR: "⚠ error", EpisodeStatus.RUNNING: "… did not finish",
    EpisodeStatus.INTERRUPTED: "⏸ interrupted",
}

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;background:#f4f4f6;color:#1d1d1f}
header{background:#20232a;color:#fff;padding:18px 28px}
header h1{margin:0 0 6px;font-size:22px}
header .meta{color:#c9ccd3;font-size:13px}
main{padding:18px 28px;max-width:1400px}
.step{display:flex;gap:22px;background:#fff;border-radius:10px;box-shadow:0 1px 3px #0002;
 padding:16px;margin:0 0 16px;align-items:flex-start}
.step .frame{flex:0 0 auto}
.step .frame img{display:block;border:1px solid #ccc;border-radius:6px;max-height:560px}
.step .noframe{width:160px;height:120px;display:flex;align-items:center;justify-content:center;
 background:#eee;color:#777;border-radius:6px;font-size:13px}
.step .info{flex:1 1 auto;min-width:0}
.step h2{margin:0 0 8px;font-size:17px}
.badge{display:inline-block;border-radius:10px;padding:1px 9px;font-size:12px;color:#fff;margin-left:6px}
.executed,.finished{background:#2e7d32}.rejected{background:#c62828}.aborted{background:#424242}
.error{background:#e65100}.other{background:#1565c0}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
td,th{border-bottom:1px solid #e3e3e8;padding:3px 10px 3px 0;text-align:left;vertical-align:top}
th{color:#555;font-weight:600;white-space:nowrap}
.label{color:#555;font-weight:600}
.err{color:#b71c1c}
details{font-size:13px;margin:4px 0}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f8;padding:8px;border-radius:6px;max-height:320px;
 overflow:auto}
footer{color:#777;font-size:12px;padding:0 28px 24px}
"""


def _e(text: object) -> str:
    return html.escape(redact_url(str(text)), quote=True)


def _said(action: Action, step: Step) -> str:
    """The action in words, with text typed into a password field hidden."""
    if action.type is ActionType.TYPE and action.text and _into_password(action, step):
        action = replace(action, text="•" * 8)
    return _e(action.describe())


def _into_password(action: Action, step: Step) -> bool:
    parse = step.parse
    if parse is None:
        return False
    element_id = action.target.element_id if action.target is not None else None
    el = parse.element(element_id) if element_id else None
    if el is None:  # typed into the focused field
        el = next((e for e in parse.elements if e.focused), None)
    return bool(el is not None and el.password)


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else ""


def acted_action(step: Step) -> Action | None:
    """What the step did (or was asked to do): the executed action, else the proposal's."""
    if step.executed is not None:
        return step.executed
    if step.decision is not None and step.decision.action is not None:
        return step.decision.action
    return step.proposal.action if step.proposal is not None else None


def marked_frame(image: np.ndarray, step: Step, max_height: int = FRAME_HEIGHT) -> bytes:
    """The step's frame as PNG, scaled to ``max_height``, with the acted element boxed and
    the touch point (and a swipe's path) drawn on it."""
    img = Image.fromarray(np.ascontiguousarray(image[..., :3])).convert("RGB")
    scale = min(1.0, max_height / img.height)
    if scale < 1.0:
        img = img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))))
    draw = ImageDraw.Draw(img)
    action = acted_action(step)
    width = max(2, round(4 * scale * 2))
    if action is not None:
        element_id = action.target.element_id if action.target is not None else None
        el = step.parse.element(element_id) if element_id and step.parse is not None else None
        if el is not None:
            r = el.rect
            draw.rectangle([r.left * scale, r.top * scale, r.right * scale, r.bottom * scale], outline=MARK,
                           width=width)
        touch = action.touch or (action.target.point if action.target is not None else None)
        if touch is not None:
            x, y, rad = touch.x * scale, touch.y * scale, max(6, round(28 * scale))
            draw.ellipse([x - rad, y - rad, x + rad, y + rad], outline=MARK, width=width)
            if action.type is ActionType.SWIPE and action.lift is not None:
                draw.line([x, y, action.lift.x * scale, action.lift.y * scale], fill=MARK, width=width)
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _rows(pairs: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in pairs if v)
    return f"<table>{body}</table>" if body else ""


def _latent_rows(latent: LatentState | None) -> str:
    if latent is None:
        return ""
    pairs = [("performed action", _e(latent.performed_action)), ("screen", _e(latent.screen_summary)),
             ("progress", _e(latent.progression)), ("mistakes", _e(latent.mistakes)),
             ("complete", "" if latent.completion is None else ("yes" if latent.completion else "no")
              + (f" — {_e(latent.completion_reason)}" if latent.completion_reason else "")),
             ("confidence", "" if latent.confidence is None else f"{latent.confidence:.2f}")]
    table = _rows(pairs)
    return f'<div class="label">Latent state</div>{table}' if table else ""


def _step_card(step: Step, frame: bytes | None, video: EpisodeVideo | None = None) -> str:
    outcome = step.outcome.value
    badge = outcome if outcome in ("executed", "finished", "rejected", "aborted", "error") else "other"
    action = acted_action(step)
    title = f"Step {step.index + 1}" + (f": {_said(action, step)}" if action is not None else "")
    pic = (f'<img alt="frame of step {step.index + 1}" src="{_data_uri(frame)}">' if frame is not None
           else '<div class="noframe">no frame stored</div>')
    parts = [f'<h2>{title}<span class="badge {badge}">{_e(outcome)}</span>{vid.play_link(step, video)}</h2>',
             vid.flashes_block(step)]
    p = step.proposal
    if p is not None:
        parts.append('<div class="label">Proposal</div>' + _rows([
            ("action", _said(p.action, step)), ("planner", _e(p.planner)), ("why", _e(p.rationale)),
            ("evidence", "<br>".join(_e(x) for x in p.evidence)),
            ("confidence", "" if p.confidence is None else f"{p.confidence:.2f}"),
            ("sensitive", "yes" if p.sensitive else ""),
        ]))
    d = step.decision
    if d is not None:
        parts.append('<div class="label">Decision</div>' + _rows([
            ("decision", _e(d.kind.value)), ("by", _e(d.decided_by)), ("reason", _e(d.feedback)),
            ("user's action", _said(d.action, step) if d.action is not None else ""),
        ]))
    if step.executed is not None:
        parts.append(_rows([("done on the phone", _said(step.executed, step)),
                            ("app in front", _e(step.foreground_package or ""))]))
    if step.error:
        parts.append(f'<p class="err">Error: {_e(step.error)}</p>')
    parts.append(_latent_rows(p.latent if p is not None else None))
    if step.timings_ms:
        total = sum(ms for _, ms in step.timings_ms)
        parts.append('<div class="label">Timings</div>' + _rows(
            [(name, f"{ms:.0f} ms") for name, ms in step.timings_ms] + [("sum", f"{total:.0f} ms")]))
    if p is not None and p.llm_calls:
        calls = "".join(
            f"<details><summary>{_e(c.purpose)} · {_e(c.model)} · {c.latency_ms:.0f} ms"
            f"{' · error' if c.error else ''}</summary><div class='label'>Prompt</div><pre>{_e(c.prompt)}</pre>"
            f"<div class='label'>Reply</div><pre>{_e(c.reply or c.error or '')}</pre></details>"
            for c in p.llm_calls)
        parts.append(f'<div class="label">Model calls</div>{calls}')
    return (f'<section class="step" id="step-{step.index + 1}" data-step="{step.index}">'
            f'<div class="frame">{pic}</div><div class="info">{"".join(parts)}</div></section>')


def episode_html(episode: Episode, frames: Mapping[int, np.ndarray], *, max_height: int = FRAME_HEIGHT,
                 video: tuple[EpisodeVideo, bytes] | None = None) -> str:
    """The page for ``episode``; ``frames`` maps a step's index to its frame (RGB array),
    ``video`` is the run's recording and its MP4's bytes."""
    status = STATUS_WORDS.get(episode.status, episode.status.value)
    took = (f"{episode.finished_at - episode.started_at:.1f} s"
            if episode.finished_at and episode.started_at else "")
    meta = " · ".join(x for x in (
        f"{len(episode.steps)} step{'s' if len(episode.steps) != 1 else ''}",
        f"planner {_e(episode.planner)}" if episode.planner else "",
        f"model {_e(episode.model)}" if episode.model else "",
        f"phone {_e(episode.device)}" if episode.device else "",
        f"started {_when(episode.started_at)}", f"took {took}" if took else "",
    ) if x)
    cards = []
    for step in episode.steps:
        image = frames.get(step.index)
        png = marked_frame(image, step, max_height) if image is not None else None
        cards.append(_step_card(step, png, video[0] if video is not None else None))
    note = f": {_e(episode.note)}" if episode.note else ""
    said = {s.index: _said(a, s) for s in episode.steps if (a := acted_action(s)) is not None}
    section = vid.video_section(episode, video[0], video[1], said) if video is not None else ""
    script = f"<script>{vid.SCRIPT}</script>" if video is not None else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{vid.csp(video is not None)}\">"
        f"<title>{_e(episode.goal)} — Tapwise run</title><style>{_CSS}{vid.CSS}</style></head><body>"
        f"<header><h1>{_e(episode.goal)}</h1><div class=\"status\">{_e(status)}{note}</div>"
        f"<div class=\"meta\">{meta}</div></header>"
        f"<main>{section}{''.join(cards) or '<p>This run has no steps.</p>'}</main>"
        f"<footer>Exported from Tapwise on {_when(time.time())} · run {_e(episode.id)}</footer>"
        f"{script}</body></html>\n"
    )


def export_html(store: Any, episode_id: str, path: Path) -> Path:
    """Write the stored episode ``episode_id`` as one HTML page at ``path`` (atomically).

    A frame that cannot be read leaves its step without a picture (logged), never the
    page without the step."""
    episode = store.load_episode(episode_id)
    frames: dict[int, np.ndarray] = {}
    for step in episode.steps:
        if step.screenshot is None:
            continue
        try:
            frames[step.index] = store.load_screenshot(step.screenshot).image
        except Exception as exc:  # one unreadable frame must not lose the rest of the run
            log.warning("step %d of %s: frame not readable: %s", step.index + 1, episode_id, exc)
    recorded = video_of(store, episode)
    video = None
    if recorded is not None:
        try:
            video = (recorded, recorded.path.read_bytes())
        except OSError as exc:  # the page is still worth having without its video
            log.warning("the video of %s is not readable: %s", episode_id, exc)
    page = episode_html(episode, frames, video=video)
    path = Path(path)
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(path)
    return path
