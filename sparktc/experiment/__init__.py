"""Experiment: what one run of sparktc is, above the maths it configures. Its configuration, read from TOML and
``--set`` overrides and checked before Spark starts against every method's and format's declaration (``config``, a
package of its sections, type-and-rule engine, loading and checks), the papers' methods as named settings
(``presets``), the files of a corpus directory, exactly the format's names (``corpus_files``), the model bundle a
training run leaves for classifying new documents (``bundle``), and what the stages and apps share over the run's
tables (``tables``: files parsed into records, repeated ids rejected, the term order, the cut of scored documents).
It asks the method and format registries; the Spark machinery it runs on is ``runtime``'s, below everything.
"""

__all__ = ["bundle", "config", "corpus_files", "presets", "tables"]
