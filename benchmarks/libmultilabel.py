"""LibMultiLabel's linear methods beside sparktc's, on this machine, on the same files: multi-label LIBSVM files, or
LibMultiLabel-format text files with both of LibMultiLabel's tf-idf settings.

    .venv/bin/python -m benchmarks.libmultilabel --output /tmp/libmultilabel-20k [--documents 20000]
    .venv/bin/python -m benchmarks.libmultilabel --output OUT --corpus DIR     # DIR/train.svm, DIR/test.svm
    .venv/bin/python -m benchmarks.libmultilabel --format text --output OUT [--reuters ../shared/data/reuters21578]
        [--category-set R90] [--tfidf default,tutorial]
    .venv/bin/python -m benchmarks.libmultilabel --format text --output OUT --corpus DIR   # DIR/train.txt, test.txt
    .venv/bin/python -m benchmarks.libmultilabel --format text --output OUT --documents N  # synthetic text
        [--venv ~/.cache/sparktc/libmultilabel-0.10.0-scipy-1.13.1]
        [--methods 1vsrest,thresholding,cost_sensitive,cost_sensitive_micro]

Run it from the repository root; the commands it starts run from there, exactly as a user would type them.

1. **LibMultiLabel's environment.** LibMultiLabel never runs in the project's .venv: it depends on
   ``liblinear-multicore``, which installs the same ``liblinear`` module as the project's ``liblinear-official``
   and overwrites it. When ``--venv`` has no Python yet, the benchmark makes it (``python -m venv``) and
   pip-installs :data:`REQUIREMENTS` from the package index: libmultilabel 0.10.0 (the newest) and scipy 1.13.1,
   because libmultilabel's ``train_thresholding`` sums its label matrix with ``np.sum(y, 2)``, which scipy 1.14
   and later refuse ("axis out of range"); libmultilabel 0.7.4 itself required ``scipy<1.14``. An existing
   ``--venv`` must hold exactly these versions.
2. **The corpus** (:data:`FORMATS`, ``--format``).

   * ``svm`` (the default): ``--corpus DIR`` takes the LIBSVM files as they are (plain text: LibMultiLabel's
     reader opens them with ``open``). ``--documents N`` (default 20,000) makes them with sparktc:
     ``jobs/synthesize.py`` with conf/synthetic.toml at RCV1-v2's shape (N documents, round(23,149 N / 804,414) of
     them for training, 47,236 words; reused when OUTPUT/corpus-N is complete), ``jobs/pipeline.py --config
     conf/rcv1.toml`` on it (ltc, as for RCV1-v2; its stages are skipped when current) and
     ``jobs/export_libsvm.py`` of that run into OUTPUT/libsvm-N (the weighted vectors; reused when its export.json
     is there).
   * ``text``: ``--corpus DIR`` takes DIR/train.txt and DIR/test.txt as they are (each plain, ``.gz`` or ``.bz2``:
     both tools read the three; link LibMultiLabel's rcv1_topics_train.txt / rcv1_topics_test.txt to those names).
     Without it, ``--reuters DIR`` (default ../shared/data/reuters21578) is written into
     OUTPUT/reuters21578-SET by :mod:`benchmarks.libmultilabel_corpus`: ModApte, NEWID, the labels of
     ``--category-set`` (default R(90)), a document with none kept with an empty label column, text = TITLE and
     BODY as sparktc's reader gives them with tabs, newlines and carriage returns replaced by spaces. Or
     ``--documents N``: :mod:`benchmarks.text_corpus`'s synthetic RCV1-shaped text (N documents, RCV1-v2's
     training share) written the same way into OUTPUT/text-N (reused when complete).
3. **Each method** (:data:`METHODS`), and in text mode each tf-idf setting (:data:`TFIDF`, ``--tfidf``) with each
   method, one after the other, under the /proc sampler of ``benchmarks/harness_measure.py`` (wall time, CPU-seconds and
   peak resident memory of the whole process tree):

   * LibMultiLabel: ``VENV/bin/python -I benchmarks/libmultilabel_peer.py`` (its own reader of the same files,
     its Preprocessor, in text mode with the setting's ``tfidf_params``, the method with ``-s 1 -c 1 -B 1 -e
     0.0001``, its metrics), a fresh process per run; a cross-validating method also writes the folds its
     permutations made, OUTPUT/folds-RUN.tsv, and in text mode the peer writes its tf-idf vocabulary,
     OUTPUT/libmultilabel-RUN.vocabulary.txt. A record of the same command already in OUTPUT
     (libmultilabel-RUN.json with its decisions, folds and vocabulary) is reused: LibMultiLabel's thresholding
     takes half an hour at 804,414 documents, and a rerun for sparktc's side need not repeat it;
   * sparktc: ``./spark-submit.sh jobs/pipeline.py --config CONFIG --set corpus.path=DIR --output
     OUTPUT/sparktc-RUN`` (CONFIG: conf/libsvm.toml, or conf/libmultilabel_text.toml with the tf-idf setting's
     counterpart) with the method's counterpart and ``train.fold_file`` = LibMultiLabel's folds, into a fresh
     directory: the normal command, files read, weighted, trained, evaluated.

   RUN is the method (LIBSVM) or TFIDF-METHOD (text). Then the two tools' test decisions (sparktc's
   ``predictions``, the peer's positive decision values) are compared document by document and label by label:
   a LIBSVM document by its line (sparktc's doc id ``test.svm:LINE``), a text document by its id (the id column,
   which sparktc takes as the doc id). In text mode the vocabularies too: their sizes and the terms only one has.
4. OUTPUT/libmultilabel.json holds every figure, OUTPUT/libmultilabel.md the table (printed too); each command's
   output is kept in OUTPUT/logs/.

The F1 averages of both tools are over the labels with at least one training document (LibMultiLabel's
classes; sparktc's ``evaluate.average_over = "train_positive"``), with F1 = 0 at 0/0 (LibMultiLabel's
convention; the configurations' ``evaluate.zero_division = 0``). OUTPUT must be new, empty, or written by this
script before (it holds OUTPUT/.libmultilabel): the benchmark never deletes or replaces what it did not write.
Exit code 0 when every command succeeded, 1 when one failed, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc
import pyarrow.dataset as ds

from benchmarks import harness_libmultilabel_corpus, harness_recording, harness_tables
from benchmarks.harness import (
    RCV1_DOCUMENTS,
    RCV1_VOCABULARY,
    REPO,
    SAMPLE_SECONDS,
    HarnessError,
    corpus_is_complete,
    harness_parser,
    read_json,
    relative,
    rounded,
    run_harness,
    train_documents,
)
from benchmarks.harness import measured as run_command
from benchmarks.harness_measure import Measured
from benchmarks.harness_pipeline import output_refusal as refusal_of_output
from benchmarks.harness_text_corpus import TextShape
from sparktc.corpora.files import compression_of
from sparktc.corpora.reuters21578 import CATEGORY_SETS
from sparktc.corpora.reuters21578 import FORMAT as REUTERS
from sparktc.runtime.markdown import markdown_table

LIBMULTILABEL_VERSION = "0.10.0"
SCIPY_VERSION = "1.13.1"
#: What the separate environment holds (see the module docstring for scipy's pin).
REQUIREMENTS = (f"libmultilabel=={LIBMULTILABEL_VERSION}", f"scipy=={SCIPY_VERSION}")
DEFAULT_VENV = f"~/.cache/sparktc/libmultilabel-{LIBMULTILABEL_VERSION}-scipy-{SCIPY_VERSION}"
DEFAULT_DOCUMENTS = 20_000
OPTIONS = "-s 1 -c 1 -B 1 -e 0.0001"  # LibMultiLabel's linear one-vs-rest defaults, conf/libsvm.toml's
PEER = "benchmarks/libmultilabel_peer.py"
PEER_SEED = 0  # numpy's global seed: the permutations of LibMultiLabel's cross-validation folds
MARKER = ".libmultilabel"
WRITER = "benchmarks/libmultilabel.py"
DEFAULT_REUTERS = REPO.parent / "shared" / "data" / "reuters21578"  # beside the project, as conf/reuters21578.toml
RANKS = ("P@1", "P@3", "P@5")
COST_GRID = "[1.0, 1.33, 1.8, 2.5, 3.67, 6.0, 13.0]"  # LibMultiLabel's grid of (2 - t) / t
#: What differs when the folds are the same: the LIBLINEAR builds and the order of the documents.
SOLVER_DIFFERENCES = (
    "LibMultiLabel passes -m 2 (its default, the physical cores) to liblinear-multicore for every fit, the "
    "cross-validation's and the final one; sparktc fits with liblinear-official 2.50's serial solver, rand() "
    "reseeded before each fit, documents in doc-id order (LibMultiLabel: the permutation's order, its C rand() never "
    "reseeded), float32 vectors: the same problems solved to -e 0.0001, so scores differ within that tolerance. "
    "A fold without positives trains LIBLINEAR's one-class model in both (sparktc's "
    "train.liblinear.one_class = liblinear)")
INSTALL_SECONDS = 1800


@dataclass(frozen=True)
class FileFormat:
    """The files both tools read (``--format``): their names, the compressions both read, LibMultiLabel's
    ``data_format`` and sparktc's configuration for them.
    """

    name: str
    what: str
    files: tuple[str, str]
    compressions: tuple[str, ...]
    peer_format: str
    config: str


FORMATS: dict[str, FileFormat] = {fmt.name: fmt for fmt in (
    # LibMultiLabel opens a LIBSVM file with open(): plain text only.
    FileFormat("svm", "multi-label LIBSVM files", ("train.svm", "test.svm"), (), "svm", "conf/libsvm.toml"),
    # LibMultiLabel reads text with pandas.read_csv, which decompresses by the file name, as sparktc does.
    FileFormat("text", "LibMultiLabel-format text files", tuple(harness_libmultilabel_corpus.FILES.values()),
               (".gz", ".bz2"), "txt", "conf/libmultilabel_text.toml"),
)}


@dataclass(frozen=True)
class Tfidf:
    """One of LibMultiLabel's tf-idf settings for text (the peer's ``--tfidf``, whose :data:`TFIDF
    <benchmarks.libmultilabel_peer.TFIDF>` holds the ``tfidf_params``) and sparktc's counterpart: the settings over
    conf/libmultilabel_text.toml.
    """

    name: str
    libmultilabel: str
    overrides: tuple[str, ...]
    sparktc: str
    differences: str


TFIDF: dict[str, Tfidf] = {setting.name: setting for setting in (
    Tfidf("default", "linear.Preprocessor(): scikit-learn's TfidfVectorizer() fitted on the training texts (the "
          "quickstart)", (),
          "conf/libmultilabel_text.toml as it is: TfidfVectorizer's analyzer (lower case, tokens of 2+ word "
          "characters), weight.scheme = sklearn (tf x (ln((1+N)/(1+df)) + 1), L2-normalised), every training term",
          "the same terms and weights, stored as float32 by sparktc (float64 in scikit-learn)"),
    Tfidf("tutorial", "linear.Preprocessor(tfidf_params={'max_features': 20000, 'min_df': 3, 'ngram_range': (1, 3)}) "
          "(the tutorial \"Tweaking Feature Generation for Linear Methods\")",
          ("tokenize.ngrams=3", "select.min_df=3", "rank.score=frequency", "select.top_k=20000"),
          "the same analyzer and weights over word 1- to 3-grams, the terms in 3+ training documents, the 20,000 "
          "with the largest training counts (scikit-learn's max_features)",
          "terms tied in count at the 20,000th are taken in term order by sparktc (select.top_k's ties), in the "
          "order of numpy's argsort of the negated counts by scikit-learn (its default quicksort, not stable)"),
)}


@dataclass(frozen=True)
class Method:
    """A LibMultiLabel linear method and sparktc's nearest counterpart: the settings over conf/libsvm.toml, and
    whether it is the same algorithm (and if not, what differs).
    """

    name: str
    libmultilabel: str
    sparktc: str
    overrides: tuple[str, ...]
    same_algorithm: bool
    differences: str
    takes_folds: bool = False  # sparktc cross-validates over LibMultiLabel's folds (train.fold_file)


METHODS: dict[str, Method] = {method.name: method for method in (
    Method("1vsrest", "train_1vsrest: one LIBLINEAR problem per label, decision value > 0",
           "the configuration's defaults (conf/libsvm.toml, conf/libmultilabel_text.toml): one LIBLINEAR problem per "
           "label, w'x + b > 0", (), True,
           "the same problem (L2-loss SVM dual, C = 1, B = 1 as a regularised bias feature, e = 0.0001); "
           "LIBLINEAR builds differ (liblinear-multicore 2.50, labels trained by 2 threads sharing the C library's "
           "rand(), documents in file order, w recomputed from the dual variables; sparktc: liblinear-official "
           "2.50, rand() reseeded with 1 before each label, documents in doc-id order, the ids' string order "
           "(train.svm:10 before train.svm:2), float32 vectors): the coordinate descent visits the documents in "
           "another order, so decision values within the -e 0.0001 tolerance of 0 can fall either side"),
    Method("thresholding", "train_thresholding: per label, 3-fold CV; each fold's threshold maximises micro-F1 "
           "over the labels visited + that label's F1 / labels visited, labels taken from the most frequent "
           "(micromacro-freq, Lin & Lin 2023); the mean over folds",
           "train.thresholding = micromacro over LibMultiLabel's folds (sparktc.models.micromacro): the same "
           "objective, candidates, ties and visiting order",
           ("train.thresholding=micromacro", "train.folds=3", "train.liblinear.one_class=liblinear"), True,
           f"the same algorithm over the same folds; {SOLVER_DIFFERENCES}", True),
    Method("cost_sensitive", "train_cost_sensitive: per label, -w1 from {1, 1.33, 1.8, 2.5, 3.67, 6, 13} by the F1 "
           "of 3-fold CV decisions, threshold 0",
           f"tune.liblinear.positive_weight = {COST_GRID} per category by the F1 of 3-fold CV decisions over "
           "LibMultiLabel's folds, threshold 0",
           (f"tune.liblinear.positive_weight={COST_GRID}", "train.folds=3", "train.liblinear.one_class=liblinear"),
           True,
           f"the same search (grid, 3 folds, pooled CV F1, first weight on ties) over the same folds; "
           f"{SOLVER_DIFFERENCES}", True),
    Method("cost_sensitive_micro", "train_cost_sensitive_micro: one -w1 for all labels from {1, 1.33, 1.8, 2.5, "
           "3.67, 6, 13} by the micro-F1 of 3-fold CV decisions (one permutation for all labels), threshold 0",
           f"tune.liblinear.positive_weight = {COST_GRID} with tune.liblinear.shared_positive_weight = true, by the "
           "micro-F1 of 3-fold CV decisions over LibMultiLabel's folds, threshold 0",
           (f"tune.liblinear.positive_weight={COST_GRID}", "tune.liblinear.shared_positive_weight=true",
            "train.folds=3", "train.liblinear.one_class=liblinear"), True,
           f"the same search (grid, 3 folds, CV micro-F1, first weight on ties) over the same folds; "
           f"{SOLVER_DIFFERENCES}", True),
)}


# --- arguments ---------------------------------------------------------------------------------

def selected(text: str, known: Mapping[str, Any], what: str) -> list[str]:
    """The names of a comma-separated option (in the order given, each once) among ``known``."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in known]
    if not names or unknown or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"expected distinct {what} from {', '.join(known)}; got {text!r}")
    return names


