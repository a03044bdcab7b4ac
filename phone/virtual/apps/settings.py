"""The Settings app: network (Wi-Fi, SIM with mobile data and roaming, airplane mode),
connected devices (Bluetooth), display, sound, notifications, accessibility, system
(language) and about phone, plus a settings search.  State lives in
``phone.state["settings"]``.
"""

from __future__ import annotations

from typing import Any

from phone.virtual.apps.base import App, Page
from phone.virtual.apps.common import Row, list_page
from phone.virtual.apps.panels import overflow_menu
from phone.virtual.controls import edit
from phone.virtual.system import Dialog
from phone.virtual.view import Node, Ui, label
from vision.geometry import Rect

RINGTONES = [
    "Beep-Beep", "Bright Morning", "Chime Time", "Copycat", "Crackle", "Dance Party", "Early Bird", "Flutterby",
    "Hey Hey", "Lullaby", "Pixel Sounds", "Rolling Fog", "Sunshine", "Teapot", "The Big Adventure", "Twinkle",
    "Zen Garden", "Zen Too",
]
FONT_SIZES = ["small", "default", "large", "largest"]
TIMEOUTS = ["15 seconds", "30 seconds", "1 minute", "2 minutes", "5 minutes", "10 minutes", "30 minutes"]
LOCK_SCREEN = ["Show all notifications", "Hide silent notifications", "Don't show any notifications"]
LANG_NAMES = {"en": "English (United States)", "de": "Deutsch (Deutschland)"}

# (title, page, keywords) for the settings search
_SEARCH_INDEX = [
    ("Wi‑Fi", "wifi"), ("Internet", "wifi"), ("SIMs", "sim"), ("Mobile data", "sim"), ("Roaming", "sim"),
    ("Airplane mode", "network"), ("Bluetooth", "connected"), ("Pair new device", "pair"),
    ("Dark theme", "display"), ("Brightness level", "display"), ("Font size", "font_size"),
    ("Screen timeout", "display"), ("Vibrate for calls", "sound"), ("Phone ringtone", "ringtone"),
    ("Do Not Disturb", "sound"), ("Notifications on lock screen", "notifications"),
    ("Notification dot on app icon", "notifications"), ("Color inversion", "accessibility"),
    ("Magnification", "accessibility"), ("Remove animations", "accessibility"), ("Languages", "system"),
    ("Device name", "about"), ("Build number", "about"), ("Battery saver", "battery"), ("Use location", "location"),
]


