"""Start llama-cpp-python's OpenAI-compatible server with weight repacking turned off.

Usage: ``python tests/agent/llama_server.py --model X.gguf --port N ...`` (the server's own
arguments).  On machines whose CPU reports AMX but whose kernel/sandbox does not grant
AMX tile use, llama.cpp's AMX weight buffers crash at the first matrix multiply with a
general-protection fault inside ``ggml_backend_amx_mul_mat``.  The server has no option
for it, so this launcher clears ``use_extra_bufts`` in the default model parameters
before handing over to ``llama_cpp.server``.  Elsewhere it only costs a little speed.
"""

from __future__ import annotations

import sys


def main() -> None:
    import llama_cpp.llama_cpp as bindings  # the module ``llama_cpp.llama`` calls into

    original = bindings.llama_model_default_params

    def without_extra_buffers():  # type: ignore[no-untyped-def]
        params = original()
        params.use_extra_bufts = False
        return params

    bindings.llama_model_default_params = without_extra_buffers
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    sys.exit(main())
