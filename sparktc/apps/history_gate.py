"""The run history's trend table, regression gate and report (``jobs/history.py``), over the records of
:mod:`sparktc.tracking.history_table`, with the comparisons of :mod:`sparktc.tracking.trend`; no Spark.

Prints the trend table (one line per run), then each checked run against its baseline: what changed and every
figure compared, or why it has no baseline; then one ``REGRESSION`` line per regressed figure or failed run.
``--report DIR`` also writes ``report.md`` with the same and two plots against the run date, ``f1.png``
(micro/macro-F1) and ``seconds.png`` (wall and CPU seconds), each point labelled with its code version, one
series per configuration and corpus. DIR is held as an output of kind ``history`` (:mod:`sparktc.runtime.outputs`:
never a directory sparktc did not write, never two jobs at once); the files are written aside and moved in, the
plots before the report that shows them.

Exit status: 0 no regression, :data:`sparktc.errors.REGRESSION_EXIT` (3) a regression, 2 arguments refused before
anything is written (a tolerance, the report directory, a HISTORY directory that does not exist, a run the history
does not hold, a failed run named as the baseline), 1 a history that cannot be read or holds no run. A file of the
history that is not a run record (another table, a file that is not Parquet) is named on stderr and skipped, or refused
with ``--strict`` (exit 1); one that has a ``run_id`` but not the record's columns and types is refused, naming the
file and the column (:func:`sparktc.tracking.history_table.scan`).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence

from sparktc.apps.cli import tell
from sparktc.errors import REGRESSION_EXIT, ConfigError, SparktcError
from sparktc.evaluation.figures import new_figure, png, style
from sparktc.filesystem import is_uri
from sparktc.runtime.markdown import markdown_table
from sparktc.runtime.outputs import INCOMPLETE, OutputError, check_output, claim
from sparktc.tracking import history_table
from sparktc.tracking.trend import Check, Record, Tolerances, checks, code_version, short, trend_rows

REPORT = "report.md"
PLOTS = {"f1.png": (("micro_f1", "micro-F1", "-"), ("macro_f1", "macro-F1", "--")),
         "seconds.png": (("seconds", "wall seconds", "-"), ("cpu_seconds", "CPU-seconds", "--"))}


def table_text(rows: Sequence[Mapping[str, str]]) -> str:
    """Rows of strings as aligned columns under their keys, numbers right-aligned."""
    if not rows:
        return ""
    keys = list(rows[0])
    widths = {key: max(len(key), *(len(row[key]) for row in rows)) for key in keys}
    numeric = {key for key in keys if all(row[key] == "-" or row[key][:1].isdigit() for row in rows)} - {"started"}

    def line(values: Mapping[str, str]) -> str:
        return "  ".join(values[k].rjust(widths[k]) if k in numeric else values[k].ljust(widths[k])
                         for k in keys).rstrip()

    return "\n".join([line({key: key for key in keys}), *(line(row) for row in rows)])


def table_markdown(rows: Sequence[Mapping[str, str]]) -> str:
    """Rows of strings as a Markdown table."""
    if not rows:
        return ""
    keys = list(rows[0])
    return markdown_table(keys, [[row[key] for key in keys] for row in rows])


def check_lines(found: Sequence[Check]) -> list[str]:
    """What each check found (:meth:`Check.summary`) with every figure compared, indented."""
    lines = []
    for checked in found:
        lines += checked.summary() + [f"  {comparison.line()}" for comparison in checked.comparisons]
    return lines


def regression_lines(found: Sequence[Check]) -> list[str]:
    """Every check's ``REGRESSION`` lines, in the order of the runs."""
    return [line for checked in found for line in checked.regressions()]


def _series(records: Sequence[Record]) -> dict[str, list[Record]]:
    """The runs by configuration and corpus, named by label (when they share one) and digests, first run first."""
    groups: dict[tuple[str, str], list[Record]] = {}
    for record in records:
        groups.setdefault((record.get("config_digest") or "", record.get("corpus_digest") or ""), []).append(record)
    named = {}
    for (config, corpus), runs in groups.items():
        labels = {run.get("label") or "" for run in runs}
        label = labels.pop() + " " if len(labels) == 1 and "" not in labels else ""
        named[f"{label}config {short(config)} corpus {short(corpus)}"] = runs
    return named


