"""What a ``StepSink`` (``agent.events``) may raise to stop a run.

``StepNotStored``: the sink could not store a step, the episode's start or its end, even
after waiting for and retrying the database.  The runner lets it propagate so that the
run stops there and no step is ever reported as done without being stored; front ends
catch it and say what happened.  No I/O here.
"""

from __future__ import annotations


class StepNotStored(RuntimeError):
    """A step (or the episode's start or end) could not be stored; the run must stop."""
