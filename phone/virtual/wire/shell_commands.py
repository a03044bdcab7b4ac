"""The served phone's shell: runs the commands adb clients send (screencap, uiautomator,
input, am, monkey, pm, wm, dumpsys, getprop, settings, ime, cat, echo, rm, ls ...).

Each command writes to an output buffer and returns an exit status like its Android
counterpart, with Android-like output text where clients parse it (``wm size``,
``dumpsys window``, ``uiautomator dump``).  Long-running programs (``app_process`` for the
scrcpy server) get the live stream.  No protocol framing happens here.
"""

from __future__ import annotations

import base64
import logging
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from agent.device import DeviceError, Key
from phone.virtual.wire.served_phone import ServedPhone
from phone.virtual.wire.shell_parse import ShellSyntaxError, expand_status, parse
from phone.virtual.wire.vfs import VirtualFS

log = logging.getLogger(__name__)

#: Android key codes (and KEYCODE_ names) the virtual phone understands.
KEYCODES: dict[int, Key] = {3: Key.HOME, 4: Key.BACK, 66: Key.ENTER, 187: Key.APP_SWITCH, 67: Key.DEL, 61: Key.TAB}
KEYCODE_NAMES: dict[str, int] = {
    "HOME": 3, "BACK": 4, "ENTER": 66, "APP_SWITCH": 187, "DEL": 67, "TAB": 61,
    "POWER": 26, "WAKEUP": 224, "SLEEP": 223, "MENU": 82, "VOLUME_UP": 24, "VOLUME_DOWN": 25,
    "VOLUME_MUTE": 164, "ESCAPE": 111, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21,
    "DPAD_RIGHT": 22, "SPACE": 62,
}
ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"

#: Action names from ``am start -a`` that the virtual phone maps to its own apps.
ACTION_PACKAGES = {
    "android.settings.SETTINGS": "com.android.settings",
    "android.settings.WIFI_SETTINGS": "com.android.settings",
}


class Output:
    """Collected stdout/stderr of one command."""

    def __init__(self) -> None:
        self.stdout = bytearray()
        self.stderr = bytearray()

    def out(self, data: bytes | str) -> None:
        self.stdout += data.encode() if isinstance(data, str) else data

    def err(self, data: bytes | str) -> None:
        self.stderr += data.encode() if isinstance(data, str) else data


# A long-running program (the scrcpy server): gets argv, env and a function that writes
# its stdout straight to the client; blocks until it ends and returns its exit status.
LiveProgram = Callable[[list[str], dict[str, str], Callable[[bytes], None]], int]


@dataclass
class DeviceState:
    """Mutable state of the served phone beyond what the phone object itself keeps."""

    props: dict[str, str]
    fs: VirtualFS = field(default_factory=VirtualFS)
    settings: dict[str, dict[str, str]] = field(
        default_factory=lambda: {"system": {}, "secure": {}, "global": {}}
    )
    screen_on: bool = True
    adb_keyboard: bool = True
    default_ime: str = ADB_KEYBOARD_IME
    #: The next N ``uiautomator dump`` calls fail the way real ones sometimes do.
    dump_failures: int = 0
    #: The phone's primary clip (set and pasted through the uiautomator2 server).
    clipboard: str = ""


