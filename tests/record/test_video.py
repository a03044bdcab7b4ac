"""The video of a run: the H.264 stream written to an MP4 as it arrives, read back by
Debian's ffprobe (skipped with a message when ffmpeg is not installed).  It lasts as long
as the recording, opens on the current screen when it starts mid-stream, stops cleanly at
its size limit, and a recorder killed mid-run leaves a file ffprobe and PyAV can play."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import av
import pytest

from phone.adb.stream_tap import StreamTap
from phone.record.video import VideoWriter
from tests.record.stream import Stream

FFPROBE = shutil.which("ffprobe")
needs_ffprobe = pytest.mark.skipif(FFPROBE is None, reason="needs Debian's ffprobe: apt-get install -y ffmpeg")


def probe(path: Path) -> dict:
    out = subprocess.run([FFPROBE or "ffprobe", "-v", "error", "-count_frames", "-show_entries",
                          "format=duration,format_name:stream=codec_name,width,height,nb_read_frames",
                          "-of", "json", str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    stream = doc["streams"][0]
    return {"duration": float(doc["format"]["duration"]), "format": doc["format"]["format_name"],
            "codec": stream["codec_name"], "size": (stream["width"], stream["height"]),
            "frames": int(stream["nb_read_frames"])}


@needs_ffprobe
def test_the_video_lasts_as_long_as_the_recording(tmp_path):
    t0 = 500.0
    writer = VideoWriter(tmp_path / "run.mp4").start(at_mono=t0)
    for p in Stream().packets(30, start=t0 + 0.2, fps=10):  # 0.2 .. 3.1 s
        writer.packet(p)
    stats = writer.stop(t0 + 4.5)  # the screen then stayed as it was until the run ended
    info = probe(tmp_path / "run.mp4")
    assert info["codec"] == "h264" and info["size"] == (360, 800) and "mp4" in info["format"]
    assert info["frames"] == 30 == stats.packets
    assert info["duration"] == pytest.approx(4.5 - 0.2, abs=0.05)  # from the first picture to the stop
    assert stats.stopped == "" and stats.dropped == 0


@needs_ffprobe
def test_a_recording_started_mid_stream_opens_on_the_current_screen(tmp_path):
    tap = StreamTap()
    stream = Stream(gop=10)
    t0 = time.monotonic()
    for p in stream.packets(14, start=t0 - 2.0):  # a key frame at 0 and 10: the head is 10..13
        tap.packet(p)
    writer = VideoWriter(tmp_path / "run.mp4")
    head, unsubscribe = tap.listen_packets(writer.packet)
    assert head[0].is_config and head[1].is_key_frame and len(head) == 5
    writer.start(head, at_mono=t0)
    for p in stream.packets(10, start=t0 + 0.1):
        tap.packet(p)
    unsubscribe()
    writer.stop(t0 + 1.5)
    info = probe(tmp_path / "run.mp4")
    assert info["frames"] == 4 + 10  # the head's pictures, then what came after the start
    with av.open(str(tmp_path / "run.mp4")) as c:
        first = next(c.decode(video=0))
    assert first.to_ndarray(format="rgb24").shape == (800, 360, 3)


@needs_ffprobe
def test_a_video_stops_at_its_size_limit_and_stays_playable(tmp_path):
    writer = VideoWriter(tmp_path / "run.mp4", max_bytes=30_000).start(at_mono=0.0)
    for p in Stream().packets(60, start=0.1):
        writer.packet(p)
    stats = writer.stop(7.0)
    assert "size limit" in stats.stopped
    assert 0 < stats.bytes <= 30_000
    info = probe(tmp_path / "run.mp4")
    assert 0 < info["frames"] < 60


RECORDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from phone.record.video import VideoWriter
    from tests.record.stream import Stream
    stream = Stream()
    writer = VideoWriter(Path(sys.argv[1])).start()
    print("recording", flush=True)
    for i in range(600):  # a minute at 10 frames a second; the test kills it long before
        for p in stream.next(time.monotonic()):
            writer.packet(p)
        time.sleep(0.1)
""")


@needs_ffprobe
def test_a_killed_recorder_leaves_a_playable_mp4_of_what_was_recorded(tmp_path):
    path = tmp_path / "run.mp4"
    proc = subprocess.Popen([sys.executable, "-c", RECORDER, str(path)], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "recording"
        time.sleep(3.5)
        proc.send_signal(signal.SIGKILL)  # no clean-up of any kind
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    info = probe(path)
    assert info["codec"] == "h264"
    assert info["frames"] >= 15  # all but the last second (a fragment) of ~35 frames
    assert 1.5 <= info["duration"] <= 4.0
    with av.open(str(path)) as c:  # and every frame decodes
        assert sum(1 for _ in c.decode(video=0)) == info["frames"]
