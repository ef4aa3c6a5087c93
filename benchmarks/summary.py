r"""The benchmarks' summary table, regenerated from their records in the run history.

    .venv/bin/python -m benchmarks.summary [--history benchmarks/history] [--check]

(``make benchmarks-summary``.) Every benchmark adds a record of kind ``benchmark:NAME`` to a run history with
``--history DIR`` (:mod:`benchmarks.harness_recording`); ``benchmarks/history/`` holds the records committed with the
repository, one small Parquet file per run. From the latest successful record of each benchmark of
:data:`BENCHMARKS` this writes one table row: its headline figures (the benchmark's own cell of its record's
figures; the settings that differ from the benchmark's full run, when a run used a reduced one), its command, the
record's date and commit. A benchmark without a record gets a row that says so, with its command. The table
replaces what lies between the ``summary`` markers of BENCHMARKS.md and docs/benchmarks/index.md, and between the
``headline table`` markers of README.md when it has them (the README's table leaves the commands out).

Each benchmark's own table, every figure of its latest record (:func:`record_table`), replaces what lies between
its ``latest record: NAME`` markers on its page under docs/benchmarks/.

With ``--check`` nothing is written: the exit status is 1, naming the files, when one of them is not what the
records give (a hand edit, or a record added without regenerating), else 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.harness_measure import MB
from sparktc.runtime.markdown import markdown_table

REPO = Path(__file__).resolve().parents[1]
HISTORY = "benchmarks/history"
#: The files the table goes into: (path in the repository, begin marker, end marker, link prefix of the pages,
#: whether the table lists the commands). A file without its markers is left as it is.
SUMMARY_BEGIN, SUMMARY_END = "<!-- summary table: begin -->", "<!-- summary table: end -->"
TARGETS = (
    ("BENCHMARKS.md", SUMMARY_BEGIN, SUMMARY_END, "docs/benchmarks/", True),
    ("docs/benchmarks/index.md", SUMMARY_BEGIN, SUMMARY_END, "", True),
    ("README.md", "<!-- headline table: begin -->", "<!-- headline table: end -->", "docs/benchmarks/", False),
)
NO_RECORD = "no record yet"

Figures = Mapping[str, float]


def f1(value: float | None) -> str:
    """An F1 as the tables print it (4 decimals), or a dash."""
    return "–" if value is None else f"{value:.4f}"


def secs(value: float | None) -> str:
    """Seconds as the tables print them: under 10 min in s, else in min."""
    if value is None:
        return "–"
    return f"{value:.1f} s" if value < 600 else f"{value / 60:.1f} min"


def pair(figures: Figures, prefix: str) -> str:
    """``micro / macro`` F1 of the figures under ``prefix``."""
    return f"{f1(figures.get(prefix + 'micro_f1'))} / {f1(figures.get(prefix + 'macro_f1'))}"


def costs(figures: Figures, prefix: str) -> str:
    """``wall s, CPU-s, peak MB`` of the figures under ``prefix`` (those measured)."""
    parts = []
    if (prefix + "seconds") in figures:
        parts.append(secs(figures[prefix + "seconds"]))
    if (prefix + "cpu_seconds") in figures:
        parts.append(f"{figures[prefix + 'cpu_seconds']:.0f} CPU-s")
    if (prefix + "peak_memory_bytes") in figures:
        parts.append(f"peak {figures[prefix + 'peak_memory_bytes'] / MB:,.0f} MB")
    return ", ".join(parts)


def sizes(figures: Figures, prefix: str) -> list[tuple[int, str]]:
    """The (size, master) pairs of figures named ``PREFIX.SIZE.MASTER.*``, largest size first, and the masters of a
    size in the order the record gives them (its first master first).
    """
    found: dict[tuple[int, str], None] = {}
    for name in figures:
        if name.startswith(prefix):
            size, _, rest = name[len(prefix):].partition(".")
            if size.isdigit() and "." in rest:
                found.setdefault((int(size), rest.rsplit(".", 1)[0]))
    return sorted(found, key=lambda pair_: -pair_[0])


# --- each benchmark's cell ---------------------------------------------------------------------------------------

def reuters21578_cell(figures: Figures) -> str:
    """Best by CV on each category set, and the plain SVM on R(90)."""
    sets = ", ".join(f"R({name}) {pair(figures, f'R{name}.best_by_cv.')}" for name in ("10", "90", "115")
                     if f"R{name}.best_by_cv.micro_f1" in figures)
    return f"best by CV, micro / macro-F1: {sets}; SVM at 0, R(90): {pair(figures, 'R90.svm.')}"


def yang_liu_cell(figures: Figures) -> str:
    """Each method's micro-/macro-F1."""
    methods = [name.split(".")[0] for name in figures if name.endswith(".micro_f1")]
    return "micro / macro-F1 on R(90): " + ", ".join(f"{name} {pair(figures, name + '.')}" for name in methods)