class Shell:
    """Interprets command lines against a ``ServedPhone``."""

    def __init__(self, phone: ServedPhone, state: DeviceState, app_process: LiveProgram | None = None):
        self.phone = phone
        self.state = state
        self.app_process = app_process
        self.live_write: Callable[[bytes], None] | None = None
        self.stdin = b""
        self.status = 0

    # -- driver ------------------------------------------------------------------------
    def run(self, line: str, out: Output) -> int:
        try:
            steps = parse(line)
        except ShellSyntaxError as exc:
            out.err(f"/system/bin/sh: {exc}\n")
            return 2
        status = 0
        skip = False
        piped: bytes | None = None
        for step in steps:
            if not skip:
                cmd = step.command
                argv = [expand_status(a, status) for a in cmd.argv]
                sub = Output()
                self.stdin, piped = piped or b"", None
                status = self._run_one(argv, cmd.env, sub) if argv else 0
                if cmd.pipe_to_next:
                    piped, sub.stdout = bytes(sub.stdout), bytearray()
                    status = 0
                stderr = bytes(sub.stderr)
                if cmd.stderr_to_stdout:
                    sub.stdout += stderr
                    stderr = b""
                if cmd.stdout_path:
                    try:
                        self.state.fs.write(cmd.stdout_path, bytes(sub.stdout), append=cmd.append)
                    except OSError as exc:
                        out.err(f"/system/bin/sh: {exc}\n")
                        status = 1
                else:
                    out.out(bytes(sub.stdout))
                if cmd.stderr_path is None:
                    out.err(stderr)
            if step.then == "&&":
                skip = status != 0
            elif step.then == "||":
                skip = status == 0
            else:
                skip = False
        self.status = status
        return status

    def _run_one(self, argv: list[str], env: dict[str, str], out: Output) -> int:
        name = argv[0].rsplit("/", 1)[-1]
        handler = getattr(self, f"cmd_{name.replace('-', '_')}", None)
        if handler is None:
            out.err(f"/system/bin/sh: {argv[0]}: inaccessible or not found\n")
            return 127
        try:
            if name == "app_process":
                return int(handler(argv, env, out))
            return int(handler(argv[1:], out))
        except DeviceError as exc:
            out.err(f"Error: {exc}\n")
            return 1
        except (ValueError, IndexError) as exc:
            out.err(f"{name}: bad arguments ({exc})\n")
            return 2
        except Exception as exc:  # a bug in the phone must read like a failing command
            log.exception("virtual phone command %r failed", " ".join(argv)[:200])
            out.err(f"Exception occurred while executing '{name}': {type(exc).__name__}: {exc}\n")
            return 1

    # -- coreutils ---------------------------------------------------------------------
    def cmd_echo(self, args: list[str], out: Output) -> int:
        newline = True
        if args and args[0] == "-n":
            newline, args = False, args[1:]
        out.out(" ".join(args) + ("\n" if newline else ""))
        return 0

    def cmd_true(self, args: list[str], out: Output) -> int:
        return 0

    def cmd_false(self, args: list[str], out: Output) -> int:
        return 1

    def cmd_sleep(self, args: list[str], out: Output) -> int:
        return 0  # the virtual phone has no wall clock to wait for

    def cmd_sh(self, args: list[str], out: Output) -> int:
        if len(args) >= 2 and args[0] == "-c":
            return self.run(args[1], out)
        out.err("sh: interactive shells are not supported by the virtual phone\n")
        return 2

    def cmd_grep(self, args: list[str], out: Output) -> int:
        import re

        flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
        words = [a for a in args if not a.startswith("-")]
        if not words:
            out.err("usage: grep [-Eiqv] PATTERN\n")
            return 2
        try:  # basic and extended regexes both read as Python regexes: close enough here
            pattern = re.compile(words[0], re.IGNORECASE if "i" in flags else 0)
        except re.error:
            pattern = re.compile(re.escape(words[0]), re.IGNORECASE if "i" in flags else 0)
        hits = [line for line in self.stdin.decode("utf-8", "replace").splitlines(keepends=True)
                if bool(pattern.search(line)) != ("v" in flags)]
        if "q" not in flags:
            out.out("".join(hits))
        return 0 if hits else 1

    def cmd_cat(self, args: list[str], out: Output) -> int:
        if not args:
            out.out(self.stdin)
            return 0
        status = 0
        for path in args:
            try:
                out.out(self.state.fs.read(path))
            except OSError as exc:
                out.err(f"cat: {exc}\n")
                status = 1
        return status

    def cmd_md5sum(self, args: list[str], out: Output) -> int:
        return self._digest("md5", args, out)

    def cmd_sha256sum(self, args: list[str], out: Output) -> int:
        return self._digest("sha256", args, out)

    def _digest(self, algorithm: str, args: list[str], out: Output) -> int:
        import hashlib

        status = 0
        for path in (a for a in args if not a.startswith("-")):
            try:
                digest = hashlib.new(algorithm, self.state.fs.read(path)).hexdigest()
            except OSError as exc:
                out.err(f"{algorithm}sum: {exc}\n")
                status = 1
                continue
            out.out(f"{digest}  {path}\n")
        return status

    def cmd_toybox(self, args: list[str], out: Output) -> int:
        """``toybox NAME ARGS``: the multi-call binary runs the named tool."""
        if not args:
            out.out("md5sum sha256sum cat echo ls mkdir rm grep sleep true false\n")
            return 0
        return self._run_one(args, {}, out)

    def cmd_rm(self, args: list[str], out: Output) -> int:
        flags = "".join(a[1:] for a in args if a.startswith("-"))
        status = 0
        for path in (a for a in args if not a.startswith("-")):
            try:
                self.state.fs.remove(path, recursive="r" in flags)
            except OSError as exc:
                if "f" not in flags:
                    out.err(f"rm: {exc}\n")
                    status = 1
        return status

    def cmd_mkdir(self, args: list[str], out: Output) -> int:
        for path in (a for a in args if not a.startswith("-")):
            self.state.fs.mkdir(path, parents="-p" in args)
        return 0

    def cmd_ls(self, args: list[str], out: Output) -> int:
        paths = [a for a in args if not a.startswith("-")] or ["/"]
        status = 0
        for path in paths:
            entry = self.state.fs.stat(path)
            if entry is None:
                out.err(f"ls: {path}: No such file or directory\n")
                status = 1
            elif entry.mode & 0o170000 == 0o040000:
                for e in self.state.fs.listdir(path):
                    out.out(e.name + "\n")
            else:
                out.out(path + "\n")
        return status

    # -- properties and settings -------------------------------------------------------
    def cmd_getprop(self, args: list[str], out: Output) -> int:
        props = {**self.state.props, **self.phone.live_props()}
        if args:
            out.out(props.get(args[0], args[1] if len(args) > 1 else "") + "\n")
        else:
            for k, v in sorted(props.items()):
                out.out(f"[{k}]: [{v}]\n")
        return 0

    def cmd_settings(self, args: list[str], out: Output) -> int:
        if len(args) >= 3 and args[0] in ("get", "put", "delete") and args[1] in self.state.settings:
            table = self.state.settings[args[1]]
            if args[0] == "get":
                out.out(table.get(args[2], "null") + "\n")
            elif args[0] == "put" and len(args) >= 4:
                table[args[2]] = args[3]
            elif args[0] == "delete":
                table.pop(args[2], None)
            return 0
        out.err("usage: settings [get|put|delete] NAMESPACE KEY [VALUE]\n")
        return 255

    def cmd_wm(self, args: list[str], out: Output) -> int:
        sub = args[0] if args else ""
        if sub == "size":
            out.out(f"Physical size: {self.phone.size().width}x{self.phone.size().height}\n")
        elif sub == "density":
            out.out(f"Physical density: {self.phone.density()}\n")
        else:
            out.err(f"wm: unknown command '{sub}'\n")
            return 255
        return 0

    # -- screen and hierarchy ----------------------------------------------------------
    def cmd_screencap(self, args: list[str], out: Output) -> int:
        png = "-p" in args
        files = [a for a in args if not a.startswith("-")]
        if files and files[-1].endswith(".png"):
            png = True
        if png:
            data = self.phone.png()
        else:
            rgb = self.phone.rgb()
            h, w = rgb.shape[:2]
            import numpy as np

            rgba = np.empty((h, w, 4), dtype=np.uint8)
            rgba[..., :3] = rgb
            rgba[..., 3] = 255
            # width, height, PIXEL_FORMAT_RGBA_8888, dataspace sRGB (Android 9+ header)
            data = struct.pack("<IIII", w, h, 1, 1) + rgba.tobytes()
        if files:
            self.state.fs.write(files[-1], data)
        else:
            out.out(data)
        return 0

    def cmd_uiautomator(self, args: list[str], out: Output) -> int:
        if not args or args[0] != "dump":
            out.err("Usage: uiautomator dump [--compressed] [file]\n")
            return 1
        files = [a for a in args[1:] if not a.startswith("--")]
        target = files[0] if files else "/sdcard/window_dump.xml"
        if self.state.dump_failures > 0 or self.phone.animating():
            # uiautomator waits for the UI to go idle first; a screen that keeps changing
            # on its own (a running stopwatch) never does, exactly as on a phone.
            self.state.dump_failures = max(0, self.state.dump_failures - 1)
            out.out("ERROR: could not get idle state.\n")
            return 1
        xml = self.phone.hierarchy()
        if target in ("/dev/tty", "/dev/stdout"):
            out.out(xml)
        else:
            self.state.fs.write(target, xml.encode("utf-8"))
        out.out(f"UI hierchary dumped to: {target}\n")  # sic: Android's own spelling
        return 0

    # -- input ---------------------------------------------------------------------------
    def cmd_input(self, args: list[str], out: Output) -> int:
        sources = {"touchscreen", "keyboard", "mouse", "touchpad", "dpad", "stylus", "trackball", "gamepad"}
        while args and args[0] in sources:
            args = args[1:]
        if args and args[0] == "-d":
            args = args[2:]
        if not args:
            out.err("Usage: input [<source>] <command> [<arg>...]\n")
            return 1
        sub, rest = args[0], args[1:]
        if sub == "tap":
            self.phone.tap(int(float(rest[0])), int(float(rest[1])))
        elif sub in ("swipe", "draganddrop"):
            x1, y1, x2, y2 = (int(float(v)) for v in rest[:4])
            ms = int(rest[4]) if len(rest) > 4 else 300
            if (x1, y1) == (x2, y2) and ms >= 400:
                self.phone.long_press(x1, y1, ms)
            else:
                self.phone.swipe(x1, y1, x2, y2, ms)
        elif sub == "text":
            text = " ".join(rest)
            text = _percent_s_to_space(text)
            if any(ord(c) > 126 for c in text):
                out.err("Exception occurred while executing 'text':\n"
                        "java.lang.IllegalArgumentException: characters outside ASCII cannot be typed "
                        "with 'input text'\n")
                return 1
            self.phone.text(text)
        elif sub == "keyevent":
            codes = [a for a in rest if not a.startswith("--")]
            for code in codes:
                self._key(code, out)
        else:
            out.err(f"Error: Unknown command: {sub}\n")
            return 1
        return 0

    def _key(self, code: str, out: Output) -> None:
        name = code.upper().removeprefix("KEYCODE_")
        num = int(code) if code.isdigit() else KEYCODE_NAMES.get(name)
        if num is None:
            raise ValueError(f"unknown key {code!r}")
        if num == 26:
            self.state.screen_on = not self.state.screen_on
        elif num == 224:
            self.state.screen_on = True
        elif num == 223:
            self.state.screen_on = False
        elif num in KEYCODES:
            self.phone.key(KEYCODES[num])
        else:
            log.debug("virtual phone ignores key %s", code)

    # -- activities and packages -------------------------------------------------------
    def _packages(self) -> list[tuple[str, str]]:
        return self.phone.installed_apps()

    def _known(self, package: str) -> bool:
        apps = self._packages()
        return not apps or any(p == package for p, _ in apps)

    def cmd_am(self, args: list[str], out: Output) -> int:
        sub, rest = (args[0], args[1:]) if args else ("", [])
        if sub in ("start", "start-activity"):
            component = _opt(rest, "-n")
            action = _opt(rest, "-a")
            package = component.split("/", 1)[0] if component else ACTION_PACKAGES.get(action or "", "")
            if not package:
                out.err("Error: no component or known action given\n")
                return 1
            if not self._known(package):
                out.err(f"Error: Activity class {{{component or package}}} does not exist.\n")
                return 1
            out.out(f"Starting: Intent {{ cmp={component or package} }}\n")
            self.phone.open_app(package)
            return 0
        if sub == "force-stop":
            return 0
        if sub == "broadcast":
            action = _opt(rest, "-a") or ""
            out.out(f"Broadcasting: Intent {{ act={action} flg=0x400000 (has extras) }}\n")
            if self.state.adb_keyboard and action in ("ADB_INPUT_TEXT", "ADB_INPUT_B64"):
                msg = _opt(rest, "--es", key="msg") or ""
                text = base64.b64decode(msg).decode("utf-8") if action == "ADB_INPUT_B64" else msg
                self.phone.text(text)
            elif self.state.adb_keyboard and action == "ADB_KEYBOARD_CLOSE":
                pass
            out.out("Broadcast completed: result=0\n")
            return 0
        out.err(f"am: unknown command '{sub}'\n")
        return 1

    def cmd_monkey(self, args: list[str], out: Output) -> int:
        package = _opt(args, "-p")
        if not package or not self._known(package):
            out.err("** No activities found to run, monkey aborted.\n")
            return 252
        self.phone.open_app(package)
        out.out("  bash arg: -p\n  bash arg: " + package + "\nEvents injected: 1\n")
        return 0

    def cmd_pm(self, args: list[str], out: Output) -> int:
        if args[:2] == ["list", "packages"]:
            needle = next((a for a in args[2:] if not a.startswith("-")), "")
            for pkg, _label in self._packages():
                if needle in pkg:
                    out.out(f"package:{pkg}\n")
            return 0
        if args[:1] == ["query-activities"]:  # the launchable apps, as `--brief` prints them
            if "android.intent.category.LAUNCHER" in args:
                for pkg, _label in self._packages():
                    out.out(f"priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n"
                            f"{pkg}/.MainActivity\n")
            return 0
        if args[:1] == ["path"] and len(args) > 1:
            if self._known(args[1]):
                out.out(f"package:/data/app/{args[1]}/base.apk\n")
                return 0
            return 1
        out.err("pm: unsupported command on the virtual phone\n")
        return 1

    def cmd_cmd(self, args: list[str], out: Output) -> int:
        if args[:1] == ["package"]:
            return self.cmd_pm(args[1:], out)
        out.err(f"cmd: can't find service: {args[0] if args else ''}\n")
        return 20

    def cmd_ime(self, args: list[str], out: Output) -> int:
        if args[:1] == ["list"]:
            if self.state.adb_keyboard:
                out.out(ADB_KEYBOARD_IME + "\n")
            out.out("com.android.inputmethod.latin/.LatinIME\n")
            return 0
        if args[:1] in (["enable"], ["set"]) and len(args) > 1:
            if args[1] == ADB_KEYBOARD_IME and not self.state.adb_keyboard:
                out.err(f"Unknown input method {args[1]} cannot be selected\n")
                return 1
            if args[0] == "set":
                self.state.default_ime = args[1]
                out.out(f"Input method {args[1]} selected for user #0\n")
            return 0
        return 1

    def cmd_dumpsys(self, args: list[str], out: Output) -> int:
        service = args[0] if args else ""
        pkg, act = self.phone.foreground()
        comp = f"{pkg}/{act}" if act else pkg
        if service == "window":
            out.out(
                "WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
                f"  mCurrentFocus=Window{{1a2b3c4 u0 {comp}}}\n"
                f"  mFocusedApp=ActivityRecord{{5d6e7f8 u0 {comp} t12}}\n"
                "  mDreamingLockscreen=false mShowingLockscreen=false\n"
                f"  mScreenOnFully={'true' if self.state.screen_on else 'false'}\n"
            )
        elif service == "activity":
            out.out(
                f"  mResumedActivity: ActivityRecord{{5d6e7f8 u0 {comp} t12}}\n"
                f"  ACTIVITY {comp} 9a8b7c6 pid=4242\n"
            )
        elif service == "display":
            size = self.phone.size()
            out.out(
                f"  mDefaultViewport=DisplayViewport{{valid=true, orientation=0, "
                f"deviceWidth={size.width}, deviceHeight={size.height}}}\n"
                "  mCurrentOrientation=0\n"
            )
        elif service == "power":
            on = self.state.screen_on
            out.out(
                f"  mWakefulness={'Awake' if on else 'Asleep'}\n"
                f"  mHoldingDisplaySuspendBlocker={'true' if on else 'false'}\n"
                f"  Display Power: state={'ON' if on else 'OFF'}\n"
            )
        elif service == "input_method":
            out.out(f"  mCurInputMethodId={self.state.default_ime}\n")
        else:
            out.out(f"Can't find service: {service}\n")
        return 0

    def cmd_svc(self, args: list[str], out: Output) -> int:
        return 0

    def cmd_content(self, args: list[str], out: Output) -> int:
        """``content query --uri content://com.android.contacts/... --projection display_name``:
        the contacts' names, one ``Row: N display_name=NAME`` line each, as Android prints them."""
        uri = _opt(args, "--uri") or ""
        if args[:1] != ["query"] or "com.android.contacts" not in uri:
            out.err("Error: the virtual phone answers only 'content query' on the contacts provider\n")
            return 1
        for i, name in enumerate(self.phone.contact_names()):
            out.out(f"Row: {i} display_name={name}\n")
        return 0

    def cmd_tapwise_bench(self, args: list[str], out: Output) -> int:
        """The benchmark side channel (``phone.virtual.wire.bench_control``)."""
        from phone.virtual.wire import bench_control

        status, stdout, stderr = bench_control.run(self.phone, args)
        out.out(stdout)
        out.err(stderr)
        return status

    def cmd_app_process(self, argv: list[str], env: dict[str, str], out: Output) -> int:
        if self.app_process is None:
            out.err("app_process: no runtime on this phone\n")
            return 1
        return self.app_process(argv, env, self.live_write or out.out)


def _percent_s_to_space(text: str) -> str:
    """Android's ``input text`` turns every ``%s`` into a space."""
    return text.replace("%s", " ")


def _opt(args: list[str], flag: str, key: str | None = None) -> str | None:
    for i, a in enumerate(args):
        if a == flag:
            if key is None:
                return args[i + 1] if i + 1 < len(args) else None
            if i + 2 < len(args) and args[i + 1] == key:
                return args[i + 2]
    return None
