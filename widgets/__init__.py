"""Reusable Qt views for Tapwise.

Every widget here takes plain data (``vision.types`` / ``agent.types``) and emits
intent signals.  Widgets never touch a device, a file, a database or the network;
the window in ``app.gui`` wires them to the workers that do.
"""
