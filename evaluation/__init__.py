"""Evaluation: AITW action matching (Auto-UI §4.3), online benchmark measures (latent-state
paper Table 3), latent-state accuracy against the virtual phone's truth, statistics and
reports.  Qt-free and LLM-free; the virtual-phone glue lives in ``evaluation.online_bench``."""
