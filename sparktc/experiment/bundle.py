"""The model bundle: everything needed to classify new documents, written by the train stage as ``OUTPUT/model``.

Layout (small files read through Hadoop file systems, tables in Parquet)::

    model/bundle.json    format number, sparktc version, the settings that shaped the model, the
                         tokenization (analyzer, stop words themselves, stemmer, whether the corpus came
                         tokenized), the weighting (scheme, N), the decision rule (method,
                         thresholding, RCut's k, kNN's k), the data files of the parts below
                         with their sizes and SHA-256 (the stage manifests' digest of a file), and
                         ``digest``: the SHA-256 of all the rest of bundle.json (canonical JSON). Loading
                         checks them all, every byte of every part once: a part file missing, cut
                         short, added or changed at the same size, or a bundle.json changed, is
                         refused, never read as a smaller or another model
    model/vocabulary/    term_id, term, df, idf (the weighting scheme's global factor of each term), rank (by the
                         [rank] score: the term selection), in term_id order
    model/categories/    category, name, parent, train_positives, method, weights (over the
                         vocabulary, zero outside the category's selected terms), bias, threshold, features
    model/training/      kNN only: the training vectors (doc_id, labels, indices, values) kNN scores against
    model/network/       NNet only: network.npz, the network's weights (:mod:`sparktc.models.nnet`), written
                         there by the train stage; loading reads it and checks its shapes against the
                         vocabulary and categories, so a damaged file is refused before Spark scores

Compatibility: a bundle is read only by a sparktc whose :data:`BUNDLE_FORMAT` equals the bundle's
``bundle_format``; the number changes whenever the layout or the meaning of a part changes
(tokenization, weighting, scoring), whatever the sparktc version that wrote it.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from sparktc import __version__
from sparktc.corpora.registry import FORMATS
from sparktc.errors import InputError
from sparktc.evaluation.notebook import Evaluation, rule_html
from sparktc.experiment.config import Config, load_section
from sparktc.features.text import TermFeatures, stop_words_of
from sparktc.filesystem import per_worker, read_file
from sparktc.models import method as scoring
from sparktc.models.decision import DecisionRule, decision_record
from sparktc.models.nnet import NETWORK_FILE, read_network
from sparktc.models.registry import describe
from sparktc.models.scoring import Scorer
from sparktc.runtime import storage
from sparktc.runtime.manifest import json_sha256
from sparktc.runtime.parts import read_small, write_parts
from sparktc.runtime.runner import Tables, file_sha256

#: The train stage's output holding the bundle.
MODEL = "model"
#: 2: bundle.json records the parts' data files and sizes; 3: NB and NNet (their settings, network/); 4: weighting
#: schemes (vocabulary's idf is the scheme's factor), the rank by any [rank] score; 5: each part file's SHA-256
#: beside its size, and bundle.json's own digest.
BUNDLE_FORMAT = 5
DESCRIPTION = "bundle.json"
#: bundle.json's key for the SHA-256 of its other keys and values (:func:`_description_digest`).
DIGEST = "digest"
SHA256 = re.compile("[0-9a-f]{64}")
VOCABULARY, CATEGORIES, TRAINING, NETWORK = "vocabulary", "categories", "training", "network"
#: The part beyond the categories' weights a kind of score reads (:class:`sparktc.models.method.Scoring`): kNN
#: scores against the training vectors, a network is its saved layers.
SCORING_PART = {scoring.NEIGHBOURS: TRAINING, scoring.NETWORK: NETWORK}
#: The configuration sections that shape a model: all but [synthesize] (recorded by the corpus it wrote),
#: [evaluate] and [spark].
MODEL_SETTINGS = ("corpus", "tokenize", "weight", "rank", "select", "train", "tune")


#: The bundle's two tables, as Spark wrote them before they were written with pyarrow.
BUNDLE_VOCABULARY = pa.schema([("term_id", pa.int32()), ("term", pa.string()), ("df", pa.int64()),
                               ("idf", pa.float64()), pa.field("rank", pa.int32(), nullable=False)])
BUNDLE_CATEGORIES = pa.schema([("category", pa.string()), ("name", pa.string()), ("parent", pa.string()),
                               ("train_positives", pa.int64()), ("method", pa.string()),
                               ("weights", pa.list_(pa.field("element", pa.float64()))), ("bias", pa.float64()),
                               ("threshold", pa.float64()), ("features", pa.int32())])


class BundleError(InputError):
    """A model bundle that cannot be used: missing, incomplete, or of another bundle format."""


def write_bundle(spark: SparkSession, config: Config, tables: Tables, n_train: int, order: np.ndarray,
                 models: pa.Table) -> None:
    """Write ``model`` beside the train stage's ``models`` (``models``: its rows, sorted by category), from it, the
    term ``order`` training used (term ids best first) and the tables training read. Vocabulary and categories
    sized: read and written with pyarrow on the driver, no Spark job.
    """
    target = tables.output(MODEL)
    vocabulary = read_small(tables.input("vocabulary"), ["term_id", "term", "df", "idf"]).sort_by("term_id")
    rank = np.empty(len(order), dtype=np.int32)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(1, len(order) + 1, dtype=np.int32)  # as rank_order
    vocabulary = vocabulary.append_column("rank", pa.array(rank[vocabulary["term_id"].to_numpy()], pa.int32()))
    write_parts(vocabulary.cast(BUNDLE_VOCABULARY).to_batches(), BUNDLE_VOCABULARY, storage.join(target, VOCABULARY), 0)
    categories = read_small(tables.input("categories"), ["category", "name", "parent", "train_positives"]
                            ).sort_by("category")
    position = pc.index_in(categories["category"], value_set=models["category"])
    trained = pc.is_valid(position)
    categories, rows = categories.filter(trained), models.take(position.filter(trained))
    joined = pa.table({**{name: categories[name] for name in categories.column_names},
                       **{name: rows[name] for name in ("method", "weights", "bias", "threshold", "features")}})
    write_parts(joined.cast(BUNDLE_CATEGORIES).to_batches(), BUNDLE_CATEGORIES, storage.join(target, CATEGORIES), 0)
    rule = config.train.decision_rule()
    if SCORING_PART.get(rule.spec.scoring(rule.parameters).kind) == TRAINING:
        training = storage.join(tables.input("vectors"), "split=train")
        storage.link_or_copy(spark, training, storage.join(target, TRAINING))  # kNN scores against it
    settings = config.as_dict()
    # Hashed as the manifests hash them, and remembered: publishing the train stage's outputs reads none of these
    # files again, nor kNN's training vectors, hashed when the weight stage published them.
    parts = {name: {"size": size, "sha256": file_sha256(spark, storage.join(target, name))}
             for name, size, _ in storage.list_files(spark, target) or [] if _is_part_data(name)}
    description = {
        "bundle_format": BUNDLE_FORMAT,
        "sparktc_version": __version__,
        "settings": {section: settings[section] for section in MODEL_SETTINGS},
        "tokenize": {"tokenized_corpus": FORMATS[config.corpus.format].comes_tokenized(config.corpus),
                     "analyzer": config.tokenize.analyzer, "stemmer": config.tokenize.stemmer,
                     "stop_words": sorted(stop_words_of(config.tokenize.stop_list,
                                                        lambda path: storage.read_text(spark, path)))},
        "weight": {"scheme": config.weight.scheme, "train_documents": n_train},
        "parts": parts,
    }
    description[DIGEST] = _description_digest(description)
    storage.write_text(spark, storage.join(target, DESCRIPTION), json.dumps(description, indent=2) + "\n")


@dataclass(frozen=True, repr=False)
class Bundle:
    """A model bundle as the driver holds it: small (vocabulary and category sized, plus kNN's training path). In a
    notebook it shows its decision rule and size, and its training run's evaluation when it was loaded with it
    (``evaluation``: :func:`sparktc.load_model` reads it from the run's output beside the bundle).
    """

    path: str
    stop_words: frozenset[str]
    stemmer: str
    analyzer: str  # the training run's tokenize.analyzer
    features: TermFeatures  # the training run's tokenize.ngrams, title_weight and title_terms
    terms: pa.StringArray  # in term_id order
    scheme: str  # [weight] scheme
    idf: np.ndarray  # the scheme's global factor of each term (sparktc.features.weighting)
    rule: DecisionRule  # the training run's
    n_train: int
    categories: pd.DataFrame  # one row per category, ordered by category
    scorer: Scorer
    settings: dict[str, Any] = field(default_factory=dict)  # bundle.json's: the sections of MODEL_SETTINGS
    evaluation: Evaluation | None = None  # the training run's, when loaded with it

    @property
    def names(self) -> dict[str, str]:
        """Each category's name by its code, from the bundle's categories table."""
        return dict(zip(self.categories["category"], self.categories["name"]))

    def _size(self) -> str:
        return (f"{len(self.categories):,} categories, {len(self.terms):,} terms, {self.n_train:,} training documents, "
                f"{self.scheme} weights")

    def __repr__(self) -> str:
        """One line: where the bundle is, its method and thresholding and its size (never its vocabulary)."""
        return f"Bundle({self.path!r}: {self.rule.method}, {self.rule.thresholding} thresholding, {self._size()})"

    def _repr_html_(self) -> str:
        """The bundle in a notebook: its path and size, its decision rule, and its training run's evaluation."""
        record = decision_record(self.settings.get("train", {}), self.settings.get("tune", {}))
        evaluation = (self.evaluation.html() if self.evaluation is not None
                      else f"<p><b>Decision rule</b></p>{rule_html(record, describe(record['method']))}")
        return (f"<p><b>sparktc model</b> <code>{html.escape(self.path)}</code>: {html.escape(self._size())}</p>"
                f"{evaluation}")


def _is_part_data(name: str) -> bool:
    """Whether a file under the bundle (path relative to it) is data of a part: not bundle.json, not a
    hidden file (``_SUCCESS``, Hadoop's ``.crc`` checksums), which copying tools may leave out.
    """
    return name != DESCRIPTION and not name.rsplit("/", 1)[-1].startswith(("_", "."))


def _description_digest(description: dict[str, Any]) -> str:
    """The digest bundle.json records of itself: the SHA-256 of its other keys and values as canonical JSON, so that
    a change to any of them (a stop word, N, a setting, a part's size or SHA-256) is found, whatever the layout.
    """
    return json_sha256({key: value for key, value in description.items() if key != DIGEST})


def _damaged(path: str, problems: str) -> BundleError:
    return BundleError(f"the model bundle {path} is damaged: {problems}; restore the whole {MODEL} directory from a "
                       "good copy, or train again")


def _read_description(spark: SparkSession, path: str) -> dict[str, Any]:
    """bundle.json, refused unless readable, of this bundle format, and unchanged since it was written."""
    file = _require(spark, path, DESCRIPTION)
    try:
        description = json.loads(storage.read_text(spark, file))
        reason = "" if isinstance(description, dict) else "not a JSON object"
    except InputError:  # storage.read_text's, whose advice (save the file as UTF-8) is not for a damaged bundle
        reason = "not UTF-8"
    except (OSError, Py4JJavaError, ValueError) as error:  # a Hadoop checksum error, a file cut short (JSONDecodeError)
        reason = type(error).__name__
    if reason:
        raise BundleError(f"the model bundle {path} is damaged: {DESCRIPTION} cannot be read ({reason}); copy the "
                          "bundle again, or train again")
    found = description.get("bundle_format")
    if found != BUNDLE_FORMAT:
        raise BundleError(
            f"the model bundle {path} has bundle format {found} "
            f"(written by sparktc {description.get('sparktc_version')}); "
            f"this sparktc {__version__} reads bundle format {BUNDLE_FORMAT} only: train the model again with this "
            "version, or classify with the version that wrote it")
    if description.get(DIGEST) != _description_digest(description):
        raise _damaged(path, f"{DESCRIPTION} records no {DIGEST} of itself" if DIGEST not in description else
                       f"{DESCRIPTION} does not match the {DIGEST} it records of itself (changed since it was written)")
    return description


def _recorded_parts(path: str, description: dict[str, Any]) -> dict[str, tuple[int, str]]:
    """(size, SHA-256) of each part data file, by its path in the bundle, as bundle.json records them."""
    parts = description.get("parts")
    if not isinstance(parts, dict) or not parts:
        raise _damaged(path, f"{DESCRIPTION} records no part files")
    recorded = {name: (entry["size"], entry["sha256"]) for name, entry in parts.items()
                if isinstance(entry, dict) and type(entry.get("size")) is int  # not a bool
                and isinstance(entry.get("sha256"), str) and SHA256.fullmatch(entry["sha256"])}
    if len(recorded) < len(parts):
        raise _damaged(path, f"{DESCRIPTION} records no size and SHA-256 of "
                             f"{', '.join(sorted(parts.keys() - recorded.keys()))}")
    return recorded


def _check_parts(spark: SparkSession, path: str, recorded: dict[str, tuple[int, str]], needed: set[str]) -> None:
    """Refuse a bundle whose parts' data files are not those bundle.json records, byte for byte: the same files,
    sizes and SHA-256, in the parts it records and the ``needed`` ones (other files beside the parts are not the
    model's). Each file is read once, streamed by the JVM into its digest.
    """
    parts = sorted({name.split("/", 1)[0] for name in recorded} | needed)
    for part in parts:
        _require(spark, path, part)
    found = {name: size for name, size, _ in storage.list_files(spark, path) or []
             if _is_part_data(name) and name.split("/", 1)[0] in parts}
    problems = [f"{name} is missing" for name in sorted(recorded.keys() - found.keys())]
    for name in sorted(recorded.keys() & found.keys()):
        size, sha256 = recorded[name]
        if found[name] != size:  # no need to read it
            problems.append(f"{name} has {found[name]:,} bytes, {size:,} when written")
            continue
        try:
            digest = storage.sha256(spark, storage.join(path, name))
        except OSError:  # not readable (permissions, a Hadoop checksum error)
            problems.append(f"{name} cannot be read")
            continue
        if digest != sha256:
            problems.append(f"{name} has other bytes than when written (its SHA-256 is not the one {DESCRIPTION} "
                            "records)")
    problems += [f"{name} was not written with it" for name in sorted(found.keys() - recorded.keys())]
    if problems:
        raise _damaged(path, "; ".join(problems))


def _require(spark: SparkSession, path: str, part: str) -> str:
    found = storage.join(path, part)
    if not storage.exists(spark, found):
        raise BundleError(f"the model bundle {path} is incomplete: {part} is missing; copy the whole {MODEL} "
                          "directory the train stage wrote, or train again")
    return found


def _check_network(path: str, network: str, n_terms: int, n_categories: int) -> None:
    """Refuse a network file that cannot be read or does not fit the bundle's vocabulary and categories, here on the
    driver: the workers that score with it would fail on it task after task, in numpy's words.
    """
    name = f"{NETWORK}/{NETWORK_FILE}"
    try:
        saved = read_network(network)
    except Exception as error:  # a damaged .npz fails in many ways: zip CRC or header, numpy header, missing array
        # Only the kind of failure: numpy's own advice (load pickled data unsafely) is not for a damaged file.
        raise _damaged(path, f"{name} cannot be read ({type(error).__name__})") from None
    hidden = saved.W1.shape[-1] if saved.W1.ndim == 2 else -1
    columns = saved.columns
    fits = (columns.ndim == 1 and np.issubdtype(columns.dtype, np.integer)
            and saved.W1.shape == (len(columns), hidden) and saved.b1.shape == (hidden,)
            and saved.W2.shape == (hidden, n_categories) and saved.b2.shape == (n_categories,)
            and (len(columns) == 0 or (columns.min() >= 0 and columns.max() < n_terms)))
    if not fits:
        raise _damaged(path, f"{name} does not fit its {n_terms:,} terms and {n_categories:,} categories (input terms "
                             f"{len(columns):,}, W1 {saved.W1.shape}, W2 {saved.W2.shape})")


def load_bundle(spark: SparkSession, path: str) -> Bundle:
    """Read and check the bundle at ``path`` (a train stage's ``OUTPUT/model``)."""
    if not storage.exists(spark, path):
        raise BundleError(f"no model bundle at {path}; give the {MODEL} directory a training run wrote "
                          "(jobs/pipeline.py or jobs/train.py --output OUTPUT writes OUTPUT/model)")
    description = _read_description(spark, path)
    rule = load_section("train", description["settings"]["train"]).decision_rule()
    part = SCORING_PART.get(rule.spec.scoring(rule.parameters).kind)
    _check_parts(spark, path, _recorded_parts(path, description), {VOCABULARY, CATEGORIES, *([part] if part else [])})
    _require(spark, path, VOCABULARY), _require(spark, path, CATEGORIES)
    vocabulary, categories = _tables(path)
    training = _require(spark, path, TRAINING) if part == TRAINING else ""
    network = _require(spark, path, NETWORK) if part == NETWORK else ""
    if network:
        _check_network(path, network, len(vocabulary), len(categories))
    n_train = description["weight"]["train_documents"]
    tokenize = description["tokenize"]
    settings = load_section("tokenize", description["settings"]["tokenize"])
    return Bundle(
        path=path, stop_words=frozenset(tokenize["stop_words"]), stemmer=tokenize["stemmer"],
        analyzer=settings.analyzer, features=settings.features(),
        terms=pa.array(vocabulary["term"].tolist(), type=pa.string()),
        scheme=description["weight"]["scheme"], idf=vocabulary["idf"].to_numpy(), rule=rule, n_train=n_train,
        categories=categories, scorer=_scorer(categories, vocabulary, rule, training, network),
        settings=description["settings"],
    )


def _tables(path: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The bundle's vocabulary (by term id) and categories (by code), read with pyarrow: no Spark job."""
    return (read_small(storage.join(path, VOCABULARY), list(BUNDLE_VOCABULARY.names)).sort_by("term_id").to_pandas(),
            read_small(storage.join(path, CATEGORIES), list(BUNDLE_CATEGORIES.names)).sort_by("category").to_pandas())


def _scorer(categories: pd.DataFrame, vocabulary: pd.DataFrame, rule: DecisionRule, training: str,
            network: str) -> Scorer:
    return Scorer.of(categories, len(vocabulary), rule, training, network,
                     vocabulary.sort_values("rank")["term_id"].to_numpy())


@per_worker
def _on_worker(path: str, training: str, network: str) -> tuple[pa.StringArray, np.ndarray, Scorer]:
    """The bundle's terms, global factors and scorer, as :func:`load_bundle` makes them, from its files."""
    description = json.loads(read_file(path, DESCRIPTION))
    rule = load_section("train", description["settings"]["train"]).decision_rule()
    vocabulary, categories = _tables(path)
    return (pa.array(vocabulary["term"].tolist(), type=pa.string()), vocabulary["idf"].to_numpy(),
            _scorer(categories, vocabulary, rule, training, network))


@dataclass(frozen=True)
class OnWorker:
    """What a task needs of a bundle the driver loaded and checked (:func:`load_bundle`): read by each Python worker
    from the bundle's own files, once, instead of shipped with every task (Spark Connect has no broadcast
    variables). ``value`` is the scorer, as the evaluate stage's shared scorer is.
    """

    path: str
    training: str
    network: str

    @staticmethod
    def of(bundle: Bundle) -> OnWorker:
        """The worker's view of ``bundle``."""
        return OnWorker(bundle.path, bundle.scorer.train_path, bundle.scorer.network_path)

    @property
    def vocabulary(self) -> tuple[pa.StringArray, np.ndarray]:
        """The terms in term id order and each one's global factor."""
        return _on_worker(self.path, self.training, self.network)[:2]

    @property
    def value(self) -> Scorer:
        """The scorer."""
        return _on_worker(self.path, self.training, self.network)[2]
