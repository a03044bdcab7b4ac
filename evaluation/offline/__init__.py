"""Offline step evaluation on recorded real trajectories (``tapwise bench offline``).

Each recorded step becomes an observation the planners already take (a ``ScreenParse``
and its fenced description, the gold actions so far as history); the planner proposes
one action, nothing is executed, and the proposal is scored against the recorded one.

Modules: ``types`` (recorded tasks and gold actions), one reader per format
(``droidtask``, ``aitw_json``, ``llamatouch``; ``datasets`` picks one), ``replay`` (one
planner proposal per recorded step), ``scoring``, ``oracle`` (a scripted model that
answers with the gold step), ``bench`` (the resumable run over tasks), ``summary``
(figures, per app, paired comparisons, error kinds) and ``report`` (``offline.md`` /
``offline.html``).  Qt-free.
"""
