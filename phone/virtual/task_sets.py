"""Named sets of virtual-phone task ids, selectable by name wherever tasks are chosen.

``yardstick`` is the fixed set of short tasks (one to four reference steps, seven apps,
one impossible request) that every real-model figure is measured on: small enough that a
CPU-only built-in model finishes it in minutes, varied enough that copying one prompt
example cannot pass it.  Changing its membership changes every figure measured on it, so
add a new set instead of editing this one.  This module only names ids; loading and
checking the tasks is ``phone.virtual.tasks``'s job.
"""

from __future__ import annotations

TASK_SETS: dict[str, tuple[str, ...]] = {
    "yardstick": (
        "launcher.open_settings_icon",
        "launcher.messages_from_dock",
        "calendar.show_april",
        "clock.enable_gym_alarm",
        "clock.stopwatch_start",
        "contacts.favorite_david",
        "notes.delete_dentist",
        "settings.airplane_on",
        "settings.dark_theme_on",
        "settings.wifi_off",
        "shop.remove_case",
        "impossible.clock_weather",
    ),
    # Tasks whose only confirmation is a toast or a snackbar (phone/virtual/tasks/toasts.yaml).
    "toasts": (
        "toasts.call_carla",
        "toasts.force_stop_shop",
        "toasts.reset_app_preferences",
        "toasts.copy_link_speaker",
        "toasts.wishlist_mug",
        "toasts.delete_gym_alarm",
    ),
}


def expand_task_set(name: str) -> tuple[str, ...] | None:
    """The task ids of the set called ``name`` (case-insensitive), or None if no set has that name."""
    return TASK_SETS.get(name.strip().lower())