def selected_methods(text: str) -> list[str]:
    """The methods of ``--methods``."""
    return selected(text, METHODS, "methods")


def selected_tfidf(text: str) -> list[str]:
    """The tf-idf settings of ``--tfidf``."""
    return selected(text, TFIDF, "tf-idf settings")


def output_refusal(output: Path) -> str | None:
    """Why the benchmark may not write into ``output`` (None when it may): an existing file, or a non-empty
    directory without this script's marker.
    """
    return refusal_of_output(output, MARKER, WRITER)


def present(corpus: Path, name: str, fmt: FileFormat) -> list[Path]:
    """The files of ``corpus`` that hold ``name``: plain or with one of the compressions both tools read."""
    return [corpus / f"{name}{suffix}" for suffix in ("", *fmt.compressions) if (corpus / f"{name}{suffix}").is_file()]


def corpus_refusal(corpus: Path, fmt: FileFormat) -> str | None:
    """Why ``corpus`` cannot be given to both tools (None when it can): each of ``fmt``'s files once, in a form both
    read (LibMultiLabel reads no compressed LIBSVM file).
    """
    missing = [name for name in fmt.files if not present(corpus, name, fmt)]
    twice = [name for name in fmt.files if len(present(corpus, name, fmt)) > 1]
    if twice:
        found = ", ".join(path.name for name in twice for path in present(corpus, name, fmt))
        return f"--corpus {corpus} holds {found}: keep one form of each file, so that both tools read the same"
    if not missing:
        return None
    packed = [f"{name}{suffix}" for name in missing for suffix in (".bz2", ".gz")
              if (corpus / f"{name}{suffix}").is_file()]
    hint = (f"; decompress {', '.join(packed)} beside them (bunzip2 -k / gunzip -k): LibMultiLabel reads plain text "
            "only" if packed else "")
    forms = f" (plain or {', '.join(fmt.compressions)})" if fmt.compressions else ""
    return f"--corpus {corpus} has no {' or '.join(missing)}{forms}{hint}"