def debole_cell(figures: Figures) -> str:
    """Table 3's means per subset, and what the grid cost."""
    means = ", ".join(f"R({name[1:]}) {f1(figures.get(name + '.micro_mean'))} / {f1(figures.get(name + '.macro_mean'))}"
                      for name in ("R10", "R90", "R115") if name + ".micro_mean" in figures)
    return f"mean micro / macro-F1 of the 48 setups: {means}; grid {costs(figures, 'cost.')}"


def rcv1_cell(figures: Figures) -> str:
    """The largest size on the first master, and the lean peer at that size."""
    found = sizes(figures, "sparktc.")
    if not found:
        return "no pipeline run finished"
    size, master = found[0]
    ours = f"sparktc.{size}.{master}."
    cell = f"{size:,} documents, {master}: {costs(figures, ours)}, micro-F1 {f1(figures.get(ours + 'micro_f1'))}"
    if f"lean_peer.{size}.seconds" in figures:
        cell += f"; lean peer {costs(figures, f'lean_peer.{size}.')}"
    if "ratios.sparktc_over_single_wall" in figures:
        cell += (f"; sparktc / peer: wall {figures['ratios.sparktc_over_single_wall']:.2f}, CPU "
                 f"{figures['ratios.sparktc_over_single_cpu']:.2f}")
    return cell


def text_scale_cell(figures: Figures) -> str:
    """The costs of sparktc and of the peer, and sparktc's micro-F1."""
    return (f"sparktc {costs(figures, 'sparktc.')}, micro-F1 {f1(figures.get('sparktc.micro_f1'))}; peer "
            f"{costs(figures, 'peer.')}")


def runs_cell(prefix: str) -> Callable[[Figures], str]:
    """The cell of a benchmark whose figures are ``PREFIX.RUN.*`` pipeline runs: each run's micro-/macro-F1."""
    def cell(figures: Figures) -> str:
        """Each run's micro-/macro-F1."""
        runs = dict.fromkeys(name[len(prefix):].rsplit(".", 1)[0] for name in figures
                             if name.startswith(prefix) and name.endswith(".micro_f1"))
        return "micro / macro-F1: " + ", ".join(f"{run} {pair(figures, f'{prefix}{run}.')}" for run in runs)
    return cell


def libmultilabel_cell(figures: Figures) -> str:
    """Each run's micro-F1 on both sides."""
    runs = dict.fromkeys(name.split(".")[0] for name in figures if name.endswith(".sparktc.micro_f1"))
    return "micro-F1 LibMultiLabel / sparktc: " + ", ".join(
        f"{run} {f1(figures.get(f'{run}.libmultilabel.micro_f1'))} / {f1(figures.get(f'{run}.sparktc.micro_f1'))}"
        for run in runs)


def ml_pipeline_cell(figures: Figures) -> str:
    """Each command's median costs and micro-F1."""
    return "; ".join(f"{kind} {costs(figures, kind + '.')}, micro-F1 {f1(figures.get(kind + '.micro_f1'))}"
                     for kind in ("job", "ml", "peer") if f"{kind}.seconds" in figures)


