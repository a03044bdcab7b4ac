"""Tapwise as a supervised Model Context Protocol server.

Any MCP client (a desktop assistant, a coding agent) can drive the phone through the
tools served here, but every acting call is a *proposal*: it goes through a
``Supervisor`` (the window's approval card, the terminal, or a stated policy) before
anything touches the phone, sensitive actions always ask, and every call is stored as a
step of an episode named after the client.

``observation`` (what a client is shown), ``supervisor`` (who decides), ``episodes``
(where calls are recorded), ``service`` (the tools as plain blocking methods) and
``server`` (the MCP SDK binding, stdio and loopback HTTP with a bearer token).  Nothing
here imports Qt; only ``server`` imports the ``mcp`` SDK (the ``mcp`` extra).
"""
