"""The pop-up ad used by the ``ads`` noise knob: a modal with an icon-only close
button.  Builds a dialog; keeps no state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from phone.virtual.system import Dialog
from phone.virtual.view import Node, Ui, button, icon_button, label, photo
from vision.geometry import Rect

if TYPE_CHECKING:
    from phone.virtual.phone import VirtualPhone

_PRODUCTS = [("Sparkle VPN", "shield-outline"), ("Puzzle Quest", "puzzle"), ("FitTrack Pro", "run"),
             ("Recipe Box", "chef-hat")]


def ad_dialog(phone: VirtualPhone, n: int) -> Dialog:
    name, icon_name = _PRODUCTS[n % len(_PRODUCTS)]

    def content(ui: Ui, left: int, top: int, width: int) -> tuple[list[Node], int]:
        h = ui.dp(150)
        nodes = [
            photo(ui, Rect(left, top, left + width, top + h), n, icon_name, desc="Advertisement"),
            label(ui, left, top + h + ui.dp(22), name, size=18, weight="medium", translate_=False),
            label(ui, left, top + h + ui.dp(46), "Sponsored", size=12),
            icon_button(ui, left + width - ui.dp(18), top + ui.dp(18), "close", "Close ad", phone.close_dialog,
                        rid="ad_close", bg=(255, 255, 255), size=20, bg_size=32, color=(60, 60, 60)),
            button(ui, Rect(left, top + h + ui.dp(64), left + width, top + h + ui.dp(104)), "Install",
                   phone.close_dialog, rid="ad_install"),
        ]
        return nodes, h + ui.dp(108)

    return Dialog(title="", custom=content, cancelable=False, kind="ad", rid="ad")
