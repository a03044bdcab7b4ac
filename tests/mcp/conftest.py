"""MCP tests: the official SDK's client talks to Tapwise's server.  Skipped, saying why,
when the ``mcp`` extra is not installed."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp", reason="the MCP tests need the official MCP SDK: pip install 'tapwise[mcp]'")
