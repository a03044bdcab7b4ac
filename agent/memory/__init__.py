"""Decision memory: what the user approved, edited or demonstrated, kept per screen and
goal, and proposed again with no model call when a run is back on that screen.

* ``types``: ``Remembered`` (one decision) and ``Recall`` (one found again);
* ``store``: the ``DecisionStore`` protocol and an in-memory implementation;
* ``goals``: which remembered goals count as this run's goal (the same words, or a goal
  the task repository's scorer finds equivalent);
* ``memory``: ``DecisionMemory`` (remember, recall, retire, forget);
* ``run``: ``MemorySession`` (one run's view of the memory) and ``remembering`` (the
  event-stream wrapper that feeds it);
* ``planner``: ``RememberingPlanner``, the planner wrapper that proposes from memory.

No Qt, no device I/O except reading an app's version through the device protocol.
"""
