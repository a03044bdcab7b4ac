"""The Calendar app (month grid, day agenda, create event with title, date picker,
time picker and all-day switch, event details with delete) and the Files app
(categories, folders, rename, delete, new folder).  State lives in
``phone.state["calendar"]`` and ``phone.state["files"]``.
"""

from __future__ import annotations

import calendar as _cal
import datetime as dt
from typing import Any

from phone.virtual.apps.base import App, Page
from phone.virtual.apps.clock import _time_picker, fmt_time
from phone.virtual.apps.common import Row, list_page
from phone.virtual.apps.launcher import TODAY
from phone.virtual.controls import list_row
from phone.virtual.i18n import format_date
from phone.virtual.system import Dialog
from phone.virtual.view import K, Node, Ui, box, button, fab, icon, icon_button, label, tapper, top_bar
from vision.geometry import Rect

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_WD = ["S", "M", "T", "W", "T", "F", "S"]


def _event_time(event: dict[str, Any], lang: str) -> str:
    """An event's start time as the phone's language writes it."""
    h, m = (int(x) for x in str(event["start"]).split(":"))
    return fmt_time(h, m, lang)


def _d(s: str) -> dt.date:
    return dt.date.fromisoformat(s)


class Calendar(App):
    package = "com.google.android.calendar"
    label = "Calendar"
    icon = "calendar"
    color = (66, 133, 244)
    key = "calendar"
    activity_prefix = "com.android.calendar"

    @staticmethod
    def default_state() -> dict[str, Any]:
        return {"events": [
            {"title": "Team standup", "date": "2026-03-12", "start": "09:30", "all_day": False},
            {"title": "Dentist", "date": "2026-03-13", "start": "14:00", "all_day": False},
            {"title": "Mia's birthday", "date": "2026-03-17", "start": "", "all_day": True},
            {"title": "Flight to Lisbon", "date": "2026-03-24", "start": "07:45", "all_day": False},
        ], "month": "2026-03", "selected": TODAY.isoformat()}

    def _shift_month(self, k: int) -> None:
        y, m = map(int, self.s["month"].split("-"))
        m += k
        y, m = y + (m - 1) // 12, (m - 1) % 12 + 1
        self.s["month"] = f"{y:04d}-{m:02d}"

    def page_main(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        s = self.s
        p = ui.p
        y, m = map(int, s["month"].split("-"))
        title = f"{ui.tr(_MONTHS[m - 1])} {y}"
        bar = top_bar(ui, title, translate_title=False, actions=(
            ("chevron-right", "Next month", lambda: self._shift_month(1), "next_month"),
            ("chevron-left", "Previous month", lambda: self._shift_month(-1), "prev_month"),
            ("calendar-today", "Jump to today", self._today, "action_today"),
        ))
        top = bar.rect.bottom
        cw = ui.W // 7
        for i, wd in enumerate(_WD):
            root.add(label(ui, i * cw + cw // 2, top + ui.dp(16), wd, size=12, anchor="mm", color=p.on_variant,
                           translate_=False, gt=True))
        top += ui.dp(32)
        ch = ui.dp(56)
        weeks = _cal.Calendar(firstweekday=6).monthdatescalendar(y, m)
        grid = box(Rect(0, top, ui.W, top + ch * len(weeks)), cls="android.view.ViewGroup", rid=ui.rid("month_grid"),
                   block=("calendar", title))
        days_with = {e["date"] for e in s["events"]}
        for wi, week in enumerate(weeks):
            for di, day in enumerate(week):
                r = Rect(di * cw, top + wi * ch, (di + 1) * cw, top + (wi + 1) * ch)
                iso = day.isoformat()
                sel = iso == s["selected"]
                inm = day.month == m
                cell = Node(rect=r, cls="android.view.View", kind=K.BUTTON, text=str(day.day) if inm else "",
                            desc=day.strftime("%A, %B %-d"), clickable=inm, selected=sel, rid=ui.rid("day"),
                            on_tap=tapper(lambda iso=iso: s.__setitem__("selected", iso)) if inm else None, gt=inm)
                cx, cy = r.center.x, r.top + ui.dp(22)
                d = ui.dp(36)
                if sel:
                    cell.ops.append(("oval", cx - d // 2, cy - d // 2, cx + d // 2, cy + d // 2, p.primary, None, 0))
                elif day == TODAY:
                    cell.ops.append(("ring", cx - d // 2, cy - d // 2, cx + d // 2, cy + d // 2, p.primary, ui.dp(2)))
                if inm:
                    cell.ops.append(("text", cx, cy, str(day.day), ui.sp(14), "medium" if day == TODAY else "regular",
                                     p.on_primary if sel else p.on_surface, "mm"))
                    if iso in days_with:
                        dd = ui.dp(6)
                        cell.ops.append(("oval", cx - dd // 2, cy + ui.dp(18), cx + dd // 2, cy + ui.dp(18) + dd,
                                         p.primary, None, 0))
                grid.add(cell)
        root.add(grid)
        y0 = grid.rect.bottom + ui.dp(8)
        sel = _d(s["selected"])
        root.add(label(ui, ui.gutter, y0 + ui.dp(20), format_date(sel, ui.lang), size=16, weight="medium",
                       translate_=False, rid="agenda_header"))
        y0 += ui.dp(44)
        evs = [e for e in s["events"] if e["date"] == s["selected"]]
        evs.sort(key=lambda e: (not e["all_day"], e["start"]))
        for e in evs:
            r = Rect(ui.gutter, y0, ui.W - ui.gutter, y0 + ui.dp(60))
            card = box(r, fill=p.primary_container, radius=ui.dp(12), cls="android.widget.LinearLayout", clickable=True,
                       on_tap=tapper(lambda e=e: self.push("event", index=s["events"].index(e))), rid=ui.rid("event"),
                       desc=e["title"])
            card.add(label(ui, r.left + ui.dp(16), r.top + ui.dp(20), e["title"], size=15, weight="medium",
                           translate_=False, color=p.on_primary_container))
            when = ui.tr("All day") if e["all_day"] else _event_time(e, ui.lang)
            card.add(label(ui, r.left + ui.dp(16), r.top + ui.dp(42), when, size=13, translate_=False,
                           color=p.on_primary_container))
            root.add(card)
            y0 += ui.dp(68)
            if y0 > c.bottom - ui.dp(80):
                break
        if not evs:
            root.add(label(ui, ui.gutter, y0 + ui.dp(16), "No events", size=14, color=p.on_variant))
        root.add(bar)
        root.add(fab(ui, "plus", "Create event", self._new))

    def _today(self) -> None:
        self.s["month"] = TODAY.strftime("%Y-%m")
        self.s["selected"] = TODAY.isoformat()

    def _new(self) -> None:
        self.push("new", title="", date=self.s["selected"], start="10:00", all_day=False)
        self.phone.focus_field(self.page.args, "title")

    def page_new(self, ui: Ui, page: Page, root: Node) -> None:
        a = page.args
        p = ui.p
        bar = top_bar(ui, "", on_back=None)
        bar.add(icon_button(ui, ui.dp(28), bar.rect.top + ui.dp(32), "close", "Cancel", self.up, color=p.on_surface))
        bar.add(button(ui, Rect(ui.W - ui.gutter - ui.dp(88), bar.rect.top + ui.dp(12), ui.W - ui.gutter,
                                bar.rect.top + ui.dp(52)), "Save", self._save, rid="save"))
        y = bar.rect.bottom + ui.dp(8)
        root.add(self.field(ui, Rect(ui.dp(64), y, ui.W - ui.gutter, y + ui.dp(64)), a, "title", "Add title",
                            rid="title", style="none", size=24))
        y += ui.dp(76)
        root.add(list_row(ui, y, "All-day", icon_name="clock-outline", trailing="switch", checked=a["all_day"],
                          on_toggle=lambda: a.__setitem__("all_day", not a["all_day"]), rid="all_day"))
        y += ui.dp(56)
        d = _d(a["date"])
        root.add(list_row(ui, y, format_date(d, ui.lang, "short"), icon_name="calendar-blank-outline",
                          on_tap=self._date_dialog, rid="start_date", translate_title=False))
        y += ui.dp(56)
        if not a["all_day"]:
            hh, mm = map(int, a["start"].split(":"))
            root.add(list_row(ui, y, fmt_time(hh, mm, ui.lang), icon_name="clock-time-four-outline",
                              on_tap=self._time_dialog, rid="start_time", translate_title=False))
            y += ui.dp(56)
        root.add(list_row(ui, y, "Does not repeat", icon_name="repeat", on_tap=None))
        y += ui.dp(56)
        root.add(list_row(ui, y, "30 minutes before", icon_name="bell-outline", on_tap=None))
        root.add(bar)

    def _date_dialog(self) -> None:
        a = self.page.args
        d0 = _d(a["date"])
        data = {"y": d0.year, "m": d0.month, "day": d0.day}

        def content(ui: Ui, left: int, top: int, width: int) -> tuple[list[Node], int]:
            p = ui.p
            nodes: list[Node] = []
            nodes.append(label(ui, left, top + ui.dp(20), f"{ui.tr(_MONTHS[data['m'] - 1])} {data['y']}", size=16,
                               weight="medium", translate_=False, rid="month_title"))

            def shift(k: int) -> None:
                m = data["m"] + k
                data["y"], data["m"] = data["y"] + (m - 1) // 12, (m - 1) % 12 + 1
                data["day"] = min(data["day"], _cal.monthrange(data["y"], data["m"])[1])

            nodes.append(icon_button(ui, left + width - ui.dp(24), top + ui.dp(20), "chevron-right", "Next month",
                                     lambda: shift(1)))
            nodes.append(icon_button(ui, left + width - ui.dp(72), top + ui.dp(20), "chevron-left", "Previous month",
                                     lambda: shift(-1)))
            cw = width // 7
            ch = ui.dp(40)
            y0 = top + ui.dp(48)
            weeks = _cal.Calendar(firstweekday=6).monthdayscalendar(data["y"], data["m"])
            for wi, week in enumerate(weeks):
                for di, day in enumerate(week):
                    if not day:
                        continue
                    cx, cy = left + di * cw + cw // 2, y0 + wi * ch + ch // 2
                    sel = day == data["day"]
                    n = Node(rect=Rect(cx - cw // 2, cy - ch // 2, cx + cw // 2, cy + ch // 2), cls="android.view.View",
                             kind=K.BUTTON, text=str(day), clickable=True, selected=sel, rid=ui.rid("date_picker_day"),
                             on_tap=tapper(lambda day=day: data.__setitem__("day", day)))
                    dd = ui.dp(34)
                    if sel:
                        n.ops.append(("oval", cx - dd // 2, cy - dd // 2, cx + dd // 2, cy + dd // 2, p.primary, None, 0))
                    n.ops.append(("text", cx, cy, str(day), ui.sp(14), "regular", p.on_primary if sel else p.on_surface,
                                  "mm"))
                    nodes.append(n)
            return nodes, ui.dp(48) + ch * len(weeks)

        def ok() -> None:
            a["date"] = dt.date(data["y"], data["m"], data["day"]).isoformat()

        self.phone.show_dialog(Dialog(title="Select date", custom=content, buttons=[("Cancel", None), ("OK", ok)],
                                      data=data))

    def _time_dialog(self) -> None:
        a = self.page.args
        hh, mm = map(int, a["start"].split(":"))
        data: dict[str, Any] = {"hour": hh % 12 or 12, "minute": mm - mm % 5, "pm": hh >= 12, "mode": "hour"}

        def ok() -> None:
            h = data["hour"] % 12 + (12 if data["pm"] else 0)
            a["start"] = f"{h:02d}:{data['minute']:02d}"

        self.phone.show_dialog(Dialog(title="Select time", custom=lambda ui, x, t, w: _time_picker(ui, data, x, t, w),
                                      buttons=[("Cancel", None), ("OK", ok)], data=data))

    def _save(self) -> None:
        a = self.page.args
        title = str(a["title"]).strip()
        if not title:
            self.toast("Add a title to save this event")
            return
        self.s["events"].append({"title": title, "date": a["date"], "start": "" if a["all_day"] else a["start"],
                                 "all_day": bool(a["all_day"])})
        self.s["selected"] = a["date"]
        self.s["month"] = a["date"][:7]
        self.phone.clear_focus()
        self.stack.pop()
        self.toast("Event saved")

    def page_event(self, ui: Ui, page: Page, root: Node) -> None:
        i = page.args.get("index", -1)
        if not 0 <= i < len(self.s["events"]):
            self.back()
            return
        e = self.s["events"][i]

        def delete() -> None:
            self.phone.show_dialog(Dialog(title="Delete this event?", buttons=[("Cancel", None), ("Delete", do_delete)]))

        def do_delete() -> None:
            self.s["events"].pop(i)
            self.stack.pop()
            self.toast("Event deleted")

        bar = top_bar(ui, "", on_back=self.up, actions=(("dots-vertical", "More options", None),
                                                         ("delete-outline", "Delete event", delete, "delete"),
                                                         ("pencil-outline", "Edit event", None, "edit")))
        y = bar.rect.bottom + ui.dp(16)
        root.add(label(ui, ui.dp(72), y + ui.dp(20), e["title"], size=24, translate_=False, rid="title"))
        d = _d(e["date"])
        when = format_date(d, ui.lang) + ("" if e["all_day"] else " · " + _event_time(e, ui.lang))
        root.add(label(ui, ui.dp(72), y + ui.dp(56), when, size=15, color=ui.p.on_variant, translate_=False,
                       rid="when"))
        root.add(icon(ui, ui.dp(32), y + ui.dp(20), "square-rounded", color=ui.p.primary, gt=False))
        root.add(bar)


class Files(App):
    package = "com.google.android.documentsui"
    label = "Files"
    icon = "folder"
    color = (0, 137, 123)
    key = "files"
    activity_prefix = "com.android.documentsui"

    @staticmethod
    def default_state() -> dict[str, Any]:
        return {"folders": {
            "Download": [{"name": "boarding_pass.pdf", "size": "212 kB"}, {"name": "invoice_0142.pdf", "size": "88 kB"},
                         {"name": "setup_guide.pdf", "size": "1.4 MB"}, {"name": "podcast_ep12.mp3", "size": "48 MB"}],
            "Documents": [{"name": "CV_2026.docx", "size": "64 kB"}, {"name": "budget.xlsx", "size": "31 kB"},
                          {"name": "notes.txt", "size": "2 kB"}],
            "Pictures": [{"name": f"IMG_2026031{i}_0{i}12.jpg", "size": f"{2 + i}.1 MB"} for i in range(6)],
            "Music": [{"name": "morning_playlist.m3u", "size": "1 kB"}],
            "Movies": [], "Alarms": [], "Ringtones": [],
        }, "trash": []}

    def page_main(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        cats = [("Downloads", "download", "Download"), ("Images", "image-outline", "Pictures"),
                ("Documents", "file-document-outline", "Documents"), ("Audio", "music-note", "Music"),
                ("Videos", "video-outline", "Movies")]
        rows = [Row("header", "Categories")]
        for title, ic, folder in cats:
            n = len(s["folders"].get(folder, []))
            rows.append(Row("nav", title, f"{n} {ui.tr('items')}", ic, on_tap=lambda f=folder: self.push("folder", name=f)))
        rows += [Row("header", "Storage devices"),
                 Row("nav", "Internal storage", "57.6 GB used", "cellphone", on_tap=lambda: self.push("storage")),
                 Row("nav", "Trash", f"{len(s['trash'])} {ui.tr('items')}", "delete-outline",
                     on_tap=lambda: self.push("trash"))]
        list_page(ui, root, page.args, "Files", rows, actions=(("magnify", "Search", None),))

    def page_storage(self, ui: Ui, page: Page, root: Node) -> None:
        s = self.s
        rows = [Row("nav", name, f"{len(items)} {ui.tr('items')}", "folder", translate=False,
                    on_tap=lambda n=name: self.push("folder", name=n)) for name, items in sorted(s["folders"].items())]
        list_page(ui, root, page.args, "Internal storage", rows, on_back=self.up,
                  actions=(("folder-plus-outline", "New folder", self._new_folder, "new_folder"),))

    def _new_folder(self) -> None:
        holder = {"name": ""}

        def ok() -> bool | None:
            name = holder["name"].strip()
            if not name or "/" in name:
                self.toast("Enter a valid folder name")
                return False
            if name in self.s["folders"]:
                self.toast("A folder with this name already exists")
                return False
            self.s["folders"][name] = []
            return None

        self.phone.show_dialog(Dialog(title="New folder", field_holder=holder, field_key="name",
                                      field_hint="Folder name", buttons=[("Cancel", None), ("OK", ok)]))

    def page_folder(self, ui: Ui, page: Page, root: Node) -> None:
        name = page.args.get("name", "")
        items = self.s["folders"].get(name, [])
        rows = []
        for f in items:
            ext = f["name"].rsplit(".", 1)[-1]
            ic = {"pdf": "file-pdf-box", "mp3": "music-note", "jpg": "image", "docx": "file-word-box",
                  "xlsx": "file-excel-box"}.get(ext, "file-outline")
            rows.append(Row("nav", f["name"], f"{f['size']} · Mar 8", ic, translate=False,
                            on_tap=lambda f=f: self.toast(f"No app can open {f['name']}"),
                            on_long=lambda f=f: self._file_menu(name, f)))
        lst = list_page(ui, root, page.args, name, rows, on_back=self.up, translate_title=False,
                        actions=(("dots-vertical", "More options", None), ("sort", "Sort by", None)))
        del lst
        if not items:
            root.add(label(ui, ui.W // 2, ui.content.center.y, "No items", size=16, anchor="mm", color=ui.p.on_variant))

    def _file_menu(self, folder: str, f: dict) -> None:
        def choose(i: int) -> None:
            if i == 0:
                self._rename(f)
            elif i == 1:
                self.phone.show_dialog(Dialog(title=f"Move {f['name']} to trash?", translate_options=False,
                                              buttons=[("Cancel", None), ("Delete", lambda: self._trash(folder, f))]))
        self.phone.show_dialog(Dialog(title=f["name"], options=["Rename", "Delete"], on_choose=choose))

    def _rename(self, f: dict) -> None:
        holder = {"name": f["name"]}

        def ok() -> bool | None:
            new = holder["name"].strip()
            if not new:
                return False
            f["name"] = new
            return None

        self.phone.show_dialog(Dialog(title="Rename", field_holder=holder, field_key="name", field_hint="File name",
                                      buttons=[("Cancel", None), ("OK", ok)]))

    def _trash(self, folder: str, f: dict) -> None:
        self.s["folders"][folder] = [x for x in self.s["folders"][folder] if x is not f]
        self.s["trash"].append(f["name"])
        self.toast("Moved to trash")

    def page_trash(self, ui: Ui, page: Page, root: Node) -> None:
        rows = [Row("info", n, "Deleted today", "delete-outline", translate=False) for n in self.s["trash"]]
        list_page(ui, root, page.args, "Trash", rows, on_back=self.up)
