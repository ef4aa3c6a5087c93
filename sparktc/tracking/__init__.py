"""Tracking: where runs are recorded, above the stages and below the applications. The record every pipeline
and benchmark run makes of its code, configuration, corpus, cost per stage and figures (``record``), and the
history table of those records with its trend and regression gate (``history``).
"""

__all__ = ["history", "record"]
