"""Programming by demonstration: recording semantic steps, editing and versioning
macros, robust replay through a re-identification cascade, import/export and diffs.

Entry points: ``recorder.Recorder`` (action + ``Observation`` -> ``MacroStep``),
``editing`` (edits return the next version; parameters), ``io`` (JSON, AITW),
``replay.Replayer.run`` (two-way generator; ``run_unattended`` drives it),
``reidentify.reidentify`` (the cascade), ``diff.render_diff``.
Qt-free; talks to phones only through ``agent.device.Device``.
"""
