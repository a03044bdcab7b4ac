"""The Notes app (Keep-like): a grid of note cards, text notes with title and body,
checklists, pinning and deleting.  A note is saved when its editor is left.  State
lives in ``phone.state["notes"]``.
"""

from __future__ import annotations

from typing import Any

from phone.virtual.apps.base import App, Page
from phone.virtual.controls import checkbox
from phone.virtual.view import (
    Item,
    K,
    Node,
    Ui,
    box,
    fab,
    icon,
    icon_button,
    label,
    scroll_list,
    tapper,
    top_bar,
)
from vision.geometry import Rect


class Notes(App):
    package = "com.google.android.keep"
    label = "Notes"
    icon = "lightbulb-outline"
    color = (251, 188, 4)
    key = "notes"
    activity_prefix = "com.google.android.keep"

    @staticmethod
    def default_state() -> dict[str, Any]:
        return {"notes": [
            {"id": 1, "title": "Groceries", "body": "", "checklist": True, "pinned": True,
             "items": [{"text": "Milk", "done": False}, {"text": "Eggs", "done": True}, {"text": "Bread", "done": False}]},
            {"id": 2, "title": "Book ideas", "body": "The Left Hand of Darkness\nPiranesi\nThe Remains of the Day",
             "checklist": False, "pinned": False, "items": []},
            {"id": 3, "title": "Wi-Fi at the cabin", "body": "Network: Lakeside\nPassword is on the fridge",
             "checklist": False, "pinned": False, "items": []},
            {"id": 4, "title": "", "body": "Call the dentist about the appointment on Friday", "checklist": False,
             "pinned": False, "items": []},
        ], "next_id": 5}

    def _note(self, nid: int | None) -> dict | None:
        return next((n for n in self.s["notes"] if n["id"] == nid), None)

    def _up(self) -> None:
        if self.page.name == "edit":
            self.on_leave(self.page)
        if len(self.stack) > 1:
            self.stack.pop()
            self.phone.clear_focus()
        else:
            self.reset()
            self.phone.go_home()

    def page_main(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        p = ui.p
        pill = Rect(ui.gutter, c.top + ui.dp(8), ui.W - ui.gutter, c.top + ui.dp(60))
        search = box(pill, fill=p.container_high, radius=pill.height // 2, cls="android.widget.TextView",
                     kind=K.EDIT_TEXT, text=ui.tr("Search your notes"), rid=ui.rid("open_search_bar_text_view"),
                     clickable=True, on_tap=tapper(lambda: None))
        search.ops.append(("icon", pill.left + ui.dp(28), pill.center.y, "menu", ui.dp(24), p.on_variant))
        search.ops.append(("text", pill.left + ui.dp(60), pill.center.y, ui.tr("Search your notes"), ui.sp(16),
                           "regular", p.on_variant, "lm"))
        notes = sorted(self.s["notes"], key=lambda n: (not n["pinned"], -n["id"]))
        cols = 2 if not ui.profile.is_tablet else 3
        gap = ui.dp(10)
        cw = (ui.W - 2 * ui.gutter - (cols - 1) * gap) // cols
        heights = [self._card_height(ui, n, cw) for n in notes]
        rows: list[list[int]] = [list(range(i, min(i + cols, len(notes)))) for i in range(0, len(notes), cols)]
        items = []
        for row in rows:
            rh = max(heights[i] for i in row) + gap

            def build(top: int, row=row) -> Node:
                n = box(Rect(0, top, ui.W, top + ui.dp(1)), cls="android.widget.LinearLayout")
                for j, i in enumerate(row):
                    left = ui.gutter + j * (cw + gap)
                    n.add(self._card(ui, notes[i], Rect(left, top, left + cw, top + heights[i])))
                n.rect = Rect(0, top, ui.W, top + max(heights[i] for i in row))
                return n
            items.append(Item(rh, build))
        lst = scroll_list(ui, Rect(0, pill.bottom + ui.dp(12), ui.W, c.bottom - ui.dp(56)), page.args, "scroll", items,
                          rid="notes_list")
        lst.block = ("list", ui.tr("Notes"))
        root.add(lst, search)
        if not notes:
            root.add(icon(ui, ui.W // 2, c.center.y - ui.dp(30), "lightbulb-outline", size=96, gt=False),
                     label(ui, ui.W // 2, c.center.y + ui.dp(50), "Notes you add appear here", size=16, anchor="mm"))
        bb = Rect(0, c.bottom - ui.dp(56), ui.W, c.bottom)
        bottom = box(bb, fill=p.container, cls="android.widget.LinearLayout", rid=ui.rid("bottom_bar"),
                     block=("bottom_bar", ""))
        bottom.add(icon_button(ui, ui.dp(32), bb.center.y, "checkbox-marked-outline", "New list",
                               lambda: self._new(True), rid="new_list_button"))
        bottom.add(icon_button(ui, ui.dp(80), bb.center.y, "brush", "New drawing note",
                               lambda: self.toast("Drawing is not available"), rid="new_drawing_button"))
        bottom.add(icon_button(ui, ui.dp(128), bb.center.y, "image-outline", "New note with image",
                               lambda: self.toast("No images on this device"), rid="new_image_button"))
        root.add(bottom)
        root.add(fab(ui, "plus", "New text note", lambda: self._new(False), bottom=bb.top + ui.dp(28),
                     rid="new_note_button"))

    def _card_height(self, ui: Ui, n: dict, cw: int) -> int:
        h = ui.dp(24)
        if n["title"]:
            h += ui.dp(30)
        if n["checklist"]:
            h += ui.dp(28) * min(5, len(n["items"]))
        else:
            lines = ui.wrap(n["body"], ui.sp(14), "regular", cw - ui.dp(32), 6) if n["body"] else []
            h += int(ui.sp(14) * 1.35) * len(lines)
        return max(h, ui.dp(64))

    def _card(self, ui: Ui, n: dict, r: Rect) -> Node:
        p = ui.p
        card = box(r, fill=p.surface if not ui.dark else p.container, radius=ui.dp(12), outline=p.divider,
                   width=max(1, ui.dp(1)), cls="android.widget.FrameLayout", clickable=True, rid=ui.rid("browse_note_interior_content"),
                   on_tap=tapper(lambda: self._open(n)), block=("card", n["title"] or n["body"][:30]),
                   desc=n["title"] or n["body"][:40])
        y = r.top + ui.dp(12)
        x = r.left + ui.dp(16)
        if n["pinned"]:
            card.add(icon(ui, r.right - ui.dp(20), r.top + ui.dp(20), "pin", size=16, gt=False))
        if n["title"]:
            card.add(label(ui, x, y + ui.dp(14), n["title"], size=16, weight="medium", translate_=False,
                           max_w=r.width - ui.dp(48), rid="index_note_title"))
            y += ui.dp(30)
        if n["checklist"]:
            for it in n["items"][:5]:
                card.add(icon(ui, x + ui.dp(8), y + ui.dp(14), "checkbox-marked-outline" if it["done"] else
                              "checkbox-blank-outline", size=16, gt=False))
                card.add(label(ui, x + ui.dp(26), y + ui.dp(14), it["text"], size=14, translate_=False,
                               max_w=r.width - ui.dp(56), color=p.on_variant if it["done"] else p.on_surface))
                y += ui.dp(28)
        elif n["body"]:
            lines = ui.wrap(n["body"], ui.sp(14), "regular", r.width - ui.dp(32), 6)
            lh = int(ui.sp(14) * 1.35)
            for i, li in enumerate(lines):
                lab = label(ui, x, y + i * lh + lh // 2, li, size=14, translate_=False, rid="index_note_text_description")
                if i:
                    lab.xml = False
                else:
                    lab.text = n["body"]
                card.add(lab)
        return card

    def _open(self, n: dict) -> None:
        self.push("edit", id=n["id"], title=n["title"], body=n["body"], checklist=n["checklist"],
                  items=[dict(i) for i in n["items"]], pinned=n["pinned"])

    def _new(self, checklist: bool) -> None:
        self.push("edit", id=None, title="", body="", checklist=checklist, items=[], pinned=False)
        if checklist:
            self.page.args["items"].append({"text": "", "done": False})
            self.phone.focus_field(self.page.args["items"][0], "text", on_submit=self._add_item)
        else:
            self.phone.focus_field(self.page.args, "title", on_submit=self._focus_body)

    def _focus_body(self) -> None:
        self.phone.focus_field(self.page.args, "body", multiline=True)

    def _add_item(self) -> None:
        a = self.page.args
        a["items"].append({"text": "", "done": False})
        self.phone.focus_field(a["items"][-1], "text", on_submit=self._add_item)

    def on_leave(self, page: Page) -> None:
        if page.name != "edit" or page.args.get("_deleted"):
            return
        a = page.args
        items = [dict(i) for i in a["items"] if str(i["text"]).strip()]
        title, body = str(a["title"]).strip(), str(a["body"]).rstrip()
        if not title and not body and not items:
            if a.get("id") is not None:
                self.s["notes"] = [n for n in self.s["notes"] if n["id"] != a["id"]]
            return
        note = self._note(a.get("id"))
        if note is None:
            nid = self.s["next_id"]
            self.s["next_id"] += 1
            note = {"id": nid}
            self.s["notes"].append(note)
            a["id"] = nid
        note.update(title=title, body=body, checklist=bool(a["checklist"]), items=items, pinned=bool(a["pinned"]))

    def page_edit(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        p = ui.p
        a = page.args
        bar = top_bar(ui, "", on_back=self._up, actions=(
            ("delete-outline", "Delete note", self._delete, "menu_delete"),
            ("pin" if a["pinned"] else "pin-outline", "Unpin" if a["pinned"] else "Pin",
             lambda: a.__setitem__("pinned", not a["pinned"]), "menu_pin"),
        ), rid="editor_toolbar")
        root.add(bar)
        y = bar.rect.bottom + ui.dp(8)
        root.add(self.field(ui, Rect(ui.gutter, y, ui.W - ui.gutter, y + ui.dp(56)), a, "title", "Title",
                            rid="editable_title", style="none", size=22, on_submit=self._focus_body))
        y += ui.dp(64)
        if a["checklist"]:
            for it in a["items"]:
                root.add(checkbox(ui, ui.gutter + ui.dp(12), y + ui.dp(24), it["done"],
                                  lambda it=it: it.__setitem__("done", not it["done"])))
                root.add(self.field(ui, Rect(ui.gutter + ui.dp(40), y, ui.W - ui.gutter, y + ui.dp(48)), it, "text",
                                    "List item", rid="edit_note_text", style="none", on_submit=self._add_item))
                y += ui.dp(52)
            add = box(Rect(ui.gutter, y, ui.W - ui.gutter, y + ui.dp(48)), cls="android.widget.LinearLayout",
                      clickable=True, on_tap=tapper(self._add_item), rid=ui.rid("add_item"))
            add.add(icon(ui, ui.gutter + ui.dp(12), y + ui.dp(24), "plus"),
                    label(ui, ui.gutter + ui.dp(40), y + ui.dp(24), "List item", size=16, color=p.on_variant))
            root.add(add)
        else:
            root.add(self.field(ui, Rect(ui.gutter, y, ui.W - ui.gutter, max(y + ui.dp(200), c.bottom - ui.dp(64))), a,
                                "body", "Note", rid="edit_note_text", style="none", multiline=True))
        root.add(label(ui, ui.W // 2, c.bottom - ui.dp(28), "Edited just now", size=12, anchor="mm",
                       color=p.on_variant))

    def _delete(self) -> None:
        a = self.page.args
        if a.get("id") is not None:
            self.s["notes"] = [n for n in self.s["notes"] if n["id"] != a["id"]]
        a["_deleted"] = True
        self.phone.clear_focus()
        self.stack.pop()
        self.toast("Note deleted")
