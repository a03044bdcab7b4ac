"""Start llama-cpp-python's OpenAI-compatible server the way the product does.

Usage: ``python tests/agent/llama_server.py --model X.gguf --port N ...`` (the server's own
arguments).  The CPU workaround (weight repacking / AMX buffers turned off) lives in the
product, ``app.builtin_model.server.serve_main``; this script only makes it runnable by path.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.builtin_model.server import serve_main as main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