def corpus_files(corpus: Path, fmt: FileFormat) -> tuple[Path, Path]:
    """The training and test files of ``corpus`` (checked by :func:`corpus_refusal`)."""
    train, test = (present(corpus, name, fmt)[0] for name in fmt.files)
    return train, test


def venv_refusal(venv: Path) -> str | None:
    """Why ``venv`` may not hold LibMultiLabel (None when it may): it is the project's own environment."""
    own = {Path(sys.prefix).resolve(), (REPO / ".venv").resolve()}
    if venv.resolve() in own:
        return (f"--venv {venv} is the project's environment; LibMultiLabel's liblinear-multicore would overwrite its "
                "liblinear-official: give a separate directory")
    return None


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, checked: the format; the corpus given, the number of documents to synthesize (LIBSVM) or
    the Reuters-21578 collection to write (text; the defaults when none is given); the output, LibMultiLabel's
    environment, the methods and the tf-idf settings.
    """
    parser = harness_parser(__doc__)
    parser.add_argument("--format", choices=list(FORMATS), default="svm",
                        help="svm: multi-label LIBSVM files (the default); text: LibMultiLabel-format text files")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--corpus", help="directory of the files: plain train.svm and test.svm, or train.txt and "
                                         "test.txt (plain, .gz or .bz2) with --format text")
    source.add_argument("--documents", type=int, help=f"synthesize N documents: svm, with sparktc, exported as LIBSVM "
                                                      f"files (the default: {DEFAULT_DOCUMENTS:,}); text, "
                                                      "benchmarks/text_corpus.py's RCV1-shaped text")
    source.add_argument("--reuters", help=f"text: write the Reuters-21578 collection in this directory as "
                                          f"LibMultiLabel text files (the default: {relative(DEFAULT_REUTERS)})")
    parser.add_argument("--category-set", choices=CATEGORY_SETS,
                        help=f"text, with --reuters: the labels written (default {REUTERS.default_category_set})")
    parser.add_argument("--tfidf", type=selected_tfidf,
                        help=f"text: comma-separated tf-idf settings (default {','.join(TFIDF)})")
    parser.add_argument("--output", required=True, help="directory for the runs, logs and libmultilabel.json/.md")
    parser.add_argument("--venv", default=DEFAULT_VENV,
                        help=f"LibMultiLabel's own virtual environment, made when missing (default {DEFAULT_VENV})")
    parser.add_argument("--methods", type=selected_methods, default=list(METHODS),
                        help=f"comma-separated methods (default {','.join(METHODS)})")
    arguments = parser.parse_args(argv)
    fmt = arguments.format = FORMATS[arguments.format]
    text = fmt.name == "text"
    misplaced = [option for option, given in (
        ("--reuters", arguments.reuters is not None), ("--category-set", arguments.category_set is not None),
        ("--tfidf", arguments.tfidf is not None)) if given and not text]
    if misplaced:
        parser.error(f"{', '.join(misplaced)}: not for --format {fmt.name} (--reuters, --category-set and --tfidf are "
                     "for --format text)")
    if arguments.category_set is not None and arguments.reuters is None and (arguments.corpus or arguments.documents):
        parser.error("--category-set chooses the labels written from --reuters; a --corpus is taken as it is, and "
                     "--documents generates its own")
    if text:
        arguments.tfidf = arguments.tfidf or list(TFIDF)
        if arguments.corpus is None and arguments.documents is None:
            arguments.reuters = Path(arguments.reuters or DEFAULT_REUTERS).resolve()
            arguments.category_set = arguments.category_set or REUTERS.default_category_set
    elif arguments.corpus is None and arguments.documents is None:
        arguments.documents = DEFAULT_DOCUMENTS
    if arguments.documents is not None and not 100 <= arguments.documents <= RCV1_DOCUMENTS * 10:
        parser.error(f"--documents {arguments.documents}: expected 100 .. {RCV1_DOCUMENTS * 10:,}")
    arguments.output = Path(arguments.output).resolve()
    arguments.venv = Path(os.path.expanduser(arguments.venv)).absolute()
    arguments.corpus = None if arguments.corpus is None else Path(arguments.corpus).resolve()
    refusals = [output_refusal(arguments.output), venv_refusal(arguments.venv)]
    if arguments.corpus is not None:
        refusals.append(corpus_refusal(arguments.corpus, fmt))
    if arguments.reuters is not None and not arguments.reuters.is_dir():
        refusals.append(f"--reuters {arguments.reuters} is not a directory: give the one holding {REUTERS.names.what}")
    for refusal in refusals:
        if refusal:
            parser.error(refusal)
    return arguments


# --- commands ----------------------------------------------------------------------------------

def sparktc_command(corpus: Path, run_dir: Path, method: Method, folds: Path | None = None,
                    fmt: FileFormat = FORMATS["svm"], tfidf: Tfidf | None = None) -> list[str]:
    """The sparktc pipeline command of ``method`` on ``corpus`` (``fmt``'s configuration, the tf-idf setting's and the
    method's overrides, and ``folds`` as its fold file) into ``run_dir``.
    """
    overrides = (*(tfidf.overrides if tfidf else ()), *method.overrides,
                 *([f"train.fold_file={relative(folds)}"] if folds is not None else []))
    return ["./spark-submit.sh", "jobs/pipeline.py", "--config", fmt.config,
            "--set", f"corpus.path={relative(corpus)}", *(a for o in overrides for a in ("--set", o)),
            "--output", relative(run_dir)]


def peer_command(venv: Path, files: tuple[Path, Path], result: Path, decisions: Path, method: Method,
                 folds: Path | None = None, tfidf: Tfidf | None = None, vocabulary: Path | None = None) -> list[str]:
    """The command that runs LibMultiLabel's ``method`` on the (train, test) ``files`` in its own environment ``venv``
    (``python -I`` the peer script), writing ``result``, ``decisions`` and, when given, the ``folds`` its permutations
    made; with a ``tfidf`` setting the files are LibMultiLabel text and the peer writes its ``vocabulary``.
    """
    text = [] if tfidf is None else ["--format", FORMATS["text"].peer_format, "--tfidf", tfidf.name,
                                     *(["--vocabulary", str(vocabulary)] if vocabulary is not None else [])]
    return [str(venv / "bin" / "python"), "-I", PEER, *text, "--train", str(files[0]), "--test", str(files[1]),
            "--method", method.name, "--options", OPTIONS, "--seed", str(PEER_SEED), "--output", str(result),
            "--decisions", str(decisions), *(["--folds", str(folds)] if folds is not None else [])]


def peer_identity(files: tuple[Path, Path], method: Method, tfidf: Tfidf | None = None) -> dict[str, Any]:
    """What the peer's record says of the command that made it (files, method, options, seed; the tf-idf setting)."""
    return {"train": str(files[0]), "test": str(files[1]), "method": method.name, "options": OPTIONS,
            "seed": PEER_SEED, **({"format": FORMATS["text"].peer_format, "tfidf": tfidf.name, "vocabulary_from": None}
                                  if tfidf else {})}


def reusable_peer(record_file: Path, files: Sequence[Path], identity: Mapping[str, Any]) -> dict[str, Any] | None:
    """The peer's record in OUTPUT when it ran the same command (``identity``, :func:`peer_identity`) and left every
    file of ``files``; None otherwise.
    """
    if not record_file.is_file() or not all(path.is_file() for path in files):
        return None
    record = read_json(record_file)
    return record if all(record.get(key) == value for key, value in identity.items()) else None


def measured(command: list[str], log: Path, driver_script: str) -> Measured:
    """Run ``command`` under the /proc sampler (:func:`benchmarks.harness.measured`); HarnessError when it fails."""
    return run_command(command, log, driver_script, harness="libmultilabel")


def costs(result: Measured) -> dict[str, Any]:
    """Wall, CPU-seconds and peak RSS (MB, the whole tree and by role) of a measured command."""
    return {"wall_seconds": round(result.seconds, 3), "cpu_seconds": round(result.cpu_seconds, 3),
            "peak_rss_mb": rounded(result.peak_rss_mb())}


def venv_versions(venv: Path) -> dict[str, str]:
    """The versions of the packages that matter in ``venv`` (its own interpreter, isolated)."""
    packages = ("libmultilabel", "liblinear-multicore", "scipy", "numpy", "scikit-learn")
    code = ("import importlib.metadata as m, json, platform; print(json.dumps({'python': platform.python_version(), "
            f"**{{n: m.version(n) for n in {packages!r}}}}}))")
    done = subprocess.run([str(venv / "bin" / "python"), "-I", "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    if done.returncode != 0:
        raise HarnessError(f"{venv} cannot report its libmultilabel version: {done.stderr.strip()[-300:]}")
    return json.loads(done.stdout)


def ensure_venv(venv: Path, log: Path) -> dict[str, Any]:
    """LibMultiLabel's environment: made with :data:`REQUIREMENTS` when ``venv`` has no Python, else checked."""
    began = time.monotonic()
    created = not (venv / "bin" / "python").exists()
    if created:
        log.parent.mkdir(parents=True, exist_ok=True)
        commands = [[sys.executable, "-m", "venv", str(venv)],
                    [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
                     *REQUIREMENTS]]
        with open(log, "w") as out:
            for command in commands:
                print(f"libmultilabel: $ {shlex.join(command)}", flush=True)
                if subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, timeout=INSTALL_SECONDS,
                                  check=False).returncode != 0:
                    raise HarnessError(f"could not make LibMultiLabel's environment: {shlex.join(command)} failed "
                                       f"(its output: {log}); remove {venv} before trying again")
    versions = venv_versions(venv)
    wanted = {"libmultilabel": LIBMULTILABEL_VERSION, "scipy": SCIPY_VERSION}
    wrong = {name: versions.get(name) for name, version in wanted.items() if versions.get(name) != version}
    if wrong:
        raise HarnessError(f"{venv} holds {wrong}, not {wanted}; give another --venv (it is made when missing)")
    return {"path": str(venv), "created": created, "seconds": round(time.monotonic() - began, 1),
            "requirements": list(REQUIREMENTS), "versions": versions}


# --- the corpus --------------------------------------------------------------------------------

def prepare_corpus(output: Path, documents: int) -> tuple[Path, dict[str, Any]]:
    """The LIBSVM files of a synthetic corpus of ``documents`` (see the module docstring, step 2), and a record
    of each step that ran (command and costs) or was reused.
    """
    corpus, run, exported = (output / f"{name}-{documents}" for name in ("corpus", "weighted", "libsvm"))
    steps: dict[str, Any] = {}
    if corpus_is_complete(corpus, documents):
        steps["synthesize"] = {"reused": str(corpus)}
    else:
        shutil.rmtree(corpus, ignore_errors=True)  # inside OUTPUT, which is this script's
        command = ["./spark-submit.sh", "jobs/synthesize.py", "--config", "conf/synthetic.toml",
                   "--set", f"synthesize.documents={documents}",
                   "--set", f"synthesize.train_documents={train_documents(documents)}",
                   "--set", f"synthesize.vocabulary_size={RCV1_VOCABULARY}", "--output", relative(corpus)]
        result = measured(command, output / "logs" / "synthesize.log", "jobs/synthesize.py")
        steps["synthesize"] = {"command": shlex.join(command), **costs(result)}
    command = ["./spark-submit.sh", "jobs/pipeline.py", "--config", "conf/rcv1.toml",
               "--set", f"corpus.path={relative(corpus)}", "--output", relative(run)]
    result = measured(command, output / "logs" / "weighted.log", "jobs/pipeline.py")
    metrics = read_json(run / "metrics.json")
    steps["pipeline"] = {"command": shlex.join(command), **costs(result),
                         "metrics": {key: metrics.get(key) for key in ("micro_f1", "macro_f1", "zero_division")}}
    if (exported / "export.json").is_file():
        steps["export"] = {"reused": str(exported)}
    else:
        shutil.rmtree(exported, ignore_errors=True)  # inside OUTPUT: an export of this script that did not finish
        command = ["./spark-submit.sh", "jobs/export_libsvm.py", relative(run), "--output", relative(exported)]
        result = measured(command, output / "logs" / "export.log", "jobs/export_libsvm.py")
        steps["export"] = {"command": shlex.join(command), **costs(result)}
    summary = read_json(exported / "export.json")
    steps["export"]["files"] = summary["files"]
    return exported, steps


def prepare_synthetic_text(output: Path, documents: int) -> tuple[Path, dict[str, Any]]:
    """:mod:`benchmarks.text_corpus`'s corpus of ``documents`` as LibMultiLabel text files in OUTPUT/text-N
    (:func:`benchmarks.libmultilabel_corpus.write_synthetic`; reused when complete), and what it holds.
    """
    directory, shape = output / f"text-{documents}", TextShape(documents=documents)
    if harness_libmultilabel_corpus.synthetic_is_complete(shape, directory):
        return directory, {**read_json(directory / "corpus.json"), "directory": str(directory), "reused": True}
    return directory, {**harness_libmultilabel_corpus.write_synthetic(shape, directory), "directory": str(directory)}


def prepare_text_corpus(output: Path, reuters: Path, category_set: str) -> tuple[Path, dict[str, Any]]:
    """Reuters-21578 in ``reuters`` written as LibMultiLabel text files into OUTPUT/reuters21578-SET
    (:mod:`benchmarks.libmultilabel_corpus`; deterministic, so rewritten every time), and what was written.
    """
    directory = output / f"reuters21578-{category_set}"
    began = time.monotonic()
    try:
        documents = harness_libmultilabel_corpus.modapte_documents(reuters)
        record = harness_libmultilabel_corpus.write_corpus(documents, directory, category_set)
    except ValueError as error:
        raise HarnessError(str(error)) from error
    return directory, {"reuters": str(reuters), "directory": str(directory),
                       "seconds": round(time.monotonic() - began, 1), **record}


# --- figures and decisions ---------------------------------------------------------------------

def sparktc_figures(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The table's figures from a run's metrics.json."""
    ranking = metrics.get("ranking", {})
    return {"micro_f1": metrics["micro_f1"], "macro_f1": metrics["macro_f1"],
            **{k: ranking.get(k) for k in RANKS}, "labels": metrics.get("n_categories"),
            "zero_division": metrics.get("zero_division"), "cv_micro_f1": metrics.get("cv_micro_f1")}


def peer_figures(record: Mapping[str, Any]) -> dict[str, Any]:
    """The table's figures from the peer's JSON (LibMultiLabel's metric names)."""
    metrics = record["metrics"]
    return {"micro_f1": metrics["Micro-F1"], "macro_f1": metrics["Macro-F1"], **{k: metrics.get(k) for k in RANKS},
            "labels": record["labels"], "zero_division": 0.0, "cv_micro_f1": None}


def decision_codes(rows: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each (test document row, integer label) decision as one sorted, distinct int64 code."""
    return np.unique(rows.astype(np.int64) * (1 << 32) + labels.astype(np.int64))


def sparktc_decisions(predictions: Path) -> tuple[np.ndarray, np.ndarray]:
    """The (row, label) of every category sparktc assigned to a test document: the row is the document's line in
    test.svm less one (sparktc's doc ids are ``test.svm:LINE``), the label the category read as an integer.
    """
    table = ds.dataset(predictions, format="parquet").to_table(columns=["doc_id", "predicted"])
    line = pc.list_element(pc.split_pattern(table["doc_id"], ":", max_splits=1, reverse=True), 1)
    lines = pc.cast(line, "int64").to_numpy() - 1
    counts = pc.list_value_length(table["predicted"]).fill_null(0).to_numpy()
    labels = pc.cast(pc.list_flatten(table["predicted"]), "int64").to_numpy()
    return np.repeat(lines, counts), labels


def compare_decisions(sparktc: tuple[np.ndarray, np.ndarray], peer: tuple[np.ndarray, np.ndarray]
                      ) -> dict[str, int]:
    """How the two tools' positive decisions differ: (document, label) pairs assigned by one only, and the
    documents and labels those pairs touch.
    """
    ours, theirs = decision_codes(*sparktc), decision_codes(*peer)
    only_ours, only_theirs = np.setdiff1d(ours, theirs), np.setdiff1d(theirs, ours)
    differing = np.concatenate([only_ours, only_theirs])
    return {"sparktc_positive": int(len(ours)), "libmultilabel_positive": int(len(theirs)),
            "only_sparktc": int(len(only_ours)), "only_libmultilabel": int(len(only_theirs)),
            "differing": int(len(differing)), "documents": int(len(np.unique(differing >> 32))),
            "labels": int(len(np.unique(differing & 0xFFFFFFFF)))}


def sparktc_assignments(predictions: Path) -> tuple[np.ndarray, np.ndarray]:
    """The (doc id, category) of every category sparktc assigned to a test document, as two string arrays."""
    table = ds.dataset(predictions, format="parquet").to_table(columns=["doc_id", "predicted"])
    counts = pc.list_value_length(table["predicted"]).fill_null(0).to_numpy()
    doc_ids = table["doc_id"].to_numpy().astype(str)
    return np.repeat(doc_ids, counts), pc.list_flatten(table["predicted"]).to_numpy().astype(str)


def rows_of(doc_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The row of each of sparktc's ``doc_ids`` among LibMultiLabel's test ``ids`` (by row); HarnessError when an id
    repeats there (a document could not be told from another) or one of ``doc_ids`` is not there.
    """
    order = np.argsort(ids, kind="stable")
    ordered = ids[order]
    repeated = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    if len(repeated):
        raise HarnessError(f"the test file holds {len(repeated)} id(s) more than once ({', '.join(repeated[:5])}): "
                           "the decisions cannot be matched by id; give every document its own id")
    at = np.minimum(np.searchsorted(ordered, doc_ids), max(len(ordered) - 1, 0))
    missing = np.unique(doc_ids[ordered[at] != doc_ids]) if len(ordered) else np.unique(doc_ids)
    if len(missing):
        raise HarnessError(f"sparktc assigned categories to {len(missing)} document(s) LibMultiLabel did not read as "
                           f"test documents ({', '.join(missing[:5])}): the two tools read the test file's ids "
                           "differently (pandas reads an id 007 as 7, NA or null as empty)")
    return order[at]


def compare_named_decisions(sparktc: tuple[np.ndarray, np.ndarray], peer: tuple[np.ndarray, np.ndarray],
                            ids: np.ndarray) -> dict[str, int]:
    """:func:`compare_decisions` of sparktc's (doc id, category) assignments and LibMultiLabel's (test row, label)
    decisions, the documents matched by LibMultiLabel's test ``ids`` and the labels by name.
    """
    labels = np.unique(np.concatenate([sparktc[1], peer[1]]))
    return compare_decisions((rows_of(sparktc[0], ids), np.searchsorted(labels, sparktc[1])),
                             (peer[0], np.searchsorted(labels, peer[1])))


def line_count(path: Path) -> int:
    """The lines of a plain, ``.gz`` or ``.bz2`` file (a last line without a newline counts)."""
    opener = {"gzip": gzip.open, "bz2": bz2.open}.get(compression_of(path.name) or "", open)
    lines, last = 0, b"\n"
    with opener(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            lines, last = lines + chunk.count(b"\n"), chunk[-1:]
    return lines + (last != b"\n")


def row_refusal(files: tuple[Path, Path], record: Mapping[str, Any]) -> str | None:
    """Why LibMultiLabel's rows of a 2-column text file are not sparktc's lines (None when they are): the peer names
    row k ``FILE:{k+1}``, sparktc's doc id of line k + 1, which holds only when pandas skipped no line (blank, or
    with more fields than the first) and split none (a carriage return), i.e. when it read as many rows as there are
    lines.
    """
    rows = (record["train_documents"], record["test_documents"])
    for path, columns, read in zip(files, record.get("columns", ()), rows, strict=False):
        if columns == 2 and line_count(path) != read:
            return (f"{path} has 2 columns and {line_count(path):,} lines, of which LibMultiLabel read {read:,} rows: "
                    "with blank or skipped lines its rows are not sparktc's lines, so the documents cannot be "
                    "matched; give the file an id column (3 columns) or remove the blank lines")
    return None


def read_terms(path: Path) -> list[str]:
    """The terms of a vocabulary file, one a line (the peer's ``--vocabulary``)."""
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def sparktc_vocabulary(run_dir: Path) -> list[str]:
    """The terms of a sparktc run's vocabulary."""
    return ds.dataset(run_dir / "vocabulary", format="parquet").to_table(columns=["term"])["term"].to_pylist()


def compare_vocabularies(sparktc: Sequence[str], libmultilabel: Sequence[str], examples: int = 8) -> dict[str, Any]:
    """The sizes of the two vocabularies, how many terms only one has, and the first ``examples`` of those (sorted)."""
    ours, theirs = set(sparktc), set(libmultilabel)
    only_ours, only_theirs = sorted(ours - theirs), sorted(theirs - ours)
    return {"sparktc": len(ours), "libmultilabel": len(theirs), "common": len(ours & theirs),
            "only_sparktc": len(only_ours), "only_libmultilabel": len(only_theirs),
            "only_sparktc_examples": only_ours[:examples], "only_libmultilabel_examples": only_theirs[:examples]}


def agree(a: float | None, b: float | None, digits: int = 4) -> bool | None:
    """Whether two figures are equal when rounded to ``digits`` decimals (None when one is missing)."""
    return None if a is None or b is None else round(a, digits) == round(b, digits)


# --- one run -----------------------------------------------------------------------------------

def run_method(output: Path, files: tuple[Path, Path], venv: Path, method: Method, fmt: FileFormat = FORMATS["svm"],
               tfidf: Tfidf | None = None) -> dict[str, Any]:
    """Run LibMultiLabel's method (or reuse its record, :func:`reusable_peer`), then sparktc's counterpart over its
    folds, on the (train, test) ``files`` of format ``fmt`` (text: with the tf-idf setting ``tfidf``); their
    figures, costs, decisions and (text) vocabularies.
    """
    key = f"{tfidf.name}-{method.name}" if tfidf else method.name
    record_file, decisions_file = (output / f"libmultilabel-{key}.{kind}" for kind in ("json", "npz"))
    folds = output / f"folds-{key}.tsv" if method.takes_folds else None
    vocabulary = output / f"libmultilabel-{key}.vocabulary.txt" if tfidf else None
    command = peer_command(venv, files, record_file, decisions_file, method, folds, tfidf, vocabulary)
    record = reusable_peer(record_file, [decisions_file, *(path for path in (folds, vocabulary) if path)],
                           peer_identity(files, method, tfidf))
    if record is None:
        theirs = costs(measured(command, output / "logs" / f"libmultilabel-{key}.log", Path(PEER).name))
        record = read_json(record_file)
    else:  # its own wall time and peak RSS; the CPU-seconds of its process tree were not sampled
        theirs = {"wall_seconds": record["seconds"], "cpu_seconds": None,
                  "peak_rss_mb": {"total": record["max_rss_mb"]}, "reused": str(record_file)}
    peer = {"command": shlex.join(command), **theirs, "figures": peer_figures(record),
            "steps_seconds": record["steps_seconds"], "versions": record["versions"],
            "documents": {"train": record["train_documents"], "test": record["test_documents"]}}
    refusal = row_refusal(files, record)
    if refusal:
        raise HarnessError(refusal)
    run_dir = output / f"sparktc-{key}"
    shutil.rmtree(run_dir, ignore_errors=True)  # inside OUTPUT, which is this script's
    command = sparktc_command(files[0].parent, run_dir, method, folds, fmt, tfidf)
    ours = measured(command, output / "logs" / f"sparktc-{key}.log", "jobs/pipeline.py")
    metrics = read_json(run_dir / "metrics.json")
    sparktc = {"command": shlex.join(command), "run_dir": str(run_dir), **costs(ours),
               "figures": sparktc_figures(metrics), "documents": {"test": metrics.get("test_documents")}}
    with np.load(decisions_file) as saved:
        if tfidf is None:
            decisions = compare_decisions(sparktc_decisions(run_dir / "predictions"), (saved["rows"], saved["labels"]))
        else:
            decisions = compare_named_decisions(sparktc_assignments(run_dir / "predictions"),
                                                (saved["rows"], saved["labels"]), saved["ids"])
    result = {"run": key, "method": method.name, "libmultilabel": method.libmultilabel,
              "sparktc_counterpart": method.sparktc, "overrides": [*(tfidf.overrides if tfidf else ()),
                                                                   *method.overrides],
              "same_algorithm": method.same_algorithm, "differences": method.differences, "sparktc": sparktc,
              "peer": peer, "decisions": decisions,
              "f1_agree_4_decimals": {key: agree(sparktc["figures"][key], peer["figures"][key])
                                      for key in ("micro_f1", "macro_f1")}}
    if tfidf is not None:
        result["tfidf"] = tfidf.name
        result["vocabulary"] = compare_vocabularies(sparktc_vocabulary(run_dir), read_terms(vocabulary))
    if record.get("visiting_order"):
        visited = read_json(run_dir / "manifests" / "train.json")["details"].get("visiting_order")
        # sparktc visits its categories without a training document last: no class of LibMultiLabel's
        result["same_visiting_order"] = visited[:len(record["visiting_order"])] == record["visiting_order"]
    return result


def headline(result: Mapping[str, Any]) -> dict[str, Any]:
    """The figures of the benchmark's record, per run (``1vsrest``, ``tfidf-thresholding``, ...): each side's wall
    and CPU-seconds (none for a reused peer record, whose CPU was not sampled), peak memory and micro/macro-F1, and
    the positive decisions on which they differ.
    """
    def side(costs: Mapping[str, Any]) -> dict[str, Any]:
        return {"seconds": costs["wall_seconds"], "cpu_seconds": costs["cpu_seconds"],
                "peak_memory_bytes": harness_recording.memory_bytes(costs["peak_rss_mb"]["total"]),
                **{key: costs["figures"][key] for key in ("micro_f1", "macro_f1")}}

    return {run["run"]: {"sparktc": side(run["sparktc"]), "libmultilabel": side(run["peer"]),
                         "decisions": {"differing": (run.get("decisions") or {}).get("differing")}}
            for run in result.get("methods", [])}


# --- the report --------------------------------------------------------------------------------

def both(record: Mapping[str, Any], key: str, form: Any = harness_tables.f1) -> str:
    """An "LibMultiLabel / sparktc" cell of one figure."""
    return f"{form(record['peer']['figures'].get(key))} / {form(record['sparktc']['figures'].get(key))}"


def costs_cell(record: Mapping[str, Any], key: str, form: Any = harness_tables.seconds) -> str:
    """A "LibMultiLabel / sparktc" cell of one cost (``key``: wall or CPU seconds, or the total peak RSS)."""
    value = (lambda side: record[side]["peak_rss_mb"]["total"]) if key == "peak_rss_mb" else \
        (lambda side: record[side][key])
    return f"{form(value('peer'))} / {form(value('sparktc'))}"


def decisions_cell(record: Mapping[str, Any]) -> str:
    """The cell that counts the positive decisions on which the two sides differ, and whose they are."""
    d = record.get("decisions")
    if not d:
        return harness_tables.DASH
    if not d["differing"]:
        return f"0 (equal; {d['sparktc_positive']:,} positive)"
    return (f"{d['differing']:,} of {max(d['sparktc_positive'], d['libmultilabel_positive']):,} positive "
            f"({d['only_libmultilabel']:,} LibMultiLabel only, {d['only_sparktc']:,} sparktc only; "
            f"{d['documents']:,} documents, {d['labels']:,} labels)")


def agreement_cell(record: Mapping[str, Any]) -> str:
    """The "micro / macro-F1 equal to 4 decimals" cell: yes, no or a dash for each."""
    marks = record.get("f1_agree_4_decimals", {})
    return " / ".join({True: "yes", False: "no", None: harness_tables.DASH}[marks.get(key)]
                      for key in ("micro_f1", "macro_f1"))


def vocabulary_cells(record: Mapping[str, Any]) -> list[str]:
    """A text run's vocabulary cells: their sizes, and how many terms only one has (LibMultiLabel / sparktc)."""
    v = record["vocabulary"]
    return [f"{v['libmultilabel']:,} / {v['sparktc']:,}", f"{v['only_libmultilabel']:,} / {v['only_sparktc']:,}"]


def comparison_table(methods: Sequence[Mapping[str, Any]], config: str = FORMATS["svm"].config) -> str:
    """The markdown table of every run: LibMultiLabel's figures and costs beside sparktc's, and how far their
    decisions (and in text runs, their vocabularies) agree.
    """
    text = any("tfidf" in r for r in methods)
    header = [f"{'tf-idf / ' if text else ''}method (LibMultiLabel / sparktc)", "same algorithm", "micro-F1",
              "macro-F1", *RANKS, "labels averaged", "wall (s)", "CPU (s)", "peak RSS (MB)", "decisions differing",
              "micro / macro-F1 equal to 4 decimals",
              *(["vocabulary (LibMultiLabel / sparktc)", "terms only in LibMultiLabel / only in sparktc"] if text
                else [])]
    rows = [[f"{r['tfidf'] + ' / ' if text else ''}{r['method']} / {', '.join(r['overrides']) or config}",
             "yes" if r["same_algorithm"] else "no", both(r, "micro_f1"), both(r, "macro_f1"),
             *(both(r, k) for k in RANKS), both(r, "labels", harness_tables.count), costs_cell(r, "wall_seconds"),
             costs_cell(r, "cpu_seconds"), costs_cell(r, "peak_rss_mb", harness_tables.megabytes), decisions_cell(r),
             agreement_cell(r), *(vocabulary_cells(r) if text else [])] for r in methods]
    return markdown_table(header, rows)


def visiting(record: Mapping[str, Any]) -> str:
    """Whether sparktc visited the labels in LibMultiLabel's order (micromacro), as a sentence ("" otherwise)."""
    same = record.get("same_visiting_order")
    return "" if same is None else f" The labels visited in LibMultiLabel's order: {'yes' if same else 'no'}."


def corpus_lines(result: Mapping[str, Any]) -> list[str]:
    """The corpus section's lines: each step that made the LIBSVM files, or what the Reuters-21578 text files hold."""
    lines = []
    written = result.get("corpus")
    if written and "shape" in written:
        train, test = (written["files"][name] for name in harness_libmultilabel_corpus.FILES.values())
        lines.append(f"- benchmarks/text_corpus.py's synthetic text ({written['shape']}), written by "
                     f"benchmarks/libmultilabel_corpus.py into `{written['directory']}`"
                     f"{' (reused)' if written.get('reused') else ''} in "
                     f"{harness_tables.seconds(written['seconds'])} s: "
                     f"train.txt {train['documents']:,} documents, test.txt {test['documents']:,}; "
                     f"{written['categories']} categories; tabs and newlines replaced by spaces")
    elif written:
        train, test = (written["files"][name] for name in harness_libmultilabel_corpus.FILES.values())
        lines.append(f"- Reuters-21578 (`{written['reuters']}`) read by sparktc's reader "
                     f"(sparktc.corpora.reuters21578), ModApte, written by benchmarks/libmultilabel_corpus.py into "
                     f"`{written['directory']}` in "
                     f"{harness_tables.seconds(written['seconds'])} s: train.txt {train['documents']:,} documents "
                     f"({train['without_label']:,} without a label of {written['category_set']}, kept), test.txt "
                     f"{test['documents']:,} ({test['without_label']:,} without); {written['categories']} labels; "
                     "id = NEWID, text = TITLE and BODY with tabs, newlines and carriage returns replaced by spaces")
    for step, record in (result.get("prepare") or {}).items():
        if "reused" in record:
            lines.append(f"- {step}: reused `{record['reused']}`")
        else:
            lines.append(f"- {step}: `{record['command']}`: {harness_tables.seconds(record['wall_seconds'])} s wall, "
                         f"{harness_tables.seconds(record['cpu_seconds'])} CPU-seconds")
    pipeline = (result.get("prepare") or {}).get("pipeline", {}).get("metrics")
    if pipeline:
        lines.append(f"- sparktc on the synthetic corpus itself (conf/rcv1.toml, F1 = "
                     f"{pipeline['zero_division']:g} at 0/0): micro-F1 {harness_tables.f1(pipeline['micro_f1'])}, "
                     f"macro-F1 {harness_tables.f1(pipeline['macro_f1'])}")
    return lines


def vocabulary_lines(methods: Sequence[Mapping[str, Any]]) -> list[str]:
    """A line per distinct difference of the text runs' vocabularies (the runs named): the first terms only one tool
    has.
    """
    runs: dict[tuple[Any, ...], list[str]] = {}
    for r in methods:
        v = r.get("vocabulary")
        if v and (v["only_libmultilabel"] or v["only_sparktc"]):
            key = (v["only_libmultilabel"], tuple(v["only_libmultilabel_examples"]), v["only_sparktc"],
                   tuple(v["only_sparktc_examples"]))
            runs.setdefault(key, []).append(r["run"])
    return [f"- {', '.join(names)}: only in LibMultiLabel {theirs:,} ({', '.join(map(repr, their_examples))}, ...), "
            f"only in sparktc {ours:,} ({', '.join(map(repr, our_examples))}, ...)"
            for (theirs, their_examples, ours, our_examples), names in runs.items()]


def documents_lines(methods: Sequence[Mapping[str, Any]]) -> list[str]:
    """How many documents each tool read, a line per distinct count (the runs named)."""
    runs: dict[tuple[Any, ...], list[str]] = {}
    for r in methods:
        counts = (r["peer"].get("documents", {}).get("train"), r["peer"].get("documents", {}).get("test"),
                  r["sparktc"].get("documents", {}).get("test"))
        runs.setdefault(counts, []).append(r.get("run", r["method"]))
    return [f"- {', '.join(names)}: LibMultiLabel read {harness_tables.count(train)} training and "
            f"{harness_tables.count(test)} test "
            f"documents, sparktc evaluated {harness_tables.count(ours)} test documents"
            for (train, test, ours), names in runs.items()]


def render(result: Mapping[str, Any]) -> str:
    """The whole libmultilabel.md."""
    methods = result.get("methods", [])
    settings = result["settings"]
    fmt = FORMATS[settings.get("format", "svm")]
    venv = result.get("venv") or {}
    versions = venv.get("versions", {})
    parts = [
        f"# LibMultiLabel beside sparktc on the same {fmt.what}",
        (f"Corpus: `{settings['corpus']}` ({settings.get('documents_note', '')}). Every cell is "
         f"LibMultiLabel / sparktc. LibMultiLabel {versions.get('libmultilabel', '?')} (liblinear-multicore "
         f"{versions.get('liblinear-multicore', '?')}, scipy {versions.get('scipy', '?')}, numpy "
         f"{versions.get('numpy', '?')}, scikit-learn {versions.get('scikit-learn', '?')}) in its own environment "
         f"`{venv.get('path', '?')}`, options `{OPTIONS}`, numpy seed {PEER_SEED}; sparktc: `./spark-submit.sh "
         f"jobs/pipeline.py --config {fmt.config}` with the settings named. F1 averages over the labels with at least "
         "one training document, F1 = 0 at 0/0 (LibMultiLabel's convention, the configuration's "
         "evaluate.zero_division = 0); P@K over every test document. Wall and CPU-seconds: the whole command "
         "(sparktc: JVM start, reading, tokenizing and weighting, training, evaluation, writing its tables; "
         "LibMultiLabel: interpreter start, reading, for text its tf-idf, training, prediction, metrics), CPU and "
         f"peak RSS of the whole process tree sampled from /proc every {SAMPLE_SECONDS} s. One run each on a 2-core "
         "machine shared with other work (see the load averages): the times are noisy."),
        comparison_table(methods, fmt.config),
    ]
    chosen = [TFIDF[name] for name in settings.get("tfidf") or ()]
    if chosen:
        parts += ["## The tf-idf settings", "\n".join(
            f"- **{t.name}**: LibMultiLabel {t.libmultilabel}. sparktc: "
            f"`{' '.join('--set ' + o for o in t.overrides)}`: {t.sparktc}. What differs: {t.differences}."
            for t in chosen)]
        differing = vocabulary_lines(methods)
        if differing:
            parts += ["## Terms only one vocabulary has", "\n".join(differing)]
    described = {r["method"]: r for r in methods}.values()
    if methods:
        parts += ["## Documents read", "\n".join(documents_lines(methods)), "## What each method is",
                  "\n".join(f"- **{r['method']}**: LibMultiLabel {r['libmultilabel']}. sparktc: "
                            f"{r['sparktc_counterpart']}. {r['differences'][0].upper()}{r['differences'][1:]}."
                            + visiting(r) for r in described)]
    lines = corpus_lines(result)
    if lines:
        parts += ["## The corpus", "\n".join(lines)]
    parts += ["## Machine", harness_tables.machine_section(result)]
    return harness_tables.document(parts, result)


# --- main --------------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    """Run every chosen method (and tf-idf setting) on both sides and write libmultilabel.json and libmultilabel.md
    (module docstring); the exit code.
    """
    arguments = parse_arguments(argv)
    output: Path = arguments.output
    fmt: FileFormat = arguments.format
    documents = arguments.documents
    if fmt.name == "text" and documents:
        corpus = output / f"text-{documents}"
        note = (f"{documents:,} synthetic documents of benchmarks/text_corpus.py, "
                f"{TextShape(documents=documents).train_documents:,} for training, written by "
                "benchmarks/libmultilabel_corpus.py")
        extra = {"tfidf": arguments.tfidf}
    elif fmt.name == "text":
        corpus = arguments.corpus or output / f"reuters21578-{arguments.category_set}"
        note = ("given" if arguments.corpus else f"Reuters-21578 ModApte, the labels of "
                f"{REUTERS.chosen_sets.title(arguments.category_set)}, written by benchmarks/libmultilabel_corpus.py")
        extra = {"tfidf": arguments.tfidf, "category_set": arguments.category_set,
                 "reuters": None if arguments.reuters is None else str(arguments.reuters)}
    else:
        corpus = arguments.corpus or output / f"libsvm-{documents}"
        note = (f"{documents:,} synthetic documents, {train_documents(documents):,} for training, exported by "
                "jobs/export_libsvm.py" if documents else "given")
        extra = {}
    settings = {"format": fmt.name, "config": fmt.config, "corpus": str(corpus), "documents": documents,
                "documents_note": note, **extra, "methods": arguments.methods, "options": OPTIONS,
                "peer_seed": PEER_SEED, "masters": ["local[*,4] (spark-submit.sh's default: all cores)"],
                "sample_seconds": SAMPLE_SECONDS}

    def body(result: dict[str, Any], write: Callable[[], str]) -> int:
        result["venv"] = ensure_venv(arguments.venv, output / "logs" / "venv.log")
        corpus = arguments.corpus
        if corpus is None and fmt.name == "text" and documents:
            corpus, result["corpus"] = prepare_synthetic_text(output, documents)
        elif corpus is None and fmt.name == "text":
            corpus, result["corpus"] = prepare_text_corpus(output, arguments.reuters, arguments.category_set)
        elif corpus is None:
            corpus, result["prepare"] = prepare_corpus(output, documents)
        files = corpus_files(corpus, fmt)
        for tfidf in [TFIDF[name] for name in arguments.tfidf] if fmt.name == "text" else [None]:
            for name in arguments.methods:
                result["methods"].append(run_method(output, files, arguments.venv, METHODS[name], fmt, tfidf))
                write()  # partial results survive a later failure
        return 0

    return run_harness("libmultilabel", output, argv, settings, body, render, "libmultilabel", marker=(MARKER, WRITER),
                       headline=headline, methods=[])


if __name__ == "__main__":
    sys.exit(main())
