"""The virtual phone as a process of its own: ``python -m phone.virtual.serve``.

Renders a ``VirtualPhone`` (profile, theme, language from the arguments), serves it over
the ADB transport protocol on a loopback port (``phone.virtual.wire``), prints one line
``serving SERIAL`` on standard output once it accepts connections, and runs until its
standard input closes (the process that started it went away or stopped it) or it gets
SIGTERM / SIGINT.  Like a real phone, its toasts and snackbars last their seconds
(``phone.virtual.flashes``), not until the next input.  That is how the window drives the virtual phone exactly like a real
phone: through adb, the scrcpy v3 stream and the uiautomator2 server, in a separate
interpreter that never shares the window's GIL.

Only this entry point; ``phone.virtual.launcher`` starts and stops it.  No Qt.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

log = logging.getLogger(__name__)

READY_PREFIX = "serving "


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m phone.virtual.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="loopback port (0 picks a free one)")
    parser.add_argument("--profile", default="phone")
    parser.add_argument("--theme", default="light")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layout", default="default", help="default, shifted or reordered (phone.virtual.look)")
    parser.add_argument("--untimed-flashes", action="store_true",
                        help="toasts and snackbars last until the next input (the in-process phone's clock) "
                             "instead of their seconds, as on a real phone")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="virtual phone: %(levelname)s %(message)s")

    from phone.virtual.phone import VirtualPhone
    from phone.virtual.wire import serve_phone

    try:
        phone = VirtualPhone(profile=args.profile, theme=args.theme, lang=args.lang, seed=args.seed,
                             layout=args.layout, timed_flashes=not args.untimed_flashes)
    except ValueError as exc:
        sys.stderr.write(f"no such virtual phone: {exc}\n")
        return 2
    server = serve_phone(phone, port=args.port)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())

    def watch_parent() -> None:  # standard input closes when the starting process is gone
        try:
            while sys.stdin.buffer.read(1024):
                pass
        except (OSError, ValueError):
            pass
        stop.set()

    threading.Thread(target=watch_parent, name="parent-watch", daemon=True).start()
    sys.stdout.write(f"{READY_PREFIX}{server.serial}\n")
    sys.stdout.flush()
    try:
        stop.wait()
    finally:
        server.stop()
        phone.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
