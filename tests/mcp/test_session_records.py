"""The record of an MCP client's session: a client beginning a new episode ends the record
of its previous one (its video and OCR stop there), and closing stops the rest."""

from __future__ import annotations

from agent.types import Episode
from app.mcp.recording import SessionRecords
from app.run_record import RecordingSink
from app.storage import Store
from phone.record.capture import CaptureSummary
from phone.record.ring import RingStats


class Capture:
    """A capture that counts its starts and stops (no phone behind it)."""

    def __init__(self) -> None:
        self.started = self.stopped = 0

    def start(self, video=None):
        self.started += 1
        return self

    def stop(self):
        self.stopped += 1
        return CaptureSummary((), None, None, RingStats(0, 0, 0, 0, 0, 0, 0.0), 0, 0, 0.0)

    def settle(self, timeout_s):
        pass

    def transients(self):
        return ()


def test_a_clients_new_episode_stops_the_record_of_its_previous_one(tmp_path):
    store = Store(tmp_path / "runs.sqlite")
    made: list[Capture] = []

    def make():
        made.append(Capture())
        return RecordingSink(store, made[-1], video=False)  # type: ignore[arg-type]

    records = SessionRecords(store, make)
    try:
        records.begin("client", Episode(goal="first"))
        records.begin("other", Episode(goal="another client's"))
        assert [(c.started, c.stopped) for c in made] == [(1, 0), (1, 0)]
        records.begin("client", Episode(goal="second"))
        assert [(c.started, c.stopped) for c in made] == [(1, 1), (1, 0), (1, 0)]
        records.close()
        assert [c.stopped for c in made] == [1, 1, 1]  # each stopped once
    finally:
        store.close()
