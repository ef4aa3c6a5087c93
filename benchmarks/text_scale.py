r"""Raw text at scale: sparktc's pipeline on a synthetic JSON Lines corpus beside a lean tokenizing peer.

    .venv/bin/python -m benchmarks.text_scale --output runs/text-bench [--documents 200000] [--files 8] \
        [--master "local[2]"] [--stop-list ../shared/data/stopwords/smart_english.stop] [--repeat 1] [--history DIR]

Run it from the repository root; the commands it starts run from there, exactly as a user would type them.

1. **Corpus**: ``benchmarks/text_corpus.py`` writes N documents of English-like text in ``--files`` JSON Lines files
   into OUTPUT/corpus-N (reused when its corpus.json says it is complete for the same shape).
2. **sparktc**: ``./spark-submit.sh --master M jobs/pipeline.py --config conf/jsonl.toml --set corpus.path=CORPUS
   --set tokenize.stop_list=STOP --output OUTPUT/run-N-R`` into a fresh directory (conf/jsonl.toml with the SMART
   stop list: the LYRL2004 recipe), measured from /proc by ``benchmarks/harness_measure.py`` (wall, CPU-seconds of
   the whole process tree, peak RSS), cut into segments at the ``sparktc: <stage>`` lines.
3. **Peer**: ``.venv/bin/python -m benchmarks.text_peer --corpus CORPUS --stop-list STOP --output ...`` (one plain
   Python process: json, the same tokenization, ltc, LIBLINEAR one-vs-rest, F1), measured the same way; its own
   step times come from its JSON. Then (not timed) the peer's tokenizer runs again keeping each document's token
   hash, and every document's token string in sparktc's ``tokens`` table is compared with it.
4. OUTPUT/text_scale.json (every figure) and OUTPUT/text_scale.md (the tables, printed too): per stage wall and CPU
   for sparktc, the peer's steps, the ratios, F1 of both, the token comparison, and the target of issue 26:
   sparktc's CPU-seconds <= 2.5 x the peer's. With ``--repeat R`` each command runs R times (alternately) and the
   tables show medians.

Exit code 0 when every command succeeded, 1 when one failed, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import hashlib
import shlex
import shutil
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.dataset as ds

from benchmarks import harness_recording, harness_tables
from benchmarks.harness import (
    PYTHON,
    REPO,
    SAMPLE_SECONDS,
    harness_parser,
    load_average,
    read_json,
    relative,
    rounded,
    run_harness,
)
from benchmarks.harness import measured as run_command
from benchmarks.harness_measure import Measured
from benchmarks.harness_text_corpus import TextShape, corpus_is_complete, write_corpus
from sparktc.runtime.markdown import markdown_table

TARGET_CPU_RATIO = 2.5  # issue 26: sparktc's CPU <= 2.5 x the lean peer's
DEFAULT_STOP_LIST = str(REPO.parent / "shared" / "data" / "stopwords" / "smart_english.stop")
PEER = "benchmarks.text_peer"
PEER_STEPS = ("read", "tokenize", "weight", "train", "predict+evaluate")


def measured(command: list[str], log: Path, driver_script: str) -> Measured:
    """Run ``command`` under the /proc sampler (:func:`benchmarks.harness.measured`); HarnessError when it fails."""
    return run_command(command, log, driver_script, harness="text_scale")


def ensure_corpus(output: Path, shape: TextShape, files: int) -> dict[str, Any]:
    """The synthetic corpus of ``shape`` in OUTPUT, reused when it is complete, else written anew; its record."""
    directory = output / f"corpus-{shape.documents}"
    if corpus_is_complete(directory, shape, files, compress=False):
        record = read_json(directory / "corpus.json")
        return {"path": str(directory), "reused": True, **{k: record[k] for k in ("files", "bytes")}}
    shutil.rmtree(directory, ignore_errors=True)  # inside OUTPUT: an older or partial corpus of this script
    print(f"text_scale: writing {shape.documents:,} documents into {relative(directory)}", flush=True)
    record = write_corpus(directory, shape, files)
    return {"path": str(directory), "reused": False, **{k: record[k] for k in ("files", "bytes", "seconds")}}


def run_sparktc(output: Path, corpus: Path, master: str, stop_list: str, repeat: int) -> dict[str, Any]:
    """One measured sparktc pipeline run (conf/jsonl.toml) on ``corpus``: wall, CPU and peak RSS per segment, with each
    stage's own time and rows.
    """
    run_dir = output / f"run-{repeat}"
    shutil.rmtree(run_dir, ignore_errors=True)  # inside OUTPUT, which is this script's
    command = ["./spark-submit.sh", "--master", master, "jobs/pipeline.py", "--config", "conf/jsonl.toml",
               "--set", f"corpus.path={relative(corpus)}", "--set", f"tokenize.stop_list={stop_list}",
               "--output", relative(run_dir)]
    result = measured(command, output / "logs" / f"sparktc-{repeat}.log", "jobs/pipeline.py")
    stages: dict[str, dict[str, Any]] = {}
    for segment in result.segments():
        entry: dict[str, Any] = {"segment_seconds": round(segment.wall_seconds, 3),
                                 "cpu_seconds": round(segment.cpu_seconds, 3),
                                 "peak_rss_mb": rounded(segment.peak_rss_mb)}
        if segment.name in harness_tables.STAGES:
            report = read_json(run_dir / "manifests" / f"{segment.name}.json")
            entry.update(wall_seconds=report["seconds"], rows_in=report["rows_in"], rows_out=report["rows_out"])
        else:
            entry["wall_seconds"] = entry["segment_seconds"]
        stages[segment.name] = entry
    metrics = read_json(run_dir / "metrics.json")
    return {"command": shlex.join(command), "run_dir": str(run_dir), "load": load_average(),
            "wall_seconds": round(result.seconds, 3), "cpu_seconds": round(result.cpu_seconds, 3),
            "peak_rss_mb": rounded(result.peak_rss_mb()), "stages": stages,
            "metrics": {key: metrics.get(key) for key in ("micro_f1", "macro_f1", "n_categories", "test_documents")}}


def run_peer(output: Path, corpus: Path, stop_list: str, repeat: int, tokens: Path | None) -> dict[str, Any]:
    """One measured run of the lean tokenizing peer on ``corpus``; with ``tokens``, an untimed extra run saves its token
    hashes.
    """
    record_file = output / f"peer-{repeat}.json"
    command = [PYTHON, "-m", PEER, "--corpus", relative(corpus), "--stop-list", stop_list,
               "--output", relative(record_file)]
    result = measured(command, output / "logs" / f"peer-{repeat}.log", PEER)
    record = read_json(record_file)
    entry = {"command": shlex.join(command), "load": load_average(), "wall_seconds": round(result.seconds, 3),
             "cpu_seconds": round(result.cpu_seconds, 3), "peak_rss_mb": rounded(result.peak_rss_mb()),
             "result": record}
    if tokens is not None:  # not timed: the token hashes for the comparison
        command = [*command[:-2], "--output", relative(output / "peer-tokens.json"), "--tokens", relative(tokens)]
        print(f"text_scale: $ {shlex.join(command)}   (token hashes, not timed)", flush=True)
        measured(command, output / "logs" / "peer-tokens.log", PEER)
    return entry


def compare_tokens(run_dir: Path, peer_tokens: Path) -> dict[str, Any]:
    """Every document's stored token string in sparktc's ``tokens`` table against the peer's (by 64-bit hash)."""
    table = ds.dataset(run_dir / "tokens", format="parquet").to_table(columns=["doc_id", "tokens"])
    ours = {doc_id: hashlib.blake2b((tokens or "").encode(), digest_size=8).digest()
            for doc_id, tokens in zip(table["doc_id"].to_pylist(), table["tokens"].to_pylist())}
    with np.load(peer_tokens) as saved:
        theirs = dict(zip(saved["doc_ids"].tolist(), (h.tobytes() for h in saved["hashes"])))
    differing = sorted(doc_id for doc_id in ours.keys() & theirs.keys() if ours[doc_id] != theirs[doc_id])
    return {"sparktc_documents": len(ours), "peer_documents": len(theirs),
            "only_sparktc": len(ours.keys() - theirs.keys()), "only_peer": len(theirs.keys() - ours.keys()),
            "differing": len(differing), "first_differing": differing[:5],
            "equal": not differing and ours.keys() == theirs.keys()}


