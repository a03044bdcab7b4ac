"""The Shop app: home with categories and featured products, search and results,
product page with quantity spinner, wishlist, cart with quantity controls, checkout
form with payment choice, and an order confirmation.  State lives in
``phone.state["shop"]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from phone.virtual.apps.base import App, Page
from phone.virtual.apps.panels import bottom_sheet
from phone.virtual.controls import radio, spinner
from phone.virtual.system import Dialog
from phone.virtual.view import (
    Item,
    K,
    Node,
    Ui,
    box,
    button,
    icon_button,
    label,
    paragraph,
    photo,
    rating,
    scroll_list,
    tapper,
    top_bar,
)
from vision.geometry import Rect

PRODUCTS: list[dict[str, Any]] = [
    {"id": "p1", "name": "Wireless Earbuds Pro", "price": 79.99, "rating": 4.5, "reviews": 2310, "cat": "Audio", "icon": "headphones"},
    {"id": "p2", "name": "Bluetooth Speaker Mini", "price": 34.50, "rating": 4.2, "reviews": 980, "cat": "Audio", "icon": "speaker"},
    {"id": "p3", "name": "Noise Cancelling Headphones", "price": 199.00, "rating": 4.7, "reviews": 5120, "cat": "Audio", "icon": "headphones"},
    {"id": "p4", "name": "USB-C Charger 65W", "price": 29.99, "rating": 4.6, "reviews": 3400, "cat": "Accessories", "icon": "power-plug"},
    {"id": "p5", "name": "Phone Case Clear", "price": 12.99, "rating": 4.1, "reviews": 760, "cat": "Accessories", "icon": "cellphone"},
    {"id": "p6", "name": "Smart Watch Active", "price": 149.00, "rating": 4.3, "reviews": 1890, "cat": "Wearables", "icon": "watch"},
    {"id": "p7", "name": "Fitness Band 5", "price": 49.00, "rating": 4.0, "reviews": 1200, "cat": "Wearables", "icon": "watch-variant"},
    {"id": "p8", "name": "Coffee Mug Ceramic", "price": 9.50, "rating": 4.8, "reviews": 430, "cat": "Household", "icon": "coffee"},
    {"id": "p9", "name": "Desk Lamp LED", "price": 27.00, "rating": 4.4, "reviews": 610, "cat": "Household", "icon": "desk-lamp"},
    {"id": "p10", "name": "Running Shoes Air", "price": 89.90, "rating": 4.5, "reviews": 2750, "cat": "Sports", "icon": "shoe-sneaker"},
    {"id": "p11", "name": "Yoga Mat Cork", "price": 39.00, "rating": 4.6, "reviews": 520, "cat": "Sports", "icon": "yoga"},
    {"id": "p12", "name": "Water Bottle Steel", "price": 19.99, "rating": 4.7, "reviews": 1640, "cat": "Sports", "icon": "bottle-soda-outline"},
    {"id": "p13", "name": "Backpack Commuter", "price": 64.00, "rating": 4.4, "reviews": 880, "cat": "Accessories", "icon": "bag-personal"},
    {"id": "p14", "name": "Wireless Mouse", "price": 24.99, "rating": 4.3, "reviews": 2050, "cat": "Accessories", "icon": "mouse"},
]
CATEGORIES = ["All", "Audio", "Accessories", "Wearables", "Household", "Sports"]
PAYMENTS = ["Credit card", "PayPal", "Cash on delivery"]
BANNERS = [("Spring sale: up to 40% off", "tag"), ("Free shipping over $50", "truck-delivery"),
           ("New: Smart Watch Active", "watch")]


def product(pid: str) -> dict | None:
    return next((p for p in PRODUCTS if p["id"] == pid), None)


def price(v: float) -> str:
    return f"${v:,.2f}"


class Shop(App):
    package = "com.tapwise.shop"
    label = "Shop"
    icon = "shopping"
    color = (234, 67, 53)
    key = "shop"
    activity_prefix = "com.tapwise.shop"

    @staticmethod
    def default_state() -> dict[str, Any]:
        return {"cart": [], "wishlist": [], "orders": [], "category": "All", "last_search": "",
                "address": {"name": "", "street": "", "city": ""}, "payment": "Credit card"}

    def back(self) -> bool:
        if self.page.args.pop("sheet", None):
            return True  # BACK closes the share sheet first
        return super().back()

    def _share(self, how: str) -> None:
        self.s.setdefault("shared", []).append({"id": self.page.args.get("id", ""), "via": how})
        self.toast("Link copied" if how == "link" else "Shared")

    def cart_count(self) -> int:
        return sum(i["qty"] for i in self.s["cart"])

    def _cart_button(self, ui: Ui, cx: int, cy: int) -> Node:
        b = icon_button(ui, cx, cy, "cart-outline", "Cart", lambda: self.push("cart"), rid="cart_button",
                        color=ui.p.on_surface)
        n = self.cart_count()
        if n:
            d = ui.dp(18)
            b.ops.append(("oval", cx + ui.dp(4), cy - ui.dp(16), cx + ui.dp(4) + d, cy - ui.dp(16) + d, ui.p.error, None, 0))
            b.ops.append(("text", cx + ui.dp(4) + d // 2, cy - ui.dp(16) + d // 2, str(n), ui.sp(11), "medium",
                          (255, 255, 255), "mm"))
        return b

    def _bar(self, ui: Ui, title: str, back: bool = True) -> Node:
        bar = top_bar(ui, title, on_back=self.up if back else None, translate_title=True)
        bar.add(self._cart_button(ui, ui.W - ui.dp(28), bar.rect.top + ui.dp(32)))
        return bar

    def _search_pill(self, ui: Ui, r: Rect, text: str = "") -> Node:
        p = ui.p
        n = box(r, fill=p.container_high, radius=r.height // 2, cls="android.widget.EditText", kind=K.EDIT_TEXT,
                clickable=True, text=text or ui.tr("Search products"), rid=ui.rid("search_bar"),
                on_tap=tapper(self._open_search))
        n.ops.append(("icon", r.left + ui.dp(26), r.center.y, "magnify", ui.dp(24), p.on_variant))
        n.ops.append(("text", r.left + ui.dp(54), r.center.y, text or ui.tr("Search products"), ui.sp(16), "regular",
                      p.on_surface if text else p.on_variant, "lm"))
        return n

    def _open_search(self) -> None:
        self.push("search", query="")
        self.phone.focus_field(self.page.args, "query", on_submit=self._submit_search)

    def page_main(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        s = self.s
        bar = self._bar(ui, "Shop", back=False)
        pill = Rect(ui.gutter, bar.rect.bottom, ui.W - ui.gutter, bar.rect.bottom + ui.dp(52))
        items: list[Item] = []

        def chips(top: int) -> Node:
            total = sum(ui.measure(ui.tr(cat), ui.sp(14), "medium") + ui.dp(40) for cat in CATEGORIES) + ui.gutter
            max_off = max(0, total - ui.W + ui.gutter)

            def hswipe(d: int) -> bool:
                page.args["chips_off"] = max_off if d > 0 else 0
                return True

            n = box(Rect(0, top, ui.W, top + ui.dp(56)), cls="android.widget.HorizontalScrollView",
                    rid=ui.rid("categories"), block=("chips", ui.tr("Categories")), scrollable=max_off > 0,
                    on_hswipe=hswipe if max_off > 0 else None)
            x = ui.gutter - min(page.args.get("chips_off", 0), max_off)
            for cat in CATEGORIES:
                t = ui.tr(cat)
                w = ui.measure(t, ui.sp(14), "medium") + ui.dp(32)
                r = Rect(x, top + ui.dp(10), x + w, top + ui.dp(46))
                sel = s["category"] == cat
                chip = Node(rect=r, cls="android.widget.CompoundButton", kind=K.BUTTON, text=t, clickable=True,
                            checkable=True, checked=sel, selected=sel, rid=ui.rid("chip"),
                            on_tap=tapper(lambda cat=cat: s.__setitem__("category", cat)))
                chip.ops.append(("rect", *r.as_tuple(), ui.p.secondary_container if sel else None, ui.dp(8),
                                 None if sel else ui.p.outline, 0 if sel else max(1, ui.dp(1))))
                chip.ops.append(("text", r.center.x, r.center.y, t, ui.sp(14), "medium",
                                 ui.p.on_secondary_container if sel else ui.p.on_variant, "mm"))
                n.add(chip)
                x += w + ui.dp(8)
            return n
        items.append(Item(ui.dp(56), chips))
        b_idx = (self.phone._tick // 2) % len(BANNERS) if self.phone.noise.dynamic_content else 0
        btext, bicon = BANNERS[b_idx]

        def banner(top: int) -> Node:
            r = Rect(ui.gutter, top + ui.dp(4), ui.W - ui.gutter, top + ui.dp(124))
            n = photo(ui, r, 7 + b_idx, "", radius=20, desc=btext)
            n.icon = bicon
            n.ops.append(("icon", r.right - ui.dp(60), r.center.y, bicon, ui.dp(72), (150, 100, 20)))
            n.add(label(ui, r.left + ui.dp(20), r.top + ui.dp(36), btext, size=18, weight="medium",
                        color=(40, 30, 10), translate_=False, max_w=r.width - ui.dp(40)))
            n.add(label(ui, r.left + ui.dp(20), r.top + ui.dp(70), "Shop now", size=14, color=(40, 30, 10)))
            return n
        items.append(Item(ui.dp(136), banner))
        items.append(Item(ui.dp(44), lambda top: label(ui, ui.gutter, top + ui.dp(24), "Popular right now", size=18,
                                                      weight="medium")))
        prods = [p for p in PRODUCTS if s["category"] in ("All", p["cat"])]
        cols = 2 if not ui.profile.is_tablet else 3
        gap = ui.dp(12)
        cw = (ui.W - 2 * ui.gutter - (cols - 1) * gap) // cols
        ch = cw + ui.dp(92)
        for i in range(0, len(prods), cols):
            row = prods[i:i + cols]

            def build(top: int, row=row) -> Node:
                n = box(Rect(0, top, ui.W, top + ch), cls="android.widget.LinearLayout")
                for j, pr in enumerate(row):
                    left = ui.gutter + j * (cw + gap)
                    n.add(self._card(ui, pr, Rect(left, top, left + cw, top + ch)))
                return n
            items.append(Item(ch + gap, build))
        lst = scroll_list(ui, Rect(0, pill.bottom + ui.dp(8), ui.W, c.bottom), page.args, "scroll", items,
                          rid="home_feed")
        lst.block = ("list", ui.tr("Popular right now"))
        root.add(lst, bar, self._search_pill(ui, pill))

    def _card(self, ui: Ui, pr: dict, r: Rect) -> Node:
        p = ui.p
        card = box(r, fill=p.surface if not ui.dark else p.container, radius=ui.dp(16), outline=p.divider,
                   width=max(1, ui.dp(1)), cls="android.widget.FrameLayout", clickable=True,
                   rid=ui.rid("product_card"), on_tap=tapper(lambda: self.push("product", id=pr["id"], qty=1)),
                   block=("card", pr["name"]))
        img = Rect(r.left + ui.dp(8), r.top + ui.dp(8), r.right - ui.dp(8), r.top + r.width - ui.dp(8))
        card.add(photo(ui, img, int(pr["id"][1:]), pr["icon"], desc=pr["name"]))
        card.add(label(ui, r.left + ui.dp(12), img.bottom + ui.dp(18), pr["name"], size=14, translate_=False,
                       max_w=r.width - ui.dp(24), rid="product_title"))
        card.add(label(ui, r.left + ui.dp(12), img.bottom + ui.dp(44), price(pr["price"]), size=16, weight="bold",
                       translate_=False, rid="product_price"))
        card.add(rating(ui, r.left + ui.dp(12), img.bottom + ui.dp(68), pr["rating"], size=13))
        return card

    def page_search(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        q = str(page.args.get("query", "")).strip().lower()
        bar = top_bar(ui, "", on_back=self.up)
        sugg = [p for p in PRODUCTS if q and q in p["name"].lower()][:8]
        from phone.virtual.apps.common import Row, row_items

        rows = [Row("nav", p["name"], icon="magnify", translate=False,
                    on_tap=lambda p=p: self._show_results(p["name"])) for p in sugg]
        if not q:
            rows = [Row("header", "Recent searches")] + [
                Row("nav", t, icon="history", translate=False, on_tap=lambda t=t: self._show_results(t))
                for t in ("earbuds", "yoga mat")]
        lst = scroll_list(ui, Rect(0, bar.rect.bottom, ui.W, c.bottom), page.args, "scroll", row_items(ui, rows),
                          rid="suggestions")
        root.add(lst, bar)
        root.add(self.field(ui, Rect(ui.dp(64), c.top + ui.dp(8), ui.W - ui.gutter, c.top + ui.dp(56)), page.args,
                            "query", "Search products", rid="search_input", style="pill",
                            on_submit=self._submit_search))

    def _submit_search(self) -> None:
        self._show_results(str(self.page.args.get("query", "")))

    def _show_results(self, q: str) -> None:
        q = q.strip()
        if not q:
            return
        self.s["last_search"] = q
        self.replace("results", query=q)

    def page_results(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        q = str(page.args.get("query", "")).lower()
        words = [w for w in q.split() if w]
        hits = [p for p in PRODUCTS if all(w in (p["name"] + " " + p["cat"]).lower() for w in words)]
        bar = self._bar(ui, "Results")
        pill = Rect(ui.gutter, bar.rect.bottom, ui.W - ui.gutter, bar.rect.bottom + ui.dp(52))
        items = [Item(ui.dp(40), lambda top: label(ui, ui.gutter, top + ui.dp(22),
                                                   f"{len(hits)} {ui.tr('results')}", size=14,
                                                   color=ui.p.on_variant, translate_=False))]
        for pr in hits:
            def row(top: int, pr=pr) -> Node:
                r = Rect(0, top, ui.W, top + ui.dp(120))
                n = box(r, cls="android.widget.LinearLayout", clickable=True, rid=ui.rid("result_row"),
                        on_tap=tapper(lambda: self.push("product", id=pr["id"], qty=1)))
                n.add(photo(ui, Rect(ui.gutter, top + ui.dp(10), ui.gutter + ui.dp(100), top + ui.dp(110)),
                            int(pr["id"][1:]), pr["icon"], desc=pr["name"]))
                x = ui.gutter + ui.dp(116)
                n.add(label(ui, x, top + ui.dp(30), pr["name"], size=16, translate_=False,
                            max_w=ui.W - x - ui.gutter, rid="product_title"))
                n.add(rating(ui, x, top + ui.dp(58), pr["rating"], size=14))
                n.add(label(ui, x + ui.dp(78), top + ui.dp(58), f"({pr['reviews']:,})", size=12, translate_=False,
                            color=ui.p.on_variant))
                n.add(label(ui, x, top + ui.dp(88), price(pr["price"]), size=18, weight="bold", translate_=False,
                            rid="product_price"))
                return n
            items.append(Item(ui.dp(120), row))
        lst = scroll_list(ui, Rect(0, pill.bottom + ui.dp(8), ui.W, c.bottom), page.args, "scroll", items,
                          rid="results_list")
        lst.block = ("list", ui.tr("Results"))
        root.add(lst, bar, self._search_pill(ui, pill, page.args.get("query", "")))
        if not hits:
            root.add(label(ui, ui.W // 2, pill.bottom + ui.dp(120), "No products found", size=16, anchor="mm",
                           color=ui.p.on_variant))

    def page_product(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        pr = product(page.args.get("id", ""))
        if pr is None:
            self.back()
            return
        s = self.s
        bar = self._bar(ui, "")
        wished = pr["id"] in s["wishlist"]
        bar.add(icon_button(ui, ui.W - ui.dp(76), bar.rect.top + ui.dp(32), "heart" if wished else "heart-outline",
                            "Remove from wishlist" if wished else "Add to wishlist", self._wish, rid="wishlist_button",
                            color=ui.p.error if wished else ui.p.on_surface))
        bar.add(icon_button(ui, ui.W - ui.dp(124), bar.rect.top + ui.dp(32), "share-variant", "Share",
                            lambda: page.args.__setitem__("sheet", True), rid="share_button", color=ui.p.on_surface))
        items: list[Item] = []
        iw = min(ui.W - 2 * ui.gutter, ui.dp(420))
        items.append(Item(iw + ui.dp(16), lambda top: photo(
            ui, Rect((ui.W - iw) // 2, top + ui.dp(8), (ui.W + iw) // 2, top + ui.dp(8) + iw), int(pr["id"][1:]),
            pr["icon"], radius=24, desc=pr["name"])))

        def info(top: int) -> Node:
            n = box(Rect(0, top, ui.W, top + ui.dp(200)), cls="android.widget.LinearLayout", block=("card", pr["name"]))
            n.add(label(ui, ui.gutter, top + ui.dp(24), pr["name"], size=22, translate_=False, rid="product_title",
                        max_w=ui.W - 2 * ui.gutter))
            n.add(rating(ui, ui.gutter, top + ui.dp(58), pr["rating"], size=18))
            n.add(label(ui, ui.gutter + ui.dp(100), top + ui.dp(58), f"{pr['rating']} ({pr['reviews']:,} reviews)",
                        size=13, color=ui.p.on_variant, translate_=False))
            n.add(label(ui, ui.gutter, top + ui.dp(98), price(pr["price"]), size=26, weight="bold", translate_=False,
                        rid="product_price"))
            n.add(label(ui, ui.gutter, top + ui.dp(140), "Quantity", size=14, color=ui.p.on_variant))
            n.add(spinner(ui, Rect(ui.gutter + ui.dp(80), top + ui.dp(118), ui.gutter + ui.dp(180), top + ui.dp(162)),
                          str(page.args.get("qty", 1)), self._qty_dialog, rid="quantity_spinner"))
            half = (ui.W - 2 * ui.gutter - ui.dp(12)) // 2
            n.add(button(ui, Rect(ui.gutter, top + ui.dp(176), ui.gutter + half, top + ui.dp(224)), "Add to cart",
                         self._add, rid="add_to_cart", icon_name="cart-plus"))
            n.add(button(ui, Rect(ui.gutter + half + ui.dp(12), top + ui.dp(176), ui.W - ui.gutter, top + ui.dp(224)),
                         "Buy now", self._buy_now, style="tonal", rid="buy_now"))
            return n
        items.append(Item(ui.dp(240), info))
        desc = (f"{pr['name']} from our {pr['cat'].lower()} range. Free returns within 30 days and a two-year "
                "warranty. Ships in 1–2 business days.")
        items.append(Item(ui.dp(40), lambda top: label(ui, ui.gutter, top + ui.dp(24), "About this item", size=18,
                                                      weight="medium")))
        items.append(Item(ui.dp(110), lambda top: paragraph(ui, Rect(ui.gutter, top, ui.W - ui.gutter, top + ui.dp(100)),
                                                            desc, size=14, color=ui.p.on_variant)))
        lst = scroll_list(ui, Rect(0, bar.rect.bottom, ui.W, c.bottom), page.args, "scroll", items, rid="product_detail")
        root.add(lst, bar)
        if page.args.get("sheet"):
            root.add(*bottom_sheet(ui, "Share", [("link-variant", "Copy link", lambda: self._share("link")),
                                                 ("message-text-outline", "Send in Messages", lambda: self._share("messages")),
                                                 ("note-outline", "Save to Notes", lambda: self._share("notes"))],
                                   close=lambda: page.args.pop("sheet", None)))

    def _wish(self) -> None:
        pid = self.page.args["id"]
        w = self.s["wishlist"]
        if pid in w:
            w.remove(pid)
        else:
            w.append(pid)
            self.phone.show_snackbar("Added to wishlist")

    def _qty_dialog(self) -> None:
        opts = [str(i) for i in range(1, 6)]
        a = self.page.args
        self.phone.show_dialog(Dialog(title="Quantity", options=opts, selected=int(a.get("qty", 1)) - 1,
                                      translate_options=False, on_choose=lambda i: a.__setitem__("qty", i + 1)))

    def _add(self) -> None:
        a = self.page.args
        pid, qty = a["id"], int(a.get("qty", 1))
        for it in self.s["cart"]:
            if it["id"] == pid:
                it["qty"] += qty
                break
        else:
            self.s["cart"].append({"id": pid, "qty": qty, "name": product(pid)["name"]})  # type: ignore[index]
        self.toast("Added to cart")

    def _buy_now(self) -> None:
        self._add()
        self.push("cart")

    def page_cart(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        s = self.s
        bar = top_bar(ui, "Cart", on_back=self.up)
        items: list[Item] = []
        for it in s["cart"]:
            pr = product(it["id"])
            if pr is None:
                continue

            def row(top: int, it=it, pr=pr) -> Node:
                r = Rect(0, top, ui.W, top + ui.dp(128))
                n = box(r, cls="android.widget.LinearLayout", rid=ui.rid("cart_item"), block=("card", pr["name"]))
                n.add(photo(ui, Rect(ui.gutter, top + ui.dp(12), ui.gutter + ui.dp(96), top + ui.dp(108)),
                            int(pr["id"][1:]), pr["icon"], desc=pr["name"]))
                x = ui.gutter + ui.dp(112)
                n.add(label(ui, x, top + ui.dp(28), pr["name"], size=16, translate_=False, max_w=ui.W - x - ui.dp(64),
                            rid="cart_item_title"))
                n.add(label(ui, x, top + ui.dp(56), price(pr["price"] * it["qty"]), size=16, weight="bold",
                            translate_=False, rid="cart_item_price"))
                cy = top + ui.dp(94)
                n.add(icon_button(ui, x + ui.dp(20), cy, "minus", "Decrease quantity", lambda: self._dec(it),
                                  bg=ui.p.container_high, bg_size=32, touch=40, size=18, rid="decrease"))
                n.add(label(ui, x + ui.dp(60), cy, str(it["qty"]), size=16, anchor="mm", translate_=False,
                            rid="quantity"))
                n.add(icon_button(ui, x + ui.dp(100), cy, "plus", "Increase quantity", lambda: self._inc(it),
                                  bg=ui.p.container_high, bg_size=32, touch=40, size=18, rid="increase"))
                n.add(icon_button(ui, ui.W - ui.gutter - ui.dp(20), top + ui.dp(28), "delete-outline", "Remove",
                                  lambda: self._remove(it), rid="remove"))
                return n
            items.append(Item(ui.dp(128), row))
        foot_h = ui.dp(120) if s["cart"] else 0
        lst = scroll_list(ui, Rect(0, bar.rect.bottom, ui.W, c.bottom - foot_h), page.args, "scroll", items,
                          rid="cart_list", pad_bottom=8)
        lst.block = ("list", ui.tr("Cart"))
        root.add(lst, bar)
        if not s["cart"]:
            root.add(label(ui, ui.W // 2, c.center.y, "Your cart is empty", size=18, anchor="mm",
                           color=ui.p.on_variant))
            return
        total = self.total()
        fr = Rect(0, c.bottom - foot_h, ui.W, c.bottom)
        foot = box(fr, fill=ui.p.container, cls="android.widget.LinearLayout", block=("footer", ui.tr("Subtotal")))
        foot.add(label(ui, ui.gutter, fr.top + ui.dp(28), f"{ui.tr('Subtotal')} ({self.cart_count()})", size=16,
                       translate_=False))
        foot.add(label(ui, ui.W - ui.gutter, fr.top + ui.dp(28), price(total), size=18, weight="bold", anchor="rm",
                       translate_=False, rid="subtotal"))
        foot.add(button(ui, Rect(ui.gutter, fr.top + ui.dp(56), ui.W - ui.gutter, fr.top + ui.dp(104)), "Checkout",
                        lambda: self.push("checkout"), rid="checkout_button"))
        root.add(foot)

    def total(self) -> float:
        return round(sum(product(i["id"])["price"] * i["qty"] for i in self.s["cart"] if product(i["id"])), 2)  # type: ignore[index]

    def _inc(self, it: dict) -> None:
        it["qty"] += 1

    def _dec(self, it: dict) -> None:
        if it["qty"] > 1:
            it["qty"] -= 1
        else:
            self._remove(it)

    def _remove(self, it: dict) -> None:
        self.s["cart"] = [x for x in self.s["cart"] if x is not it]
        self.toast("Removed from cart")

    def page_checkout(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        s = self.s
        bar = top_bar(ui, "Checkout", on_back=self.up)
        addr = s["address"]
        items: list[Item] = [Item(ui.dp(44), lambda top: label(ui, ui.gutter, top + ui.dp(26), "Shipping address",
                                                              size=18, weight="medium"))]
        def address_field(key: str, hint: str) -> Callable[[int], Node]:
            return lambda top: self.field(ui, Rect(ui.gutter, top + ui.dp(8), ui.W - ui.gutter, top + ui.dp(64)),
                                          addr, key, hint, rid=f"address_{key}")

        for key, hint in (("name", "Full name"), ("street", "Street address"), ("city", "City")):
            items.append(Item(ui.dp(72), address_field(key, hint)))
        items.append(Item(ui.dp(52), lambda top: label(ui, ui.gutter, top + ui.dp(30), "Payment method", size=18,
                                                      weight="medium")))
        for pay in PAYMENTS:
            def prow(top: int, pay=pay) -> Node:
                r = Rect(0, top, ui.W, top + ui.dp(52))
                n = box(r, cls="android.widget.RadioButton", kind=K.RADIO_GROUP, text=ui.tr(pay), clickable=True,
                        checkable=True, checked=s["payment"] == pay, rid=ui.rid("payment_option"),
                        on_tap=tapper(lambda: s.__setitem__("payment", pay)))
                rr = radio(ui, ui.gutter + ui.dp(12), r.center.y, s["payment"] == pay, None)
                n.ops.extend(rr.ops)
                n.add(label(ui, ui.gutter + ui.dp(48), r.center.y, pay, size=16, xml=False))
                return n
            items.append(Item(ui.dp(52), prow))

        def summary(top: int) -> Node:
            r = Rect(ui.gutter, top + ui.dp(12), ui.W - ui.gutter, top + ui.dp(92))
            n = box(r, fill=ui.p.container, radius=ui.dp(16), cls="android.widget.LinearLayout",
                    block=("card", ui.tr("Order total")))
            n.add(label(ui, r.left + ui.dp(16), r.center.y, "Order total", size=16))
            n.add(label(ui, r.right - ui.dp(16), r.center.y, price(self.total()), size=20, weight="bold", anchor="rm",
                        translate_=False, rid="order_total"))
            return n
        items.append(Item(ui.dp(100), summary))
        items.append(Item(ui.dp(72), lambda top: button(
            ui, Rect(ui.gutter, top + ui.dp(12), ui.W - ui.gutter, top + ui.dp(60)), "Place order", self._place,
            rid="place_order")))
        lst = scroll_list(ui, Rect(0, bar.rect.bottom, ui.W, c.bottom), page.args, "scroll", items, rid="checkout_form")
        root.add(lst, bar)

    def _place(self) -> None:
        s = self.s
        addr = s["address"]
        missing = [k for k in ("name", "street", "city") if not str(addr.get(k, "")).strip()]
        if missing:
            self.toast("Please fill in the shipping address")
            return
        if not s["cart"]:
            self.toast("Your cart is empty")
            return
        number = 1042 + len(s["orders"])
        s["orders"].append({"number": number, "items": [dict(i) for i in s["cart"]], "total": self.total(),
                            "payment": s["payment"], "address": dict(addr)})
        s["cart"] = []
        self.phone.clear_focus()
        self.stack = [Page("main"), Page("done", {"number": number})]

    def page_done(self, ui: Ui, page: Page, root: Node) -> None:
        c = ui.content
        from phone.virtual.view import icon as icon_node

        root.add(icon_node(ui, ui.W // 2, c.top + ui.dp(200), "check-circle", size=96, color=(15, 157, 88)))
        root.add(label(ui, ui.W // 2, c.top + ui.dp(300), "Thank you!", size=28, anchor="mm"))
        root.add(label(ui, ui.W // 2, c.top + ui.dp(344), f"{ui.tr('Order')} #{page.args.get('number')} "
                       f"{ui.tr('placed')}", size=16, anchor="mm", translate_=False, rid="order_number"))
        root.add(button(ui, Rect(ui.W // 2 - ui.dp(120), c.top + ui.dp(400), ui.W // 2 + ui.dp(120), c.top + ui.dp(448)),
                        "Continue shopping", lambda: setattr(self, "stack", [Page("main")]), rid="continue"))
