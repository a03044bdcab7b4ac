"""The virtual phone: an Android-like device that implements ``agent.device.Device``.

It owns the app state (``state``: plain nested dicts, read by task oracles), the
foreground app and its back stack, the system UI (status/nav bars, keyboard, dialogs,
toasts, recents) and the noise knobs.  Every query builds one view tree; the frame,
the uiautomator XML and the ground truth are all derived from it.  Rendering is lazy
and cached by a hash of the paint operations, so ``frame_id`` only moves when pixels do.
"""

from __future__ import annotations

import copy
import io
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from PIL import Image

from agent.device import DeviceError, DeviceGone, DeviceInfo
from phone.virtual import dump, render, system
from phone.virtual.apps import APP_CLASSES, OPTIONAL_APPS
from phone.virtual.apps.base import App
from phone.virtual.apps.clock import Clock
from phone.virtual.apps.launcher import Launcher, Recents
from phone.virtual.flashes import Flashes
from phone.virtual.i18n import LANGUAGES, translate
from phone.virtual.look import LAYOUTS, PALETTES, PROFILES
from phone.virtual.noise import NoiseConfig, make_rng
from phone.virtual.phone_input import PhoneInput
from phone.virtual.truth import GroundTruth, TruthElement
from phone.virtual.view import Node, Ui
from vision.geometry import Rect, Size
from vision.types import Block, ElementKind, Screen

log = logging.getLogger(__name__)

_FONT_SCALES = {"small": 0.85, "default": 1.0, "large": 1.15, "largest": 1.3}
_START_MINUTES = 10 * 60 + 30


def deep_merge(base: dict, over: dict) -> dict:
    """Merge ``over`` into ``base`` in place (dicts recursively, everything else replaced)."""
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            deep_merge(base[k], v)
        else:
            base[k] = copy.deepcopy(v)
    return base


class _Focus:
    __slots__ = ("holder", "key", "on_submit", "multiline", "replace_next")

    def __init__(self, holder: dict, key: str, on_submit: Callable[[], Any] | None, multiline: bool,
                 replace_next: bool = False) -> None:
        self.holder, self.key, self.on_submit, self.multiline = holder, key, on_submit, multiline
        self.replace_next = replace_next


