"""Device profiles (resolution, density) and colour palettes for the virtual phone.

Pure data: no drawing, no state.  Layout code works in dp and converts with
``Profile.scale``; colours are RGB tuples taken from Material 3's baseline schemes.
"""

from __future__ import annotations

from dataclasses import dataclass

RGB = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    width: int
    height: int
    dpi: int
    model: str

    @property
    def scale(self) -> float:
        """Pixels per dp."""
        return self.dpi / 160.0

    @property
    def width_dp(self) -> float:
        return self.width / self.scale

    @property
    def is_tablet(self) -> bool:
        return self.width_dp >= 600


PROFILES: dict[str, Profile] = {
    "phone": Profile("phone", 1080, 2400, 420, "Tapwise Virtual Phone"),
    "small": Profile("small", 720, 1600, 320, "Tapwise Virtual Phone Mini"),
    "tablet": Profile("tablet", 1600, 2560, 320, "Tapwise Virtual Tablet"),
}


def _hex(code: str) -> RGB:
    code = code.lstrip("#")
    return (int(code[0:2], 16), int(code[2:4], 16), int(code[4:6], 16))


@dataclass(frozen=True, slots=True)
class Palette:
    name: str
    background: RGB
    surface: RGB
    container: RGB
    container_high: RGB
    on_surface: RGB
    on_variant: RGB
    primary: RGB
    on_primary: RGB
    primary_container: RGB
    on_primary_container: RGB
    secondary_container: RGB
    on_secondary_container: RGB
    outline: RGB
    divider: RGB
    error: RGB
    scrim: RGB
    switch_off_track: RGB
    switch_off_thumb: RGB
    bubble_me: RGB
    bubble_them: RGB
    key: RGB
    key_special: RGB
    keyboard: RGB
    wallpaper_top: RGB
    wallpaper_bottom: RGB


LIGHT = Palette(
    name="light",
    background=_hex("#F8F9FC"),
    surface=_hex("#FFFFFF"),
    container=_hex("#EEF1F7"),
    container_high=_hex("#E3E8F1"),
    on_surface=_hex("#1B1B1F"),
    on_variant=_hex("#45474F"),
    primary=_hex("#0B57D0"),
    on_primary=_hex("#FFFFFF"),
    primary_container=_hex("#D3E3FD"),
    on_primary_container=_hex("#041E49"),
    secondary_container=_hex("#C2E7FF"),
    on_secondary_container=_hex("#001D35"),
    outline=_hex("#757780"),
    divider=_hex("#DDE1EA"),
    error=_hex("#B3261E"),
    scrim=(0, 0, 0),
    switch_off_track=_hex("#E1E2EC"),
    switch_off_thumb=_hex("#757780"),
    bubble_me=_hex("#D3E3FD"),
    bubble_them=_hex("#EEF1F7"),
    key=_hex("#FFFFFF"),
    key_special=_hex("#D5DAE3"),
    keyboard=_hex("#E8EBF1"),
    wallpaper_top=_hex("#6E8EC9"),
    wallpaper_bottom=_hex("#C9B6E4"),
)

DARK = Palette(
    name="dark",
    background=_hex("#121316"),
    surface=_hex("#1B1C20"),
    container=_hex("#22242A"),
    container_high=_hex("#2C2F36"),
    on_surface=_hex("#E3E2E6"),
    on_variant=_hex("#C5C6D0"),
    primary=_hex("#A8C7FA"),
    on_primary=_hex("#062E6F"),
    primary_container=_hex("#0842A0"),
    on_primary_container=_hex("#D3E3FD"),
    secondary_container=_hex("#004A77"),
    on_secondary_container=_hex("#C2E7FF"),
    outline=_hex("#8F9099"),
    divider=_hex("#33353C"),
    error=_hex("#F2B8B5"),
    scrim=(0, 0, 0),
    switch_off_track=_hex("#33353C"),
    switch_off_thumb=_hex("#8F9099"),
    bubble_me=_hex("#0842A0"),
    bubble_them=_hex("#2C2F36"),
    key=_hex("#3A3C42"),
    key_special=_hex("#2A2C31"),
    keyboard=_hex("#1E1F23"),
    wallpaper_top=_hex("#1F2C4D"),
    wallpaper_bottom=_hex("#4A3A66"),
)

PALETTES = {"light": LIGHT, "dark": DARK}

#: Page layouts, as after an app update: ``shifted`` puts a suggestion card at the top of
#: every list page, so each row (and the element a recorded step aimed at) sits lower than
#: on the default layout; ``reordered`` swaps each pair of rows of every list page.
LAYOUTS: tuple[str, ...] = ("default", "shifted", "reordered")
