"""Serve a GGUF with llama-cpp-python's OpenAI-compatible server, with the CPU "extra
buffer types" (weight repacking, AMX) switched off.

On this project's machines the AMX matrix-multiply kernel of llama.cpp crashes
(SIGSEGV in ``ggml_backend_amx_mul_mat``) on any prompt longer than one token; turning
off the extra buffer types avoids it at a small speed cost.  Usage, same arguments as
``python -m llama_cpp.server``::

    python -m tests.evaluation.serve_llamacpp --model SmolLM2-135M-Instruct.Q4_1.gguf \\
        --model_alias SmolLM2-135M-Instruct --host 127.0.0.1 --port 8080 --n_ctx 4096
"""

from __future__ import annotations

# One launcher holds the workaround; this module name is kept for the eval tests and docs.
from tests.agent.llama_server import main

if __name__ == "__main__":
    main()
