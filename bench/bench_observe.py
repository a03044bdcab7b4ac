"""Benchmark observation on the virtual phone served over real adb at 1080x2400.

Measures, in one run against one served phone:

1. the hierarchy through the uiautomator2 server (``AdbDevice.dump_hierarchy``: JSON-RPC
   ``dumpWindowHierarchy`` over adb's ``tcp:9008``) versus ``uiautomator dump`` + ``cat``
   (``AdbDevice.uiautomator_dump``), medians and their ratio; and the same server through
   the library's own sockets, which leave Nagle's algorithm on;
2. the whole observation per agent step: the newest mirror frame (``Mirror.latest``) +
   the hierarchy + the tree parse (``vision.hierarchy.parse_uiautomator``), over a walk of
   taps and scrolls through several apps; the aim is a median of at most 150 ms;
3. on an animated screen (a running stopwatch): how many dumps each path returns.

It starts its own adb server (the ``adb`` on PATH, normally Debian's) on a free port with a
temporary HOME and kills it at the end.  The virtual phone does not model the start-up of
``uiautomator``'s JVM that makes ``uiautomator dump`` slow on phones (0.6-2.3 s), so the
ratio here is a lower bound for real phones.

    .venv/bin/python bench/bench_observe.py [--runs 30] [--steps 30]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phone.ports import free_port


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def describe(values: list[float]) -> str:
    v = sorted(x * 1000 for x in values)
    p90 = v[min(len(v) - 1, round(0.9 * (len(v) - 1)))]
    return f"median {statistics.median(v):7.1f} ms  p90 {p90:7.1f} ms  min {v[0]:7.1f} ms  (n={len(v)})"


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def centre_of(xml: str, label: str) -> tuple[int, int] | None:
    from vision.geometry import Rect

    for n in ET.fromstring(xml.encode("utf-8")).iter("node"):
        if label in (n.get("text"), n.get("content-desc")):
            c = Rect.from_bounds_string(n.get("bounds", "")).center
            return c.x, c.y
    return None


def walk(dev, steps: int) -> list[Callable[[], None]]:
    """Actions of a plausible agent walk: open apps, switch tabs, scroll, go home."""
    from agent.device import Key

    def tap_label(label: str) -> Callable[[], None]:
        def act() -> None:
            point = centre_of(dev.dump_hierarchy(), label)
            if point is not None:
                dev.tap(*point)

        return act

    cycle = [
        lambda: dev.key(Key.HOME),
        tap_label("Settings"),
        lambda: dev.swipe(540, 1800, 540, 900, 300),
        lambda: dev.key(Key.BACK),
        tap_label("Clock"),
        tap_label("Timer"),
        tap_label("Bedtime"),
        lambda: dev.key(Key.HOME),
        tap_label("Notes"),
        lambda: dev.swipe(540, 1800, 540, 900, 300),
    ]
    return [cycle[i % len(cycle)] for i in range(steps)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30, help="hierarchy dumps per path")
    ap.add_argument("--steps", type=int, default=30, help="agent steps for the whole-observation figure")
    args = ap.parse_args()
    if shutil.which("adb") is None:
        raise SystemExit("adb is not installed (apt install adb)")

    home = tempfile.mkdtemp(prefix="tapwise-bench-observe-")
    port = free_port()
    os.environ.update(HOME=home, ANDROID_ADB_SERVER_PORT=str(port), ANDROID_USER_HOME=f"{home}/.android", TMPDIR=home)
    env = dict(os.environ)
    subprocess.run(["adb", "start-server"], env=env, check=True, capture_output=True, timeout=30)

    from phone.adb.adb_device import AdbDevice
    from phone.adb.adb_host import AdbHost
    from phone.adb.mirror import Mirror
    from phone.virtual.phone import VirtualPhone
    from phone.virtual.wire import serve_phone
    from vision.hierarchy import parse_uiautomator

    server = None
    mirror = None
    try:
        phone = VirtualPhone()
        server = serve_phone(phone, port=0)
        out = subprocess.run(["adb", "connect", server.serial], env=env, capture_output=True, text=True, timeout=30)
        if "connected to" not in out.stdout:
            raise SystemExit(f"adb connect failed: {out.stdout} {out.stderr}")
        host = AdbHost(port=port)
        dev = AdbDevice(server.serial, host)
        size = dev.screen_size()
        adb_version = subprocess.run(["adb", "version"], capture_output=True, text=True).stdout.splitlines()[1]
        print(f"served phone {size.width}x{size.height} on {server.serial}; {adb_version.strip()}")

        t0 = time.perf_counter()
        dev.dump_hierarchy()  # pushes the verified u2.jar and starts the server
        print(f"uiautomator2 start (verify + push u2.jar + launch + /ping): {(time.perf_counter() - t0) * 1000:.0f} ms")
        print(f"path: {dev.hierarchy_path.describe()}")
        if dev.hierarchy_path.method != "uiautomator2":
            raise SystemExit("the uiautomator2 server did not start; nothing to compare")

        # 1. hierarchy: uiautomator2 vs uiautomator dump, interleaved in blocks so both see the same machine load
        u2_times: list[float] = []
        dump_times: list[float] = []
        for _ in range(max(1, args.runs // 5)):
            u2_times += timed(dev.dump_hierarchy, 5)
            dump_times += timed(dev.uiautomator_dump, 5)
        # the same server through the library's own sockets (Nagle's algorithm left on)
        import uiautomator2

        plain = uiautomator2.connect(host.client().device(server.serial))
        nagle_times = timed(lambda: plain.jsonrpc.dumpWindowHierarchy(False, 50), max(5, args.runs // 3))
        ratio = median_ms(dump_times) / median_ms(u2_times)
        print("\nhierarchy at 1080x2400 over adb")
        print(f"  uiautomator2 (JSON-RPC dumpWindowHierarchy): {describe(u2_times)}")
        print(f"  uiautomator dump + cat:                      {describe(dump_times)}")
        print(f"  ratio (dump / uiautomator2 medians): {ratio:.2f}x")
        print(f"  uiautomator2, library's sockets (no TCP_NODELAY): {describe(nagle_times)}")

        # 2. the whole observation per step, with the scrcpy mirror running
        mirror = Mirror(dev).start()
        first = mirror.wait_frame(timeout=15)
        print(f"\nmirror source: {mirror.source.value if mirror.source else 'none'}; first frame: {first is not None}")
        whole: list[float] = []
        parts: dict[str, list[float]] = {"frame": [], "hierarchy": [], "parse": []}
        nodes = 0
        for act in walk(dev, args.steps):
            act()
            t0 = time.perf_counter()
            frame = mirror.latest()
            t1 = time.perf_counter()
            xml = dev.dump_hierarchy()
            t2 = time.perf_counter()
            parse = parse_uiautomator(xml, size)
            t3 = time.perf_counter()
            if frame is None:
                raise SystemExit("the mirror delivered no frame")
            whole.append(t3 - t0)
            parts["frame"].append(t1 - t0)
            parts["hierarchy"].append(t2 - t1)
            parts["parse"].append(t3 - t2)
            nodes += len(parse.elements)
        print(f"whole observation per step (newest frame + hierarchy + tree parse), {args.steps} steps")
        print(f"  total:     {describe(whole)}   aim <= 150 ms: {'met' if median_ms(whole) <= 150 else 'NOT met'}")
        for name, values in parts.items():
            print(f"  {name:9s}  {describe(values)}")
        print(f"  elements per parse: {nodes / max(1, args.steps):.1f}")

        # the same through the device API the runner calls: AdbDevice.screenshot(with_hierarchy=True)
        # fed by the mirror (it adds the foreground activity, read with `dumpsys window`)
        running = mirror

        def newest_image():
            frame = running.latest()
            return None if frame is None else frame.image

        dev.use_frames_from(newest_image)
        api: list[float] = []
        for act in walk(dev, args.steps):
            act()
            t0 = time.perf_counter()
            screen = dev.screenshot(with_hierarchy=True)
            parse_uiautomator(screen.hierarchy_xml, size)
            api.append(time.perf_counter() - t0)
        dev.use_frames_from(None)
        print(f"  via AdbDevice.screenshot(with_hierarchy=True) + parse: {describe(api)}")
        mirror.stop()
        mirror = None

        # 3. an animated screen: a running stopwatch
        from agent.device import Key

        dev.key(Key.HOME)
        for label in ("Clock", "Stopwatch", "Start"):
            point = centre_of(dev.dump_hierarchy(), label)
            if point is None:
                raise SystemExit(f"no {label!r} on screen")
            dev.tap(*point)
        if not phone.is_animating():
            raise SystemExit("the stopwatch did not start")
        tries = 10
        u2_ok = sum(1 for _ in range(tries) if "stopwatch_time_text" in dev.dump_hierarchy())
        dump_ok = 0
        for _ in range(tries):
            try:
                dev.uiautomator_dump(attempts=1)
                dump_ok += 1
            except Exception:  # DeviceError: could not get idle state
                pass
        print("\nrunning stopwatch (animated screen)")
        print(f"  uiautomator2 dumps returned:     {u2_ok}/{tries}")
        print(f"  uiautomator dump calls returned: {dump_ok}/{tries}")
        dev.close()
    finally:
        if mirror is not None:
            mirror.stop()
        if server is not None:
            server.stop()
        subprocess.run(["adb", "kill-server"], env=env, capture_output=True, timeout=30)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
