"""The trend of a run history and its regression gate: which run each run is compared with, what changed between
them and which figures regressed; pure functions over the records of :func:`sparktc.tracking.history_table.read`
(``table.to_pylist()``, one dict per run, by start time), no Spark. ``jobs/history.py`` prints and reports them.

A run is compared with a *baseline*. By default that is the latest earlier run of the same kind that succeeded
with the same configuration and corpus digests (:mod:`sparktc.tracking.record`), so what differs between them is
the code or the machine, and the comparison says which. A run named as the baseline may have other digests; what
changed (the code, each differing setting, the corpus) is then said before the figures, so a run with other
settings is never compared silently. A run with no such earlier run has no baseline, and the earlier runs that
differ are listed with what differs. A failed run is never a baseline, and is itself a regression.

Besides its F1 and costs, a run may carry ``figures``: a benchmark's headline numbers (``sparktc.micro_f1``,
``peer.seconds``). Each is compared by the rule of its last name, as the run's own figure of that name is (an F1
by its drop, ``seconds``, ``cpu_seconds`` and ``peak_memory_bytes`` by their ratio); any other is shown beside
its baseline's, ungated.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from sparktc.errors import ConfigError
from sparktc.experiment.config import RUN_SECTIONS
from sparktc.tracking.record import experiment_settings

Record = Mapping[str, Any]
#: The F1 figures a drop of which is a regression (absolute drop), and the costs a ratio of which is one.
F1_FIGURES = ("micro_f1", "macro_f1")
COST_FIGURES = {"seconds": "max_time_ratio", "cpu_seconds": "max_cpu_ratio", "peak_memory_bytes": "max_memory_ratio"}
#: The costs measured from the process tree, comparable only between runs that measured the same tree.
TREE_FIGURES = ("cpu_seconds", "peak_memory_bytes")
#: The names --run and --baseline take besides run ids: each run's default baseline, the latest run, the first run.
PREVIOUS = "previous"
LATEST = "latest"
FIRST = "first"
#: Earlier runs listed when a run has no baseline (the most recent ones).
LISTED_OTHERS = 5
_MIB = 2**20
_SLACK = 1e-9  # a figure exactly at its tolerance is within it, whatever the float rounding


@dataclass(frozen=True)
class Tolerances:
    """How far a run may fall behind its baseline: F1 (micro and macro) by an absolute drop, wall time, CPU time
    and peak memory by a ratio. Memory's default is wider: the JVM grows its heap as its collector sees fit.
    """

    max_f1_drop: float = 0.002
    max_time_ratio: float = 1.25
    max_cpu_ratio: float = 1.25
    max_memory_ratio: float = 1.5

    def __post_init__(self) -> None:
        for tolerance in fields(self):
            value, option = getattr(self, tolerance.name), "--" + tolerance.name.replace("_", "-")
            if tolerance.name == "max_f1_drop" and not 0 <= value <= 1:
                raise ConfigError(f"{option} {value}: expected an absolute drop of F1 in [0, 1], e.g. 0.002")
            if tolerance.name != "max_f1_drop" and not (math.isfinite(value) and value >= 1):
                raise ConfigError(f"{option} {value}: expected a ratio of at least 1 to the baseline "
                                  "(1.25: up to 25% more)")


def rule(figure: str) -> str:
    """The figure whose rule ``figure`` follows: its last dotted name (``sparktc.micro_f1`` follows ``micro_f1``)."""
    return figure.rsplit(".", 1)[-1]


def short(digest: str | None) -> str:
    """The first 8 characters of a digest, ``-`` for none."""
    return digest[:8] if digest else "-"


def code_version(record: Record) -> str:
    """The code a run ran: its git commit (10 characters, ``+dirty`` kept), else its code digest's first 8."""
    commit = record.get("git_commit")
    if commit:
        head, _, dirty = commit.partition("+")
        return head[:10] + ("+" + dirty if dirty else "")
    return "code " + short(record.get("code_digest"))


