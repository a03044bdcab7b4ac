"""The Library app: a sign-in screen (user name, password, "Show password", Sign in) and,
once signed in, the account's loans.  It is the virtual phone's login screen for tasks
that type a secret (``tasks/login.yaml``).

Installed only when the phone's state has a ``library`` slice (``phone.reset({"library":
{}})``).  State: ``account`` (``user``, ``password``: what the library's server would
check), ``signed_in`` and ``user`` (who is signed in), ``failed`` (wrong attempts), and
``loans``.  The form's half-typed values live in the page's args and are cleared when
the form is sent; the password field is marked as one in the accessibility tree even
while "Show password" draws its text in clear (as Android keeps ``isPassword()`` set),
so that a stored frame's mask has something to find.
"""

from __future__ import annotations

from typing import Any

from phone.virtual.apps.base import App, Page
from phone.virtual.controls import checkbox
from phone.virtual.view import Node, Ui, button, label, paragraph, top_bar
from vision.geometry import Rect


class Library(App):
    package = "com.tapwise.library"
    label = "Library"
    icon = "bookshelf"
    color = (121, 85, 72)
    key = "library"
    activity_prefix = "com.tapwise.library"

    @staticmethod
    def default_state() -> dict[str, Any]:
        return {"account": {"user": "maria.k", "password": "Tulip7Harbor"}, "signed_in": False, "user": "",
                "failed": 0, "loans": ["The Left Hand of Darkness (due 14 May)", "Middlemarch (due 21 May)"]}

    def page_main(self, ui: Ui, page: Page, root: Node) -> None:
        if self.s.get("signed_in"):
            self._account(ui, root)
        else:
            self._sign_in_form(ui, page, root)

    def _sign_in_form(self, ui: Ui, page: Page, root: Node) -> None:
        a = page.args
        bar = top_bar(ui, "Library")
        y = bar.rect.bottom + ui.dp(24)
        root.add(bar, label(ui, ui.gutter, y + ui.dp(16), "Your library account", size=24, weight="medium",
                            rid="title"))
        y += ui.dp(52)
        root.add(paragraph(ui, Rect(ui.gutter, y, ui.W - ui.gutter, y + ui.dp(48)),
                           "Enter your user name and password to see your loans.", size=14, color=ui.p.on_variant))
        y += ui.dp(56)
        fr = Rect(ui.gutter, y, ui.W - ui.gutter, y + ui.dp(56))
        root.add(self.field(ui, fr, a, "user", "Username", rid="username", lead_icon="account-outline"))
        y += ui.dp(72)
        fr = Rect(ui.gutter, y, ui.W - ui.gutter, y + ui.dp(56))
        shown = bool(a.get("show"))
        pw = self.field(ui, fr, a, "password", "Password", rid="password", lead_icon="lock-outline",
                        password=not shown, on_submit=self._submit)
        if shown:  # drawn in clear, still a password field to the accessibility tree
            pw.password = True
            if a.get("password"):
                pw.text = "•" * len(str(a["password"]))
        root.add(pw)
        y += ui.dp(64)
        cb = checkbox(ui, ui.gutter + ui.dp(12), y + ui.dp(24), shown, lambda: a.__setitem__("show", not shown),
                      rid="show_password", text="Show password")
        root.add(cb, label(ui, ui.gutter + ui.dp(40), y + ui.dp(24), "Show password", size=14, rid="show_password_label"))
        y += ui.dp(64)
        root.add(button(ui, Rect(ui.gutter, y, ui.W - ui.gutter, y + ui.dp(48)), "Sign in", self._submit,
                        rid="sign_in"))
        if self.s.get("failed"):
            root.add(label(ui, ui.gutter, y + ui.dp(76), "Wrong username or password", size=14, color=(179, 38, 30),
                           rid="error"))

    def _submit(self) -> None:
        a = self.page.args
        account = self.s["account"]
        user, password = str(a.get("user", "")).strip(), str(a.get("password", ""))
        a["password"] = ""  # the form forgets the password once sent
        self.phone.clear_focus()
        if user.lower() == str(account["user"]).lower() and password == account["password"]:
            self.s.update(signed_in=True, user=account["user"], failed=0)
            a.clear()
            self.toast(f"Signed in as {account['user']}")
        else:
            self.s["failed"] = int(self.s.get("failed", 0)) + 1
            self.toast("Wrong username or password")

    def _account(self, ui: Ui, root: Node) -> None:
        bar = top_bar(ui, "Library", actions=(("logout", "Sign out", self._sign_out, "sign_out"),))
        y = bar.rect.bottom + ui.dp(24)
        root.add(bar, label(ui, ui.gutter, y + ui.dp(16), f"Welcome, {self.s['user']}", size=22, weight="medium",
                            translate_=False, rid="welcome"))
        y += ui.dp(56)
        root.add(label(ui, ui.gutter, y + ui.dp(12), "Your loans", size=16, weight="medium"))
        y += ui.dp(36)
        for loan in self.s.get("loans", []):
            root.add(label(ui, ui.gutter, y + ui.dp(16), loan, size=15, translate_=False, rid="loan",
                           max_w=ui.W - 2 * ui.gutter))
            y += ui.dp(40)

    def _sign_out(self) -> None:
        self.s.update(signed_in=False, user="")
        self.stack = [Page("main")]
