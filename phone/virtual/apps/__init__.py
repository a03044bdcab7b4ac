"""The virtual phone's apps.  ``APP_CLASSES`` lists the installed apps; ``OPTIONAL_APPS``
are installed only when the phone's state has their slice (``phone.reset({"browser": {}})``,
``{"library": {}}`` for the sign-in screen)."""

from __future__ import annotations

from phone.virtual.apps.browser import Browser
from phone.virtual.apps.calendar import Calendar, Files
from phone.virtual.apps.clock import Clock
from phone.virtual.apps.library import Library
from phone.virtual.apps.notes import Notes
from phone.virtual.apps.people import Contacts, Messages
from phone.virtual.apps.settings import Settings
from phone.virtual.apps.shop import Shop

APP_CLASSES = [Settings, Clock, Contacts, Messages, Notes, Shop, Calendar, Files]
OPTIONAL_APPS = [Browser, Library]
