"""Benchmark the device layer against the virtual phone served over ADB at 1080x2400.

The served phone runs in its own process (``tapwise sim serve``) and is reached through
Debian's real ``adb``; the mirror is the project's scrcpy v3 client talking to the
served v3 server started from the official jar.  Measures: screenshot latency via raw
``screencap`` (exec-out) and via ``screencap -p`` (PNG), the mirror's frame rate while the
screen keeps changing, input-to-frame latency (control-socket tap -> first decoded frame
showing the change), Unicode text typed through the control socket (clipboard + paste)
read back from the phone's hierarchy, a clipboard round trip, and the cost of taking a
screenshot from the running mirror.  It starts its own adb server on a free port with a
temporary HOME and kills it at the end.

    .venv/bin/python bench/bench_mirror.py [--seconds 5] [--taps 15] [--max-size 0]

With ``--window SECONDS`` it measures the workbench window instead (run it under a real X
display, e.g. Xvfb): the window connects to the served phone as an adb device, mirrors it
through scrcpy with live parsing and every overlay on while the screen keeps changing,
and reports the frames per second the window received and showed (live parsing waits
for the screen to settle, so "parses meanwhile" counts the pauses it found); ``--screenshot PATH``
saves the whole display with ImageMagick's ``import -window root``.

    Xvfb :97 -screen 0 1600x1000x24 -nolisten tcp &
    DISPLAY=:97 .venv/bin/python bench/bench_mirror.py --window 8 --screenshot docs/screenshots/mirror-scrcpy-v3.png
"""

from __future__ import annotations

import argparse
import os
import shutil
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

from phone.ports import free_port


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


def cpu_seconds(proc) -> float:
    """User + system CPU seconds used so far by a child process (Linux /proc)."""
    if proc is None:
        return 0.0
    try:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def find_text_field(dev) -> tuple[int, int] | None:
    from vision.geometry import Rect

    for n in ET.fromstring(dev.dump_hierarchy().encode()).iter("node"):
        if "EditText" in n.get("class", ""):
            c = Rect.from_bounds_string(n.get("bounds")).center
            return c.x, c.y
    return None


def text_of_field(dev) -> str:
    for n in ET.fromstring(dev.dump_hierarchy().encode()).iter("node"):
        if "EditText" in n.get("class", ""):
            return n.get("text", "")
    return ""


