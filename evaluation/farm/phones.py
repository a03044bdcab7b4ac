"""Which phones a farm host offers, named as Ray custom resources.

Every phone is one Ray resource of capacity 1 named ``tapwise_phone:<kind>:<serial>``:
a cell that needs that phone asks for the resource, so Ray runs it on the host that has
the phone and never runs two cells on one phone at once.  Kinds: ``served`` (a virtual
phone served over the ADB protocol, reached through the host's adb server), ``adb`` (a
real phone on the host's adb server), ``local`` (a virtual phone the worker creates
in-process; what a Ray instance without ``tapwise farm serve`` offers).  No I/O here
except ``adb_phones``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

PREFIX = "tapwise_phone:"


class PhoneKind(str, Enum):
    SERVED = "served"
    ADB = "adb"
    LOCAL = "local"


@dataclass(frozen=True)
class PhoneSlot:
    """One phone a cell can run on."""

    kind: PhoneKind
    serial: str

    @property
    def resource(self) -> str:
        return f"{PREFIX}{self.kind.value}:{self.serial}"

    @property
    def runs_virtual_tasks(self) -> bool:
        """Whether the built-in task set (which reads a virtual phone's state) can run here."""
        return self.kind in (PhoneKind.SERVED, PhoneKind.LOCAL)

    def label(self) -> str:
        return f"{self.kind.value} phone {self.serial}"


def parse_resource(name: str) -> PhoneSlot | None:
    """The slot a resource name stands for, or None for other resources."""
    if not name.startswith(PREFIX):
        return None
    kind, _, serial = name[len(PREFIX):].partition(":")
    try:
        return PhoneSlot(PhoneKind(kind), serial) if serial else None
    except ValueError:
        return None


def slots_in(resources: Mapping[str, float]) -> list[PhoneSlot]:
    """Every phone named in a Ray resource table (``ray.cluster_resources()``), sorted."""
    slots = [s for name, amount in resources.items() if amount >= 1 and (s := parse_resource(name))]
    return sorted(slots, key=lambda s: (s.kind.value, s.serial))


def resource_table(slots: Iterable[PhoneSlot]) -> dict[str, float]:
    """The ``--resources`` a host advertises for its phones."""
    return {s.resource: 1.0 for s in slots}


def local_slots(count: int) -> list[PhoneSlot]:
    return [PhoneSlot(PhoneKind.LOCAL, str(i)) for i in range(count)]


def adb_phones(exclude: Iterable[str] = ()) -> list[PhoneSlot]:
    """Real phones that the host's adb server lists as ready (not the served ones)."""
    from phone.adb.adb_host import AdbHost

    skip = set(exclude)
    out = []
    for info in AdbHost().client().list():
        if info.state == "device" and info.serial not in skip:
            out.append(PhoneSlot(PhoneKind.ADB, info.serial))
    return out
