"""The results file of ``tapwise bench supervised`` gives back, on resuming, the very results
that were written into it."""

from __future__ import annotations

from pathlib import Path

from evaluation.supervised import SupervisedResult
from evaluation.supervised_log import SupervisedLog

SETTINGS = {"model": "m", "planner": "zeroshot-", "maps": False, "budget": 5}


def test_a_resumed_result_equals_the_one_written(tmp_path: Path):
    written = SupervisedResult("t.wifi", True, "succeeded", "", wording=1, language="de", goal="WLAN aus",
                               rejections=1, approve_to_next_s=(0.5, 1.25), origins=(("model", 3), ("map", 1)),
                               intervened=("rejected: tap Display (zeroshot-)",))
    SupervisedLog(tmp_path / "sup.json", SETTINGS).add(True, written)
    (back,) = SupervisedLog.open(tmp_path / "sup.json", SETTINGS).results(True)
    assert back == written and isinstance(back.origins[0], tuple)
