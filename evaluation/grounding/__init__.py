"""The grounding benchmark: "tap X" instructions on real screenshots, scored by where the tap lands."""
