"""The offline bench on the real DroidTask development recordings (``../shared/real-agent``).

Skipped, saying why, where that folder is absent (it is never copied into the
repository).  The gold oracle must score every one of the 78 tasks right with structured
replies: a step it misses means the reader or the reply form loses something the real
recordings hold (the ``<br>`` in file names was one).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli.bench import bench_app
from evaluation.offline import summary
from evaluation.offline.datasets import load_dataset
from evaluation.offline.types import Format
from evaluation.results import ResultsDB

DEV = Path(__file__).resolve().parents[2].parent / "shared" / "real-agent" / "droidtask-dev"

pytestmark = pytest.mark.skipif(not DEV.is_dir(), reason=f"real DroidTask recordings not present at {DEV} "
                                                       "(they live beside the repository, never inside it)")


def test_all_development_tasks_are_read() -> None:
    fmt, tasks, problems = load_dataset(DEV)
    assert fmt is Format.DROIDTASK and problems == []
    assert len(tasks) == 78
    assert {t.app for t in tasks} == {"applauncher", "camera", "dialer", "filemanager", "gallery", "musicplayer",
                                      "voicerecorder"}
    assert all(t.steps[-1].gold.kind.value == "finish" for t in tasks)


def test_the_gold_oracle_gets_every_real_step_right_with_structured_replies(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    res = CliRunner().invoke(bench_app, ["offline", str(DEV), "--oracle", "--planners", "visiontasker",
                                         "--constrained", "--db", str(db), "--run", "dev"])
    assert res.exit_code == 0, res.output
    with ResultsDB(db) as store:
        results = store.results("dev")
    f = summary.by_label(results)["visiontasker:structured"]
    wrong = [(r.task_id, x) for r in results for x in r.step_records if not x["correct"]]
    assert f.tasks == 78 and wrong == []
    assert f.completed == 78
