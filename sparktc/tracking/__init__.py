"""Tracking: where runs are recorded, above the stages and below the applications. The record every pipeline
and benchmark run makes of its code, configuration, corpus, cost per stage and figures (``record``), and the
history table of those records (``history``), and its trend and regression gate (``trend``).
"""

__all__ = ["history", "record", "trend"]
