"""Runtime: how a run is carried out, whatever it computes; no text categorization here, and nothing of sparktc
imported but the shared modules. Storage on local, Hadoop and pyarrow file systems (``storage``), the Spark session
of either kind, classic or Spark Connect (``session``), the one module that touches a classic session's SparkContext
(``classic``), values handed to every task of a stage (``shared``), output ownership and locks (``outputs``), stage
manifests and resume (``manifest``, ``runner``), the counts every stage reports (``stage_report``), file-by-file
tasks writing Parquet with pyarrow (``parts``), grouped tasks of items balanced by cost (``groups``), memory checks
(``resources``), each task's peak memory logged and a cap that shapes the tasks (``task_memory``), the process
tree's CPU-seconds and memory per stage read from ``/proc`` (``usage``), Markdown tables with their cells escaped
(``markdown``), progress lines of long stages and driver loops (``progress``), a file system's refusal of an input
file named with its fix (``permissions``), the digests tasks take of the files they write (``written``) and the
fault points tests use (``faults``).
"""

__all__ = ["classic", "faults", "groups", "manifest", "markdown", "outputs", "parts", "permissions", "progress",
           "resources", "runner", "session", "shared", "stage_report", "storage", "task_memory", "usage", "written"]
