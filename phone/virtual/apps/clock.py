"""The Clock app: alarm, clock, timer, stopwatch and bedtime tabs; adding an alarm
with a dial time picker, a label dialog and a sound picker.  State lives in
``phone.state["clock"]``; the active tab is ``clock.tab``.

A running stopwatch is the virtual phone's animated screen: every frame the phone draws
advances it by ``FRAME_CENTIS`` (``tick``), so its pixels and its hierarchy never settle,
and ``animating`` tells the phone so (``uiautomator dump`` then fails to get an idle state,
as it does on real phones).  Time is counted in frames, not read from a wall clock, so a
replayed session draws the same screens.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from phone.virtual.apps.base import App, Page
from phone.virtual.apps.common import Row, list_page
from phone.virtual.controls import checkbox, switch
from phone.virtual.system import Dialog
from phone.virtual.view import (
    Item,
    K,
    Node,
    Ui,
    box,
    button,
    fab,
    icon,
    icon_button,
    label,
    scroll_list,
    tabs,
    tapper,
    top_bar,
)
from vision.geometry import Rect

TABS = [("Alarm", "alarm"), ("Clock", "clock-outline"), ("Timer", "timer-sand"), ("Stopwatch", "timer-outline"),
        ("Bedtime", "bed")]
TAB_KEYS = ["alarm", "clock", "timer", "stopwatch", "bedtime"]
SOUNDS = ["Cesium", "Argon", "Bright Morning", "Carbon", "Early Twilight", "Fresh Start", "Gallium", "Helium",
          "Krypton", "Neon", "Osmium", "Oxygen", "Platinum", "Rise and Shine", "Sunshower", "Timer", "Winter Sun",
          "Xenon"]
CITIES = ["Amsterdam", "Berlin", "Buenos Aires", "Cairo", "Chicago", "Dubai", "Hong Kong", "Istanbul", "London",
          "Los Angeles", "Madrid", "Mexico City", "Mumbai", "New York", "Paris", "Rome", "São Paulo", "Seoul",
          "Singapore", "Sydney", "Tokyo", "Toronto", "Vienna", "Zurich"]
OFFSETS = {"London": -1, "New York": -6, "Tokyo": 8, "Sydney": 10, "Berlin": 0, "Paris": 0, "Los Angeles": -9}
DAYS = ["S", "M", "T", "W", "T", "F", "S"]
#: How far a running stopwatch moves per drawn frame, in hundredths of a second (~15 fps).
FRAME_CENTIS = 7


def fmt_time(h: int, m: int, lang: str = "en") -> str:
    if lang == "de":
        return f"{h:02d}:{m:02d}"
    ap = "AM" if h < 12 else "PM"
    return f"{(h % 12) or 12}:{m:02d} {ap}"


def fmt_centis(centis: int) -> str:
    """A stopwatch reading: ``M:SS.cc`` (``H:MM:SS.cc`` past an hour)."""
    sec, cs = divmod(max(0, centis), 100)
    h, rest = divmod(sec, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}.{cs:02d}" if h else f"{m}:{s:02d}.{cs:02d}"


class Clock(App):
    package = "com.google.android.deskclock"
    label = "Clock"
    icon = "clock-outline"
    color = (26, 115, 232)
    key = "clock"
    activity_prefix = "com.android.deskclock"

    @staticmethod
    def default_state() -> dict[str, Any]:
        return {
            "tab": "alarm",
            "alarms": [
                {"id": 1, "hour": 7, "minute": 0, "label": "", "sound": "Cesium", "enabled": True, "vibrate": True,
                 "days": ["M", "T", "W", "T", "F"]},
                {"id": 2, "hour": 8, "minute": 30, "label": "Gym", "sound": "Argon", "enabled": False,
                 "vibrate": True, "days": []},
            ],
            "next_id": 3,
            "cities": ["London", "New York"],
            "timer": {"digits": "", "running": False, "seconds": 0},
            "stopwatch": {"running": False, "laps": 0, "started": False, "centis": 0, "lap_centis": []},
            "bedtime": {"enabled": False, "bed_hour": 23, "bed_minute": 0, "wake_hour": 7, "wake_minute": 0},
        }

    @property
    def activity(self) -> str:
        if self.page.name == "main":
            return "com.android.deskclock.DeskClock"
        return super().activity

    def _alarm(self, aid: int) -> dict | None:
        return next((a for a in self.s["alarms"] if a["id"] == aid), None)

    # -- main with tabs ----------------------------------------------------------------------
    def page_main(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        c = ui.content
        tab = TAB_KEYS.index(s["tab"]) if s["tab"] in TAB_KEYS else 0
        nav_h = ui.dp(80)
        body = Rect(0, c.top + ui.dp(64), ui.W, c.bottom - nav_h)
        getattr(self, f"_tab_{TAB_KEYS[tab]}")(ui, page, root, body)
        bar = top_bar(ui, TABS[tab][0], actions=(("dots-vertical", "More options", lambda: self.push("settings")),))
        root.add(bar)
        root.add(tabs(ui, Rect(0, c.bottom - nav_h, ui.W, c.bottom), TABS, tab,
                      lambda i: s.__setitem__("tab", TAB_KEYS[i]), bottom_nav=True, rid="tab_menu",
                      caption="Clock tabs"))

    def _tab_alarm(self, ui: Ui, page: Page, root: Node, body: Rect) -> None:
        s = self.s
        p = ui.p
        expanded = page.args.get("expanded")
        items = []
        for a in sorted(s["alarms"], key=lambda a: (a["hour"], a["minute"])):
            h = ui.dp(260) if a["id"] == expanded else ui.dp(132)
            items.append(Item(h + ui.dp(12), partial(self._alarm_card, ui, a, h=h)))
        lst = scroll_list(ui, body, page.args, "scroll", items, rid="alarm_recycler_view")
        lst.block = ("list", ui.tr("Alarms"))
        root.add(lst)
        if not s["alarms"]:
            root.add(label(ui, ui.W // 2, body.center.y, "No alarms", size=16, color=p.on_variant, anchor="mm"))
        root.add(fab(ui, "plus", "Add alarm", self._new_alarm, bottom=body.bottom - ui.dp(16)))

    def _alarm_card(self, ui: Ui, a: dict, top: int, h: int) -> Node:
        p = ui.p
        r = Rect(ui.gutter, top + ui.dp(6), ui.W - ui.gutter, top + ui.dp(6) + h)
        exp = self.page.args.get("expanded") == a["id"]
        card = box(r, fill=p.container if not exp else p.container_high, radius=ui.dp(24),
                   cls="android.widget.FrameLayout", clickable=True, rid=ui.rid("alarm_item"),
                   on_tap=tapper(lambda: self.page.args.__setitem__("expanded", None if exp else a["id"])),
                   block=("card", fmt_time(a["hour"], a["minute"], ui.lang)))
        x = r.left + ui.dp(20)
        if a["label"]:
            card.add(label(ui, x, r.top + ui.dp(22), a["label"], size=14, color=p.on_variant, translate_=False,
                           rid="edit_label"))
        col = p.on_surface if a["enabled"] else p.on_variant
        card.add(label(ui, x, r.top + ui.dp(64), fmt_time(a["hour"], a["minute"], ui.lang), size=44, color=col,
                       weight="regular", translate_=False, rid="digital_clock"))
        days = ", ".join(a["days"]) if a["days"] else ("Tomorrow" if a["enabled"] else "Not scheduled")
        card.add(label(ui, x, r.top + ui.dp(108), days, size=14, color=p.on_variant, rid="days_of_week"))
        card.add(switch(ui, r.right - ui.dp(20), r.top + ui.dp(64), a["enabled"],
                        lambda: a.__setitem__("enabled", not a["enabled"]), rid="onoff"))
        card.add(icon(ui, r.right - ui.dp(36), r.top + ui.dp(108), "chevron-up" if exp else "chevron-down", gt=False))
        if exp:
            y = r.top + ui.dp(140)
            lab = box(Rect(r.left, y, r.right, y + ui.dp(40)), cls="android.widget.LinearLayout", clickable=True,
                      on_tap=tapper(lambda: self._label_dialog(a)))
            lab.add(icon(ui, x + ui.dp(12), y + ui.dp(20), "label-outline"))
            lab.add(label(ui, x + ui.dp(40), y + ui.dp(20), a["label"] or ui.tr("Add label"), size=15,
                          translate_=False, rid="edit_label"))
            card.add(lab)
            y += ui.dp(44)
            snd = box(Rect(r.left, y, r.right, y + ui.dp(40)), cls="android.widget.LinearLayout", clickable=True,
                      on_tap=tapper(lambda: self.push("sound", alarm=a["id"])))
            snd.add(icon(ui, x + ui.dp(12), y + ui.dp(20), "bell-outline"))
            snd.add(label(ui, x + ui.dp(40), y + ui.dp(20), a["sound"], size=15, translate_=False,
                          rid="choose_ringtone"))
            card.add(snd)
            cb = checkbox(ui, r.right - ui.dp(40), y + ui.dp(20), a["vibrate"],
                          lambda: a.__setitem__("vibrate", not a["vibrate"]), rid="vibrate_onoff", text="Vibrate")
            card.add(label(ui, r.right - ui.dp(130), y + ui.dp(20), "Vibrate", size=15), cb)
            y += ui.dp(48)
            card.add(button(ui, Rect(x, y, x + ui.dp(112), y + ui.dp(40)), "Delete", lambda: self._delete(a),
                            style="text", icon_name="delete-outline", rid="delete"))
        return card

    def _delete(self, a: dict) -> None:
        at = next((i for i, x in enumerate(self.s["alarms"]) if x["id"] == a["id"]), 0)
        self.s["alarms"] = [x for x in self.s["alarms"] if x["id"] != a["id"]]
        self.page.args["expanded"] = None

        def undo() -> None:
            self.s["alarms"].insert(min(at, len(self.s["alarms"])), a)

        self.phone.show_snackbar("Alarm deleted", "Undo", undo)

    def _label_dialog(self, a: dict) -> None:
        holder = {"label": a["label"]}

        def ok() -> None:
            a["label"] = holder["label"].strip()

        self.phone.show_dialog(Dialog(title="Label", field_holder=holder, field_key="label", field_hint="Label",
                                      buttons=[("Cancel", None), ("OK", ok)]))

    def _new_alarm(self) -> None:
        data: dict[str, Any] = {"hour": 7, "minute": 0, "pm": False, "mode": "hour"}

        def ok() -> None:
            s = self.s
            hour = data["hour"] % 12 + (12 if data["pm"] else 0)
            aid = s["next_id"]
            s["next_id"] += 1
            s["alarms"].append({"id": aid, "hour": hour, "minute": data["minute"], "label": "", "sound": "Cesium",
                                "enabled": True, "vibrate": True, "days": []})
            self.page.args["expanded"] = aid
            self.toast(f"Alarm set for {fmt_time(hour, data['minute'])}")

        self.phone.show_dialog(Dialog(title="Select time", custom=lambda ui, x, t, w: _time_picker(ui, data, x, t, w),
                                      buttons=[("Cancel", None), ("OK", ok)], data=data, rid="time_picker"))

    def page_sound(self, ui: Ui, page: Page, root: Node) -> None:
        a = self._alarm(page.args.get("alarm", -1))
        rows = [Row("header", "Device sounds")]
        for snd in SOUNDS:
            rows.append(Row("radio", snd, checked=a is not None and a["sound"] == snd,
                            on_tap=lambda snd=snd: a.__setitem__("sound", snd) if a else None, translate=False))
        list_page(ui, root, page.args, "Alarm sound", rows, on_back=self._up)

    def _up(self) -> None:
        self.back()

    def page_settings(self, ui: Ui, page: Page, root: Node) -> None:
        rows = [Row("header", "Clock"), Row("info", "Style", "Digital"), Row("header", "Alarms"),
                Row("info", "Silence after", "10 minutes"), Row("info", "Snooze length", "10 minutes")]
        list_page(ui, root, page.args, "Settings", rows, on_back=self._up)

    # -- other tabs ------------------------------------------------------------------------------
    def _tab_clock(self, ui: Ui, page: Page, root: Node, body: Rect) -> None:
        s = self.s
        now = self.phone.minutes_now()
        items = [Item(ui.dp(170), lambda top: self._big_time(ui, top, now))]
        for city in s["cities"]:
            m = (now + 60 * OFFSETS.get(city, 0)) % 1440

            def row(top: int, city=city, m=m) -> Node:
                r = Rect(ui.gutter, top + ui.dp(6), ui.W - ui.gutter, top + ui.dp(86))
                n = box(r, fill=ui.p.container, radius=ui.dp(20), cls="android.widget.LinearLayout",
                        long_clickable=True, on_long=lambda: self._remove_city(city))
                n.add(label(ui, r.left + ui.dp(20), r.center.y - ui.dp(10), city, size=18, translate_=False,
                            rid="city_name"))
                n.add(label(ui, r.left + ui.dp(20), r.center.y + ui.dp(16), "Today", size=13, color=ui.p.on_variant))
                n.add(label(ui, r.right - ui.dp(20), r.center.y, fmt_time(m // 60, m % 60, ui.lang), size=28,
                            anchor="rm", translate_=False, rid="digital_clock"))
                return n
            items.append(Item(ui.dp(92), row))
        lst = scroll_list(ui, body, page.args, "scroll_clock", items, rid="cities")
        root.add(lst)
        root.add(fab(ui, "earth", "Add city", self._open_cities, bottom=body.bottom - ui.dp(16)))

    def _open_cities(self) -> None:
        self.push("cities", query="")
        self.phone.focus_field(self.page.args, "query")

    def _remove_city(self, city: str) -> None:
        self.s["cities"] = [c for c in self.s["cities"] if c != city]

    def _big_time(self, ui: Ui, top: int, now: int) -> Node:
        n = box(Rect(0, top, ui.W, top + ui.dp(170)), cls="android.widget.LinearLayout")
        n.add(label(ui, ui.W // 2, top + ui.dp(70), fmt_time(now // 60, now % 60, ui.lang), size=64, anchor="mm",
                    translate_=False, rid="digital_clock", weight="light"))
        n.add(label(ui, ui.W // 2, top + ui.dp(130), "Thu, Mar 12", size=16, anchor="mm", color=ui.p.on_variant,
                    rid="date"))
        return n

    def page_cities(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        q = str(page.args.get("query", "")).strip().lower()
        cities = [x for x in CITIES if q in x.lower()]
        rows = [Row("nav", x, on_tap=lambda x=x: self._add_city(x), translate=False) for x in cities]
        bar = top_bar(ui, "", on_back=self._up)
        lr = Rect(0, bar.rect.bottom, ui.W, c.bottom)
        from phone.virtual.apps.common import row_items

        lst = scroll_list(ui, lr, page.args, "scroll", row_items(ui, rows), rid="search_results")
        root.add(lst, bar)
        root.add(self.field(ui, Rect(ui.dp(64), c.top + ui.dp(8), ui.W - ui.gutter, c.top + ui.dp(56)), page.args,
                            "query", "Search for a city", rid="search_src_text", style="pill"))

    def _add_city(self, city: str) -> None:
        if city not in self.s["cities"]:
            self.s["cities"].append(city)
        self.back()

    def _tab_timer(self, ui: Ui, page: Page, root: Node, body: Rect) -> None:
        t = self.s["timer"]
        p = ui.p
        if t["running"]:
            sec = t["seconds"]
            root.add(label(ui, ui.W // 2, body.top + ui.dp(200), f"{sec // 3600}:{sec // 60 % 60:02d}:{sec % 60:02d}"
                           if sec >= 3600 else f"{sec // 60}:{sec % 60:02d}", size=56, anchor="mm", translate_=False,
                           rid="timer_text"))
            root.add(button(ui, Rect(ui.W // 2 - ui.dp(150), body.bottom - ui.dp(120), ui.W // 2 - ui.dp(10),
                                     body.bottom - ui.dp(64)), "Delete", self._timer_reset, style="tonal",
                            rid="reset_add"))
            root.add(button(ui, Rect(ui.W // 2 + ui.dp(10), body.bottom - ui.dp(120), ui.W // 2 + ui.dp(150),
                                     body.bottom - ui.dp(64)), "Pause", lambda: t.__setitem__("running", False),
                            rid="play_pause"))
            return
        d = t["digits"].rjust(6, "0")
        shown = f"{d[0:2]}h {d[2:4]}m {d[4:6]}s"
        col = p.primary if t["digits"] else p.on_variant
        root.add(label(ui, ui.W // 2, body.top + ui.dp(70), shown, size=48, anchor="mm", color=col,
                       translate_=False, rid="timer_setup_time"))
        keys = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "00", "0", "del"]
        kw = min(ui.dp(96), (ui.W - 2 * ui.gutter) // 3)
        x0 = ui.W // 2 - kw * 3 // 2
        y0 = body.top + ui.dp(140)
        for i, k in enumerate(keys):
            cx = x0 + (i % 3) * kw + kw // 2
            cy = y0 + (i // 3) * ui.dp(84) + ui.dp(40)
            if k == "del":
                root.add(icon_button(ui, cx, cy, "backspace-outline", "Delete", self._timer_del, rid="timer_setup_delete",
                                     bg=p.container, bg_size=72, touch=76))
            else:
                root.add(_digit_button(ui, cx, cy, k, lambda k=k: self._timer_digit(k)))
        if t["digits"]:
            root.add(fab(ui, "play", "Start", self._timer_start, bottom=body.bottom - ui.dp(16)))

    def _timer_digit(self, k: str) -> None:
        t = self.s["timer"]
        t["digits"] = (t["digits"] + k).lstrip("0")[-6:]

    def _timer_del(self) -> None:
        t = self.s["timer"]
        t["digits"] = t["digits"][:-1]

    def _timer_start(self) -> None:
        t = self.s["timer"]
        d = t["digits"].rjust(6, "0")
        t["seconds"] = int(d[0:2]) * 3600 + int(d[2:4]) * 60 + int(d[4:6])
        t["running"] = True

    def _timer_reset(self) -> None:
        self.s["timer"] = {"digits": "", "running": False, "seconds": 0}

    def _tab_stopwatch(self, ui: Ui, page: Page, root: Node, body: Rect) -> None:
        sw = self.s["stopwatch"]
        p = ui.p
        cx, cy = ui.W // 2, body.top + ui.dp(200)
        rad = ui.dp(130)
        ring = Node(rect=Rect(cx - rad, cy - rad, cx + rad, cy + rad), cls="android.view.View", gt=False)
        ring.ops.append(("ring", cx - rad, cy - rad, cx + rad, cy + rad, p.primary if sw["running"] else p.container_high,
                         ui.dp(6)))
        root.add(ring)
        root.add(label(ui, cx, cy, fmt_centis(int(sw.get("centis", 0))), size=48, anchor="mm", translate_=False,
                       rid="stopwatch_time_text"))
        marks = list(sw.get("lap_centis", []))
        for i in range(sw["laps"]):
            at = fmt_centis(marks[i]) if i < len(marks) else fmt_centis(0)
            root.add(label(ui, cx, cy + rad + ui.dp(30 + 28 * i), f"# {i + 1}   {at}", size=15, anchor="mm",
                           translate_=False))
        by = body.bottom - ui.dp(60)
        if sw["running"]:
            root.add(icon_button(ui, cx - ui.dp(80), by, "flag-outline", "Lap", self._sw_lap,
                                 bg=p.container_high, bg_size=64, touch=72, rid="left_button"))
            root.add(icon_button(ui, cx + ui.dp(40), by, "pause", "Pause", lambda: sw.__setitem__("running", False),
                                 bg=p.primary_container, bg_size=72, touch=80, color=p.on_primary_container, rid="fab"))
        else:
            if sw["started"]:
                root.add(icon_button(ui, cx - ui.dp(80), by, "restart", "Reset", self._sw_reset, bg=p.container_high,
                                     bg_size=64, touch=72, rid="left_button"))
            root.add(icon_button(ui, cx + (ui.dp(40) if sw["started"] else 0), by, "play", "Start", self._sw_start,
                                 bg=p.primary_container, bg_size=72, touch=80, color=p.on_primary_container, rid="fab"))

    def _sw_start(self) -> None:
        sw = self.s["stopwatch"]
        sw["running"] = True
        sw["started"] = True

    def _sw_reset(self) -> None:
        self.s["stopwatch"] = {"running": False, "laps": 0, "started": False, "centis": 0, "lap_centis": []}

    def _sw_lap(self) -> None:
        sw = self.s["stopwatch"]
        sw["laps"] += 1
        sw.setdefault("lap_centis", []).append(int(sw.get("centis", 0)))

    def animating(self) -> bool:
        """True while the stopwatch runs in front: the screen changes on every frame."""
        sw = self.s["stopwatch"]
        return self.page.name == "main" and self.s["tab"] == "stopwatch" and bool(sw["running"])

    def tick(self) -> None:
        """One drawn frame passes: a running stopwatch moves on."""
        sw = self.s["stopwatch"]
        if sw["running"]:
            sw["centis"] = int(sw.get("centis", 0)) + FRAME_CENTIS

    def _tab_bedtime(self, ui: Ui, page: Page, root: Node, body: Rect) -> None:
        b = self.s["bedtime"]
        rows = [Row("switch", "Bedtime schedule", "Get reminders and wind down", "bed", checked=b["enabled"],
                    on_tap=lambda: b.__setitem__("enabled", not b["enabled"])),
                Row("info", "Bedtime", fmt_time(b["bed_hour"], b["bed_minute"], ui.lang), "weather-night",
                    translate=True),
                Row("info", "Wake-up", fmt_time(b["wake_hour"], b["wake_minute"], ui.lang), "white-balance-sunny"),
                Row("info", "Sunrise Alarm", "Off"), Row("info", "Listen to sleep sounds", "Off")]
        from phone.virtual.apps.common import row_items

        root.add(scroll_list(ui, body, page.args, "scroll_bed", row_items(ui, rows), rid="bedtime_list"))


def _digit_button(ui: Ui, cx: int, cy: int, text: str, cb) -> Node:
    d = ui.dp(72)
    r = Rect(cx - d // 2, cy - d // 2, cx + d // 2, cy + d // 2)
    n = Node(rect=r, cls="android.widget.Button", kind=K.BUTTON, text=text, clickable=True, on_tap=tapper(cb),
             rid=ui.rid(f"timer_setup_digit_{text}"))
    n.ops.append(("oval", *r.as_tuple(), ui.p.container, None, 0))
    n.ops.append(("text", cx, cy, text, ui.sp(26), "regular", ui.p.on_surface, "mm"))
    return n


def _time_picker(ui: Ui, data: dict, left: int, top: int, width: int) -> tuple[list[Node], int]:
    """A Material dial time picker: hour and minute boxes, AM/PM, and a clock dial."""
    p = ui.p
    nodes: list[Node] = []
    dial_d = min(width, ui.dp(256))
    head_h = ui.dp(88)
    cx = left + width // 2
    cy = top + head_h + ui.dp(16) + dial_d // 2
    dial = Node(rect=Rect(cx - dial_d // 2, cy - dial_d // 2, cx + dial_d // 2, cy + dial_d // 2),
                cls="android.view.View", rid=ui.rid("material_clock_face"), gt=False)
    dial.ops.append(("oval", *dial.rect.as_tuple(), p.container_high, None, 0))
    nodes.append(dial)
    mode = data["mode"]
    values = list(range(1, 13)) if mode == "hour" else list(range(0, 60, 5))
    cur = (data["hour"] % 12 or 12) if mode == "hour" else data["minute"]
    rad = dial_d // 2 - ui.dp(26)
    sel_pos = None
    for v in values:
        ang = (v % 12 if mode == "hour" else v // 5) / 12 * 2 * math.pi
        x = int(cx + rad * math.sin(ang))
        y = int(cy - rad * math.cos(ang))
        if v == cur:
            sel_pos = (x, y)
    if sel_pos is not None:
        dial.ops.append(("line", cx, cy, sel_pos[0], sel_pos[1], p.primary, max(2, ui.dp(2))))
        dial.ops.append(("oval", cx - ui.dp(4), cy - ui.dp(4), cx + ui.dp(4), cy + ui.dp(4), p.primary, None, 0))
    for v in values:
        ang = (v % 12 if mode == "hour" else v // 5) / 12 * 2 * math.pi
        x = int(cx + rad * math.sin(ang))
        y = int(cy - rad * math.cos(ang))
        t = str(v) if mode == "hour" else f"{v:02d}"
        s = ui.dp(44)
        sel = v == cur

        def pick(v: int = v) -> None:
            if data["mode"] == "hour":
                data["hour"] = v
                data["mode"] = "minute"
            else:
                data["minute"] = v

        n = Node(rect=Rect(x - s // 2, y - s // 2, x + s // 2, y + s // 2), cls="android.widget.TextView", kind=K.TEXT,
                 text=t, clickable=True, on_tap=tapper(pick), selected=sel, rid=ui.rid("material_clock_number"))
        if sel:
            n.ops.append(("oval", *n.rect.as_tuple(), p.primary, None, 0))
        n.ops.append(("text", x, y, t, ui.sp(16), "regular", p.on_primary if sel else p.on_surface, "mm"))
        nodes.append(n)
    # header: HH : MM and AM/PM
    bw, bh = ui.dp(84), ui.dp(72)
    hx = left + ui.dp(4)
    hy = top + ui.dp(4)
    for i, (key, text) in enumerate((("hour", str(data["hour"] % 12 or 12)), ("minute", f"{data['minute']:02d}"))):
        r = Rect(hx + i * (bw + ui.dp(24)), hy, hx + i * (bw + ui.dp(24)) + bw, hy + bh)
        act = data["mode"] == key
        n = Node(rect=r, cls="android.widget.Button", kind=K.BUTTON, text=text, clickable=True, selected=act,
                 rid=ui.rid(f"material_{key}_tv"), desc=f"{text} {'hours' if key == 'hour' else 'minutes'}",
                 on_tap=tapper(lambda key=key: data.__setitem__("mode", key)))
        n.ops.append(("rect", *r.as_tuple(), p.primary_container if act else p.container_high, ui.dp(8), None, 0))
        n.ops.append(("text", r.center.x, r.center.y, text, ui.sp(40), "regular",
                      p.on_primary_container if act else p.on_surface, "mm"))
        nodes.append(n)
    colon = label(ui, hx + bw + ui.dp(12), hy + bh // 2, ":", size=40, anchor="mm", translate_=False, gt=False)
    colon.xml = False
    nodes.append(colon)
    ax = hx + 2 * bw + ui.dp(24) + ui.dp(16)
    aw = left + width - ax
    for i, ap in enumerate(("AM", "PM")):
        r = Rect(ax, hy + i * bh // 2, ax + aw, hy + (i + 1) * bh // 2)
        act = data["pm"] == (ap == "PM")
        n = Node(rect=r, cls="android.widget.Button", kind=K.BUTTON, text=ap, clickable=True, selected=act,
                 rid=ui.rid("material_clock_period_" + ap.lower() + "_button"),
                 on_tap=tapper(lambda ap=ap: data.__setitem__("pm", ap == "PM")))
        n.ops.append(("rect", *r.as_tuple(), p.secondary_container if act else None, 0, p.outline, max(1, ui.dp(1))))
        n.ops.append(("text", r.center.x, r.center.y, ap, ui.sp(15), "medium", p.on_surface, "mm"))
        nodes.append(n)
    # The dial numbers come first in the tree so a lookup by text finds them before the header.
    return nodes, head_h + ui.dp(32) + dial_d
