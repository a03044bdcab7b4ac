"""The video part of an exported run: the MP4 embedded in the page, with its steps marked.

``video_section`` renders the run's video (``app.run_record.EpisodeVideo``) as a
``<video>`` whose source is a ``data:`` URI (the page stays one self-contained file), a
captions track (WebVTT, also a ``data:`` URI) that names the step under way and what
flashed on the screen, a bar with one marker per step at its place in the video, and a
list of the steps with their times.  A marker, a list entry or a step card's "play from
here" link moves the video there: that is the page's only script, a few lines allowed by
their hash in the page's Content-Security-Policy (``SCRIPT_HASH``); it reads nothing and
loads nothing.  Qt-free; all text is HTML-escaped (and WebVTT-escaped in the track).
"""

from __future__ import annotations

import base64
import hashlib
import html

from agent.types import Episode, Step
from app.run_record import EpisodeVideo

#: Moves the video to a marker's time (``data-t``, seconds) and plays it; marks the step.
SCRIPT = ("document.querySelectorAll('[data-t]').forEach(function(el){el.addEventListener('click',function(ev){"
          "var v=document.getElementById('run-video');if(!v){return;}ev.preventDefault();"
          "v.currentTime=parseFloat(el.getAttribute('data-t'));v.play().catch(function(){});"
          "document.querySelectorAll('.marker.on').forEach(function(m){m.classList.remove('on');});"
          "var m=document.querySelector('.marker[data-step=\"'+el.getAttribute('data-step')+'\"]');"
          "if(m){m.classList.add('on');}});});")
SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")

CSS = """
.video{background:#fff;border-radius:10px;box-shadow:0 1px 3px #0002;padding:16px;margin:0 0 16px;display:flex;
 gap:22px;align-items:flex-start}
.video video{max-height:560px;max-width:100%;background:#000;border-radius:6px}
.video .side{flex:1 1 auto;min-width:0}
.markers{position:relative;height:26px;background:#eceef3;border-radius:6px;margin:8px 0 12px}
.marker{position:absolute;top:3px;transform:translateX(-50%);border:0;border-radius:9px;background:#1565c0;
 color:#fff;font-size:11px;min-width:18px;height:20px;padding:0 5px;cursor:pointer}
.marker.flash{background:#e65100}.marker.on{outline:2px solid #e00078}
.chapters{margin:0;padding-left:20px;font-size:13px}.chapters li{margin:2px 0}
.flashes{background:#fff4e5;border-left:3px solid #e65100;padding:4px 10px;margin:6px 0 10px;font-size:13px}
.play{font-size:13px;margin-left:8px}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def clock(seconds: float) -> str:
    """``1:02.5``"""
    seconds = max(0.0, seconds)
    return f"{int(seconds // 60)}:{seconds % 60:04.1f}"


def _vtt_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("-->", "→")


def captions(episode: Episode, video: EpisodeVideo, said: dict[int, str]) -> str:
    """A WebVTT track: the step under way, and what flashed while it was on the screen."""
    cues: list[tuple[float, float, str]] = []
    steps = sorted(episode.steps, key=lambda s: s.index)
    end = video.duration_s or max((video.at(s) for s in steps), default=0.0) + 5.0
    for i, step in enumerate(steps):
        start = video.at(step)
        stop = video.at(steps[i + 1]) if i + 1 < len(steps) else end
        cues.append((start, max(start + 0.5, stop), f"Step {step.index + 1}: {said.get(step.index, '')}".strip(": ")))
        for t in step.transients:
            a = max(0.0, t.first_seen - video.started_at)
            cues.append((a, max(a + 0.5, t.last_seen - video.started_at), f"flashed: “{t.text}”"))
    lines = ["WEBVTT", ""]
    for n, (a, b, text) in enumerate(sorted(cues), 1):
        lines += [str(n), f"{_stamp(a)} --> {_stamp(b)}", _vtt_text(text), ""]
    return "\n".join(lines)


def _stamp(seconds: float) -> str:
    ms = round(max(0.0, seconds) * 1000)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def video_section(episode: Episode, video: EpisodeVideo, mp4: bytes, said: dict[int, str]) -> str:
    """The embedded video with a marker per step and the list of steps; ``said`` maps a
    step's index to its action in words (already escaped for HTML)."""
    duration = video.duration_s or max((video.at(s) for s in episode.steps), default=0.0) + 1.0
    track = base64.b64encode(captions(episode, video, _plain(said)).encode("utf-8")).decode("ascii")
    markers, chapters = [], []
    for step in sorted(episode.steps, key=lambda s: s.index):
        t = video.at(step)
        left = 100.0 * min(1.0, t / duration) if duration > 0 else 0.0
        kind = " flash" if step.transients else ""
        title = f"Step {step.index + 1} at {clock(t)}"
        markers.append(f'<button class="marker{kind}" data-t="{t:.2f}" data-step="{step.index}" style="left:{left:.2f}%"'
                       f' title="{_e(title)}">{step.index + 1}</button>')
        flashed = "".join(f" — flashed “{_e(x.text)}”" for x in step.transients)
        chapters.append(f'<li><a href="#step-{step.index + 1}" data-t="{t:.2f}" data-step="{step.index}">'
                        f"{clock(t)}</a> Step {step.index + 1}: {said.get(step.index, '')}{flashed}</li>")
    note = f"<p class=\"err\">The recording stopped early: {_e(video.stopped)}</p>" if video.stopped else ""
    return (
        '<section class="video" id="video"><div><video id="run-video" controls preload="metadata" '
        f'data-steps="{len(episode.steps)}" src="data:video/mp4;base64,{base64.b64encode(mp4).decode("ascii")}">'
        f'<track kind="captions" label="Steps" srclang="en" default src="data:text/vtt;base64,{track}"></video></div>'
        f'<div class="side"><div class="label">The run on video ({clock(duration)}): a marker per step'
        f"{' (orange: something flashed)' if any(s.transients for s in episode.steps) else ''}</div>"
        f'<div class="markers">{"".join(markers)}</div>{note}<ol class="chapters">{"".join(chapters)}</ol></div>'
        "</section>")


def flashes_block(step: Step) -> str:
    """What flashed on the screen after the step's action, for its card."""
    if not step.transients:
        return ""
    items = "; ".join(f"“{_e(t.text)}” (seen {t.seconds:.1f} s)" for t in step.transients)
    return f'<div class="flashes"><span class="label">Flashed on the screen:</span> {items}</div>'


def play_link(step: Step, video: EpisodeVideo | None) -> str:
    if video is None:
        return ""
    t = video.at(step)
    return f' <a class="play" href="#video" data-t="{t:.2f}" data-step="{step.index}">▶ {clock(t)}</a>'


def _plain(said: dict[int, str]) -> dict[int, str]:
    return {k: html.unescape(v) for k, v in said.items()}


def csp(with_video: bool) -> str:
    """The page's Content-Security-Policy: images (and with a video, media and the one
    script) from the page itself only."""
    base = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    return base + (f"; media-src data:; script-src '{SCRIPT_HASH}'" if with_video else "")
