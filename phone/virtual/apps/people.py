"""The Contacts and Messages apps.  Contacts: list, search, details, create and edit
form, favourites, delete.  Messages: conversation list, start chat to a contact,
thread with bubbles and a compose bar, delete conversation.  State lives in
``phone.state["contacts"]`` and ``phone.state["messages"]``.
"""

from __future__ import annotations

from typing import Any

from phone.virtual.apps.base import App, Page
from phone.virtual.controls import list_row
from phone.virtual.system import Dialog
from phone.virtual.view import (
    Item,
    K,
    Node,
    Ui,
    avatar,
    box,
    button,
    fab,
    icon_button,
    label,
    paragraph,
    scroll_list,
    tapper,
    top_bar,
)
from vision.geometry import Rect

_AVATAR_COLOURS = [(219, 68, 55), (15, 157, 88), (66, 133, 244), (244, 160, 0), (171, 71, 188), (0, 172, 193),
                   (255, 112, 67), (92, 107, 192), (124, 179, 66), (236, 64, 122)]

PEOPLE = [
    ("Alice", "Johnson", "+1 555-0101", "alice.johnson@example.com"),
    ("Ben", "Carter", "+1 555-0102", "ben.carter@example.com"),
    ("Carla", "Mendes", "+1 555-0103", "carla@mendes.example"),
    ("David", "Kim", "+1 555-0104", "dkim@example.com"),
    ("Elena", "Rossi", "+39 055 123 4567", "elena.rossi@example.it"),
    ("Farid", "Haddad", "+1 555-0106", "farid.h@example.com"),
    ("Grace", "Liu", "+1 555-0107", "grace.liu@example.com"),
    ("Hannah", "Schmidt", "+49 30 1234567", "hannah.schmidt@example.de"),
    ("Ivan", "Petrov", "+1 555-0109", "ivan.petrov@example.com"),
    ("Julia", "Novak", "+1 555-0110", "julia.novak@example.com"),
    ("Kenji", "Watanabe", "+81 3-1234-5678", "kenji@example.jp"),
    ("Laura", "Becker", "+1 555-0112", "laura.becker@example.com"),
    ("Mia", "Andersson", "+46 8 123 456", "mia.andersson@example.se"),
    ("Noah", "Williams", "+1 555-0114", "noah.w@example.com"),
    ("Olivia", "Brown", "+1 555-0115", "olivia.brown@example.com"),
    ("Pedro", "Alvarez", "+34 91 123 4567", "pedro.alvarez@example.es"),
    ("Quinn", "Taylor", "+1 555-0117", ""),
    ("Rosa", "Martínez", "+1 555-0118", "rosa.martinez@example.com"),
    ("Sam", "Okafor", "+1 555-0119", "sam.okafor@example.com"),
    ("Tom", "Fischer", "+1 555-0120", "tom.fischer@example.com"),
    ("Uma", "Patel", "+1 555-0121", "uma.patel@example.com"),
    ("Victor", "Dubois", "+33 1 23 45 67 89", "victor.dubois@example.fr"),
    ("Wendy", "Clarke", "+1 555-0123", "wendy.clarke@example.com"),
    ("Yusuf", "Demir", "+90 212 123 4567", "yusuf.demir@example.com"),
    ("Zoe", "Evans", "+1 555-0125", "zoe.evans@example.com"),
]


def full_name(p: dict) -> str:
    return f"{p['first']} {p['last']}".strip()


def colour_for(name: str) -> tuple[int, int, int]:
    return _AVATAR_COLOURS[sum(map(ord, name)) % len(_AVATAR_COLOURS)]


