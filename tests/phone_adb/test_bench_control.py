"""The served virtual phone's `tapwise-bench` shell command, as the farm's cells use it:
reset to a task's state with a seed and noise, read the state back, clear errors."""

from __future__ import annotations

import json

from phone.virtual.phone import VirtualPhone
from phone.virtual.wire import bench_control
from phone.virtual.wire.served_phone import ServedPhone


def test_reset_applies_state_seed_and_noise_and_state_reads_it_back() -> None:
    served = ServedPhone(VirtualPhone())
    payload = bench_control.encode({"seed": 7, "noise": {"ads": 0.5, "opaque_packages": ["x"]},
                                    "state": {"settings": {"wifi": False}}})
    assert bench_control.run(served, ["reset", payload]) == (0, "ok\n", "")
    assert served.phone.seed == 7 and served.phone.noise.ads == 0.5
    assert served.phone.noise.opaque_packages == ("x",)
    status, out, _ = bench_control.run(served, ["state"])
    assert status == 0 and json.loads(out)["settings"]["wifi"] is False


def test_bad_requests_are_refused_with_a_reason_and_change_nothing() -> None:
    served = ServedPhone(VirtualPhone())
    before = json.dumps(served.phone.state, sort_keys=True)
    assert bench_control.run(served, [])[0] == 2
    assert "not base64 of JSON" in bench_control.run(served, ["reset", "%%%"])[2]
    bad_noise = bench_control.encode({"noise": {"loudness": 3}})
    status, _, err = bench_control.run(served, ["reset", bad_noise])
    assert status == 2 and "unknown noise field(s): loudness" in err
    assert json.dumps(served.phone.state, sort_keys=True) == before
