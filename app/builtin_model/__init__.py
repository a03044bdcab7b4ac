"""The built-in local model: bundled GGUF files, llama.cpp's server on loopback, and the
model manager's Qt-free side (listing, pulling, per-model preferences, calibration).

Nothing here downloads model weights: GGUF files come from installed Python packages and
are assembled into the user's cache folder, verified by SHA-256.  Qt is never imported.
"""