def plot(records: Sequence[Record], lines: Sequence[tuple[str, str, str]], ylabel: str, title: str) -> bytes:
    """PNG: each of ``lines`` (figure, name, line style) against the run's start, one colour per configuration and
    corpus, each point labelled with its code version; runs without the figure (failed ones) are left out.
    Deterministic bytes (the house style, :mod:`sparktc.evaluation.figures`).
    """
    with style():
        figure = new_figure()
        ax = figure.add_subplot()
        drawn = False
        for i, (name, runs) in enumerate(_series(records).items()):
            for figure_name, shown, line_style in lines:
                points = [(run["started"], run[figure_name], code_version(run)) for run in runs
                          if run.get(figure_name) is not None and run.get("started") is not None]
                if not points:
                    continue
                x, y = [p[0] for p in points], [p[1] for p in points]
                ax.plot(x, y, linestyle=line_style, marker="o", color=f"C{i % 10}", label=f"{shown}, {name}")
                for started, value, version in points:
                    ax.annotate(version, (started, value), textcoords="offset points", xytext=(4, 4), fontsize=7)
                drawn = True
        if drawn:
            ax.legend(loc="best", fontsize="small")
            figure.autofmt_xdate()
        else:
            ax.text(0.5, 0.5, "no run measured these figures", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel("run start (UTC)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        return png(figure)


def selection(label: str, kind: str) -> str:
    """The runs kept, as the report and the messages say it: `` labelled L of kind K`` (empty for every run)."""
    return (f" labelled {label}" if label else "") + (f" of kind {kind}" if kind else "")


def report_files(path: str, records: Sequence[Record], found: Sequence[Check], tolerances: Tolerances,
                 selected: str = "", counts: str = "") -> dict[str, bytes]:
    """``report.md`` and its plots, by file name: the verdict, each check with its figures and regressions, the
    trend table and the plots; ``selected`` says which runs were kept (:func:`selection`), ``counts`` what was read
    (:func:`read_counts`).
    """
    regressions = regression_lines(found)
    verdict = (f"**{len(regressions)} regression{'s' * (len(regressions) != 1)}**" if regressions
               else "**No regression**")
    lines = [
        "# Run history", "",
        f"History `{path}`: {len(records)} run{'s' * (len(records) != 1)}{selected}"
        f"{f' ({counts})' if counts else ''}. "
        f"Tolerances: F1 may drop by {tolerances.max_f1_drop:g}; wall time, CPU time and peak memory may grow "
        f"x{tolerances.max_time_ratio:g}, x{tolerances.max_cpu_ratio:g}, x{tolerances.max_memory_ratio:g}.", "",
        f"{verdict} in {len(found)} run{'s' * (len(found) != 1)} checked.", "",
        *[f"- `{line}`" for line in regressions], *([""] if regressions else []),
        "## Checks", "",
    ]
    for checked in found:
        lines += [f"### Run {checked.run['run_id']}", "", *[f"    {line}" for line in checked.summary()], ""]
        if checked.comparisons:
            lines += [markdown_table(["figure", "baseline", "run", "change", "limit", "verdict"],
                                     [[c.figure, c.amount(c.baseline), c.amount(c.value), c.change(), c.limit_text(),
                                       c.verdict()] for c in checked.comparisons]), ""]
    lines += ["## Trend", "", table_markdown(trend_rows(records)), "",
              "![micro- and macro-F1 against the run date](f1.png)", "",
              "![wall and CPU seconds against the run date](seconds.png)", ""]
    return {
        "f1.png": plot(records, PLOTS["f1.png"], "F1", "micro-F1 (solid) and macro-F1 (dashed) by run"),
        "seconds.png": plot(records, PLOTS["seconds.png"], "seconds",
                            "wall seconds (solid) and CPU-seconds (dashed) by run"),
        REPORT: "\n".join(lines).encode("utf-8"),
    }


def write_report(output: str, files: Mapping[str, bytes]) -> str:
    """Hold ``output`` (kind ``history``) and publish ``files`` into it: written into the job's staging directory,
    then moved in, ``report.md`` last so it never shows a plot not yet there; the path of report.md.
    """
    with claim(output, "history") as held:
        os.makedirs(held.staging)
        for name, data in files.items():
            with open(os.path.join(held.staging, name), "wb") as handle:
                handle.write(data)
        for name in sorted(files, key=lambda name: name == REPORT):
            os.replace(os.path.join(held.staging, name), os.path.join(output, name))
        shutil.rmtree(os.path.join(output, INCOMPLETE))
    return os.path.join(output, REPORT)


def read_counts(contents: history_table.Contents) -> str:
    """How many records were read, from how many files, and how many files were skipped (not run records)."""
    skipped, rows = len(contents.skipped), contents.table.num_rows
    return (f"{rows} run record{'s' * (rows != 1)} read from {contents.files} file{'s' * (contents.files != 1)}, "
            f"{skipped} other file{'s' * (skipped != 1)} skipped"
            + (f" (--strict refuses {'them' if skipped > 1 else 'it'})" if skipped else ""))


def run(path: str, report: str = "", run_id: str = "latest", baseline: str = "previous", every: bool = False,
        tolerances: Mapping[str, float] | None = None, label: str = "", kind: str = "", strict: bool = False) -> int:
    """``jobs/history.py``: print the trend and the checks of the runs of ``label`` and ``kind`` (all when empty),
    write the report when asked; the exit status (module docstring), each refusal or failure told in one line. A file
    of the history that is not a run record is skipped with a warning on stderr, or refused with ``strict``.
    """
    try:
        limits = Tolerances(**(tolerances or {}))
        if report and is_uri(report):
            raise OutputError(f"--report {report}: the report is written to a local directory; give a local path")
        output = check_output(report, {"HISTORY": path}, "history") if report else ""
        if not history_table.exists(path):
            raise ConfigError(f"HISTORY {path}: no such directory; give the directory a history was written to "
                              f"(pipeline runs with --set history.path=DIR, benchmarks with --history DIR)")
        contents = history_table.scan(path, strict)
        for file, why in contents.skipped:
            print(f"sparktc: warning: skipped {file}: not a run record ({why})", file=sys.stderr, flush=True)
        records = contents.table.to_pylist()
        records = [record for record in records if (not label or record.get("label") == label)
                   and (not kind or record.get("kind") == kind)]
        if not records:
            raise history_table.HistoryError(f"the history {path} holds no run{selection(label, kind)}: "
                                       f"{read_counts(contents)}; pipeline runs add their records with --set "
                                       f"history.path={path}, benchmarks with --history {path}")
        found = checks(records, run_id, baseline, every, limits)
        regressions = regression_lines(found)
        print(table_text(trend_rows(records)), "", f"history {path}: {read_counts(contents)}", "",
              *check_lines(found), *regressions, sep="\n", flush=True)
        if output:
            files = report_files(path, records, found, limits, selection(label, kind), read_counts(contents))
            print(f"report: {write_report(output, files)}")
    except (SparktcError, OSError) as error:
        return tell(error)
    return REGRESSION_EXIT if regressions else 0