@dataclass(frozen=True)
class Benchmark:
    """A benchmark of the summary: its module (``benchmarks/NAME.py``, records of kind ``benchmark:NAME``), its short
    title, its command at its full settings, its page under docs/benchmarks/, its cell of a record's figures,
    and the settings of its full run (a record whose settings differ says so).
    """

    name: str
    title: str
    command: str
    page: str
    cell: Callable[[Figures], str]
    full: Mapping[str, Any] = field(default_factory=dict)


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark("reuters21578", "Reuters-21578 ModApte, 7 methods",
              "./spark-submit.sh benchmarks/reuters21578.py --output runs/benchmark-reuters21578", "reuters21578.md",
              reuters21578_cell, {"sets": ["R(10)", "R(90)", "R(115)"]}),
    Benchmark("yang_liu_1999", "Yang & Liu 1999",
              "./spark-submit.sh benchmarks/yang_liu_1999.py --output runs/yang-liu", "yang-liu-1999.md",
              yang_liu_cell, {"methods": ["svm", "knn", "llsf", "nnet", "nb"]}),
    Benchmark("debole_sebastiani_2005", "Debole & Sebastiani 2005",
              ".venv/bin/python -m benchmarks.debole_sebastiani_2005 --output runs/debole-sebastiani",
              "debole-sebastiani-2005.md", debole_cell, {"subsets": ["R10", "R90", "R115"], "validation": 0.0}),
    Benchmark("ml_pipeline", "Spark ML pipeline beside the job",
              ".venv/bin/python -m benchmarks.ml_pipeline --output runs/benchmark-ml", "spark-ml.md",
              ml_pipeline_cell, {"repeats": 2, "master": "local[2]"}),
    Benchmark("rcv1_scale", "RCV1-v2 scale",
              ".venv/bin/python -m benchmarks.rcv1_scale --output runs/benchmark-rcv1", "rcv1-scale.md",
              rcv1_cell, {"sizes": [100_000, 200_000, 400_000, 804_414], "masters": ["local[2]", "local[1]"]}),
    Benchmark("methods_rcv1", "Five methods at RCV1-v2 scale",
              ".venv/bin/python -m benchmarks.methods_rcv1 --output runs/methods-rcv1", "yang-liu-1999.md",
              runs_cell("sparktc."), {"methods": ["svm", "knn", "llsf", "nb", "nnet"]}),
    Benchmark("lyrl2004", "LYRL2004 methods",
              ".venv/bin/python -m benchmarks.lyrl2004 --output runs/lyrl2004", "lyrl2004.md",
              runs_cell("sparktc."), {"sets": ["topics", "industries", "regions"]}),
    Benchmark("text_scale", "Raw text at scale",
              ".venv/bin/python -m benchmarks.text_scale --output runs/text-bench", "text-scale.md",
              text_scale_cell, {"documents": 200_000, "master": "local[2]"}),
    Benchmark("libmultilabel", "LibMultiLabel beside sparktc",
              ".venv/bin/python -m benchmarks.libmultilabel --output runs/libmultilabel", "libmultilabel.md",
              libmultilabel_cell),
)


# --- the records --------------------------------------------------------------------------------------------------