def window_bench(serial: str, seconds: float, shot: str, switch: tuple[int, int], live_parse: bool = True,
                 server_proc=None) -> int:
    """The workbench window on the adb phone: frames received and shown per second."""
    from PySide6.QtWidgets import QApplication

    from app.gui.devices import DeviceChoice
    from app.gui.main import configure_process
    from app.gui.window import MainWindow
    from app.settings import load_settings

    configure_process()
    app = QApplication.instance() or QApplication(["tapwise-bench"])
    os.environ.setdefault("TAPWISE_DEVICE__MIRROR_MAX_FPS", "60")  # the default caps the mirror at 30 fps
    settings, _ = load_settings()
    print(f"window mirror cap: {settings.device.mirror_max_fps} fps (settings.device.mirror_max_fps)")
    win = MainWindow(settings, serial, discover=False, live_parse=live_parse)
    win.show()
    parses: list[float] = []
    win.parseShown.connect(lambda _p: parses.append(time.perf_counter()))

    def pump_until(done, timeout: float) -> bool:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            app.processEvents()
            if done():
                return True
            time.sleep(0.005)
        return False

    try:
        win.connect_device(DeviceChoice(serial, "Tapwise Virtual Phone (adb)", is_virtual=False))
        if not pump_until(lambda: win.view.frame is not None and "scrcpy v3" in win.session.mirror.source_note, 60):
            print("the window showed no scrcpy frame:", win.session.mirror.source_note if win.session.mirror else "no mirror")
            return 1
        if not live_parse:
            win.parse_now()  # one parse, so its overlays are drawn on the mirror while it streams
        pump_until(lambda: bool(parses), 90)  # the first parse: its overlays are on the mirror
        if not parses:
            print("no parse arrived: the overlays are missing")
        stop = threading.Event()
        device = win.session.device

        def churn() -> None:  # a tap a frame through the control socket keeps the screen changing
            while not stop.is_set():
                device.tap(*switch)
                time.sleep(1 / 60)

        worker = threading.Thread(target=churn, daemon=True)
        shown: list[float] = []
        win.session.mirror.frameArrived.connect(lambda _s: shown.append(time.perf_counter()))
        frames0, parses0 = win.session.mirror.frames, len(parses)
        cpu0 = (time.process_time(), cpu_seconds(server_proc))
        worker.start()
        t0 = time.perf_counter()
        pump_until(lambda: False, seconds * 0.75)
        grab = None
        if shot:  # while the mirror streams, so the status bar shows the live frame rate
            Path(shot).parent.mkdir(parents=True, exist_ok=True)
            grab = subprocess.Popen(["import", "-window", "root", shot])
        pump_until(lambda: time.perf_counter() - t0 >= seconds and (grab is None or grab.poll() is not None),
                   seconds + 60)
        elapsed = time.perf_counter() - t0
        cpu = (time.process_time() - cpu0[0], cpu_seconds(server_proc) - cpu0[1])
        status = win.fps_status.text()
        stop.set()
        worker.join()
        received = win.session.mirror.frames - frames0
        layers = win.view.parse is not None and len(win.view.parse.elements)
        print(f"window (DISPLAY={os.environ.get('DISPLAY', '')}, {QApplication.platformName()}): "
              f"{received / elapsed:5.1f} fps received and shown ({received} frames in {elapsed:.1f} s), "
              f"overlays of a parse with {layers} elements shown, {len(parses) - parses0} parses meanwhile; "
              f"status bar: {status!r}")
        if received and server_proc is not None:
            print(f"CPU time per frame: served phone {1000 * cpu[1] / received:.1f} ms, window process "
                  f"{1000 * cpu[0] / received:.1f} ms (decode, convert, paint{', live parse' if live_parse else ''}); "
                  f"load average {os.getloadavg()[0]:.1f}")
        if grab is not None:
            print(f"screenshot: {shot}" if grab.wait(timeout=60) == 0 else f"screenshot failed: import exited {grab.returncode}")
        return 0
    finally:
        win.close()
        app.processEvents()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=5.0, help="how long to measure the frame rate")
    ap.add_argument("--taps", type=int, default=15, help="input-to-frame trials")
    ap.add_argument("--shots", type=int, default=10, help="screenshots per method")
    ap.add_argument("--max-size", type=int, default=0, help="scrcpy max_size (0 = full 1080x2400)")
    ap.add_argument("--max-fps", type=int, default=60, help="scrcpy max_fps")
    ap.add_argument("--in-process", action="store_true", help="serve the phone from this process")
    ap.add_argument("--window", type=float, default=0.0, help="measure the workbench window for this many seconds")
    ap.add_argument("--screenshot", default="", help="with --window: save the display here (needs `import`)")
    ap.add_argument("--no-live-parse", action="store_true",
                    help="with --window: parse once (overlays on), not each time the screen settles")
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
        from phone.adb.adb_device import AdbDevice
        from phone.adb.adb_host import AdbHost
        from phone.adb.discovery import connect
        from phone.adb.mirror import Mirror

        if args.in_process:
            from phone.virtual.phone import VirtualPhone
            from phone.virtual.wire import serve_phone

            server = serve_phone(VirtualPhone(profile="phone"), port=0)
            serial = server.serial
        else:  # like a real phone: the served side has its own process (and GIL)
            phone_port = free_port()
            code = "import typer; from app.cli.sim import serve; typer.run(serve)"
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
        if args.window:
            return window_bench(serial, args.window, args.screenshot, (sx, sy), live_parse=not args.no_live_parse,
                                server_proc=server_proc)

        # -- screenshots over adb ----------------------------------------------------
        dev.screenshot_image()
        raw = []
        for _ in range(args.shots):
            t = time.perf_counter()
            img = dev.screenshot_image()
            raw.append(time.perf_counter() - t)
        assert img.shape == (size.height, size.width, 3)
        png = []
        from phone.adb.adb_device import decode_png

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
            cpu0 = (time.process_time(), cpu_seconds(server_proc))
            t0 = time.perf_counter()
            worker = threading.Thread(target=churn, daemon=True)
            worker.start()
            time.sleep(args.seconds)
            stop.set()
            worker.join()
            elapsed = time.perf_counter() - t0
            frames = mirror.stats().frames - start
            client_cpu = time.process_time() - cpu0[0]
            served_cpu = cpu_seconds(server_proc) - cpu0[1]
            st = mirror.stats()
            print(f"mirror frame rate under continuous change: {frames / elapsed:5.1f} fps "
                  f"({frames} frames in {elapsed:.1f} s; decode+convert {st.decode_latency_ms:.1f} ms/frame; "
                  f"dropped unconsumed {st.dropped})")
            if server_proc is not None and frames:
                per = 1000 * (client_cpu + served_cpu) / frames
                print(f"CPU time per frame: served phone {1000 * served_cpu / frames:.1f} ms (render + encode), "
                      f"client {1000 * client_cpu / frames:.1f} ms (read + decode + convert); "
                      f"{per:.1f} ms in all (2 idle cores have CPU for {2000 / per:.0f} such frames a second)")
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

            # Unicode text through the control socket, read back from the phone
            field = find_text_field(dev)
            if field is None:  # the switch was on a sub-page: back to the page with the search field
                from agent.device import Key

                mirror.key(Key.BACK)
                time.sleep(0.3)
                field = find_text_field(dev)
            if field is None:
                print("text: no text field on screen")
                return 1
            mirror.tap(*field)
            sample = "Grüße 👋"
            t = time.perf_counter()
            mirror.input_text(sample)
            typed = time.perf_counter() - t
            shown = text_of_field(dev)
            ok_text = shown.endswith(sample)
            print(f"Unicode text {sample!r} via clipboard+paste: {'intact' if ok_text else 'CHANGED to ' + repr(shown)} "
                  f"({typed * 1000:.1f} ms until acknowledged)")
            clip = "東京 ✓ naïve — 👋"
            t = time.perf_counter()
            mirror.set_clipboard(clip)
            back = mirror.get_clipboard()
            rt = time.perf_counter() - t
            ok_clip = back == clip
            print(f"clipboard round trip (set, acknowledged, get): {'identical' if ok_clip else 'DIFFERS: ' + repr(back)} "
                  f"({rt * 1000:.1f} ms)")
        return 0 if ok_text and ok_clip else 1
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
