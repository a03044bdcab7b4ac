"""Benchmark reports: a Markdown file and a self-contained HTML file (figures embedded
as base64 PNG) written into a folder the caller names.

Figures: task success per planner with 95% Wilson intervals, a histogram of episode
lengths per planner, and the mean wall time per step broken down by stage.  The
Markdown report links the same figures as PNG files beside it.  matplotlib is imported
lazily (Agg backend, no display needed).  This module writes files only under the
folder it is given.
"""

from __future__ import annotations

import base64
import html
import io
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.metrics import (
    EpisodeResult,
    PlannerSummary,
    attempts_per_cell,
    compare,
    latent_pairs,
    pass_at_k,
    summarise,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReportInput:
    title: str
    results: Sequence[EpisodeResult]
    settings: dict[str, Any] = field(default_factory=dict)
    problems: Sequence[tuple[str, str]] = ()
    extra_sections: Sequence[tuple[str, str]] = ()
    """(heading, Markdown body) pairs appended to the report (e.g. latent-state scores)."""


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def _ci(iv: Any) -> str:
    return f"{100 * iv.estimate:.1f} [{100 * iv.low:.0f}–{100 * iv.high:.0f}]"


def table3(summaries: dict[str, PlannerSummary]) -> str:
    """Markdown table with Table 3's four columns plus cost per step (and the AITW step
    match against the reference solutions when it was computed)."""
    with_aitw = any(s.aitw_match is not None for s in summaries.values())
    head = (
        "| planner | episodes | task success % [95% CI] | partial completion % [95% CI] | "
        "success, strict stop % | premature stop % | steps | LLM calls/step | tokens/step | s/step |"
        + (" AITW step match vs reference % |" if with_aitw else "")
        + "\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if with_aitw else "") + "\n"
    )
    rows = []
    for s in summaries.values():
        errs = f" ({s.errors} errors)" if s.errors else ""
        rows.append(
            f"| {s.planner} | {s.n}{errs} | {_ci(s.success)} | {_ci(s.partial)} | "
            f"{_pct(s.strict_success.estimate)} | {_pct(s.premature_stop.estimate)} | {s.mean_steps:.1f} | "
            f"{s.llm_calls_per_step:.2f} | {s.tokens_per_step:.0f} | {s.wall_s_per_step:.2f} |"
            + (f" {_pct(s.aitw_match)} |" if with_aitw else "")
        )
    return head + "\n".join(rows) + "\n"


def pass_at_k_table(results: Sequence[EpisodeResult]) -> str:
    """pass@1 and pass@k per planner (k = the most seeds a cell has; pass@3 too when a
    cell has more than three).  Empty when every cell ran once."""
    n = attempts_per_cell(results)
    if n < 2:
        return ""
    ks = sorted({1, min(3, n), n})
    table = {k: pass_at_k(results, k) for k in ks}
    head = "| planner | " + " | ".join(f"pass@{k} %" for k in ks) + " |\n|---|" + "---:|" * len(ks) + "\n"
    rows = [
        f"| {p} | " + " | ".join(_pct(table[k].get(p)) for k in ks) + " |"
        for p in table[1]
    ]
    return head + "\n".join(rows) + "\n"


def comparisons_table(results: Sequence[EpisodeResult], planners: Sequence[str], seed: int = 0) -> str:
    pairs = latent_pairs(planners)
    if not pairs:
        return "_No planner pairs to compare (name planners `x+`/`x-`, or run exactly two)._\n"
    lines = [
        "| comparison | pairs | measure | Δ (first − second) | p (two-sided paired permutation) |",
        "|---|---:|---|---:|---:|",
    ]
    for a, b in pairs:
        c = compare(results, a, b, seed=seed)
        if c is None:
            lines.append(f"| {a} vs {b} | 0 | – | – | – |")
            continue
        for name, t in c.tests.items():
            how = "exact" if t.exact else f"MC {t.resamples}"
            lines.append(
                f"| {a} vs {b} | {c.pairs} | {name.replace('_', ' ')} | {100 * t.mean_diff:+.1f} pts | "
                f"{t.p_value:.4f} ({how}) |"
            )
    return "\n".join(lines) + "\n"


def per_task_table(results: Sequence[EpisodeResult]) -> str:
    planners = sorted({r.planner for r in results})
    tasks = sorted({r.task_id for r in results})
    cells: dict[tuple[str, str], list[EpisodeResult]] = {}
    for r in results:
        cells.setdefault((r.task_id, r.planner), []).append(r)
    lines = ["| task | " + " | ".join(planners) + " |", "|---|" + "---:|" * len(planners)]
    for t in tasks:
        row = []
        for p in planners:
            rs = cells.get((t, p), [])
            if not rs:
                row.append("–")
                continue
            ok = sum(r.success for r in rs)
            err = sum(r.error is not None for r in rs)
            row.append(f"{ok}/{len(rs)}" + (f" ({err} err)" if err else "") + f" · {sum(r.partial for r in rs) / len(rs):.2f}")
        lines.append(f"| {t} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def stop_table(results: Sequence[EpisodeResult]) -> str:
    verdicts = ("right_time", "extra_steps", "premature", "did_not_stop")
    planners = sorted({r.planner for r in results})
    lines = ["| planner | " + " | ".join(v.replace("_", " ") for v in verdicts) + " |", "|---|" + "---:|" * len(verdicts)]
    for p in planners:
        rs = [r for r in results if r.planner == p]
        lines.append(f"| {p} | " + " | ".join(str(sum(r.stop_verdict == v for r in rs)) for v in verdicts) + " |")
    return "\n".join(lines) + "\n"


# ---- figures -------------------------------------------------------------------------


def _figures(summaries: dict[str, PlannerSummary], results: Sequence[EpisodeResult], label: str) -> dict[str, bytes]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out: dict[str, bytes] = {}
    planners = list(summaries)

    def png(fig: Any) -> bytes:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        return buf.getvalue()

    # Success per planner with Wilson intervals.
    fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * len(planners) + 2), 3.4))
    est = [100 * summaries[p].success.estimate for p in planners]
    lo = [max(0.0, 100 * (summaries[p].success.estimate - summaries[p].success.low)) for p in planners]
    hi = [max(0.0, 100 * (summaries[p].success.high - summaries[p].success.estimate)) for p in planners]
    part = [100 * summaries[p].partial.estimate for p in planners]
    xs = range(len(planners))
    ax.bar([x - 0.2 for x in xs], est, width=0.4, yerr=[lo, hi], capsize=4, label="task success", color="#3b7dd8")
    ax.bar([x + 0.2 for x in xs], part, width=0.4, label="partial completion", color="#9cc3f0")
    ax.set_xticks(list(xs), planners, rotation=15)
    ax.set_ylim(0, 105)
    ax.set_ylabel("% of episodes")
    ax.set_title(f"Success per planner (95% Wilson CI) — {label}", fontsize=9)
    ax.legend(fontsize=8)
    out["success.png"] = png(fig)

    # Steps histogram.
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    max_steps = max([r.steps for r in results] + [1])
    bins = list(range(0, max_steps + 2))
    for p in planners:
        ax.hist([r.steps for r in results if r.planner == p], bins=bins, alpha=0.55, label=p)
    ax.set_xlabel("steps per episode")
    ax.set_ylabel("episodes")
    ax.set_title(f"Episode length — {label}", fontsize=9)
    ax.legend(fontsize=8)
    out["steps.png"] = png(fig)

    # Latency breakdown per stage.
    stages = sorted({k for s in summaries.values() for k in s.stage_ms_per_step})
    fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * len(planners) + 2), 3.4))
    bottom = [0.0] * len(planners)
    for st in stages:
        vals = [summaries[p].stage_ms_per_step.get(st, 0.0) / 1000 for p in planners]
        ax.bar(list(xs), vals, bottom=bottom, label=st)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    other = [max(0.0, summaries[p].wall_s_per_step - bottom[i]) for i, p in enumerate(planners)]
    ax.bar(list(xs), other, bottom=bottom, label="other", color="#cccccc")
    ax.set_xticks(list(xs), planners, rotation=15)
    ax.set_ylabel("seconds per step")
    ax.set_title(f"Wall time per step by stage — {label}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    out["latency.png"] = png(fig)
    return out


# ---- writing -------------------------------------------------------------------------


def _header(inp: ReportInput) -> list[str]:
    s = inp.settings
    label = str(s.get("model") or "unknown model")
    lines = [f"# {inp.title}", ""]
    lines.append(f"Model: **{label}**" + (f" via {s.get('backend')} at {s.get('base_url')}" if s.get("base_url") else ""))
    meta = [f"{k}: {v}" for k, v in sorted(s.items()) if k not in ("model", "base_url", "backend") and v not in (None, "", [])]
    if meta:
        lines.append("")
        lines.append("Settings: " + "; ".join(meta))
    lines.append(f"\nGenerated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {len(inp.results)} episodes.\n")
    return lines


def _results_sections(inp: ReportInput, figure_names: Sequence[str]) -> list[str]:
    summaries = summarise(inp.results)
    lines = ["## Per planner (Table 3 measures)", "", table3(summaries)]
    lines += [
        "Task success: the task's success condition holds at the end. Partial completion: share of the "
        "task's checkpoints reached (1 on success). Strict stop: success and `complete` declared right after "
        "the action that achieved it. Premature stop: `complete`/`impossible` declared while not done. "
        + (
            "AITW step match: the episode's actions scored step by step against the task's reference solution "
            "with the Android-in-the-Wild rule (offline-style, so a different but valid path scores low). "
            if any(r.aitw_match is not None for r in inp.results) else ""
        )
        + "Episodes that crashed count as failures.",
        "",
    ]
    passk = pass_at_k_table(inp.results)
    if passk:
        lines += [
            "## pass@k (attempts are a task's seeds)",
            "",
            passk,
            "pass@1: mean success over a task's seeds. pass@k: the chance that at least one of k attempts "
            "succeeds (unbiased estimate from all seeds run). Many published phone-agent figures are pass@3.",
            "",
        ]
    lines += [
        "## Paired comparisons", "", comparisons_table(inp.results, list(summaries)),
        "## How episodes ended", "", stop_table(inp.results),
        "## Per task (successes / episodes · mean partial completion)", "", per_task_table(inp.results),
    ]
    if figure_names:
        lines += ["## Figures", ""] + [f"![{n}]({n})" for n in figure_names] + [""]
    return lines


def _problems(inp: ReportInput) -> list[str]:
    errs = [r for r in inp.results if r.error]
    if not (inp.problems or errs):
        return []
    lines = ["## Problems", ""]
    lines += [f"- `{src}`: {msg}" for src, msg in inp.problems]
    lines += [f"- {r.planner} · {r.task_id} · seed {r.seed}: {r.error}" for r in errs[:50]]
    if len(errs) > 50:
        lines.append(f"- … and {len(errs) - 50} more errored episodes")
    lines.append("")
    return lines


def render_markdown(inp: ReportInput, figure_names: Sequence[str] = ()) -> str:
    """The report as Markdown: header, the measures per planner, comparisons, extra sections, problems."""
    lines = _header(inp)
    lines += _results_sections(inp, figure_names) if inp.results else ["_No results yet._\n"]
    for heading, body in inp.extra_sections:
        lines += [f"## {heading}", "", body, ""]
    return "\n".join(lines + _problems(inp))


def markdown_to_html(md: str) -> str:
    """Enough Markdown for this report: headings, tables, lists, images, bold, code."""
    import re

    out: list[str] = []
    in_table = False
    in_list = False

    def inline(text: str) -> str:
        t = html.escape(text)
        t = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", t)
        t = re.sub(r"`(.+?)`", r"<code>\1</code>", t)
        t = re.sub(r"(?<![\w*])_(.+?)_(?![\w*])", r"<i>\1</i>", t)
        return t

    for line in md.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if all(set(c) <= set("-:") and c for c in cells):
                continue
            if not in_table:
                out.append("<table>")
                out.append("<tr>" + "".join(f"<th>{inline(c)}</th>" for c in cells) + "</tr>")
                in_table = True
            else:
                out.append("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in cells) + "</tr>")
            continue
        if in_table:
            out.append("</table>")
            in_table = False
        if line.startswith("- "):
            if not in_list:
                out.append("<ul>")
                in_list = True
            out.append(f"<li>{inline(line[2:])}</li>")
            continue
        if in_list:
            out.append("</ul>")
            in_list = False
        m = re.match(r"^(#{1,4}) (.*)", line)
        if m:
            n = len(m.group(1))
            out.append(f"<h{n}>{inline(m.group(2))}</h{n}>")
        elif (img := re.match(r"!\[(.*?)\]\((.*?)\)", line)) is not None:
            out.append(f"<!--img:{img.group(2)}-->")
        elif line.strip():
            out.append(f"<p>{inline(line)}</p>")
    if in_table:
        out.append("</table>")
    if in_list:
        out.append("</ul>")
    return "\n".join(out)


#: The reports' style sheet (the online and the offline report look alike).
REPORT_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0;font-size:90%}td,th{border:1px solid #ccc;padding:4px 8px}"
    "th{background:#f2f4f7}td{text-align:right}td:first-child{text-align:left}img{max-width:100%;margin:1em 0}"
    "code{background:#f2f4f7;padding:1px 3px}"
)


def html_page(title: str, body: str) -> str:
    """A self-contained HTML page around ``body`` in the reports' style."""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{REPORT_CSS}</style></head><body>\n{body}\n</body></html>\n")


def write_report(folder: str | Path, inp: ReportInput, *, figures: bool = True) -> tuple[Path, Path]:
    """Write ``report.md`` (+ PNG figures) and a self-contained ``report.html`` into
    ``folder`` (created if needed); returns both paths."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    pngs: dict[str, bytes] = {}
    if figures and inp.results:
        label = str(inp.settings.get("model") or "unknown model")
        pngs = _figures(summarise(inp.results), inp.results, label)
        for name, data in pngs.items():
            (out / name).write_bytes(data)
    md = render_markdown(inp, list(pngs))
    md_path = out / "report.md"
    md_path.write_text(md, encoding="utf-8")
    body = markdown_to_html(md)
    for name, data in pngs.items():
        tag = f'<img alt="{name}" src="data:image/png;base64,{base64.b64encode(data).decode()}">'
        body = body.replace(f"<!--img:{name}-->", tag)
    html_path = out / "report.html"
    html_path.write_text(html_page(inp.title, body), encoding="utf-8")
    log.info("report written to %s", out)
    return md_path, html_path