def succeeded(record: Record) -> bool:
    """Whether the run ended with exit status 0 (a record never finished counts as failed)."""
    return record.get("exit_status") == 0


def status(record: Record) -> str:
    """``ok``, or ``failed (exit N)``."""
    return "ok" if succeeded(record) else f"failed (exit {record.get('exit_status')})"


def _flatten(values: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in values.items():
        if isinstance(value, Mapping) and value:
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield prefix + key, value


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


_UNSET = object()


def setting_changes(old_config: str, new_config: str) -> list[str]:
    """Each setting that differs between two records' ``config`` JSON, ``section.key: old -> new`` in key order
    (``(unset)`` for a setting one of them lacks); what the digest leaves out (:func:`experiment_settings`) left out.
    """
    old, new = (dict(_flatten(experiment_settings(json.loads(text or "{}"), RUN_SECTIONS)))
                for text in (old_config, new_config))
    changes = []
    for key in sorted(old.keys() | new.keys()):
        before, after = old.get(key, _UNSET), new.get(key, _UNSET)
        if before != after:
            changes.append(f"{key}: {'(unset)' if before is _UNSET else _shown(before)} -> "
                           f"{'(unset)' if after is _UNSET else _shown(after)}")
    return changes


@dataclass(frozen=True)
class Changes:
    """What differs from a baseline to a run: what ran (its kind), the code, the settings, the corpus, and where."""

    kind: str = ""
    code: str = ""
    configuration: tuple[str, ...] = ()
    corpus: str = ""
    resources: tuple[str, ...] = ()
    defaults: tuple[str, ...] = ()  # settings at the code's defaults that differ: a default changed, or one added

    def parts(self) -> list[str]:
        """One phrase per thing that changed, e.g. ``configuration changed: train.C: 1.0 -> 0.001``."""
        return ([f"kind changed: {self.kind}"] * bool(self.kind)
                + [f"code changed: {self.code}"] * bool(self.code)
                + [f"configuration changed: {', '.join(self.configuration)}"] * bool(self.configuration)
                + [f"defaults changed: {', '.join(self.defaults)}"] * bool(self.defaults)
                + [f"corpus changed: {self.corpus}"] * bool(self.corpus)
                + [f"resources changed: {', '.join(self.resources)}"] * bool(self.resources))

    def describe(self) -> str:
        """The phrases joined by ``; ``, or ``nothing changed``."""
        return "; ".join(self.parts()) or "nothing changed"


def changes(baseline: Record, run: Record) -> Changes:
    """What changed from ``baseline`` to ``run``: kind (a pipeline run, a benchmark's), code (commit, or the code
    digest when the commits read the same), configuration (each setting, :func:`setting_changes`; the digests when
    the settings read the same, or are a run of another kind's, whose settings are others altogether), the defaults
    (settings that differ although the digests, over the settings away from the code's defaults, are the same: a
    default the code changed, or a setting it added), corpus (digest) and resources (master, executors, cores, host).
    """
    kind = "" if baseline.get("kind") == run.get("kind") else f"{baseline.get('kind')} -> {run.get('kind')}"
    code = ""
    if (baseline.get("git_commit"), baseline.get("code_digest")) != (run.get("git_commit"), run.get("code_digest")):
        old, new = code_version(baseline), code_version(run)
        if old == new:
            old, new = (f"{version} (code {short(record.get('code_digest'))})"
                        for version, record in ((old, baseline), (new, run)))
        code = f"{old} -> {new}"
    configuration: tuple[str, ...] = ()
    defaults: tuple[str, ...] = ()
    settings = () if kind else tuple(setting_changes(baseline.get("config") or "{}", run.get("config") or "{}"))
    if baseline.get("config_digest") != run.get("config_digest"):
        digests = f"digest {short(baseline.get('config_digest'))} -> {short(run.get('config_digest'))}"
        configuration = settings or ((digests,) if kind else (f"{digests}, the settings the same: digested by "
                                                              "another version (earlier ones digested every setting)",))
    else:  # the same settings apart from the defaults: those the code changed, or added
        defaults = settings
    corpus = ""
    if baseline.get("corpus_digest") != run.get("corpus_digest"):
        corpus = f"{short(baseline.get('corpus_digest'))} -> {short(run.get('corpus_digest'))}"
    resources = tuple(f"{key} {baseline.get(key)} -> {run.get(key)}" for key in ("master", "executors", "cores", "host")
                      if baseline.get(key) != run.get(key))
    return Changes(kind, code, configuration, corpus, resources, defaults)


def same_setup(baseline: Record, run: Record) -> bool:
    """Whether two runs are of the same kind, configuration and corpus (their digests): comparable as they are."""
    return all(baseline.get(key) == run.get(key) for key in ("kind", "config_digest", "corpus_digest"))


def find(records: Sequence[Record], wanted: str, what: str = "--run") -> int:
    """The index of the run ``wanted`` names: ``latest``, ``first``, a run id, or a prefix of exactly one run id."""
    if not records:
        raise ConfigError(f"{what} {wanted}: the history holds no run")
    if wanted in (LATEST, FIRST):
        return len(records) - 1 if wanted == LATEST else 0
    exact = [i for i, record in enumerate(records) if record["run_id"] == wanted]
    found = exact or [i for i, record in enumerate(records) if record["run_id"].startswith(wanted)]
    if len(found) == 1:
        return found[0]
    if found:
        named = ", ".join(records[i]["run_id"] for i in found[:5]) + (", ..." if len(found) > 5 else "")
        raise ConfigError(f"{what} {wanted} names {len(found)} runs ({named}): give more of the run id")
    raise ConfigError(f"{what} {wanted}: no such run in the history (its {len(records)} runs: "
                      f"{records[0]['run_id']} ... {records[-1]['run_id']}; the trend table lists them)")


def previous_baseline(records: Sequence[Record], index: int) -> int | None:
    """The latest run before ``records[index]`` that succeeded with the same kind, configuration and corpus."""
    run = records[index]
    return next((i for i in range(index - 1, -1, -1) if succeeded(records[i]) and same_setup(records[i], run)), None)


@dataclass(frozen=True)
class Comparison:
    """One figure of a run against its baseline's: regressed when it falls behind by more than ``limit`` (an F1
    drop, or a cost ratio; None for a figure without a rule, shown only); ``note`` says why it was not compared
    (a figure missing on one side, ...).
    """

    figure: str
    baseline: float | None
    value: float | None
    limit: float | None
    regressed: bool = False
    note: str = ""

    def amount(self, value: float | None) -> str:
        """A value of the figure as shown: F1 to 4 places, memory in MiB, seconds to 1 place, any other figure to 6
        significant digits; ``-`` for none.
        """
        if value is None:
            return "-"
        if rule(self.figure) in F1_FIGURES:
            return f"{value:.4f}"
        if rule(self.figure) == "peak_memory_bytes":
            return f"{value / _MIB:,.0f} MiB"
        return f"{value:,.1f}" if rule(self.figure) in COST_FIGURES else f"{value:g}"

    def limit_text(self) -> str:
        """The tolerance as the change reads it: ``0.002`` for F1, ``x1.25`` for a cost, ``-`` for none."""
        if self.limit is None:
            return "-"
        return f"{self.limit:g}" if rule(self.figure) in F1_FIGURES else f"x{self.limit:g}"

    def change(self) -> str:
        """The change as the limit reads it: ``-0.0591`` for F1, ``x1.40`` for a cost; empty when not compared."""
        if self.note:
            return ""
        if rule(self.figure) in F1_FIGURES:
            return f"{self.value - self.baseline:+.4f}"
        return f"x{self.value / self.baseline:.2f}"

    def verdict(self) -> str:
        """``REGRESSION``, ``within`` or why the figure was not compared."""
        return f"not compared: {self.note}" if self.note else "REGRESSION" if self.regressed else "within"

    def line(self) -> str:
        """``micro_f1 0.7012 -> 0.6421 (-0.0591 > 0.002)`` (``<=`` when within the limit), or why not compared."""
        shown = f"{self.figure} {self.amount(self.baseline)} -> {self.amount(self.value)}"
        if self.note:
            return f"{shown} (not compared: {self.note})"
        return f"{shown} ({self.change()} {'>' if self.regressed else '<='} {self.limit_text()})"


def figures(record: Record) -> dict[str, float]:
    """A record's ``figures`` as a dict (a map column reads back as a list of pairs)."""
    return dict(record.get("figures") or ())


def compare(baseline: Record, run: Record, tolerances: Tolerances) -> list[Comparison]:
    """Every figure of ``run`` against ``baseline``'s: micro/macro-F1 by drop, seconds, CPU-seconds and peak memory
    by ratio, then the named ``figures`` of either run by the rule of their last name (module docstring); CPU and
    memory are not compared when one run measured the whole process tree and the other the driver's only
    (``cpu_complete``).
    """
    old, new = figures(baseline), figures(run)
    named = [(figure, baseline.get(figure), run.get(figure)) for figure in (*F1_FIGURES, *COST_FIGURES)]
    named += [(figure, old.get(figure), new.get(figure)) for figure in sorted(old.keys() | new.keys())]
    same_tree = baseline.get("cpu_complete") == run.get("cpu_complete")
    return [_compared(figure, before, after, tolerances, same_tree) for figure, before, after in named]


def _compared(figure: str, old: float | None, new: float | None, tolerances: Tolerances,
              same_tree: bool) -> Comparison:
    follows = rule(figure)
    limit = (tolerances.max_f1_drop if follows in F1_FIGURES
             else getattr(tolerances, COST_FIGURES[follows]) if follows in COST_FIGURES else None)
    if old is None or new is None or (follows in COST_FIGURES and old <= 0):
        return Comparison(figure, old, new, limit, note="not measured in both runs")
    if limit is None:
        return Comparison(figure, old, new, limit, note="no tolerance for it, shown only")
    if follows in F1_FIGURES:
        return Comparison(figure, old, new, limit, regressed=old - new > limit + _SLACK)
    if follows in TREE_FIGURES and not same_tree:
        return Comparison(figure, old, new, limit,
                          note="one run measured the whole process tree, the other the driver's only")
    return Comparison(figure, old, new, limit, regressed=new / old > limit + _SLACK)


@dataclass(frozen=True)
class Check:
    """One run checked: its baseline (None: it has none) and how it was chosen, what changed from it, the figures
    compared; with no baseline, the most recent earlier runs of its kind that succeeded and what differs from each.
    """

    run: Record
    baseline: Record | None
    chosen: str
    changes: Changes = Changes()
    comparisons: tuple[Comparison, ...] = ()
    others: tuple[tuple[Record, Changes], ...] = ()

    def regressions(self) -> list[str]:
        """One ``REGRESSION run R: ...`` line per regressed figure, or the run's failure, naming the baseline and
        what changed from it.
        """
        against = ""
        if self.baseline is not None:
            against = f" vs baseline {self.baseline['run_id']}" + "".join(f"; {part}" for part in self.changes.parts())
        head = f"REGRESSION run {self.run['run_id']}: "
        if not succeeded(self.run):
            error = self.run.get("error")
            return [f"{head}{status(self.run)}{': ' + error if error else ''}{against}"]
        return [f"{head}{comparison.line()}{against}" for comparison in self.comparisons if comparison.regressed]

    def summary(self) -> list[str]:
        """What the check found, in lines: the baseline and what changed, or why there is none."""
        run = self.run["run_id"]
        if self.baseline is None:
            lines = [f"run {run}: no baseline: {self.chosen}"]
            if self.others:
                lines.append("  the latest earlier runs of its kind that succeeded differ from it:")
            return lines + [f"  {other['run_id']}: {found.describe()}" for other, found in self.others]
        return [f"run {run} vs baseline {self.baseline['run_id']} ({self.chosen}): {self.changes.describe()}"]


def check(records: Sequence[Record], index: int, baseline: int | None, tolerances: Tolerances,
          chosen: str) -> Check:
    """``records[index]`` against ``records[baseline]`` (None: no baseline, and the earlier runs of its kind that
    succeeded are listed with what differs from each).
    """
    run = records[index]
    if baseline is None:
        earlier = [record for record in records[:index]
                   if succeeded(record) and record.get("kind") == run.get("kind")][::-1][:LISTED_OTHERS]
        return Check(run, None, chosen, others=tuple((other, changes(other, run)) for other in earlier))
    base = records[baseline]
    compared = tuple(compare(base, run, tolerances)) if succeeded(run) else ()
    return Check(run, base, chosen, changes(base, run), compared)


def checks(records: Sequence[Record], run: str = LATEST, baseline: str = PREVIOUS, every: bool = False,
           tolerances: Tolerances = Tolerances()) -> list[Check]:
    """The runs to check, each against its baseline: ``run`` (``latest``, a run id or its prefix), or every run
    with ``every``; against ``baseline``: ``previous`` (each run's :func:`previous_baseline`), or the run it
    names (``first``, a run id or its prefix), for every later run with ``every``. A named baseline that failed
    is refused.
    """
    if baseline == PREVIOUS:
        targets = range(len(records)) if every else [find(records, run)]
        return [_default_check(records, i, tolerances) for i in targets]
    named = find(records, baseline, "--baseline")
    if not succeeded(records[named]):
        raise ConfigError(f"--baseline {records[named]['run_id']} {status(records[named])}: a failed run is never a "
                          "baseline; name a run that succeeded, or leave --baseline out")
    targets = range(named + 1, len(records)) if every else [find(records, run)]
    if not every and targets[0] == named:
        raise ConfigError(f"--baseline {records[named]['run_id']} is the run checked: name an earlier run, or "
                          "leave --baseline out")
    return [check(records, i, named, tolerances, "named by --baseline") for i in targets]


def _default_check(records: Sequence[Record], index: int, tolerances: Tolerances) -> Check:
    baseline = previous_baseline(records, index)
    if baseline is not None:
        return check(records, index, baseline, tolerances, "the previous run with the same configuration and corpus")
    run = records[index]
    return check(records, index, None, tolerances,
                 f"no earlier run of its kind succeeded with its configuration {short(run.get('config_digest'))} "
                 f"and corpus {short(run.get('corpus_digest'))}")


def trend_rows(records: Sequence[Record]) -> list[dict[str, str]]:
    """The trend table, one row of display strings per run: start, run id, kind, label, code version,
    configuration and corpus digests (short), status, micro/macro-F1, seconds, CPU-seconds and peak memory.
    """

    def number(value: float | None, form: str) -> str:
        return "-" if value is None else format(value, form)

    return [{
        "started": f"{record['started']:%Y-%m-%d %H:%M:%S}" if record.get("started") else "-",
        "run": record["run_id"], "kind": record.get("kind") or "-", "label": record.get("label") or "-",
        "code": code_version(record),
        "config": short(record.get("config_digest")), "corpus": short(record.get("corpus_digest")),
        "status": status(record),
        "micro_F1": number(record.get("micro_f1"), ".4f"), "macro_F1": number(record.get("macro_f1"), ".4f"),
        "seconds": number(record.get("seconds"), ",.1f"), "CPU_s": number(record.get("cpu_seconds"), ",.1f"),
        "peak_MiB": number(None if record.get("peak_memory_bytes") is None else record["peak_memory_bytes"] / _MIB,
                           ",.0f"),
    } for record in records]
