"""Accumulated knowledge (Prompt2Task §4.2, VisionTasker PBD): task repository and
demonstrations, instruction set, per-user context library, interaction graph of pages,
and retrieval (lexical by default, sentence embeddings as an extra).  Qt-free; storage
through the ``KnowledgeStore`` protocol."""
