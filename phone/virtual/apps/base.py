"""Base class for the virtual phone's apps: a back stack of pages, each page built
into a view tree from the app's slice of the phone state.

An app owns ``phone.state[key]`` (plain dicts and lists, so task oracles can read it) and
its page stack; it draws nothing itself outside ``build``.  Transient UI state (scroll
offsets, half-typed text) lives in the page's ``args`` dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from phone.virtual.controls import edit
from phone.virtual.look import RGB
from phone.virtual.view import Node, Ui, box
from vision.geometry import Rect

if TYPE_CHECKING:
    from phone.virtual.phone import VirtualPhone


@dataclass
class Page:
    name: str
    args: dict[str, Any] = field(default_factory=dict)


class App:
    package = ""
    label = ""
    icon = "application"
    color: RGB = (90, 90, 90)
    key = ""
    activity_prefix = ""

    def __init__(self, phone: VirtualPhone) -> None:
        self.phone = phone
        self.stack: list[Page] = [Page("main")]

    @staticmethod
    def default_state() -> dict[str, Any]:
        return {}

    @classmethod
    def all_pages(cls) -> tuple[str, ...]:
        """Every page this app can show (its ``page_*`` builders), for coverage reports."""
        return tuple(sorted(n.removeprefix("page_") for n in dir(cls) if n.startswith("page_")))

    # -- state and navigation ------------------------------------------------------------
    @property
    def s(self) -> dict[str, Any]:
        return self.phone.state[self.key]

    @property
    def page(self) -> Page:
        return self.stack[-1]

    def push(self, name: str, /, **args: Any) -> None:
        self.phone.clear_focus()
        self.stack.append(Page(name, dict(args)))

    def replace(self, name: str, /, **args: Any) -> None:
        self.phone.clear_focus()
        self.stack[-1] = Page(name, dict(args))

    def back(self) -> bool:
        """Handle BACK inside the app; False when the app should close."""
        if len(self.stack) > 1:
            self.on_leave(self.stack[-1])
            self.stack.pop()
            return True
        return False

    def up(self) -> None:
        """The app bar's back arrow: BACK inside the app; on its first page, the home screen
        (and the app starts on its first page next time)."""
        if not self.back():
            self.reset()
            self.phone.go_home()

    def on_leave(self, page: Page) -> None:
        """Called when ``page`` is popped by BACK (e.g. to save a draft)."""

    def reset(self) -> None:
        self.stack = [Page("main")]

    @property
    def activity(self) -> str:
        name = self.page.name.replace("_", " ").title().replace(" ", "")
        return f"{self.activity_prefix or self.package}.{name}Activity"

    # -- helpers -------------------------------------------------------------------------
    def toast(self, text: str) -> None:
        self.phone.show_toast(text)

    def field(self, ui: Ui, rect: Rect, holder: dict, key: str, hint: str, *, rid: str = "", on_submit=None,
              style: str = "outlined", password: bool = False, lead_icon: str = "", multiline: bool = False,
              size: float = 16) -> Node:
        focused = self.phone.is_focused(holder, key)
        return edit(ui, rect, str(holder.get(key, "")), hint, focused=focused,
                    on_focus=lambda: self.phone.focus_field(holder, key, on_submit=on_submit, multiline=multiline),
                    rid=rid, style=style, password=password, lead_icon=lead_icon, multiline=multiline, size=size)

    def build(self, ui: Ui) -> Node:
        root = box(ui.content, fill=ui.p.background, cls="android.widget.FrameLayout", rid="android:id/content",
                   package=self.package)
        fn = getattr(self, f"page_{self.page.name}")
        fn(ui, self.page, root)
        return root