class VirtualPhone(PhoneInput):
    """An Android-like phone drawn with Pillow.  See the module docstring."""

    def __init__(self, profile: str = "phone", theme: str = "light", lang: str = "en", seed: int = 0,
                 noise: NoiseConfig | None = None, state: dict | None = None, layout: str = "default",
                 timed_flashes: bool = False) -> None:
        if profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}; choose one of {sorted(PROFILES)}")
        if theme not in PALETTES:
            raise ValueError(f"unknown theme {theme!r}; choose one of {sorted(PALETTES)}")
        if lang not in LANGUAGES:
            raise ValueError(f"unknown language {lang!r}; choose one of {sorted(LANGUAGES)}")
        if layout not in LAYOUTS:
            raise ValueError(f"unknown layout {layout!r}; choose one of {list(LAYOUTS)}")
        self.layout = layout
        self.profile = PROFILES[profile]
        self.seed = int(seed)
        self.noise = noise or NoiseConfig()
        self._theme = theme
        self._lang = lang
        self._closed = False
        self.frame_id = 0
        self.flashes = Flashes(timed_flashes)  # toasts and snackbars (``phone.virtual.flashes``)
        self.reset(state)

    # ---- lifecycle --------------------------------------------------------------------
    def default_state(self) -> dict[str, Any]:
        st: dict[str, Any] = {cls.key: cls.default_state() for cls in APP_CLASSES}
        st["settings"]["dark_theme"] = self._theme == "dark"
        st["settings"]["language"] = self._lang
        st["ui"] = {"foreground": Launcher.package, "page": "home", "visited": [], "dialog": None, "toast": None,
                    "keyboard": False, "text": ""}
        st["clock_minutes"] = _START_MINUTES
        return st

    def reset(self, overrides: dict | None = None) -> None:
        """Fresh state (plus ``overrides``), every app closed, the home screen in front."""
        self.state: dict[str, Any] = self.default_state()
        if overrides:
            for opt in OPTIONAL_APPS:  # an optional app is installed by giving its state slice
                if opt.key in overrides:
                    self.state[opt.key] = opt.default_state()
            deep_merge(self.state, overrides)
        installed = [*APP_CLASSES, *(opt for opt in OPTIONAL_APPS if opt.key in self.state)]
        self.apps: dict[str, App] = {cls.package: cls(self) for cls in installed}
        self.launcher = Launcher(self)
        self.recents_view = Recents(self)
        self.current: App = self.launcher
        self.recent: list[str] = []
        self.dialog: system.Dialog | None = None
        self.focus: _Focus | None = None
        self.flashes.clear()
        self.shifted = False
        self.symbols = False
        self._tick = 0
        self._rng_tap = make_rng(self.seed, "tap")
        self._rng_ads = make_rng(self.seed, "ads")
        self._rng_stale = make_rng(self.seed, "stale")
        self._tree: Node | None = None
        self._ui: Ui | None = None
        self._sig: int | None = None
        self._image: Image.Image | None = None
        self._image_sig: int | None = None
        self._shown: np.ndarray | None = None
        self._array: np.ndarray | None = None
        self._array_sig: int | None = None
        self._delay_left = 0
        self._prev_tree: Node | None = None
        self._dumped_sig: int | None = None
        self._settle()

    def close(self) -> None:
        self._closed = True

    def _check(self) -> None:
        if self._closed:
            raise DeviceGone("the virtual phone was closed", "create a new VirtualPhone")

    # ---- Device protocol: queries ---------------------------------------------------
    @property
    def info(self) -> DeviceInfo:
        return DeviceInfo(serial=f"virtual-{self.profile.name}-{self.seed}", state="device", model=self.profile.model,
                          android_version="14", size=self.screen_size(), density_dpi=self.profile.dpi,
                          is_virtual=True)

    def screen_size(self) -> Size:
        return Size(self.profile.width, self.profile.height)

    def foreground(self) -> tuple[str, str]:
        self._check()
        app = self._front_app()
        return app.package, app.activity

    def screenshot(self, *, with_hierarchy: bool = False) -> Screen:
        self._check()
        self.tick_flashes()
        if self.noise.dynamic_content:
            self._tick += 1
            self.state["clock_minutes"] += 1 if self._tick % 3 == 0 else 0
            self._settle()
        front = self._front_app()
        if isinstance(front, Clock) and front.animating():
            front.tick()  # every drawn frame moves a running stopwatch on
            self._settle()
        t0 = time.perf_counter()
        img = self._frame_array()
        if self._delay_left > 0 and self._shown is not None:
            self._delay_left -= 1
            img = self._shown
        else:
            self._shown = img
        timings = [("frame", (time.perf_counter() - t0) * 1000)]
        pkg, act = self.foreground()
        xml = None
        if with_hierarchy:
            t0 = time.perf_counter()
            xml = self.dump_hierarchy()
            timings.append(("hierarchy", (time.perf_counter() - t0) * 1000))
        return Screen(image=img, hierarchy_xml=xml,
                      foreground_package=pkg, foreground_activity=act, density_dpi=self.profile.dpi,
                      device=self.info.serial, timings_ms=tuple(timings))

    def is_animating(self) -> bool:
        """Whether the front screen changes on every frame by itself (a running stopwatch)."""
        front = self._front_app()
        return isinstance(front, Clock) and front.animating()

    def screenshot_png(self) -> bytes:
        arr = self.screenshot().image
        buf = io.BytesIO()
        Image.fromarray(arr).save(buf, format="PNG", compress_level=1)
        return buf.getvalue()

    def render_image(self) -> Image.Image:
        """The current frame as a Pillow image (no update-delay noise)."""
        self._check()
        tree, ui = self._build()
        if self._image is None or self._image_sig != self._sig:
            im = Image.new("RGB", (ui.W, ui.H), ui.p.background)
            render.paint_tree(im, tree)
            self._image, self._image_sig = im, self._sig
        return self._image

    def repaint(self) -> Image.Image:
        """Paint the current frame from scratch, ignoring the frame cache (benchmarks)."""
        self._image = None
        return self.render_image()

    def _frame_array(self) -> np.ndarray:
        im = self.render_image()
        if self._array is None or self._array_sig != self._image_sig:
            arr = np.asarray(im).copy()
            arr.setflags(write=False)
            self._array, self._array_sig = arr, self._image_sig
        return self._array

    def dump_hierarchy(self) -> str:
        self._check()
        tree, _ui = self._build()
        app_root = self._app_root(tree)
        stale = None
        if self.noise.stale_nodes and self._dumped_sig is not None and self._dumped_sig != self._sig:
            if self._prev_tree is not None and self._rng_stale.random() < self.noise.stale_nodes:
                stale = self._app_root(self._prev_tree)
        self._dumped_sig = self._sig
        pkg = self._front_app().package
        return dump.dump_xml(app_root, self.screen_size(), pkg, self.noise, self.seed, frame_key=self.frame_id,
                             stale=stale)

    def ground_truth(self) -> GroundTruth:
        self._check()
        tree, ui = self._build()
        els: list[TruthElement] = []
        blocks: list[Block] = []
        active_tab = None
        modal = self.dialog is not None
        screen = self.screen_size()

        def visit(n: Node, covered: bool, in_xml: bool) -> None:
            nonlocal active_tab
            if n.block is not None and n.block[0] == "dialog":
                covered = False
            if n.block is not None and n.block[0] == "scrim":
                return
            in_xml = in_xml and n.xml
            r = dump.visible_rect(n, screen)
            if r is None:
                return
            include = n.gt if n.gt is not None else (n.kind is not ElementKind.CONTAINER or n.clickable)
            start = len(els)
            if include and not covered:
                els.append(TruthElement(
                    id=f"e{len(els)}", kind=n.kind, rect=r, text=n.text, label=n.desc, icon=n.icon,
                    resource_id=n.rid, class_name=n.cls, clickable=n.clickable, checkable=n.checkable,
                    checked=n.checked if n.checkable else None, selected=n.selected, focused=n.focused,
                    in_hierarchy=in_xml,
                ))
            scrim_at = max((i for i, c in enumerate(n.children) if c.block is not None and c.block[0] == "scrim"), default=-1)
            for i, c in enumerate(n.children):
                visit(c, covered or i < scrim_at, in_xml)  # what an in-window scrim is drawn over is covered
            if n.active_tab and not covered:
                active_tab = n.active_tab
            if n.block is not None and not covered:
                ids = tuple(e.id for e in els[start:])
                active = None
                if n.active_tab:
                    active = next((e.id for e in els[start:] if e.selected), None)
                blocks.append(Block(id=f"b{len(blocks)}", role=n.block[0], rect=r, caption=n.block[1],
                                    element_ids=ids, active_child=active))

        for top in tree.children:
            is_system = top.package in (system.SYSTEMUI,)
            visit(top, modal and not is_system and top.block is None, top.xml)
        pkg, act = self.foreground()
        return GroundTruth(frame_id=self.frame_id, size=screen, package=pkg, activity=act, elements=tuple(els),
                           blocks=tuple(blocks), active_tab=active_tab,
                           dialog=translate(self.dialog.title, self.lang) if self.dialog else None,
                           keyboard=self.focus is not None)

    def contact_names(self) -> list[str]:
        """The names the Contacts app holds (what a redactor may replace)."""
        return [" ".join(f"{p.get('first', '')} {p.get('last', '')}".split())
                for p in self.state.get("contacts", {}).get("people", [])]

    def installed_apps(self) -> list[tuple[str, str]]:
        return [(translate(a.label, self.lang), a.package) for a in self.apps.values()]

    @property
    def lang(self) -> str:
        return self.state["settings"].get("language", self._lang)

    def ui_language(self) -> str:
        """The language the phone shows now (Settings > Languages changes it)."""
        return self.lang

    # ---- used by apps -----------------------------------------------------------------
    def find_app(self, name_or_package: str) -> App | None:
        q = name_or_package.strip().lower()
        for app in self.apps.values():
            names = {app.package.lower(), app.label.lower(), translate(app.label, "de").lower(),
                     translate(app.label, self.lang).lower()}
            if q in names:
                return app
        return None

    def launch(self, package: str) -> None:
        app = self.apps.get(package)
        if app is None:
            raise DeviceError(f"unknown package {package!r}")
        self.dialog = None
        self.clear_focus()
        self.current = app
        if package in self.recent:
            self.recent.remove(package)
        self.recent.insert(0, package)

    def go_home(self) -> None:
        self.dialog = None
        self.clear_focus()
        self.current = self.launcher
        self.launcher.reset()

    def show_dialog(self, d: system.Dialog) -> None:
        """Show a modal dialog; a dialog with a text field opens with it focused and its
        text selected (typing replaces it), as Android does."""
        self.clear_focus()
        self.dialog = d
        if d.field_holder is not None:
            self.focus_field(d.field_holder, d.field_key, select_all=True, on_submit=d.on_submit)
        self._settle()  # shown at once, also when called from outside an input handler

    def close_dialog(self) -> None:
        if self.dialog is not None and self.dialog.field_holder is not None:
            self.clear_focus()
        self.dialog = None

    def show_toast(self, text: str) -> None:
        self.flashes.show_toast(text, translate(text, self.lang))

    def show_snackbar(self, text: str, action: str = "", on_action: Callable[[], Any] | None = None) -> None:
        """A snackbar on the app's current page (it goes when the page is left)."""
        self.flashes.show_snackbar(text, action, on_action, page=self._front_app().page,
                                   on_screen=translate(text, self.lang))

    def tick_flashes(self) -> bool:
        """A timed phone hides toasts and snackbars whose time is up; True when the screen changed."""
        if self.flashes.tick():
            self._settle()
            return True
        return False

    def focus_field(self, holder: dict, key: str, *, on_submit: Callable[[], Any] | None = None,
                    multiline: bool = False, select_all: bool = False) -> None:
        """Focus a text field (``holder[key]``); with ``select_all`` the first typed text
        replaces the current value, like a pre-filled field whose text is selected."""
        if self.is_focused(holder, key):
            return
        self.focus = _Focus(holder, key, on_submit, multiline, select_all and bool(holder.get(key)))

    def _insert(self, text: str) -> None:
        f = self.focus
        if f is None:
            return
        if f.replace_next:
            f.holder[f.key] = text
            f.replace_next = False
        else:
            f.holder[f.key] = str(f.holder.get(f.key, "")) + text

    def is_focused(self, holder: dict, key: str) -> bool:
        return self.focus is not None and self.focus.holder is holder and self.focus.key == key

    def clear_focus(self) -> None:
        self.focus = None
        self.shifted = False
        self.symbols = False

    def minutes_now(self) -> int:
        return int(self.state["clock_minutes"])

    # ---- internals ---------------------------------------------------------------------
    def _front_app(self) -> App:
        return self.current

    def _maybe_ad(self) -> None:
        if self.noise.ads and self.dialog is None and self.current is not self.launcher:
            if self._rng_ads.random() < self.noise.ads:
                from phone.virtual.apps.ads import ad_dialog

                self.dialog = ad_dialog(self, self._rng_ads.randrange(1000))

    def _after_input(self, changed: bool = True) -> None:
        self.flashes.after_input(self._front_app().page)
        if self.noise.dynamic_content:
            self.state["clock_minutes"] += 1
        self._maybe_ad()
        old_sig = self._sig
        self._settle()
        if self.noise.update_delay and self._sig != old_sig:
            self._delay_left = self.noise.update_delay

    def _settle(self) -> None:
        """Rebuild the tree after a change; bump ``frame_id`` when the pixels change."""
        old_tree = self._tree
        self._tree = None
        tree, _ = self._build()
        sig = render.ops_signature(tree)
        if sig != self._sig:
            self.frame_id += 1
            if old_tree is not None:
                self._prev_tree = old_tree
            self._sig = sig
        ui_state = self.state["ui"]
        app = self._front_app()
        ui_state["foreground"] = app.package
        ui_state["page"] = app.page.name
        ui_state["dialog"] = self.dialog.title if self.dialog else None
        ui_state["toast"] = self.flashes.toast.text if self.flashes.toast is not None else None
        ui_state["shown"] = self.flashes.oracle_view()
        ui_state["keyboard"] = self.focus is not None
        ui_state["text"] = str(self.focus.holder.get(self.focus.key, "")) if self.focus else ""
        for mark in (app.package, f"{app.package}/{app.page.name}"):
            if mark not in ui_state["visited"]:
                ui_state["visited"].append(mark)

    def _make_ui(self, package: str) -> Ui:
        st = self.state["settings"]
        palette = PALETTES["dark" if st.get("dark_theme") else "light"]
        ui = Ui(self.profile, palette, self.lang, _FONT_SCALES.get(st.get("font_size", "default"), 1.0), package)
        ui.layout = self.layout
        if self.focus is not None:
            ui.keyboard_h = system.keyboard_height(ui)
        return ui

    def _build(self) -> tuple[Node, Ui]:
        if self._tree is not None and self._ui is not None:
            return self._tree, self._ui
        app = self._front_app()
        ui = self._make_ui(app.package)
        on_wall = app is self.launcher and self.launcher.on_wallpaper
        root = Node(rect=Rect(0, 0, ui.W, ui.H), cls="android.widget.FrameLayout", package=app.package, xml=True)
        if on_wall:
            root.ops.append(("grad", 0, 0, ui.W, ui.H, ui.p.wallpaper_top, ui.p.wallpaper_bottom))
        content = app.build(ui)
        if content.ops and content.ops[0][0] == "rect" and content.ops[0][5] == ui.p.background:
            content.ops = content.ops[1:]  # the canvas starts in the background colour
        content.package = app.package
        root.add(content)
        for n in self.flashes.nodes(ui, dialog_open=self.dialog is not None):
            n.package = n.package or (app.package if n.block and n.block[0] == "snackbar" else "")
            root.add(n)
        note = self.state["ui"].get("notification")
        if note and self.dialog is None:  # a heads-up notification, set through state["ui"]["notification"]
            card = system.notification_node(ui, note, lambda: self._notification_tapped(True),
                                            lambda: self._notification_tapped(False))
            card.package = app.package
            root.add(card)
        if self.dialog is not None:
            d = self.dialog

            def close_this() -> None:  # only while this dialog is still the one shown
                if self.dialog is d:
                    self.close_dialog()

            nodes = system.dialog_nodes(
                ui, d, close=close_this,
                focus_field=lambda: self.focus_field(d.field_holder or {}, d.field_key, select_all=True,
                                                     on_submit=d.on_submit),
                field_focused=d.field_holder is not None and self.is_focused(d.field_holder, d.field_key))
            nodes[0].block = ("scrim", "")
            for n in nodes:
                n.package = app.package
            root.add(*nodes)
        if self.focus is not None:
            root.add(system.keyboard(ui, self.shifted, self.symbols, self._type_char, self._kb_special))
        root.add(system.status_bar(ui, self._clock_text(), self._status_icons(), self._battery(), on_wall))
        root.add(system.nav_bar(ui, on_wall, self._nav_key))
        self._tree, self._ui = root, ui
        return root, ui

    def _notification_tapped(self, open_app: bool) -> None:
        """The heads-up notification goes away; tapping its card opens the app it came from."""
        note = self.state["ui"].get("notification") or {}
        self.state["ui"]["notification"] = None
        target = self.find_app(str(note.get("app", ""))) if open_app else None
        if target is not None:
            self.launch(target.package)

    def _app_root(self, tree: Node) -> Node:
        """The part of the tree uiautomator would dump: the app window (and its dialog)."""
        out = Node(rect=tree.rect, cls="android.widget.FrameLayout", package=tree.package)
        kids = [c for c in tree.children if c.xml and c.package not in (system.SYSTEMUI, system.IME)]
        if self.dialog is not None:
            kids = [c for c in kids if c.block is not None and c.block[0] == "dialog"] or kids
        out.children = kids
        return out

    def _clock_text(self) -> str:
        m = self.minutes_now() % (24 * 60)
        return f"{m // 60}:{m % 60:02d}"

    def _status_icons(self) -> tuple[str, ...]:
        st = self.state["settings"]
        icons: list[str] = []
        if st.get("airplane_mode"):
            icons.append("airplane")
        else:
            icons.append("signal-cellular-3")
            if st.get("wifi"):
                icons.append("wifi")
        if st.get("bluetooth"):
            icons.append("bluetooth")
        if st.get("dnd"):
            icons.append("minus-circle")
        if any(a.get("enabled") for a in self.state.get("clock", {}).get("alarms", [])):
            icons.append("alarm")
        return tuple(icons)

    def _battery(self) -> int:
        base = 82
        if self.noise.dynamic_content:
            base -= (self.minutes_now() - _START_MINUTES) // 10
        return max(5, base)

    def screen_hash(self) -> str:
        """A short hash of the current frame's pixels (used by tests and the mirror)."""
        import hashlib

        return hashlib.blake2b(self.render_image().tobytes(), digest_size=8).hexdigest()


def wait_ms(ms: int) -> None:
    time.sleep(ms / 1000)