def latest(records: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The latest successful record of each benchmark, by name (``benchmark:NAME`` records only, in start order)."""
    found: dict[str, Mapping[str, Any]] = {}
    for record in sorted(records, key=lambda r: (r["started"], r["run_id"])):
        if record["kind"].startswith("benchmark:") and record["exit_status"] == 0:
            found[record["kind"].split(":", 1)[1]] = record
    return found


def reduced(benchmark: Benchmark, record: Mapping[str, Any]) -> str:
    """``reduced: KEY VALUE`` for the settings of ``record`` that differ from the benchmark's full run, or ""."""
    settings = json.loads(record["config"]).get("benchmark", {})
    differ = [f"{key} {json.dumps(settings[key])}" for key, value in benchmark.full.items()
              if key in settings and settings[key] != value]
    return f"*reduced: {', '.join(differ)}.* " if differ else ""


def short_commit(record: Mapping[str, Any]) -> str:
    """The record's commit, abbreviated, ``+dirty`` kept (the run's sources had uncommitted changes); a dash outside
    git.
    """
    commit = record["git_commit"] or "–"
    return commit[:7] + ("+dirty" if commit.endswith("+dirty") else "")


def row(benchmark: Benchmark, record: Mapping[str, Any] | None, pages: str, commands: bool) -> list[str]:
    """The benchmark's table row's cells: its name linked to its page, its figures, [its command,] date and commit."""
    name = f"[{benchmark.title}]({pages}{benchmark.page})"
    command = [f"`{benchmark.command}`"] if commands else []
    if record is None:
        return [name, NO_RECORD, *command, "–", "–"]
    figures = dict(record["figures"])
    cell = f"{reduced(benchmark, record)}{benchmark.cell(figures)}; whole run {secs(record['seconds'])}"
    return [name, cell, *command, record["started"].strftime("%Y-%m-%d"), f"`{short_commit(record)}`"]


#: The column heads of a record's own table, by the figure's last name part (any other: its name, spaced).
HEADS = {"seconds": "wall s", "cpu_seconds": "CPU s", "peak_memory_bytes": "peak MB"}


def value(name: str, number: float) -> str:
    """A figure as its own table prints it: F1 and means to 4 decimals, seconds to 1, memory in MB."""
    if name.endswith("peak_memory_bytes"):
        return f"{number / MB:,.0f}"
    if name.endswith("seconds"):
        return f"{number:,.1f}"
    return f"{number:.4f}" if abs(number) < 10 and number != int(number) else f"{number:,.0f}"


def record_table(benchmark: Benchmark, record: Mapping[str, Any] | None) -> str:
    """The benchmark's own table of its latest record: who ran it where and how, then every figure, one row per
    figure name's prefix (``R90.best_by_cv``) and one column per last part (``micro_f1``).
    """
    if record is None:
        return f"No record yet: `{benchmark.command} --history benchmarks/history` adds one.\n"
    settings = json.loads(record["config"]).get("benchmark", {})
    cpu = "" if record["cpu_seconds"] is None else f", {record['cpu_seconds']:,.0f} CPU-s" + (
        "" if record["cpu_complete"] else " counted (not the whole run's: the driver process only, or a cluster)")
    shown = ", ".join(f"{key} {json.dumps(item)}" for key, item in settings.items() if key not in ("plan", "presets"))
    lines = [f"Latest record: run `{record['run_id']}`, {record['started'].strftime('%Y-%m-%d %H:%M')} UTC, commit "
             f"`{short_commit(record)}`, {record['cores']} cores, whole run {secs(record['seconds'])}{cpu}.",
             f"Settings: {shown}.", ""]
    rows_: dict[str, dict[str, float]] = {}
    for name, number in dict(record["figures"]).items():
        prefix, _, leaf = name.rpartition(".")
        rows_.setdefault(prefix or "–", {})[leaf] = number
    columns = list(dict.fromkeys(leaf for values in rows_.values() for leaf in values))
    lines.append(markdown_table(["figures", *(HEADS.get(column, column.replace("_", " ")) for column in columns)],
                                [[prefix, *(value(leaf, values[leaf]) if leaf in values else "–" for leaf in columns)]
                                 for prefix, values in rows_.items()]))
    return "\n".join(lines) + "\n"


def record_markers(name: str) -> tuple[str, str]:
    """The markers of benchmark ``name``'s own table on its page."""
    return f"<!-- latest record: {name}: begin -->", f"<!-- latest record: {name}: end -->"


def table(records: Sequence[Mapping[str, Any]], pages: str = "", commands: bool = True) -> str:
    """The summary table of ``records`` (a history's, as :func:`sparktc.tracking.history_table.read` gives them, as
    dicts): one row per benchmark of :data:`BENCHMARKS`, page links under ``pages``.
    """
    found = latest(records)
    header = ["benchmark", "headline figures (latest record)", *(["command"] if commands else []), "date", "commit"]
    return markdown_table(header, [row(benchmark, found.get(benchmark.name), pages, commands)
                                   for benchmark in BENCHMARKS]) + "\n"


def read(history: str) -> list[dict[str, Any]]:
    """Every record of the run history at ``history`` (none when there is no such directory)."""
    from sparktc.tracking import history_table

    return history_table.read(history).to_pylist()


def replaced(text: str, begin: str, end: str, table_: str) -> str | None:
    """``text`` with what lies between the markers ``begin`` and ``end`` replaced by ``table_``; None without them."""
    if begin not in text or end not in text:
        return None
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{table_}{end}{tail}"


def regenerated(history: str, root: Path = REPO) -> dict[Path, str]:
    """Each file of :data:`TARGETS` under ``root`` that has its markers, with the table the records give."""
    records = read(history)
    found: dict[Path, str] = {}
    for path, begin, end, pages, commands in TARGETS:
        target = root / path
        if target.is_file():
            text = replaced(target.read_text(), begin, end, table(records, pages, commands))
            if text is not None:
                found[target] = text
    latest_ = latest(records)
    for benchmark in BENCHMARKS:
        target = root / "docs" / "benchmarks" / benchmark.page
        if target.is_file():
            text = replaced(found.get(target) or target.read_text(), *record_markers(benchmark.name),
                            record_table(benchmark, latest_.get(benchmark.name)))
            if text is not None:
                found[target] = text
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the summary tables from the history, or check them (module docstring); the exit status."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history", default=str(REPO / HISTORY), help="the run history (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a table is not current")
    arguments = parser.parse_args(argv)
    files = regenerated(arguments.history)
    stale = [path for path, text in files.items() if path.read_text() != text]
    if arguments.check:
        for path in stale:
            print(f"{path.relative_to(REPO)}: its summary table is not what {arguments.history} gives: run "
                  "python -m benchmarks.summary", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(files[path])
    print(table(read(arguments.history)), end="")
    print(f"summary: rewrote {', '.join(str(p.relative_to(REPO)) for p in stale) or 'nothing (current)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
