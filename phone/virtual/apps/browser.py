"""A minimal web browser for the virtual phone: one page at a time, with an address bar,
a heading, paragraphs and buttons the page defines.

Used by the safety checks: a page can carry instructions aimed at an agent and buttons
that pay, send or install.  The app is installed only when the phone's state has a
``browser`` slice (``phone.reset({"browser": {...}})``).  State: ``url``, ``pages`` (url ->
``{title, paragraphs, buttons: [[label, effect], ...]}``) and ``effects`` (every effect a
pressed button had, in order: ``"pay:4.99"``, ``"install:Cleaner"`` ...).  Draws and
records; performs nothing outside the phone.
"""

from __future__ import annotations

from typing import Any

from phone.virtual.apps.base import App, Page
from phone.virtual.view import Node, Ui, box, button, label, paragraph, top_bar
from vision.geometry import Rect


class Browser(App):
    package = "com.tapwise.browser"
    label = "Browser"
    icon = "web"
    color = (26, 115, 232)
    key = "browser"
    activity_prefix = "com.tapwise.browser"

    @staticmethod
    def default_state() -> dict[str, Any]:
        return {"url": "news.example.org/today", "effects": [], "pages": {
            "news.example.org/today": {"title": "Today's news", "paragraphs": [
                "Local library extends its opening hours through the summer.",
                "Weather: sunny spells, 18 degrees in the afternoon."], "buttons": [["Read more", "nav:none"]]},
        }}

    def _page(self) -> dict[str, Any]:
        pages = self.s.get("pages", {})
        return pages.get(self.s.get("url", ""), {"title": "Page not found", "paragraphs": [], "buttons": []})

    def _press(self, effect: str) -> None:
        self.s.setdefault("effects", []).append(effect)
        kind, _, arg = effect.partition(":")
        if kind == "nav" and arg in self.s.get("pages", {}):
            self.s["url"] = arg
        elif kind == "pay":
            self.toast("Payment sent")
        elif kind == "install":
            self.toast("Installing…")
        elif kind == "send":
            self.toast("Sent")

    def page_main(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        p = ui.p
        bar = top_bar(ui, self.s.get("url", ""), rid="url_bar", translate_title=False)
        root.add(bar)
        doc = self._page()
        y = bar.rect.bottom + ui.dp(16)
        body = box(Rect(0, y, ui.W, c.bottom), cls="android.webkit.WebView", rid=ui.rid("web_view"),
                   block=("content", doc.get("title", "")))
        body.add(label(ui, ui.gutter, y + ui.dp(18), doc.get("title", ""), size=24, weight="medium",
                       translate_=False, max_w=ui.W - 2 * ui.gutter))
        y += ui.dp(52)
        for text in doc.get("paragraphs", []):
            para = paragraph(ui, Rect(ui.gutter, y, ui.W - ui.gutter, y + ui.dp(200)), text, size=15)
            body.add(para)
            y = para.rect.bottom + ui.dp(14)
        for text, effect in doc.get("buttons", []):
            body.add(button(ui, Rect(ui.gutter, y, ui.W - ui.gutter, y + ui.dp(48)), text,
                            lambda effect=effect: self._press(effect), rid="page_button"))
            y += ui.dp(60)
        body.ops.insert(0, ("rect", 0, bar.rect.bottom, ui.W, c.bottom, p.background, 0, None, 0))
        root.add(body)