def median(values: Sequence[float]) -> float:
    """The median of ``values`` as a float."""
    return float(statistics.median(values))


def summary(sparktc_runs: list[dict[str, Any]], peer_runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over the repeats, the ratios and the target."""
    stages = sparktc_runs[0]["stages"].keys()
    ours = {"wall_seconds": median([r["wall_seconds"] for r in sparktc_runs]),
            "cpu_seconds": median([r["cpu_seconds"] for r in sparktc_runs]),
            "stages": {name: {key: median([r["stages"][name][key] for r in sparktc_runs if name in r["stages"]])
                              for key in ("wall_seconds", "cpu_seconds")} for name in stages},
            "peak_rss_mb": max(r["peak_rss_mb"]["total"] for r in sparktc_runs)}
    theirs = {"wall_seconds": median([r["wall_seconds"] for r in peer_runs]),
              "cpu_seconds": median([r["cpu_seconds"] for r in peer_runs]),
              "steps": {name: {"wall_seconds": median([r["result"]["steps"].get(name, 0.0) for r in peer_runs]),
                               "cpu_seconds": median([r["result"]["steps_cpu"].get(name, 0.0) for r in peer_runs])}
                        for name in PEER_STEPS},
              "peak_rss_mb": max(r["peak_rss_mb"]["total"] for r in peer_runs)}
    cpu_ratio = ours["cpu_seconds"] / theirs["cpu_seconds"]
    metrics, result = sparktc_runs[0]["metrics"], peer_runs[0]["result"]
    return {"sparktc": ours, "peer": theirs, "cpu_ratio": round(cpu_ratio, 3),
            "wall_ratio": round(ours["wall_seconds"] / theirs["wall_seconds"], 3),
            "target": {"cpu_ratio_at_most": TARGET_CPU_RATIO, "passed": cpu_ratio <= TARGET_CPU_RATIO},
            "f1": {"sparktc": {k: metrics[k] for k in ("micro_f1", "macro_f1")},
                   "peer": {k: result[k] for k in ("micro_f1", "macro_f1")},
                   "equal_to_4_decimals": all(round(metrics[k], 4) == round(result[k], 4)
                                              for k in ("micro_f1", "macro_f1"))}}


def headline(result: dict[str, Any]) -> dict[str, Any]:
    """The figures of the benchmark's record, from its summary (none when it stopped early): sparktc's and the peer's
    medians of wall and CPU-seconds, their peak memory and F1, the ratios, and the documents whose tokens differ.
    """
    s = result.get("summary")
    if not s:
        return {}
    return {**{side: {"seconds": s[side]["wall_seconds"], "cpu_seconds": s[side]["cpu_seconds"],
                      "peak_memory_bytes": harness_recording.memory_bytes(s[side]["peak_rss_mb"]), **s["f1"][side]}
               for side in ("sparktc", "peer")},
            "sparktc_over_peer": {"cpu": s["cpu_ratio"], "wall": s["wall_ratio"]},
            "tokens": {"differing": result["tokens"]["differing"]}}


def render(result: dict[str, Any]) -> str:
    """The markdown report of the result: settings, sparktc's stages beside the peer's steps, F1 and the token
    comparison.
    """
    s = result.get("summary")
    if not s:
        return f"# Raw text: JSON Lines\n\n**The benchmark stopped early:** {result.get('error')}\n"
    settings, ours, theirs = result["settings"], s["sparktc"], s["peer"]
    pair = harness_tables.pair
    stage_rows = [[name, pair(v["wall_seconds"], v["cpu_seconds"])] for name, v in ours["stages"].items()]
    stage_rows.append(["**whole command**", f"**{pair(ours['wall_seconds'], ours['cpu_seconds'])}**"])
    peer_rows = [[name, pair(v["wall_seconds"], v["cpu_seconds"])] for name, v in theirs["steps"].items()]
    peer_rows.append(["**whole command**", f"**{pair(theirs['wall_seconds'], theirs['cpu_seconds'])}**"])
    tokens = result.get("tokens", {})
    f1 = s["f1"]
    lines = [
        f"# Raw text: JSON Lines, {settings['documents']:,} documents, sparktc beside a lean tokenizing peer",
        (f"Corpus `{settings['corpus']}`: {settings['documents']:,} synthetic documents "
         f"({settings['train_documents']:,} for training) in {settings['files']} files, "
         f"{result['corpus']['bytes'] / 1e6:,.0f} MB. sparktc on `{settings['master']}` with conf/jsonl.toml and the "
         f"SMART stop list; the peer: `benchmarks/text_peer.py`, one process. Cells: wall s / CPU-s (whole process "
         f"tree, from /proc every {SAMPLE_SECONDS} s); medians of {settings['repeat']} run(s)."),
        "sparktc, per stage (stage wall from its manifest; CPU of the stage's segment of the run):",
        markdown_table(["stage", "wall / CPU (s)"], stage_rows),
        "Peer, per step (its own clocks; whole command from /proc):",
        markdown_table(["step", "wall / CPU (s)"], peer_rows),
        markdown_table(["figure", "sparktc", "peer", "sparktc / peer"], [
            ["CPU-seconds", harness_tables.seconds(ours["cpu_seconds"]),
             harness_tables.seconds(theirs["cpu_seconds"]), harness_tables.ratio(s["cpu_ratio"])],
            ["wall seconds", harness_tables.seconds(ours["wall_seconds"]),
             harness_tables.seconds(theirs["wall_seconds"]), harness_tables.ratio(s["wall_ratio"])],
            ["peak RSS (MB, whole tree)", harness_tables.megabytes(ours["peak_rss_mb"]),
             harness_tables.megabytes(theirs["peak_rss_mb"]),
             harness_tables.ratio(harness_tables.divide(ours["peak_rss_mb"], theirs["peak_rss_mb"]))],
            ["micro-F1", harness_tables.f1(f1["sparktc"]["micro_f1"]), harness_tables.f1(f1["peer"]["micro_f1"]), ""],
            ["macro-F1", harness_tables.f1(f1["sparktc"]["macro_f1"]), harness_tables.f1(f1["peer"]["macro_f1"]), ""],
        ]),
        (f"- Tokens: {tokens.get('sparktc_documents', 0):,} documents of sparktc's `tokens` table against the peer's "
         f"{tokens.get('peer_documents', 0):,}: {tokens.get('differing', '?')} token strings differ, "
         f"{tokens.get('only_sparktc', '?')} / {tokens.get('only_peer', '?')} documents on one side only "
         f"({'equal' if tokens.get('equal') else 'NOT equal'})."),
        f"- F1 equal to 4 decimals: {'yes' if f1['equal_to_4_decimals'] else 'no'}.",
        (f"- Target (issue 26): sparktc CPU-seconds <= {TARGET_CPU_RATIO} x the peer's: "
         f"{harness_tables.ratio(s['cpu_ratio'])} -> **{'PASS' if s['target']['passed'] else 'MISS'}**."),
        (f"- Load average (1 min) at start / end: {result['machine'].get('load_start')} / "
         f"{result['machine'].get('load_end')}; per run: sparktc "
         f"{', '.join(r['load'] for r in result['sparktc_runs'])}, peer "
         f"{', '.join(r['load'] for r in result['peer_runs'])} (at each run's end)."),
        f"- Command: `{result['command']}`",
    ]
    return "\n\n".join(lines) + "\n"


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line (module docstring), checked: exit 2 with a message for values that cannot work."""
    parser = harness_parser(__doc__)
    parser.add_argument("--output", required=True, help="directory for the corpus, the runs, logs, text_scale.json/.md")
    parser.add_argument("--documents", type=int, default=TextShape.documents)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--stop-list", default=relative(Path(DEFAULT_STOP_LIST)))
    parser.add_argument("--repeat", type=int, default=1)
    arguments = parser.parse_args(argv)
    if arguments.documents < 100 or arguments.files < 1 or arguments.repeat < 1:
        parser.error("expected --documents >= 100, --files >= 1, --repeat >= 1")
    return arguments


def main(argv: Sequence[str] | None = None) -> int:
    """Write the corpus, run sparktc and the peer ``--repeat`` times, and write text_scale.json and text_scale.md
    (module docstring); the exit code.
    """
    arguments = parse_arguments(argv)
    output = Path(arguments.output).resolve()
    shape = TextShape(documents=arguments.documents)
    settings = {"documents": shape.documents, "train_documents": shape.train_documents, "files": arguments.files,
                "master": arguments.master, "stop_list": arguments.stop_list, "repeat": arguments.repeat,
                "corpus": relative(output / f"corpus-{shape.documents}")}

    def body(result: dict[str, Any], write: Callable[[], str]) -> int:
        result["corpus"] = ensure_corpus(output, shape, arguments.files)
        corpus = Path(result["corpus"]["path"])
        for repeat in range(arguments.repeat):
            result["sparktc_runs"].append(run_sparktc(output, corpus, arguments.master, arguments.stop_list, repeat))
            tokens = output / "peer-tokens.npz" if repeat == 0 else None
            result["peer_runs"].append(run_peer(output, corpus, arguments.stop_list, repeat, tokens))
        result["tokens"] = compare_tokens(Path(result["sparktc_runs"][0]["run_dir"]), output / "peer-tokens.npz")
        result["summary"] = summary(result["sparktc_runs"], result["peer_runs"])
        return 0

    return run_harness("text_scale", output, argv, settings, body, render, "text_scale", headline=headline,
                       sparktc_runs=[], peer_runs=[])


if __name__ == "__main__":
    sys.exit(main())
