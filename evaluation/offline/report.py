"""The offline benchmark's report: ``offline.md`` and a self-contained ``offline.html``.

The online report's Table 3 columns (stop verdicts, checkpoints) do not fit step-by-step
scoring, so this report holds the offline figures (``evaluation.offline.summary``), the
run's settings, the recordings that could not be read, and per task which steps went
wrong; it shares the online report's Markdown-to-HTML rendering and style.  Writes files
only under the folder it is given.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluation.metrics import EpisodeResult
from evaluation.offline.summary import markdown
from evaluation.report import html_page, markdown_to_html


def _wrong_steps(results: Sequence[EpisodeResult], limit: int = 200) -> list[str]:
    lines = []
    for r in sorted(results, key=lambda r: (r.task_id, r.planner)):
        for x in r.step_records:
            if not x.get("correct"):
                pred = x.get("pred") or f"(none: {x.get('error') or 'no action'})"
                lines.append(f"- {r.planner} · `{r.task_id}` step {int(x.get('step', 0)) + 1}: "
                             f"{x.get('kind')} — recorded `{x.get('gold')}`, proposed `{pred}`")
    if len(lines) > limit:
        lines = [*lines[:limit], f"- … and {len(lines) - limit} more"]
    return lines


def render(results: Sequence[EpisodeResult], settings: dict[str, Any], problems: Sequence[tuple[str, str]] = (),
           title: str = "Tapwise offline benchmark") -> str:
    meta = "; ".join(f"{k}: {v}" for k, v in sorted(settings.items()) if v not in (None, "", []))
    lines = [f"# {title}", "", f"Settings: {meta}", "",
             f"Generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {len(results)} task cells.", "",
             markdown(results, "Figures"), "## Wrong steps", ""]
    lines += _wrong_steps(results) or ["_None._"]
    errs = [r for r in results if r.error]
    if problems or errs:
        lines += ["", "## Problems", ""]
        lines += [f"- `{src}`: {msg}" for src, msg in problems]
        lines += [f"- {r.planner} · {r.task_id}: {r.error}" for r in errs]
    return "\n".join(lines) + "\n"


def write(folder: str | Path, results: Sequence[EpisodeResult], settings: dict[str, Any],
          problems: Sequence[tuple[str, str]] = (), title: str = "Tapwise offline benchmark") -> tuple[Path, Path]:
    """Write ``offline.md`` and ``offline.html`` into ``folder`` (created if needed)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    md = render(results, settings, problems, title)
    md_path, html_path = out / "offline.md", out / "offline.html"
    md_path.write_text(md, encoding="utf-8")
    html_path.write_text(html_page(title, markdown_to_html(md)), encoding="utf-8")
    return md_path, html_path
