"""The Tapwise workbench window: composition of the widgets, the controller that wires
them to devices, vision and the agent, and the worker threads that keep long work off
the GUI thread."""