class Contacts(App):
    package = "com.google.android.contacts"
    label = "Contacts"
    icon = "account-box"
    color = (26, 115, 232)
    key = "contacts"
    activity_prefix = "com.android.contacts"

    @staticmethod
    def default_state() -> dict[str, Any]:
        people = [{"id": i + 1, "first": f, "last": la, "phone": ph, "email": em, "favorite": i in (0, 6)}
                  for i, (f, la, ph, em) in enumerate(PEOPLE)]
        return {"people": people, "next_id": len(people) + 1}

    def _person(self, pid: int) -> dict | None:
        return next((p for p in self.s["people"] if p["id"] == pid), None)

    def _people_items(self, ui: Ui, people: list[dict]) -> list[Item]:
        items: list[Item] = []
        last = ""
        for p in sorted(people, key=lambda p: full_name(p).lower()):
            letter = full_name(p)[:1].upper()

            def row(top: int, p=p, show=letter != last, letter=letter) -> Node:
                name = full_name(p)
                lead = avatar(ui, ui.dp(40) + ui.gutter + ui.dp(20), top + ui.dp(28), 40, name, colour_for(name))
                n = list_row(ui, top, name, on_tap=lambda: self.push("detail", id=p["id"]), lead=lead,
                             translate_title=False, left=ui.dp(40), rid="contact_row",
                             title_rid=ui.rid("cliv_name_textview"))
                if show:
                    n.add(label(ui, ui.gutter + ui.dp(4), top + ui.dp(28), letter, size=16, weight="medium",
                                color=ui.p.primary, translate_=False))
                return n
            items.append(Item(ui.dp(56), row))
            last = letter
        return items

    def page_main(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        s = self.s
        pill = Rect(ui.gutter, c.top + ui.dp(8), ui.W - ui.gutter, c.top + ui.dp(64))
        search = box(pill, fill=ui.p.container_high, radius=pill.height // 2, cls="android.widget.EditText",
                     kind=K.EDIT_TEXT, clickable=True, text=ui.tr("Search contacts"), rid=ui.rid("open_search_bar"),
                     on_tap=tapper(lambda: self._open_search()))
        search.ops.append(("icon", pill.left + ui.dp(28), pill.center.y, "magnify", ui.dp(24), ui.p.on_variant))
        search.ops.append(("text", pill.left + ui.dp(56), pill.center.y, ui.tr("Search contacts"), ui.sp(16), "regular",
                           ui.p.on_variant, "lm"))
        search.add(avatar(ui, pill.right - ui.dp(30), pill.center.y, 32, "M", (15, 157, 88)))
        favs = [p for p in s["people"] if p["favorite"]]
        items: list[Item] = []
        if favs:
            items.append(Item(ui.dp(40), lambda top: label(ui, ui.gutter, top + ui.dp(24), "Favorites", size=14,
                                                           weight="medium", color=ui.p.on_variant)))
            items += self._people_items(ui, favs)
            items.append(Item(ui.dp(40), lambda top: label(ui, ui.gutter, top + ui.dp(24), "All contacts", size=14,
                                                           weight="medium", color=ui.p.on_variant)))
        items += self._people_items(ui, s["people"])
        lst = scroll_list(ui, Rect(0, pill.bottom + ui.dp(8), ui.W, c.bottom), page.args, "scroll", items,
                          rid="contact_list")
        lst.block = ("list", ui.tr("Contacts"))
        root.add(lst, search)
        root.add(fab(ui, "plus", "Create contact", lambda: self.push("edit", id=None, first="", last="", phone="",
                                                                    email="")))

    def _open_search(self) -> None:
        self.push("search", query="")
        self.phone.focus_field(self.page.args, "query")

    def page_search(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        q = str(page.args.get("query", "")).strip().lower()
        people = [p for p in self.s["people"] if q and (q in full_name(p).lower() or q in p["phone"])]
        bar = top_bar(ui, "", on_back=self.up)
        lst = scroll_list(ui, Rect(0, bar.rect.bottom, ui.W, c.bottom), page.args, "scroll",
                          self._people_items(ui, people), rid="search_results")
        root.add(lst, bar)
        root.add(self.field(ui, Rect(ui.dp(64), c.top + ui.dp(8), ui.W - ui.gutter, c.top + ui.dp(56)), page.args,
                            "query", "Search contacts", rid="search_view", style="pill"))
        if q and not people:
            root.add(label(ui, ui.W // 2, c.top + ui.dp(160), "No contacts found", size=16, anchor="mm",
                           color=ui.p.on_variant))

    def page_detail(self, ui: Ui, page: Page, root: Node) -> None:
        p = self._person(page.args.get("id", -1))
        if p is None:
            self.back()
            return
        name = full_name(p)
        star = ("star" if p["favorite"] else "star-outline", "Remove from favorites" if p["favorite"] else
                "Add to favorites", lambda: p.__setitem__("favorite", not p["favorite"]), "menu_star")
        bar = top_bar(ui, "", on_back=self.up, actions=(
            ("dots-vertical", "More options", lambda: self._more(p)),
            star,
            ("pencil-outline", "Edit contact", lambda: self.push("edit", id=p["id"], first=p["first"], last=p["last"],
                                                                  phone=p["phone"], email=p["email"]), "menu_edit"),
        ))
        y = bar.rect.bottom + ui.dp(16)
        root.add(avatar(ui, ui.W // 2, y + ui.dp(60), 120, name, colour_for(name)))
        root.add(label(ui, ui.W // 2, y + ui.dp(150), name, size=28, anchor="mm", translate_=False,
                       rid="large_title"))
        y += ui.dp(190)
        acts = [("Call", "phone-outline", lambda: self.toast(f"Calling {name}…")),
                ("Text", "message-text-outline", lambda: self._text(p)),
                ("Video", "video-outline", lambda: self.toast("Video calling is not available"))]
        w = (ui.W - 2 * ui.gutter) // 3
        for i, (t, ic, cb) in enumerate(acts):
            cx = ui.gutter + i * w + w // 2
            b = icon_button(ui, cx, y + ui.dp(24), ic, t, cb, bg=ui.p.secondary_container, bg_size=48, touch=56,
                            color=ui.p.on_secondary_container, rid=f"action_{t.lower()}")
            root.add(b, label(ui, cx, y + ui.dp(66), t, size=13, anchor="mm", xml=False))
        y += ui.dp(96)
        card = box(Rect(ui.gutter, y, ui.W - ui.gutter, y + ui.dp(170)), fill=ui.p.container, radius=ui.dp(20),
                   cls="android.widget.LinearLayout", block=("card", ui.tr("Contact info")))
        card.add(label(ui, ui.gutter + ui.dp(16), y + ui.dp(28), "Contact info", size=16, weight="medium"))
        card.add(list_row(ui, y + ui.dp(48), p["phone"], subtitle="Mobile", icon_name="phone-outline",
                          on_tap=lambda: self.toast(f"Calling {name}…"), translate_title=False,
                          left=ui.gutter, right=ui.W - ui.gutter, height=60))
        card.add(list_row(ui, y + ui.dp(108), p["email"] or "—", subtitle="Email", icon_name="email-outline",
                          on_tap=None, translate_title=False, left=ui.gutter, right=ui.W - ui.gutter, height=60))
        root.add(card, bar)

    def _text(self, p: dict) -> None:
        msgs = self.phone.apps["com.google.android.apps.messaging"]
        assert isinstance(msgs, Messages)
        self.phone.launch(msgs.package)
        msgs.open_thread(full_name(p))

    def _more(self, p: dict) -> None:
        def choose(i: int) -> None:
            if i == 0:
                self.phone.show_dialog(Dialog(title="Delete this contact?",
                                              message=f"{full_name(p)} will be removed from this device.",
                                              buttons=[("Cancel", None), ("Delete", lambda: self._delete(p))]))
            else:
                self.toast("Sharing is not available")
        self.phone.show_dialog(Dialog(title="More options", options=["Delete", "Share"], on_choose=choose))

    def _delete(self, p: dict) -> None:
        self.s["people"] = [x for x in self.s["people"] if x["id"] != p["id"]]
        self.stack = [Page("main")]
        self.toast("Contact deleted")

    def page_edit(self, ui: Ui, page: Page, root: Node) -> None:
        a = page.args
        title = "Create contact" if a.get("id") is None else "Edit contact"
        bar = top_bar(ui, title, on_back=None)
        bar.children.insert(0, icon_button(ui, ui.dp(28), bar.rect.top + ui.dp(32), "close", "Cancel", self.up,
                                           color=ui.p.on_surface))
        bar.children[-1] = label(ui, ui.dp(64), bar.rect.top + ui.dp(32), title, size=22)
        bar.add(button(ui, Rect(ui.W - ui.gutter - ui.dp(88), bar.rect.top + ui.dp(12), ui.W - ui.gutter,
                                bar.rect.top + ui.dp(52)), "Save", self._save, rid="toolbar_button"))
        y = bar.rect.bottom + ui.dp(16)
        root.add(avatar(ui, ui.W // 2, y + ui.dp(48), 96, (a.get("first") or "+")[:1] or "+", (120, 144, 156)))
        y += ui.dp(116)
        fields = [("first", "First name", "person"), ("last", "Last name", ""), ("phone", "Phone", "phone-outline"),
                  ("email", "Email", "email-outline")]
        for key, hint, ic in fields:
            fr = Rect(ui.gutter + ui.dp(48), y, ui.W - ui.gutter, y + ui.dp(56))
            if ic:
                from phone.virtual.view import icon as icon_node
                root.add(icon_node(ui, ui.gutter + ui.dp(16), y + ui.dp(28), "account-outline" if ic == "person" else ic))
            root.add(self.field(ui, fr, a, key, hint, rid=f"{key}_edit"))
            y += ui.dp(72)
        root.add(bar)

    def _save(self) -> None:
        a = self.page.args
        first, last = str(a.get("first", "")).strip(), str(a.get("last", "")).strip()
        if not first and not last:
            self.toast("Add a name to save this contact")
            return
        s = self.s
        if a.get("id") is None:
            pid = s["next_id"]
            s["next_id"] += 1
            s["people"].append({"id": pid, "first": first, "last": last, "phone": str(a.get("phone", "")).strip(),
                                "email": str(a.get("email", "")).strip(), "favorite": False})
        else:
            pid = a["id"]
            p = self._person(pid)
            if p is not None:
                p.update(first=first, last=last, phone=str(a.get("phone", "")).strip(),
                         email=str(a.get("email", "")).strip())
        self.phone.clear_focus()
        self.stack.pop()
        if not self.stack or self.stack[-1].name != "detail":
            self.stack.append(Page("detail", {"id": pid}))
        self.toast("Contact saved")


class Messages(App):
    package = "com.google.android.apps.messaging"
    label = "Messages"
    icon = "message-text"
    color = (11, 87, 208)
    key = "messages"
    activity_prefix = "com.google.android.apps.messaging.ui"

    @staticmethod
    def default_state() -> dict[str, Any]:
        return {"threads": [
            {"contact": "Alice Johnson", "unread": True, "time": "9:41 AM", "messages": [
                {"me": False, "text": "Are we still on for lunch tomorrow?"}]},
            {"contact": "Ben Carter", "unread": False, "time": "Yesterday", "messages": [
                {"me": True, "text": "Thanks for the book!"}, {"me": False, "text": "Any time. Enjoy it!"}]},
            {"contact": "Grace Liu", "unread": False, "time": "Mon", "messages": [
                {"me": False, "text": "The meeting moved to 3 pm"}, {"me": True, "text": "Got it, see you then"}]},
            {"contact": "Tom Fischer", "unread": False, "time": "Mar 8", "messages": [
                {"me": False, "text": "Can you send me the photos from the trip?"}]},
            {"contact": "+1 555-0199", "unread": False, "time": "Mar 2", "messages": [
                {"me": False, "text": "Your verification code is 482913"}]},
        ], "sent": []}

    def _thread(self, contact: str) -> dict | None:
        return next((t for t in self.s["threads"] if t["contact"].lower() == contact.lower()), None)

    def open_thread(self, contact: str) -> None:
        if self._thread(contact) is None:
            self.s["threads"].insert(0, {"contact": contact, "unread": False, "time": "Now", "messages": []})
        self.stack = [Page("main"), Page("thread", {"contact": contact, "draft": ""})]

    def page_main(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        bar = top_bar(ui, "Messages", actions=(("dots-vertical", "More options", None),
                                               ("magnify", "Search conversations", None, "action_zero_state_search")))
        items = []
        for t in self.s["threads"]:
            def row(top: int, t=t) -> Node:
                name = t["contact"]
                last = t["messages"][-1]["text"] if t["messages"] else ""
                if t["messages"] and t["messages"][-1]["me"]:
                    last = f"{ui.tr('You')}: {last}"
                lead = avatar(ui, ui.gutter + ui.dp(20), top + ui.dp(38), 44, name if name[0].isalpha() else "#",
                              colour_for(name))
                n = list_row(ui, top, name, subtitle=last, lead=lead, height=76, translate_title=False,
                             on_tap=lambda: self._open(t), title_rid=ui.rid("conversation_name"),
                             sub_rid=ui.rid("conversation_snippet"), rid="swipeableContainer",
                             on_long=lambda: self._delete_dialog(t),
                             title_weight="bold" if t["unread"] else "regular")
                n.add(label(ui, ui.W - ui.gutter, top + ui.dp(26), t["time"], size=12, anchor="rm",
                            color=ui.p.on_variant, rid="conversation_timestamp", translate_=False))
                return n
            items.append(Item(ui.dp(76), row))
        lst = scroll_list(ui, Rect(0, bar.rect.bottom, ui.W, c.bottom), page.args, "scroll", items,
                          rid="conversation_list")
        lst.block = ("list", ui.tr("Conversations"))
        root.add(lst, bar)
        root.add(fab(ui, "message-plus-outline", "Start chat", lambda: self.push("new", to=""), text="Start chat",
                     rid="start_chat_fab"))

    def _open(self, t: dict) -> None:
        t["unread"] = False
        self.push("thread", contact=t["contact"], draft="")

    def _delete_dialog(self, t: dict) -> None:
        def delete() -> None:
            self.s["threads"] = [x for x in self.s["threads"] if x is not t]
            self.toast("Conversation deleted")
        self.phone.show_dialog(Dialog(title="Delete this conversation?", buttons=[("Cancel", None), ("Delete", delete)]))

    def page_new(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        bar = top_bar(ui, "New conversation", on_back=self.up)
        fr = Rect(ui.gutter, bar.rect.bottom + ui.dp(4), ui.W - ui.gutter, bar.rect.bottom + ui.dp(60))
        if not page.args.get("_focused"):
            page.args["_focused"] = True
            self.phone.focus_field(page.args, "to", on_submit=lambda: self._to_number(page.args))
        f = self.field(ui, fr, page.args, "to", "Type names, phone numbers or emails", rid="recipient_text_view",
                       on_submit=lambda: self._to_number(page.args), style="underline")
        root.add(label(ui, ui.gutter, fr.top - ui.dp(2), "To", size=12, color=ui.p.on_variant, anchor="lb"))
        q = str(page.args.get("to", "")).strip().lower()
        people = self.phone.state["contacts"]["people"]
        match = [p for p in sorted(people, key=full_name) if not q or q in full_name(p).lower() or q in p["phone"]]
        items = []
        for p in match:
            def row(top: int, p=p) -> Node:
                name = full_name(p)
                lead = avatar(ui, ui.gutter + ui.dp(20), top + ui.dp(36), 40, name, colour_for(name))
                return list_row(ui, top, name, subtitle=p["phone"], lead=lead, translate_title=False,
                                on_tap=lambda: self.open_thread(name), rid="contact_picker_row")
            items.append(Item(ui.dp(72), row))
        lst = scroll_list(ui, Rect(0, fr.bottom + ui.dp(8), ui.W, c.bottom), page.args, "scroll", items,
                          rid="contact_picker_list")
        root.add(lst, bar, f)

    def _to_number(self, args: dict) -> None:
        to = str(args.get("to", "")).strip()
        if to:
            people = self.phone.state["contacts"]["people"]
            hit = next((full_name(p) for p in people if to.lower() in full_name(p).lower()), None)
            self.open_thread(hit or to)

    def page_thread(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        p = ui.p
        contact = page.args.get("contact", "")
        t = self._thread(contact)
        msgs = t["messages"] if t else []
        bar = top_bar(ui, contact, on_back=self.up, translate_title=False,
                      actions=(("dots-vertical", "More options", None), ("phone-outline", "Call", None, "call"),
                               ("video-outline", "Video call", None)))
        compose_h = ui.dp(72)
        items = []
        maxw = int(ui.W * 0.7)
        for m in msgs:
            px = ui.sp(16)
            lines = ui.wrap(m["text"], px, "regular", maxw - ui.dp(32))
            h = len(lines) * int(px * 1.35) + ui.dp(24)

            def bubble(top: int, m=m, h=h, lines=lines) -> Node:
                w = max(ui.measure(li, ui.sp(16), "regular") for li in lines) + ui.dp(32)
                left = ui.W - ui.gutter - w if m["me"] else ui.gutter + ui.dp(48)
                r = Rect(left, top + ui.dp(4), left + w, top + ui.dp(4) + h)
                n = box(r, fill=p.bubble_me if m["me"] else p.bubble_them, radius=ui.dp(20),
                        cls="android.widget.LinearLayout", rid=ui.rid("message_content"))
                n.add(paragraph(ui, Rect(r.left + ui.dp(16), r.top + ui.dp(12), r.right - ui.dp(16), r.bottom),
                                m["text"], size=16, rid="message_text",
                                color=p.on_primary_container if m["me"] else p.on_surface))
                return n
            items.append(Item(h + ui.dp(8), bubble))
        body = Rect(0, bar.rect.bottom, ui.W, c.bottom - compose_h)
        holder = page.args
        total = sum(i.height for i in items)
        if "scroll" not in holder:
            holder["scroll"] = max(0, total - body.height + ui.dp(16))
        lst = scroll_list(ui, body, holder, "scroll", items, rid="messages_list", pad_bottom=16)
        lst.block = ("list", contact)
        root.add(lst, bar)
        cr = Rect(ui.dp(56), c.bottom - compose_h + ui.dp(10), ui.W - ui.dp(64), c.bottom - ui.dp(10))
        root.add(icon_button(ui, ui.dp(28), cr.center.y, "plus-circle-outline", "Show attach options", None,
                             rid="attach"))
        root.add(self.field(ui, cr, page.args, "draft", "Text message", rid="compose_message_text", style="pill",
                            on_submit=self._send))
        root.add(icon_button(ui, ui.W - ui.dp(32), cr.center.y, "send", "Send SMS", self._send, rid="send_message_button",
                             color=p.primary if page.args.get("draft") else p.outline))

    def _send(self) -> None:
        a = self.page.args
        text = str(a.get("draft", "")).strip()
        if not text:
            return
        contact = a.get("contact", "")
        t = self._thread(contact)
        if t is None:
            t = {"contact": contact, "unread": False, "time": "Now", "messages": []}
            self.s["threads"].insert(0, t)
        t["messages"].append({"me": True, "text": text})
        self.s["sent"].append({"to": contact, "text": text})
        t["time"] = "Now"
        self.s["threads"].remove(t)
        self.s["threads"].insert(0, t)
        a["draft"] = ""
        a.pop("scroll", None)