class Settings(App):
    package = "com.android.settings"
    label = "Settings"
    icon = "cog"
    color = (85, 108, 140)
    key = "settings"
    activity_prefix = "com.android.settings"

    @staticmethod
    def default_state() -> dict[str, Any]:
        return {
            "wifi": True, "wifi_network": "HomeNet-5G",
            "wifi_networks": ["HomeNet-5G", "CoffeeBar Guest", "Linksys-2F7A", "FRITZ!Box 7590 KL", "Office-Secure",
                              "DIRECT-42-HP Printer"],
            "wifi_saved": ["HomeNet-5G"],
            "mobile_data": True, "data_roaming": True, "airplane_mode": False, "data_saver": False, "hotspot": False,
            "bluetooth": False, "bt_paired": ["Pixel Buds Pro"], "bt_available": ["JBL Flip 5", "Car Audio 3F",
                                                                                   "Galaxy Watch6", "Bose QC45"],
            "device_name": "Tapwise Phone",
            "dark_theme": False, "brightness": 60, "adaptive_brightness": True, "font_size": "default",
            "screen_timeout": "30 seconds",
            "media_volume": 50, "ring_volume": 70, "vibrate_calls": True, "dnd": False, "ringtone": "Pixel Sounds",
            "lock_screen_notifications": "Show all notifications", "notification_dots": True,
            "app_notifications": {}, "color_inversion": False, "magnification": False, "remove_animations": False,
            "extra_dim": False, "battery_saver": False, "battery_percentage": True, "location": True,
            "developer": False, "build_taps": 0, "language": "en",
        }

    # -- helpers ---------------------------------------------------------------------------
    def _toggle(self, key: str):
        def cb() -> None:
            self.s[key] = not self.s[key]
            if key == "airplane_mode" and self.s[key]:
                self.s["wifi"] = False
                self.s["bluetooth"] = False
            if key == "bluetooth" and self.s[key] and self.s["airplane_mode"]:
                pass
        return cb

    def _sw(self, title: str, key: str, subtitle: str = "", icon: str = "") -> Row:
        return Row("switch", title, subtitle, icon, checked=bool(self.s[key]), on_tap=self._toggle(key))

    def _nav(self, title: str, page: str, subtitle: str = "", icon: str = "", translate: bool = True) -> Row:
        return Row("nav", title, subtitle, icon, on_tap=lambda: self.push(page), translate=translate)

    def back(self) -> bool:
        if self.page.args.pop("menu", None):
            return True  # BACK closes an open overflow menu first
        return super().back()

    # -- pages --------------------------------------------------------------------------------
    def page_main(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        wifi_sub = (s["wifi_network"] if s["wifi"] and s["wifi_network"] else ui.tr("Off"))
        rows = [
            Row("custom", height=ui.dp(76), build=lambda top: self._search_bar(ui, top)),
            Row("nav", "Network & internet", f"{ui.tr('Mobile')}, Wi‑Fi, {ui.tr('hotspot')}", "wifi",
                on_tap=lambda: self.push("network"), rid="network", translate=True),
            Row("nav", "Connected devices", "Bluetooth, pairing", "bluetooth-connect",
                on_tap=lambda: self.push("connected")),
            Row("nav", "Apps", "Recent apps, default apps", "apps", on_tap=lambda: self.push("apps")),
            Row("nav", "Notifications", "Notification history, conversations", "bell-outline",
                on_tap=lambda: self.push("notifications")),
            Row("nav", "Battery", "82%", "battery-80", on_tap=lambda: self.push("battery")),
            Row("nav", "Storage", "45% used - 70.4 GB free", "database-outline", on_tap=lambda: self.push("storage")),
            Row("nav", "Sound & vibration", "Volume, haptics, Do Not Disturb", "volume-high",
                on_tap=lambda: self.push("sound")),
            Row("nav", "Display", "Dark theme, font size, brightness", "brightness-6",
                on_tap=lambda: self.push("display")),
            Row("nav", "Wallpaper & style", "Colors, themed icons, app grid", "palette-outline",
                on_tap=lambda: self.push("wallpaper")),
            Row("nav", "Accessibility", "Display, interaction, audio", "human",
                on_tap=lambda: self.push("accessibility")),
            Row("nav", "Security & privacy", "App security, device lock", "shield-outline",
                on_tap=lambda: self.push("security")),
            Row("nav", "Location", "On - 3 apps have access" if s["location"] else "Off", "map-marker-outline",
                on_tap=lambda: self.push("location")),
            Row("nav", "System", "Languages, gestures, time, backup", "information-outline",
                on_tap=lambda: self.push("system")),
            Row("nav", "About phone", s["device_name"], "cellphone", on_tap=lambda: self.push("about")),
        ]
        del wifi_sub
        list_page(ui, root, page.args, "Settings", rows, large=True)

    def _search_bar(self, ui: Ui, top: int) -> Node:
        from vision.geometry import Rect

        r = Rect(ui.gutter, top + ui.dp(10), ui.W - ui.gutter, top + ui.dp(66))
        n = edit(ui, r, "", "Search settings", focused=False, on_focus=lambda: self.push("search", query=""),
                 rid="search_action_bar", style="pill", lead_icon="magnify")
        return n

    def page_search(self, ui: Ui, page: Page, root: Node) -> None:
        from vision.geometry import Rect

        c = ui.content
        if not self.phone.is_focused(page.args, "query") and not page.args.get("_focused_once"):
            page.args["_focused_once"] = True
            self.phone.focus_field(page.args, "query")
        q = str(page.args.get("query", "")).strip().lower()
        rows = []
        if q:
            for title, target in _SEARCH_INDEX:
                if q in ui.tr(title).lower() or q in title.lower():
                    rows.append(Row("nav", title, ui.tr(_PAGE_TITLES.get(target, "Settings")), "magnify",
                                    on_tap=lambda t=target: self.replace_stack(t)))
        lst = list_page(ui, root, page.args, "", rows, on_back=self.up, top_extra=0)
        del lst
        fr = Rect(ui.dp(64), c.top + ui.dp(8), ui.W - ui.gutter, c.top + ui.dp(56))
        root.add(self.field(ui, fr, page.args, "query", "Search settings", rid="search_src_text", style="pill"))
        if q and not rows:
            root.add(label(ui, ui.W // 2, c.top + ui.dp(140), "No results", size=16, color=ui.p.on_variant,
                           anchor="mm"))

    def replace_stack(self, target: str) -> None:
        self.stack = [Page("main")]
        parent = _PARENTS.get(target)
        if parent:
            self.stack.append(Page(parent))
        self.push(target)

    def page_network(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        internet = s["wifi_network"] if s["wifi"] and s["wifi_network"] else ("Off" if not s["wifi"] else "Not connected")
        rows = [
            Row("nav", "Internet", internet, "wifi", on_tap=lambda: self.push("wifi"), translate=True),
            Row("nav", "SIMs", "T-Mobile", "signal-cellular-3", on_tap=lambda: self.push("sim")),
            self._sw("Airplane mode", "airplane_mode", icon="airplane"),
            Row("nav", "Hotspot & tethering", "Off", "access-point", on_tap=lambda: self.push("hotspot")),
            self._sw("Data Saver", "data_saver", icon="database-outline"),
            Row("nav", "VPN", "None", "key-outline", on_tap=lambda: self.toast("No VPNs added")),
            Row("nav", "Private DNS", "Automatic", "dns-outline", on_tap=None),
        ]
        list_page(ui, root, page.args, "Network & internet", rows, on_back=self.up)

    def page_sim(self, ui: Ui, page: Page, root: Node) -> None:
        rows = [
            Row("header", "T-Mobile"),
            self._sw("Mobile data", "mobile_data", "Access data using mobile network"),
            self._sw("Roaming", "data_roaming", "Connect to data services when roaming"),
            Row("nav", "App data usage", "1.2 GB used Feb 12 – Mar 11", on_tap=None),
            Row("nav", "Data warning & limit", on_tap=None),
            Row("nav", "Preferred network type", "5G (recommended)", on_tap=None),
            Row("info", "Phone number", "+1 555-0142"),
        ]
        list_page(ui, root, page.args, "SIMs", rows, on_back=self.up)

    def page_hotspot(self, ui: Ui, page: Page, root: Node) -> None:
        rows = [self._sw("Wi‑Fi hotspot", "hotspot", "Not sharing internet with other devices"),
                Row("info", "USB tethering", "Share phone's internet connection via USB")]
        list_page(ui, root, page.args, "Hotspot & tethering", rows, on_back=self.up)

    def page_wifi(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        rows = [self._sw("Wi‑Fi", "wifi", icon="wifi")]
        if s["wifi"]:
            nets = list(s["wifi_networks"])
            if s["wifi_network"] in nets:
                nets.remove(s["wifi_network"])
                rows.append(Row("nav", s["wifi_network"], "Connected", "wifi-strength-4",
                                on_tap=lambda: self.push("wifi_detail", name=s["wifi_network"]), translate=False))
            for i, name in enumerate(nets):
                saved = name in s["wifi_saved"]
                rows.append(Row("nav", name, "Saved" if saved else "", "wifi-strength-3-lock" if i % 3 else "wifi-strength-2-lock",
                                on_tap=lambda name=name: self._connect(name), translate=False))
            rows.append(Row("nav", "Add network", icon="plus", on_tap=lambda: self.toast("Scan QR code or enter details")))
            rows.append(Row("nav", "Saved networks", f"{len(s['wifi_saved'])} networks", on_tap=None))
        else:
            rows.append(Row("info", "To see available networks, turn Wi‑Fi on."))
        list_page(ui, root, page.args, "Internet", rows, on_back=self.up)

    def _connect(self, name: str) -> None:
        s = self.s
        if name in s["wifi_saved"]:
            s["wifi_network"] = name
            self.toast(f"Connected to {name}")
            return
        holder: dict[str, str] = {"password": ""}

        def connect() -> bool | None:
            if len(holder["password"]) < 8:
                self.toast("Password must be at least 8 characters")
                return False
            s["wifi_network"] = name
            s["wifi_saved"].append(name)
            self.toast(f"Connected to {name}")
            return None

        self.phone.show_dialog(Dialog(title=name, field_holder=holder, field_key="password", field_hint="Password",
                                      buttons=[("Cancel", None), ("Connect", connect)]))

    def page_wifi_detail(self, ui: Ui, page: Page, root: Node) -> None:
        name = page.args.get("name", "")

        def forget() -> None:
            s = self.s
            if name in s["wifi_saved"]:
                s["wifi_saved"].remove(name)
            if s["wifi_network"] == name:
                s["wifi_network"] = ""
            self.back()

        rows = [Row("info", "Status", "Connected"), Row("info", "Signal strength", "Excellent"),
                Row("info", "Frequency", "5 GHz"), Row("info", "Security", "WPA2-Personal"),
                Row("nav", "Forget", icon="delete", on_tap=forget, rid="forget"),
                Row("info", "IP address", "192.168.1.23")]
        list_page(ui, root, page.args, name, rows, on_back=self.up, translate_title=False)

    def page_connected(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        rows = [
            Row("nav", "Pair new device", icon="plus", on_tap=self._pair_page, rid="pair_new"),
            self._sw("Bluetooth", "bluetooth", "Visible as “" + s["device_name"] + "” to nearby devices"
                     if s["bluetooth"] else "", icon="bluetooth"),
            Row("nav", "Device name", s["device_name"], "pencil-outline", on_tap=self._rename_dialog),
            Row("header", "Saved devices"),
        ]
        for d in s["bt_paired"]:
            rows.append(Row("nav", d, "Connected" if s["bluetooth"] else "Not connected", "headphones",
                            on_tap=lambda d=d: self.push("bt_device", name=d), translate=False))
        rows.append(Row("nav", "Connection preferences", "Bluetooth, Android Auto, NFC", "cog-outline", on_tap=None))
        list_page(ui, root, page.args, "Connected devices", rows, on_back=self.up)

    def _pair_page(self) -> None:
        self.s["bluetooth"] = True
        self.push("pair")

    def page_pair(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        rows = [Row("info", "Device name", s["device_name"]), Row("header", "Available devices")]
        for d in s["bt_available"]:
            rows.append(Row("nav", d, "", "bluetooth", on_tap=lambda d=d: self._pair(d), translate=False))
        list_page(ui, root, page.args, "Pair new device", rows, on_back=self.up)

    def _pair(self, name: str) -> None:
        def ok() -> None:
            s = self.s
            if name in s["bt_available"]:
                s["bt_available"].remove(name)
            if name not in s["bt_paired"]:
                s["bt_paired"].append(name)
            self.toast(f"Paired with {name}")
            self.back()
        self.phone.show_dialog(Dialog(title=f"Pair with {name}?", message="Bluetooth pairing code: 482 913",
                                      buttons=[("Cancel", None), ("Pair", ok)], translate_options=False))

    def page_bt_device(self, ui: Ui, page: Page, root: Node) -> None:
        name = page.args.get("name", "")

        def forget() -> None:
            s = self.s
            if name in s["bt_paired"]:
                s["bt_paired"].remove(name)
                s["bt_available"].append(name)
            self.back()

        rows = [Row("info", "Device details", name), Row("nav", "Forget", icon="delete", on_tap=forget, rid="forget"),
                Row("check", "Phone calls", checked=True), Row("check", "Media audio", checked=True)]
        list_page(ui, root, page.args, "Device details", rows, on_back=self.up)

    def _rename_dialog(self) -> None:
        holder = {"name": self.s["device_name"]}

        def save() -> bool | None:
            if not holder["name"].strip():
                self.toast("Device name can't be empty")
                return False
            self.s["device_name"] = holder["name"].strip()
            return None

        self.phone.show_dialog(Dialog(title="Rename this device", field_holder=holder, field_key="name",
                                      field_hint="Device name", buttons=[("Cancel", None), ("Rename", save)]))

    def page_display(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        rows = [
            Row("header", "Brightness"),
            Row("seek", "Brightness level", value=s["brightness"] / 100,
                on_set=lambda v: s.__setitem__("brightness", int(round(v * 100))), icon="brightness-6",
                rid="brightness"),
            self._sw("Adaptive brightness", "adaptive_brightness", "Optimize brightness for light"),
            Row("header", "Lock display"),
            Row("nav", "Screen timeout", s["screen_timeout"], on_tap=self._timeout_dialog),
            Row("header", "Appearance"),
            self._sw("Dark theme", "dark_theme", "Use a dark background"),
            Row("nav", "Font size", s["font_size"].capitalize(), on_tap=lambda: self.push("font_size")),
            Row("nav", "Display size and text", on_tap=lambda: self.push("font_size")),
            Row("header", "Other display controls"),
            Row("nav", "Screen saver", "Clock", on_tap=None),
            Row("nav", "Auto-rotate screen", "Off", on_tap=None),
        ]
        list_page(ui, root, page.args, "Display", rows, on_back=self.up)

    def _timeout_dialog(self) -> None:
        sel = TIMEOUTS.index(self.s["screen_timeout"]) if self.s["screen_timeout"] in TIMEOUTS else 1
        self.phone.show_dialog(Dialog(title="Screen timeout", options=list(TIMEOUTS), selected=sel,
                                      on_choose=lambda i: self.s.__setitem__("screen_timeout", TIMEOUTS[i]),
                                      buttons=[("Cancel", None), ("OK", lambda: self._apply_choice("screen_timeout", TIMEOUTS))]))

    def _apply_choice(self, key: str, options: list[str]) -> None:
        d = self.phone.dialog
        if d is not None and d.selected is not None:
            self.s[key] = options[d.selected]

    def page_font_size(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        rows = [Row("custom", height=ui.dp(110), build=lambda top: _preview(ui, top))]
        for fs in FONT_SIZES:
            rows.append(Row("radio", fs.capitalize(), checked=s["font_size"] == fs,
                            on_tap=lambda fs=fs: s.__setitem__("font_size", fs)))
        list_page(ui, root, page.args, "Font size", rows, on_back=self.up)

    def page_sound(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        rows = [
            Row("seek", "Media volume", value=s["media_volume"] / 100, icon="music-note",
                on_set=lambda v: s.__setitem__("media_volume", int(round(v * 100))), rid="media_volume"),
            Row("seek", "Ring & notification volume", value=s["ring_volume"] / 100, icon="bell-outline",
                on_set=lambda v: s.__setitem__("ring_volume", int(round(v * 100))), rid="ring_volume"),
            self._sw("Do Not Disturb", "dnd", "Off" if not s["dnd"] else "On", icon="minus-circle-outline"),
            self._sw("Vibrate for calls", "vibrate_calls", icon="vibrate"),
            Row("nav", "Phone ringtone", s["ringtone"], on_tap=lambda: self.push("ringtone")),
            Row("nav", "Default notification sound", "Eureka", on_tap=None),
            Row("nav", "Default alarm sound", "Cesium", on_tap=None),
            Row("nav", "Live Caption", "Automatically caption media", on_tap=None),
        ]
        list_page(ui, root, page.args, "Sound & vibration", rows, on_back=self.up)

    def page_ringtone(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        rows = [Row("radio", t, checked=s["ringtone"] == t, on_tap=lambda t=t: s.__setitem__("ringtone", t),
                    translate=False) for t in RINGTONES]
        list_page(ui, root, page.args, "Phone ringtone", rows, on_back=self.up)

    def page_notifications(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        rows = [
            Row("nav", "App notifications", "Control notifications from individual apps", "bell-outline",
                on_tap=lambda: self.push("app_notifications")),
            Row("nav", "Notification history", on_tap=None, icon="history"),
            Row("header", "Privacy"),
            Row("nav", "Notifications on lock screen", s["lock_screen_notifications"], on_tap=self._lock_dialog),
            Row("header", "General"),
            self._sw("Notification dot on app icon", "notification_dots"),
            Row("nav", "Do Not Disturb", "On" if s["dnd"] else "Off", on_tap=self._toggle("dnd")),
        ]
        list_page(ui, root, page.args, "Notifications", rows, on_back=self.up)

    def _lock_dialog(self) -> None:
        cur = self.s["lock_screen_notifications"]
        self.phone.show_dialog(Dialog(title="Notifications on lock screen", options=list(LOCK_SCREEN),
                                      selected=LOCK_SCREEN.index(cur) if cur in LOCK_SCREEN else 0,
                                      on_choose=lambda i: self.s.__setitem__("lock_screen_notifications", LOCK_SCREEN[i])))

    def page_app_notifications(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        rows = []
        for app in sorted(self.phone.apps.values(), key=lambda a: ui.tr(a.label)):
            on = s["app_notifications"].get(app.package, True)

            def tog(pkg: str = app.package) -> None:
                s["app_notifications"][pkg] = not s["app_notifications"].get(pkg, True)
            rows.append(Row("switch", app.label, "", app.icon, checked=on, on_tap=tog))
        list_page(ui, root, page.args, "App notifications", rows, on_back=self.up)

    def page_accessibility(self, ui: Ui, page: Page, root: Node) -> None:
        rows = [
            Row("header", "Display"),
            Row("nav", "Display size and text", on_tap=lambda: self.push("font_size"), icon="format-size"),
            Row("nav", "Color and motion", on_tap=None, icon="palette-outline"),
            self._sw("Color inversion", "color_inversion", "Turn light screens dark and dark screens light",
                     icon="invert-colors"),
            self._sw("Extra dim", "extra_dim", "Dim screen beyond your phone's minimum brightness"),
            Row("header", "Interaction controls"),
            self._sw("Magnification", "magnification", "Zoom in on the screen", icon="magnify-plus-outline"),
            self._sw("Remove animations", "remove_animations", "Reduce movement on the screen"),
            Row("nav", "Timing controls", on_tap=None),
            Row("nav", "Select to Speak", "Off", on_tap=None),
        ]
        list_page(ui, root, page.args, "Accessibility", rows, on_back=self.up)

    def page_battery(self, ui: Ui, page: Page, root: Node) -> None:
        rows = [Row("info", "82%", "About 1 day, 2 hr left"), self._sw("Battery Saver", "battery_saver"),
                self._sw("Battery percentage", "battery_percentage", "Show battery percentage in status bar"),
                Row("nav", "Battery usage", on_tap=None)]
        list_page(ui, root, page.args, "Battery", rows, on_back=self.up)

    def page_storage(self, ui: Ui, page: Page, root: Node) -> None:
        rows = [Row("info", "57.6 GB used", "of 128 GB"), Row("info", "Apps", "21.3 GB"),
                Row("info", "Images", "12.8 GB"), Row("info", "Videos", "9.1 GB"), Row("info", "Audio", "1.4 GB"),
                Row("info", "Documents & other", "3.0 GB"), Row("info", "System", "10.0 GB")]
        list_page(ui, root, page.args, "Storage", rows, on_back=self.up)

    def page_wallpaper(self, ui: Ui, page: Page, root: Node) -> None:
        rows = [Row("nav", "Change wallpaper", on_tap=None), Row("info", "Themed icons", "Off"),
                Row("info", "App grid", "4 x 5")]
        list_page(ui, root, page.args, "Wallpaper & style", rows, on_back=self.up)

    def page_security(self, ui: Ui, page: Page, root: Node) -> None:
        rows = [Row("nav", "Screen lock", "PIN", on_tap=None, icon="lock"),
                Row("nav", "Face & Fingerprint Unlock", on_tap=None), Row("nav", "Find My Device", "On", on_tap=None),
                Row("nav", "Privacy dashboard", on_tap=None)]
        list_page(ui, root, page.args, "Security & privacy", rows, on_back=self.up)

    def page_location(self, ui: Ui, page: Page, root: Node) -> None:
        rows = [self._sw("Use location", "location"), Row("header", "Recent access"),
                Row("info", "Shop", "2 min ago"), Row("info", "Clock", "1 hr ago")]
        list_page(ui, root, page.args, "Location", rows, on_back=self.up)

    def page_apps(self, ui: Ui, page: Page, root: Node) -> None:
        rows = [Row("header", "Recently opened apps")]
        for app in sorted(self.phone.apps.values(), key=lambda a: ui.tr(a.label)):
            rows.append(Row("nav", app.label, app.package, app.icon,
                            on_tap=lambda pkg=app.package: self.push("app_info", package=pkg)))
        list_page(ui, root, page.args, "Apps", rows, on_back=self.up,
                  actions=(("dots-vertical", "More options", lambda: page.args.__setitem__("menu", True), "overflow"),))
        if page.args.get("menu"):
            s = self.s
            anchor = Rect(ui.W - ui.dp(52), ui.content.top + ui.dp(8), ui.W - ui.dp(4), ui.content.top + ui.dp(56))
            root.add(*overflow_menu(ui, anchor, [
                ("", "Show system apps", lambda: s.__setitem__("show_system_apps", not s.get("show_system_apps"))),
                ("", "Reset app preferences", lambda: self.toast("App preferences reset")),
                ("", "Sort by size", lambda: s.__setitem__("apps_sort", "size"))],
                close=lambda: page.args.pop("menu", None)))

    def page_app_info(self, ui: Ui, page: Page, root: Node) -> None:
        pkg = page.args.get("package", "")
        app = self.phone.apps[pkg]
        s = self.s
        on = s["app_notifications"].get(pkg, True)

        def tog() -> None:
            s["app_notifications"][pkg] = not s["app_notifications"].get(pkg, True)

        rows = [Row("info", app.label, pkg, app.icon),
                Row("switch", "Notifications", "All notifications" if on else "Off", checked=on, on_tap=tog),
                Row("nav", "Permissions", "No permissions requested", on_tap=None),
                Row("nav", "Storage & cache", "24 MB used in internal storage", on_tap=None),
                Row("nav", "Force stop", icon="close-octagon-outline", on_tap=lambda: self.toast("App stopped"))]
        list_page(ui, root, page.args, "App info", rows, on_back=self.up)

    def page_system(self, ui: Ui, page: Page, root: Node) -> None:
        rows = [Row("nav", "Languages", LANG_NAMES.get(self.s["language"], "English"), "translate",
                    on_tap=self._language_dialog),
                Row("nav", "Keyboard", "Gboard", "keyboard-outline", on_tap=None),
                Row("nav", "Gestures", on_tap=None, icon="gesture-tap"),
                Row("nav", "Date & time", "GMT+01:00", "clock-outline", on_tap=None),
                Row("nav", "Backup", "On", "backup-restore", on_tap=None),
                Row("nav", "Reset options", on_tap=None, icon="restart")]
        list_page(ui, root, page.args, "System", rows, on_back=self.up)

    def _language_dialog(self) -> None:
        codes = list(LANG_NAMES)
        cur = codes.index(self.s["language"]) if self.s["language"] in codes else 0
        self.phone.show_dialog(Dialog(title="Languages", options=[LANG_NAMES[c] for c in codes], selected=cur,
                                      translate_options=False,
                                      on_choose=lambda i: self.s.__setitem__("language", codes[i])))

    def page_about(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        rows = [
            Row("nav", "Device name", s["device_name"], on_tap=self._rename_dialog, rid="device_name"),
            Row("info", "Phone number (sim slot 1)", "+1 555-0142"),
            Row("header", "Legal & regulatory"),
            Row("nav", "Emergency information", on_tap=None),
            Row("nav", "Legal information", on_tap=None),
            Row("nav", "Regulatory labels", on_tap=None),
            Row("header", "Device details"),
            Row("info", "Model", self.phone.profile.model),
            Row("info", "Android version", "14"),
            Row("info", "IP address", "192.168.1.23"),
            Row("info", "Wi‑Fi MAC address", "3c:28:6d:11:42:af"),
            Row("info", "Bluetooth address", "3c:28:6d:11:42:b0"),
            Row("info", "Up time", "41:07:22"),
            Row("nav", "Build number", "UQ1A.240205.004", on_tap=self._build_tap, rid="build_number"),
        ]
        list_page(ui, root, page.args, "About phone", rows, on_back=self.up)

    def _build_tap(self) -> None:
        s = self.s
        if s["developer"]:
            self.toast("No need, you are already a developer.")
            return
        s["build_taps"] += 1
        left = 7 - s["build_taps"]
        if left <= 0:
            s["developer"] = True
            self.toast("You are now a developer!")
        elif left <= 4:
            self.toast(f"You are now {left} steps away from being a developer.")


def _preview(ui: Ui, top: int) -> Node:
    from phone.virtual.view import box
    from vision.geometry import Rect

    r = Rect(ui.gutter, top + ui.dp(8), ui.W - ui.gutter, top + ui.dp(100))
    n = box(r, fill=ui.p.container, radius=ui.dp(16), cls="android.widget.LinearLayout", block=("preview", "Preview"))
    n.add(label(ui, r.left + ui.dp(16), r.center.y, "The quick brown fox jumps", size=16))
    return n


_PAGE_TITLES = {"wifi": "Internet", "sim": "SIMs", "network": "Network & internet", "connected": "Connected devices",
                "pair": "Pair new device", "display": "Display", "font_size": "Font size", "sound": "Sound & vibration",
                "ringtone": "Phone ringtone", "notifications": "Notifications", "accessibility": "Accessibility",
                "system": "System", "about": "About phone", "battery": "Battery", "location": "Location"}
_PARENTS = {"wifi": "network", "sim": "network", "pair": "connected", "font_size": "display", "ringtone": "sound"}
