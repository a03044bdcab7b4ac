"""Programming by demonstration: recording semantic steps, editing and versioning
macros, robust replay through a re-identification cascade, import/export and diffs.

Entry points: ``recorder.Recorder`` (action + ``Observation`` -> ``MacroStep``),
``editing`` (edits return the next version; parameters), ``io`` (JSON, AITW),
``replay.Replayer.start`` (a replay is a run of ``agent.runner.run_episode`` whose
proposals come from ``planner.MacroPlanner``: the runner's events, approval, safety and
stored steps; ``run_unattended`` drives it), ``reidentify.reidentify`` (the cascade),
``start`` (known starts for recordings that depend on where an app was left),
``words`` (results in words), ``diff.render_diff`` / ``diff.summarize``.
Qt-free; talks to phones only through ``agent.device.Device``.
"""
