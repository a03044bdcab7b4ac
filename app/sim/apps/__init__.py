"""The virtual phone's apps.  ``APP_CLASSES`` lists the installed apps; ``OPTIONAL_APPS``
are installed only when the phone's state has their slice (``phone.reset({"browser": {}})``)."""

from __future__ import annotations

from app.sim.apps.browser import Browser
from app.sim.apps.calendar import Calendar, Files
from app.sim.apps.clock import Clock
from app.sim.apps.notes import Notes
from app.sim.apps.people import Contacts, Messages
from app.sim.apps.settings import Settings
from app.sim.apps.shop import Shop

APP_CLASSES = [Settings, Clock, Contacts, Messages, Notes, Shop, Calendar, Files]
OPTIONAL_APPS = [Browser]
