"""Benchmark the device layer against the virtual phone served over ADB at 1080x2400.

Measures: screenshot latency via raw ``screencap`` (exec-out) and via ``screencap -p``
(PNG), the mirror's frame rate while the screen keeps changing, input-to-frame latency
(scrcpy control-socket tap -> first decoded frame showing the change), and the cost of
taking a screenshot from the running mirror.  It starts its own adb server on a free
port with a temporary HOME and kills it at the end.

    .venv/bin/python bench/bench_mirror.py [--seconds 5] [--taps 15] [--max-size 0]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ms(values: list[float]) -> str:
    v = sorted(x * 1000 for x in values)
    p90 = v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]
    return f"median {statistics.median(v):7.1f} ms  p90 {p90:7.1f} ms  min {v[0]:7.1f} ms  (n={len(v)})"


def find_switch(dev) -> tuple[int, int]:
    from vision.geometry import Rect

    for _ in range(2):
        found = list(ET.fromstring(dev.dump_hierarchy().encode()).iter("node"))
        for n in found:
            if n.get("checkable") == "true":
                c = Rect.from_bounds_string(n.get("bounds")).center
                return c.x, c.y
        net = next((n for n in found if n.get("text", "").startswith("Network")), None)
        if net is None:
            break
        c = Rect.from_bounds_string(net.get("bounds")).center
        dev.tap(c.x, c.y)
    raise SystemExit("no switch found in Settings")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=5.0, help="how long to measure the frame rate")
    ap.add_argument("--taps", type=int, default=15, help="input-to-frame trials")
    ap.add_argument("--shots", type=int, default=10, help="screenshots per method")
    ap.add_argument("--max-size", type=int, default=0, help="scrcpy max_size (0 = full 1080x2400)")
    ap.add_argument("--max-fps", type=int, default=60, help="scrcpy max_fps")
    ap.add_argument("--in-process", action="store_true", help="serve the phone from this process")
    args = ap.parse_args()
    if shutil.which("adb") is None:
        print("adb is not installed (apt install adb)")
        return 2

    home = tempfile.mkdtemp(prefix="tapwise-bench-adb-")
    port = free_port()
    os.environ.update(HOME=home, ANDROID_ADB_SERVER_PORT=str(port), ANDROID_USER_HOME=home + "/.android")
    env = dict(os.environ, TMPDIR=home)
    subprocess.run(["adb", "start-server"], env=env, capture_output=True, check=True, timeout=30)
    server = None
    server_proc = None
    try:
        from app.device.adb_device import AdbDevice
        from app.device.adb_host import AdbHost
        from app.device.discovery import connect
        from app.device.mirror import Mirror

        if args.in_process:
            from app.sim.phone import VirtualPhone
            from app.sim.wire import serve_phone

            server = serve_phone(VirtualPhone(profile="phone"), port=0)
            serial = server.serial
        else:  # like a real phone: the served side has its own process (and GIL)
            phone_port = free_port()
            code = "import typer; from app.device.cli import serve; typer.run(serve)"
            server_proc = subprocess.Popen(
                [sys.executable, "-c", code, "--port", str(phone_port)], env=env,
                cwd=str(Path(__file__).resolve().parents[1]), stdout=subprocess.PIPE, text=True,
            )
            server_proc.stdout.readline()
            serial = f"127.0.0.1:{phone_port}"
        connect(serial, AdbHost(port=port))
        dev = AdbDevice(serial, AdbHost(port=port), timeout=20)
        size = dev.screen_size()
        where = "in this process" if args.in_process else "in a separate process"
        print(f"virtual phone served {where} on {serial}: {size}, {os.cpu_count()} CPUs, "
              f"load average {os.getloadavg()[0]:.1f}")
        dev.open_app("com.android.settings")
        sx, sy = find_switch(dev)

        # -- screenshots over adb ----------------------------------------------------
        dev.screenshot_image()
        raw = []
        for _ in range(args.shots):
            t = time.perf_counter()
            img = dev.screenshot_image()
            raw.append(time.perf_counter() - t)
        assert img.shape == (size.height, size.width, 3)
        png = []
        from app.device.adb_device import decode_png

        for _ in range(max(3, args.shots // 2)):
            t = time.perf_counter()
            decode_png(dev.exec_out("screencap -p"))
            png.append(time.perf_counter() - t)
        print(f"screenshot via raw screencap (exec-out, {size.width * size.height * 4 / 1e6:.1f} MB): {ms(raw)}")
        print(f"screenshot via screencap -p (PNG encode+decode):        {ms(png)}")

        # -- mirror -------------------------------------------------------------------
        with Mirror(dev, max_size=args.max_size, max_fps=args.max_fps) as mirror:
            first = mirror.wait_frame(0, timeout=30)
            if first is None:
                print("mirror produced no frame:", mirror.events())
                return 1
            print(f"mirror: {mirror.source.value}, frame {first.width}x{first.height}")

            # frame rate while the screen keeps changing (a tap every 1/max_fps s)
            stop = threading.Event()

            def churn() -> None:
                while not stop.is_set():
                    mirror.tap(sx, sy)
                    time.sleep(1.0 / args.max_fps)

            time.sleep(0.5)
            start = mirror.stats().frames
            t0 = time.perf_counter()
            worker = threading.Thread(target=churn, daemon=True)
            worker.start()
            time.sleep(args.seconds)
            stop.set()
            worker.join()
            elapsed = time.perf_counter() - t0
            frames = mirror.stats().frames - start
            st = mirror.stats()
            print(f"mirror frame rate under continuous change: {frames / elapsed:5.1f} fps "
                  f"({frames} frames in {elapsed:.1f} s; decode+convert {st.decode_latency_ms:.1f} ms/frame; "
                  f"dropped unconsumed {st.dropped})")
            time.sleep(1.0)

            # input-to-frame latency
            fw, fh = first.width, first.height
            rx, ry = round(sx * fw / size.width), round(sy * fh / size.height)
            box = (slice(max(0, ry - 20), ry + 20), slice(max(0, rx - 40), rx + 40))
            lat = []
            for _ in range(args.taps):
                time.sleep(0.3)
                cur = mirror.latest()
                before = cur.image[box].astype(int)
                t_in = time.monotonic()
                mirror.tap(sx, sy)
                idx = cur.index
                deadline = t_in + 5
                while time.monotonic() < deadline:
                    f = mirror.wait_frame(idx, timeout=deadline - time.monotonic())
                    if f is None:
                        break
                    idx = f.index
                    if np.abs(f.image[box].astype(int) - before).mean() > 2:
                        lat.append(f.decoded_at - t_in)
                        break
            print(f"input-to-frame latency (control tap -> changed frame decoded): {ms(lat) if lat else 'no change seen'}")

            grabs = []
            for _ in range(200):
                t = time.perf_counter()
                f = mirror.latest()
                _ = f.image
                grabs.append(time.perf_counter() - t)
            age = time.monotonic() - mirror.latest().decoded_at
            print(f"screenshot via the running mirror (latest frame): {ms(grabs)}; newest frame age {age * 1000:.0f} ms")
        return 0
    finally:
        if server is not None:
            server.stop()
        if server_proc is not None:
            server_proc.terminate()
            server_proc.wait(timeout=20)
        subprocess.run(["adb", "kill-server"], env=env, capture_output=True, timeout=30)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
