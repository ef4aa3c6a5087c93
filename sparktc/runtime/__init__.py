"""Runtime: how a run is carried out, whatever it computes. The configuration and its checks
(``config``), the papers' methods as named settings (``presets``), storage on local and Hadoop file
systems (``storage``), the Spark session (``session``), output ownership and locks (``outputs``), stage
manifests and resume (``manifest``, ``runner``), the counts every stage reports (``stage_report``),
file-by-file tasks writing Parquet with pyarrow (``parts``), the model bundle a training run writes for
classifying new documents (``bundle``), memory checks (``resources``), a file system's refusal of an input
file named with its fix (``permissions``) and the fault points tests use (``faults``)."""

__all__ = [
    "bundle", "config", "faults", "manifest", "outputs", "parts", "permissions", "presets", "resources", "runner",
    "session", "stage_report", "storage",
]
