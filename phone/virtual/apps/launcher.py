"""The home screen (app grid, dock, search pill), the app drawer with search, and the
recent-apps overview.  Reads the installed apps from the phone; keeps only its own
navigation (home or drawer) and the drawer's query.
"""

from __future__ import annotations

import datetime as dt
from functools import partial

from phone.virtual.apps.base import App, Page
from phone.virtual.controls import edit
from phone.virtual.view import Item, K, Node, Ui, box, button, label, page_indicator, scroll_list, tapper
from vision.geometry import Rect

LAUNCHER = "com.google.android.apps.nexuslauncher"
TODAY = dt.date(2026, 3, 12)


def app_icon(ui: Ui, app: App, cx: int, top: int, size: float, on_wall: bool, on_tap, *, rid: str = "icon",
             show_label: bool = True) -> Node:
    """A launcher icon: coloured circle with a white glyph, the app name below."""
    d = ui.dp(size)
    cell_w = ui.dp(86)
    lbl_h = ui.dp(22) if show_label else 0
    r = Rect(cx - cell_w // 2, top, cx + cell_w // 2, top + d + ui.dp(6) + lbl_h)
    name = ui.tr(app.label)
    n = Node(rect=r, cls="android.widget.TextView", kind=K.BUTTON, text=name if show_label else "", desc=name,
             clickable=True, long_clickable=True, focusable=True, on_tap=tapper(on_tap), rid=ui.rid(rid),
             icon=app.icon)
    circ = (cx - d // 2, top, cx - d // 2 + d, top + d)
    n.ops.append(("oval", *circ, app.color, None, 0))
    n.ops.append(("icon", cx, top + d // 2, app.icon, int(d * 0.55), (255, 255, 255)))
    if show_label:
        col = (255, 255, 255) if on_wall else ui.p.on_surface
        n.ops.append(("text", cx, top + d + ui.dp(6) + lbl_h // 2,
                      ui.ellipsize(name, ui.sp(12), "regular", cell_w - ui.dp(4)), ui.sp(12), "regular", col, "mm"))
    return n


HOME_GRID = [
    ["com.google.android.deskclock", "com.google.android.calendar", "com.google.android.keep",
     "com.google.android.documentsui"],
    ["com.android.settings", "com.tapwise.shop"],
]
DOCK = ["com.google.android.contacts", "com.google.android.apps.messaging", "com.tapwise.shop",
        "com.android.settings"]


class Launcher(App):
    package = LAUNCHER
    label = "Home"
    activity_prefix = "com.google.android.apps.nexuslauncher"

    def __init__(self, phone) -> None:
        super().__init__(phone)
        self.stack = [Page("home")]

    def reset(self) -> None:
        self.stack = [Page("home")]

    @property
    def activity(self) -> str:
        return "com.google.android.apps.nexuslauncher.NexusLauncherActivity"

    @property
    def on_wallpaper(self) -> bool:
        return self.page.name == "home"

    def swipe(self, dy: int, y1: int, ui: Ui) -> bool:
        """Launcher gestures: swipe up on home opens the drawer, down at its top closes it."""
        if self.page.name == "home" and dy < -ui.dp(80):
            self.phone.clear_focus()
            self.stack.append(Page("drawer", {"query": "", "scroll": 0}))
            return True
        if self.page.name == "drawer" and dy > ui.dp(80) and self.page.args.get("scroll", 0) == 0:
            self.back()
            return True
        return False

    def back(self) -> bool:
        self.phone.clear_focus()
        return super().back()

    def build(self, ui: Ui) -> Node:
        root = box(ui.content, cls="android.widget.FrameLayout", package=self.package, rid="android:id/content")
        if self.page.name == "drawer":
            root.ops.append(("rect", *ui.content.as_tuple(), ui.p.surface, 0, None, 0))
            self.page_drawer(ui, self.page, root)
        else:
            self.page_home(ui, self.page, root)
        return root

    def _open(self, pkg: str):
        return lambda: self.phone.launch(pkg)

    def page_home(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        white = (255, 255, 255)
        day = TODAY.strftime("%A, %b %-d") if ui.lang == "en" else _de_date(TODAY)
        glance = box(Rect(ui.gutter, c.top + ui.dp(24), ui.W - ui.gutter, c.top + ui.dp(96)),
                     cls="android.view.ViewGroup", rid=ui.rid("smartspace"), block=("widget", "At a glance"))
        glance.add(label(ui, ui.gutter + ui.dp(8), c.top + ui.dp(44), day, size=22, color=white, translate_=False))
        glance.add(label(ui, ui.gutter + ui.dp(8), c.top + ui.dp(76), "18°C  Mostly sunny", size=14, color=white))
        root.add(glance)
        cols = 4 if not ui.profile.is_tablet else 6
        cell = (ui.W - 2 * ui.gutter) // cols
        grid = box(Rect(0, c.top + ui.dp(120), ui.W, c.top + ui.dp(120) + ui.dp(110) * len(HOME_GRID)),
                   cls="android.view.ViewGroup", rid=ui.rid("workspace"), block=("app_grid", "Home screen"))
        for ri, row in enumerate(HOME_GRID):
            for ci, pkg in enumerate(p_ for p_ in row if p_ in self.phone.apps):
                app = self.phone.apps[pkg]
                cx = ui.gutter + ci * cell + cell // 2
                grid.add(app_icon(ui, app, cx, grid.rect.top + ri * ui.dp(110), 58, True, self._open(pkg)))
        root.add(grid)
        # dock + search pill at the bottom
        pill_h = ui.dp(52)
        pill = Rect(ui.gutter, c.bottom - ui.dp(16) - pill_h, ui.W - ui.gutter, c.bottom - ui.dp(16))
        dock_top = pill.top - ui.dp(100)
        root.add(page_indicator(ui, ui.W // 2, dock_top - ui.dp(18), 2, 0))
        dock = box(Rect(0, dock_top, ui.W, dock_top + ui.dp(86)), cls="android.view.ViewGroup",
                   rid=ui.rid("hotseat"), block=("dock", "Favourites"))
        dcell = (ui.W - 2 * ui.gutter) // len(DOCK)
        for i, pkg in enumerate(p_ for p_ in DOCK[:3] + ["com.google.android.documentsui"] if p_ in self.phone.apps):
            app = self.phone.apps[pkg]
            dock.add(app_icon(ui, app, ui.gutter + i * dcell + dcell // 2, dock_top, 58, True, self._open(pkg),
                              show_label=False))
        root.add(dock)
        search = box(pill, fill=(255, 255, 255) if not ui.dark else ui.p.container_high, radius=pill_h // 2,
                     cls="android.widget.TextView", kind=K.EDIT_TEXT, clickable=True, rid=ui.rid("search_container_hotseat"),
                     desc=ui.tr("Search"), on_tap=tapper(self._open_drawer_search), text=ui.tr("Search"))
        search.ops.append(("icon", pill.left + ui.dp(28), pill.center.y, "google", ui.dp(24), (66, 133, 244)))
        search.ops.append(("text", pill.left + ui.dp(52), pill.center.y, ui.tr("Search"), ui.sp(16), "regular",
                           ui.p.on_variant, "lm"))
        search.ops.append(("icon", pill.right - ui.dp(28), pill.center.y, "microphone", ui.dp(24), ui.p.on_variant))
        root.add(search)

    def _open_drawer_search(self) -> None:
        self.stack.append(Page("drawer", {"query": "", "scroll": 0}))
        self.phone.focus_field(self.page.args, "query")

    def page_drawer(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        p = ui.p
        fr = Rect(ui.gutter, c.top + ui.dp(16), ui.W - ui.gutter, c.top + ui.dp(68))
        focused = self.phone.is_focused(page.args, "query")
        root.add(edit(ui, fr, page.args.get("query", ""), "Search apps", focused=focused,
                      on_focus=lambda: self.phone.focus_field(page.args, "query", on_submit=self._launch_first),
                      rid="search_box_input", style="pill", lead_icon="magnify"))
        q = str(page.args.get("query", "")).strip().lower()
        apps = sorted(self.phone.apps.values(), key=lambda a: ui.tr(a.label).lower())
        if q:
            apps = [a for a in apps if q in ui.tr(a.label).lower() or q in a.label.lower()]
        cols = 5 if not ui.profile.is_tablet else 7
        cell = (ui.W - 2 * ui.gutter) // cols
        rows = [apps[i:i + cols] for i in range(0, len(apps), cols)]
        items = []
        for row in rows:
            def build(top: int, row=row) -> Node:
                n = box(Rect(0, top, ui.W, top + ui.dp(108)), cls="android.widget.LinearLayout")
                for ci, app in enumerate(row):
                    n.add(app_icon(ui, app, ui.gutter + ci * cell + cell // 2, top + ui.dp(12), 52, False,
                                   self._open(app.package)))
                return n
            items.append(Item(ui.dp(108), build))
        lr = Rect(0, fr.bottom + ui.dp(12), ui.W, c.bottom)
        lst = scroll_list(ui, lr, page.args, "scroll", items, rid="apps_list_view", pad_bottom=16)
        lst.block = ("app_grid", "All apps")
        root.add(lst)
        if q and not apps:
            root.add(label(ui, ui.W // 2, lr.top + ui.dp(60), "No apps found", size=16, color=p.on_variant,
                           anchor="mm"))

    def _launch_first(self) -> None:
        q = str(self.page.args.get("query", "")).strip().lower()
        for app in sorted(self.phone.apps.values(), key=lambda a: a.label):
            if q and (q in app.label.lower() or q in self.phone_tr(app.label).lower()):
                self.phone.launch(app.package)
                return

    def phone_tr(self, s: str) -> str:
        from phone.virtual.i18n import translate

        return translate(s, self.phone.lang)


def _de_date(d: dt.date) -> str:
    days = ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"]
    months = ["Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.", "Nov.", "Dez."]
    return f"{days[d.weekday()]}, {d.day}. {months[d.month - 1]}"


class Recents(App):
    """The overview of recent apps (APP_SWITCH)."""

    package = LAUNCHER
    label = "Overview"

    def __init__(self, phone) -> None:
        super().__init__(phone)
        self.stack = [Page("recents")]

    @property
    def activity(self) -> str:
        return "com.android.quickstep.RecentsActivity"

    def reset(self) -> None:
        self.stack = [Page("recents")]

    def build(self, ui: Ui) -> Node:
        c = ui.content
        root = box(c, fill=ui.p.container_high, cls="android.widget.FrameLayout", package=self.package,
                   rid="android:id/content")
        recent = [self.phone.apps[p] for p in self.phone.recent if p in self.phone.apps]
        if not recent:
            root.add(label(ui, ui.W // 2, c.center.y, "No recent items", size=16, color=ui.p.on_variant, anchor="mm"))
            return root
        cw = int(ui.W * 0.62)
        ch = int(c.height * 0.62)
        top = c.top + ui.dp(90)
        for i, app in enumerate(recent[:3]):
            left = (ui.W - cw) // 2 + i * (cw + ui.dp(20))
            r = Rect(left, top, left + cw, top + ch)
            card = box(r, fill=ui.p.background, radius=ui.dp(20), cls="android.widget.FrameLayout",
                       clickable=True, on_tap=tapper(partial(self.phone.launch, app.package)),
                       desc=ui.tr(app.label), rid=ui.rid("snapshot"), block=("card", ui.tr(app.label)))
            card.ops.insert(0, ("shadow", *r.as_tuple(), ui.dp(20)))
            card.ops.append(("rect", r.left, r.top, r.right, r.top + ui.dp(56), app.color, ui.dp(20), None, 0))
            card.ops.append(("icon", r.center.x, r.top + ui.dp(28), app.icon, ui.dp(28), (255, 255, 255)))
            card.add(label(ui, r.center.x, r.top - ui.dp(24), app.label, size=14, anchor="mm", weight="medium"))
            root.add(card)
        root.add(button(ui, Rect(ui.W // 2 - ui.dp(60), top + ch + ui.dp(32), ui.W // 2 + ui.dp(60),
                                 top + ch + ui.dp(72)), "Clear all", self._clear, style="tonal", rid="clear_all"))
        return root

    def _clear(self) -> None:
        for pkg in self.phone.recent:
            self.phone.apps[pkg].reset()
        self.phone.recent.clear()
        self.phone.go_home()
