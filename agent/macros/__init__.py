"""Programming by demonstration: recording semantic steps, editing and versioning
macros, robust replay through a re-identification cascade, import/export and diffs.
Qt-free; talks to phones only through ``agent.device.Device``."""
