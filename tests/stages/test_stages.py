"""The Spark stages end to end in local mode, each checked against an independent computation.

* ingest on the LYRL2004 fixtures (hand-written expected tables); bad input: tests/stages/test_bad_input.py;
* weight against scikit-learn's CountVectorizer plus ltc computed here in numpy (REFERENCE.md 3);
* rank against scipy's chi2_contingency on 2x2 tables counted here in plain Python (REFERENCE.md 4);
* train against scikit-learn's LinearSVC (the same LIBLINEAR solver) on a seeded JSONL corpus;
* evaluate against scikit-learn's multilabel_confusion_matrix and f1_score (REFERENCE.md 6);
* weight gives the same vectors whatever the partitioning of its input.

Each pipeline runs once per module (module-scoped fixtures); the tests only read its tables.
"""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from chispa import assert_df_equality
from conftest import (
    chi2_order,
    ingested_term_ids,
    invented_words,
    lyrl2004_corpus,
    lyrl2004_fixture,
    shared_data,
    term_id_form,
)
from pyspark.sql import functions as F
from scipy import sparse
from scipy.stats import chi2_contingency
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics import f1_score, multilabel_confusion_matrix
from sklearn.svm import LinearSVC

from sparktc.apps.pipeline import run as run_stages
from sparktc.experiment.config import load_config
from sparktc.experiment.tables import term_order
from sparktc.features.text import Analyzer, token_strings
from sparktc.runtime.parts import read_batches, write_parts
from sparktc.runtime.runner import Tables
from sparktc.schemas import RECORD_SCHEMA, TERMS_SCHEMA, TOKENS_SCHEMA
from sparktc.stages.tokenize import tokenize_file
from sparktc.stages.weight import weight

# --- the LYRL2004 fixtures, written out by hand -------------------------------------------------

TOKENS = {
    "2286": "recov recov excit brazil soccer fan result annual profit compan share rise "
            "percent quart earn forecast analyst expect dividend increas board meet",
    "2287": "match goal scor team leagu championship final player coach win season",
    "2288": "export trade balanc surplus govern polic minist elect currenc reserv",
    "2289": "bond yield treasur price fell market dealer rate cut expect",
    "2290": "compan rais capit share issu bank loan fund debt offer underwrit",
    "2291": "oil price crude barrel brent futur energ market trad",
    "26151": "merg acquisit compan bid takeov share offer",
    "26152": "elect vote parliam parti candid poll win",
    "26153": "inflat consum price index rose percent month currenc dollar yen trad",
    "26154": "plan strateg restructur compan job cut",
}
TRAIN_IDS = ["2286", "2287", "2288", "2289", "2290", "2291"]
TEST_IDS = ["26151", "26152", "26153", "26154"]
LABELS = {
    "2286": ["C15", "C151", "C1511", "CCAT", "E12", "E121", "ECAT"],
    "2287": ["GCAT", "GSPO"],
    "2288": ["E51", "E512", "ECAT", "G15", "G154", "GCAT"],
    "2289": ["M13", "M132", "MCAT"],
    "2290": ["C17", "C171", "CCAT"],
    "2291": ["M14", "M143", "MCAT"],
    "26151": ["C18", "C181", "CCAT"],
    "26152": ["GCAT", "GPOL", "GVOTE"],
    "26153": ["E21", "E211", "ECAT", "M12", "MCAT"],
    "26154": ["C11", "CCAT"],
}


def hierarchy_path() -> str:
    return str(shared_data("rcv1", "rcv1.topics.hier.orig"))


def rcv1_topics() -> dict[str, str]:
    """The 103 topics of the real hierarchy file and their descriptions, read here without sparktc."""
    topics = {}
    for line in Path(hierarchy_path()).read_text().splitlines():
        if not line.strip():
            continue
        head, description = line.split("child-description:")
        child = head.split("child:")[1].strip()
        if child != "Root":
            topics[child] = description.strip()
    return topics


def lyrl_config(path: Path | str, *overrides: str):
    return load_config(None, [
        "corpus.format=lyrl2004", f"corpus.path={path}", f"corpus.hierarchy={hierarchy_path()}", *overrides,
    ])


@pytest.fixture(scope="module")
def lyrl(spark, tmp_path_factory):
    """Run ingest -> tokenize -> weight -> rank on the fixtures (only test part 0 exists)."""
    output = str(tmp_path_factory.mktemp("lyrl_out"))
    config = lyrl_config(lyrl2004_corpus(tmp_path_factory.mktemp("lyrl2004")), "corpus.test_parts=[0]")
    reports = {m["stage"]: m for m in run_stages(spark, config, output, "ingest", "tokenize", "weight", "rank")}
    return output, reports


def read(spark, output: str, table: str):
    return spark.read.parquet(f"{output}/{table}")


# --- 1. ingest of the fixtures --------------------------------------------------------------------


def test_hand_written_labels_match_the_qrels_file():
    """Guard on the hand-written LABELS: they are exactly the qrels fixture's lines."""
    from_file: dict[str, list[str]] = {}
    for line in lyrl2004_fixture("rcv1-v2.topics.qrels").read_text().splitlines():
        category, doc_id, flag = line.split()
        assert flag == "1"
        from_file.setdefault(doc_id, []).append(category)
    assert {d: sorted(c) for d, c in from_file.items()} == LABELS


def test_ingest_documents_equal_the_fixture_records(spark, lyrl):
    output, reports = lyrl
    # The corpus comes tokenized: no text, and no token string: each document's training terms' ids and counts.
    schema = "doc_id string, split string, labels array<string>"
    rows = [(d, "train" if d in TRAIN_IDS else "test", LABELS[d]) for d in TOKENS]
    expected = spark.createDataFrame(rows, schema)
    documents = read(spark, output, "documents")
    assert_df_equality(documents.select("doc_id", "split", "labels"), expected, ignore_row_order=True,
                       ignore_nullable=True)
    terms, form = term_id_form({d: tokens.split() for d, tokens in TOKENS.items()}, TRAIN_IDS)
    assert ingested_term_ids(spark, output) == (terms, form)
    assert sum(outside for _, _, outside in form.values()) > 0  # test documents' words no training one has
    assert reports["ingest"]["details"]["tokens"] == {
        "tokens": sum(len(tokens.split()) for tokens in TOKENS.values()), "documents_without_tokens": 0,
        "outside_training_terms": sum(outside for _, _, outside in form.values())}
    # The parsed files themselves, renamed into place: each document keeps where it was read, nothing else.
    assert documents.columns == ["doc_id", "split", "labels", "term_ids", "term_counts", "tokens_outside", "source",
                                 "line", "reason"]
    where = documents.select("doc_id", "source", "line", "reason").toPandas()
    assert where["reason"].isna().all() and (where["line"] >= 1).all()
    assert set(where["source"].str.rsplit("/", n=1).str[-1]) == {"lyrl2004_tokens_train.dat",
                                                                  "lyrl2004_tokens_test_pt0.dat.gz"}


def test_ingest_categories_are_the_103_topics_with_hand_counted_positives(spark, lyrl):
    output, _ = lyrl
    topics = rcv1_topics()
    assert len(topics) == 103
    train_count = Counter(c for d in TRAIN_IDS for c in LABELS[d])
    test_count = Counter(c for d in TEST_IDS for c in LABELS[d])
    table = read(spark, output, "categories").toPandas()
    assert list(table.columns) == ["category", "name", "parent", "train_positives", "test_positives"]
    got = {r.category: (r.name, int(r.train_positives), int(r.test_positives)) for r in table.itertuples()}
    assert got == {c: (topics[c], train_count[c], test_count[c]) for c in topics}
    parents = dict(zip(table["category"], table["parent"]))
    assert parents["C1511"] == "C151" and parents["C151"] == "C15" and parents["C15"] == "CCAT"
    assert {c for c, p in parents.items() if p is None} == {"CCAT", "ECAT", "GCAT", "MCAT"}
    assert table["train_positives"].gt(0).sum() == len(set(train_count)) == 20


def test_ingest_report_counts_add_up(spark, lyrl):
    output, reports = lyrl
    report = reports["ingest"]
    assert report["rows_in"] == 10 and report["rows_out"] == 10 and sum(report["set_aside"].values()) == 0
    assert report["details"]["train_documents"] == 6 and report["details"]["test_documents"] == 4
    assert report["details"]["categories"] == 103
    assert report["details"]["qrels_lines"] == 37 and report["details"]["qrels_rejected"] == 0
    assert report["details"]["qrels_lines_for_test_parts_not_read"] == 0
    assert read(spark, output, "rejects").count() == 0
    assert reports["tokenize"]["rows_in"] == reports["tokenize"]["rows_out"] == 10
    assert read(spark, output, "tokens").count() == 10


# --- 3. weight -----------------------------------------------------------------------------------


def test_weight_vectors_equal_an_independent_ltc(spark, lyrl):
    output, reports = lyrl
    vectorizer = CountVectorizer(analyzer=lambda tokens: tokens)
    train_tf = vectorizer.fit_transform([TOKENS[d].split() for d in TRAIN_IDS])
    terms = vectorizer.get_feature_names_out().tolist()
    assert terms == sorted(terms)
    n = len(TRAIN_IDS)
    df = np.asarray((train_tf > 0).sum(axis=0)).ravel()
    idf = np.log(n / df)

    vocabulary = read(spark, output, "vocabulary").orderBy("term_id").toPandas()
    assert vocabulary["term_id"].tolist() == list(range(len(terms)))
    assert vocabulary["term"].tolist() == terms
    assert vocabulary["df"].tolist() == df.tolist()
    np.testing.assert_allclose(vocabulary["idf"].to_numpy(), np.log(n / vocabulary["df"].to_numpy()),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(vocabulary["idf"].to_numpy(), idf, rtol=0, atol=1e-12)
    assert "merg" not in terms and "takeov" not in terms  # test-only terms are dropped

    ids = TRAIN_IDS + TEST_IDS
    tf = sparse.csr_matrix(vectorizer.transform([TOKENS[d].split() for d in ids]), dtype=np.float64)
    w = tf.copy()
    w.data = (1.0 + np.log(w.data)) * idf[w.indices]
    norms = np.sqrt(np.asarray(w.multiply(w).sum(axis=1)).ravel())
    w = sparse.csr_matrix(sparse.diags(1.0 / norms) @ w)
    w.sort_indices()

    vectors = {r.doc_id: r for r in read(spark, output, "vectors").collect()}
    assert sorted(vectors) == sorted(ids)
    for row, doc_id in enumerate(ids):
        got = vectors[doc_id]
        assert got.split == ("train" if doc_id in TRAIN_IDS else "test")
        assert list(got.labels) == LABELS[doc_id]
        start, end = w.indptr[row], w.indptr[row + 1]
        assert list(got.indices) == w.indices[start:end].tolist(), doc_id
        assert list(got.indices) == sorted(got.indices)
        np.testing.assert_allclose(got.values, w.data[start:end], rtol=0, atol=1e-6, err_msg=doc_id)
        assert math.isclose(float(np.linalg.norm(np.asarray(got.values, dtype=np.float64))), 1.0, abs_tol=1e-6)
    # 26151 "merg acquisit compan bid takeov share offer": only compan, share, offer are training terms.
    assert [terms[i] for i in vectors["26151"].indices] == ["compan", "offer", "share"]
    assert reports["weight"]["details"]["vocabulary"] == len(terms)
    assert reports["weight"]["rows_in"] == reports["weight"]["rows_out"] == 10


@pytest.mark.parametrize("scheme", ["ltc", "supervised"])
def test_weight_on_term_ids_writes_what_it_writes_on_token_strings(spark, lyrl, tmp_path, scheme):
    # The same documents as token strings, the form ingest wrote before issue 39 (no training terms: an empty
    # `terms`), weighted by the string path: the vocabulary and vectors must be the same, bit for bit, with a min_df cut
    # (test documents' words outside training) and supervised weights counted on each form.
    output, _ = lyrl
    strings = tmp_path / "strings"
    rows = read(spark, output, "documents").select("doc_id", "split", "labels").orderBy("doc_id").collect()
    table = pa.table({"doc_id": [r.doc_id for r in rows], "split": [r.split for r in rows],
                      "labels": [list(r.labels) for r in rows],
                      "tokens": [" ".join(TOKENS[r.doc_id].split()) for r in rows]}, schema=TOKENS_SCHEMA)
    write_parts(table.to_batches(), TOKENS_SCHEMA, str(strings / "tokens"), 0)
    write_parts([], TERMS_SCHEMA, str(strings / "terms"), 0)
    (strings / "categories").symlink_to(f"{output}/categories")
    config = lyrl_config(output, f"weight.scheme={scheme}", "select.min_df=2")
    reports = [weight(spark, config, Tables(root, f"{tmp_path}/{name}"))
               for name, root in (("from-ids", output), ("from-strings", str(strings)))]
    assert reports[0].details == reports[1].details and reports[0].rows_out == reports[1].rows_out == 10
    assert 0 < reports[0].details["vocabulary"] < reports[0].details["training_terms"]
    for table_name, key in (("vocabulary", "term_id"), ("vectors", "doc_id")):
        found, expected = (pq.read_table(f"{tmp_path}/{name}/{table_name}").sort_by(key)
                           for name in ("from-ids", "from-strings"))
        assert found.equals(expected), table_name


# --- 4. rank -------------------------------------------------------------------------------------


def hand_table(term: str, category: str) -> list[list[int]]:
    """[[A, B], [C, D]] over the six training documents, counted one document at a time."""
    a = b = c = d = 0
    for doc_id in TRAIN_IDS:
        has_term = term in TOKENS[doc_id].split()
        in_category = category in LABELS[doc_id]
        if has_term and in_category:
            a += 1
        elif has_term:
            b += 1
        elif in_category:
            c += 1
        else:
            d += 1
    return [[a, b], [c, d]]


def scipy_chi2(table: list[list[int]]) -> float:
    """Pearson chi2 without correction; 0 when a margin is empty (scipy refuses zero expected counts)."""
    (a, b), (c, d) = table
    if 0 in (a + b, c + d, a + c, b + d):
        return 0.0
    return float(chi2_contingency(table, correction=False)[0])


def test_rank_chi2_matches_scipy(spark, lyrl):
    output, _ = lyrl
    ranks = read(spark, output, "term_ranks").orderBy("term_id").toPandas().set_index("term")
    topics = sorted(rcv1_topics())
    p_c = np.array([sum(c in LABELS[d] for d in TRAIN_IDS) / len(TRAIN_IDS) for c in topics])

    # A few terms and categories, one table at a time, with the counts asserted too.
    for term, category, table in (
        ("compan", "CCAT", [[2, 0], [0, 4]]),
        ("share", "C15", [[1, 1], [0, 4]]),
        ("expect", "MCAT", [[1, 1], [1, 3]]),
        ("price", "MCAT", [[2, 0], [0, 4]]),
        ("market", "ECAT", [[0, 2], [2, 2]]),
    ):
        assert hand_table(term, category) == table
        chi2 = scipy_chi2(table)
        assert chi2 > 0 or table == [[0, 2], [2, 2]]
        per_category = [scipy_chi2(hand_table(term, c)) for c in topics]
        assert per_category[topics.index(category)] == pytest.approx(chi2, abs=1e-12)
        assert ranks.loc[term, "chi2_max"] == pytest.approx(max(per_category), rel=1e-12, abs=1e-12), term
        assert ranks.loc[term, "chi2_avg"] == pytest.approx(float(p_c @ per_category), rel=1e-12, abs=1e-12), term

    # chi2_max for every term: the max over all 103 categories.
    for term, row in ranks.iterrows():
        expected = max(scipy_chi2(hand_table(term, c)) for c in topics)
        assert row["chi2_max"] == pytest.approx(expected, rel=1e-9, abs=1e-12), term
        assert row["df"] == sum(term in TOKENS[d].split() for d in TRAIN_IDS)


def test_rank_scores_every_term_of_the_vocabulary_and_orders_by_the_configured_score(spark, lyrl):
    output, _ = lyrl
    ranks = read(spark, output, "term_ranks").toPandas()
    vocabulary = read(spark, output, "vocabulary").toPandas()
    assert ranks["term_id"].tolist() == sorted(vocabulary["term_id"])  # in term_id order
    assert dict(zip(ranks["term_id"], ranks["term"])) == dict(zip(vocabulary["term_id"], vocabulary["term"]))
    for column in ("ig_avg", "chi2_max"):
        score, global_score = column.split("_")
        configured = load_config(None, ["corpus.format=synthetic", f"rank.score={score}",
                                        f"rank.global_score={global_score}"])
        expected = [r.term_id for r in sorted(ranks.itertuples(), key=lambda r: (-getattr(r, column), r.term_id))]
        assert term_order(f"{output}/term_ranks", configured).tolist() == expected


# --- a seeded JSONL corpus for train, evaluate and partitioning ------------------------------------

TOPIC_CATEGORIES = ["acq", "crude", "earn", "grain", "trade"]
ONLY_TEST = "ship"     # labels some test documents, no training document
NEVER = "zinc"         # listed in corpus.categories, labels no document
N_TRAIN, N_TEST = 160, 40


def write_jsonl_corpus(directory: Path, seed: int = 20240611) -> None:
    rng = np.random.default_rng(seed)
    pool = invented_words(rng, 400)
    general, topical = pool[:300], pool[300:]
    topic_words = {c: topical[15 * i: 15 * (i + 1)] for i, c in enumerate(TOPIC_CATEGORIES)}
    lines = {"train.jsonl": [], "test.jsonl": []}
    for i in range(N_TRAIN + N_TEST):
        split = "train" if i < N_TRAIN else "test"
        labels = [c for c in TOPIC_CATEGORIES if rng.random() < 0.3] or [str(rng.choice(TOPIC_CATEGORIES))]
        tokens = list(rng.choice(general, size=25))
        for c in labels:
            tokens += list(rng.choice(topic_words[c], size=int(rng.integers(2, 7))))
        tokens += list(rng.choice(topical, size=2))  # noise from any topic
        if split == "test" and i % 7 == 0:
            labels.append(ONLY_TEST)
        rng.shuffle(tokens)
        text = " ".join(tokens) + f" {i} Reuters."
        lines[f"{split}.jsonl"].append(json.dumps({"id": f"d{i:04d}", "text": text, "labels": labels, "split": split}))
    directory.mkdir()
    for name, content in lines.items():
        (directory / name).write_text("\n".join(content) + "\n")


def jsonl_config(path: Path | str, *overrides: str):
    categories = json.dumps(sorted([*TOPIC_CATEGORIES, ONLY_TEST, NEVER]))
    return load_config(None, ["corpus.format=jsonl", f"corpus.path={path}", f"corpus.categories={categories}",
                              *overrides])


@pytest.fixture(scope="module")
def synthetic(spark, tmp_path_factory):
    """Run ingest -> tokenize -> weight -> rank -> train -> evaluate on the seeded JSONL corpus."""
    base = tmp_path_factory.mktemp("jsonl")
    corpus = base / "corpus"
    write_jsonl_corpus(corpus)
    output = str(base / "out")
    config = jsonl_config(corpus)
    reports = {m["stage"]: m for m in run_stages(spark, config, output)}
    return corpus, output, reports


def load_vectors(spark, output: str, split: str):
    """(doc ids, CSR matrix, label lists) of one split, sorted by doc id, built here from the table."""
    n_terms = read(spark, output, "vocabulary").count()
    rows = read(spark, output, "vectors").filter(F.col("split") == split).orderBy("doc_id").collect()
    indptr = np.cumsum([0] + [len(r.indices) for r in rows])
    indices = np.array([i for r in rows for i in r.indices], dtype=np.int64)
    values = np.array([v for r in rows for v in r.values], dtype=np.float64)
    X = sparse.csr_matrix((values, indices, indptr), shape=(len(rows), n_terms))
    return [r.doc_id for r in rows], X, [list(r.labels) for r in rows]


def load_models(spark, output: str):
    return {r.category: r for r in read(spark, output, "models").collect()}


def sklearn_svm(X, y):
    model = LinearSVC(loss="squared_hinge", dual=True, C=1.0, tol=1e-4, intercept_scaling=1, max_iter=10_000)
    return model.fit(X, y).decision_function(X)


# --- 5. train ------------------------------------------------------------------------------------


def test_synthetic_corpus_ingested_whole(synthetic):
    _, _, reports = synthetic
    assert reports["ingest"]["rows_in"] == reports["ingest"]["rows_out"] == N_TRAIN + N_TEST
    assert reports["ingest"]["details"]["train_documents"] == N_TRAIN
    assert reports["train"]["rows_out"] == len(TOPIC_CATEGORIES) + 2


def test_train_agrees_with_sklearn_linearsvc(spark, synthetic):
    _, output, _ = synthetic
    _, X, labels = load_vectors(spark, output, "train")
    models = load_models(spark, output)
    for category in ("acq", "earn", "trade"):
        y = np.array([category in doc for doc in labels])
        assert 10 < y.sum() < len(y) - 10, (category, y.sum())
        model = models[category]
        assert model.train_positives == y.sum()
        ours = X @ np.asarray(model.weights) + model.bias
        theirs = sklearn_svm(X, y)
        # Both run LIBLINEAR's dual CD to tolerance 1e-4; decision values are O(1), observed gap ~2e-5.
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-3, err_msg=category)
        assert np.mean((ours > 0) == y) > 0.9  # the corpus is learnable, so the comparison means something


def test_train_category_without_training_positive_is_zero_and_never_predicted(spark, synthetic):
    _, output, _ = synthetic
    models = load_models(spark, output)
    predictions = read(spark, output, "predictions").collect()
    assert any(ONLY_TEST in r.labels for r in predictions)
    for category in (ONLY_TEST, NEVER):
        model = models[category]
        assert model.train_positives == 0
        assert not np.any(np.asarray(model.weights))
        assert model.bias < model.threshold
        assert all(category not in r.predicted for r in predictions)


def test_train_top_k_keeps_exactly_the_k_best_ranked_terms(spark, synthetic, tmp_path):
    corpus, output, _ = synthetic
    k = 25
    copy = tmp_path / "top_k"
    shutil.copytree(output, copy)
    [report] = run_stages(spark, jsonl_config(corpus, f"select.top_k={k}"), str(copy), "train")
    assert report["details"]["features"] == k
    best = np.sort(chi2_order(copy)[:k])
    assert len(best) == k
    models = load_models(spark, str(copy))
    _, X, labels = load_vectors(spark, str(copy), "train")
    used = set()
    for category, model in models.items():
        weights = np.asarray(model.weights)
        assert model.features == k
        assert len(weights) == X.shape[1]
        outside = np.setdiff1d(np.arange(len(weights)), best)
        assert not np.any(weights[outside]), category
        used |= set(np.flatnonzero(weights).tolist())
        if category in ("acq", "grain"):
            y = np.array([category in doc for doc in labels])
            theirs = sklearn_svm(X[:, best], y)
            np.testing.assert_allclose(X @ weights + model.bias, theirs, rtol=0, atol=1e-3, err_msg=category)
    assert used == set(best.tolist())


# --- 6. evaluate ---------------------------------------------------------------------------------


def test_evaluate_predictions_are_the_categories_above_threshold(spark, synthetic):
    _, output, _ = synthetic
    doc_ids, X, labels = load_vectors(spark, output, "test")
    models = load_models(spark, output)
    codes = sorted(models)
    W = np.column_stack([np.asarray(models[c].weights) for c in codes])
    scores = X @ W + np.array([models[c].bias for c in codes])
    thresholds = np.array([models[c].threshold for c in codes])
    predictions = {r.doc_id: r for r in read(spark, output, "predictions").collect()}
    assert sorted(predictions) == doc_ids
    assert sum(len(r.predicted) for r in predictions.values()) > 0
    for row, doc_id in enumerate(doc_ids):
        expected = sorted(c for c, s, t in zip(codes, scores[row], thresholds) if s > t)
        assert sorted(predictions[doc_id].predicted) == expected, doc_id
        assert list(predictions[doc_id].labels) == labels[row]
        np.testing.assert_allclose(sorted(predictions[doc_id].top_scores, reverse=True),
                                   np.sort(scores[row])[::-1][:5], rtol=0, atol=1e-9)


def test_evaluate_contingency_and_averages_match_sklearn(spark, synthetic):
    _, output, _ = synthetic
    predictions = read(spark, output, "predictions").orderBy("doc_id").collect()
    contingency = read(spark, output, "contingency").orderBy("category").toPandas()
    categories = read(spark, output, "categories").orderBy("category").toPandas()
    codes = contingency["category"].tolist()
    assert codes == categories["category"].tolist() == sorted([*TOPIC_CATEGORIES, ONLY_TEST, NEVER])

    def indicator(lists):
        return np.array([[c in row for c in codes] for row in lists], dtype=int)

    Y = indicator([r.labels for r in predictions])
    P = indicator([r.predicted for r in predictions])
    matrices = multilabel_confusion_matrix(Y, P)
    for j, code in enumerate(codes):
        (tn, fp), (fn, tp) = matrices[j]
        row = contingency.iloc[j]
        assert (row.tp, row.fp, row.fn, row.tn) == (tp, fp, fn, tn), code
        assert row.test_positives == Y[:, j].sum()
        assert row.train_positives == categories.iloc[j].train_positives
    assert contingency["train_positives"].tolist() == categories["train_positives"].tolist()

    metrics = json.loads((Path(output) / "metrics.json").read_text())
    trained = [j for j, n in enumerate(categories["train_positives"]) if n >= 1]
    assert [codes[j] for j in trained] == TOPIC_CATEGORIES
    assert metrics["n_categories"] == len(TOPIC_CATEGORIES)
    micro = f1_score(Y, P, labels=trained, average="micro", zero_division=1)
    macro = f1_score(Y, P, labels=trained, average="macro", zero_division=1)
    assert metrics["micro_f1"] == pytest.approx(micro, abs=1e-12)
    assert metrics["macro_f1"] == pytest.approx(macro, abs=1e-12)
    assert 0.3 < micro < 1.0  # a meaningful, not degenerate, comparison
    assert metrics["test_documents"] == N_TEST


# --- 7. partition invariance -----------------------------------------------------------------------


def test_weight_does_not_depend_on_partitioning(spark, synthetic, tmp_path):
    corpus, output, _ = synthetic
    config = jsonl_config(corpus)
    tokens = read(spark, output, "tokens")
    results = []
    for partitions in (1, 3):
        out = str(tmp_path / f"p{partitions}")
        tokens.repartition(partitions).write.parquet(f"{out}/tokens")
        assert read(spark, out, "tokens").rdd.getNumPartitions() >= 1
        weight(spark, config, Tables(out, out))
        results.append(out)
    columns = ["doc_id", "split", "labels", "indices", "values"]
    original = read(spark, output, "vectors").select(columns)
    for out in results:
        assert_df_equality(read(spark, out, "vectors").select(columns), original, ignore_row_order=True)
        assert_df_equality(read(spark, out, "vocabulary"), read(spark, output, "vocabulary"), ignore_row_order=True)


def test_tokenize_file_keeps_given_tokens_and_analyzes_the_rest(tmp_path):
    # One task's file: given tokens kept as they are (text ignored), raw texts analyzed, a null text no tokens.
    rows = {"doc_id": ["a", "b", "c", "d"], "split": ["train", "test", "train", "test"],
            "labels": [["x"], [], ["x", "y"], ["y"]], "text": ["Ignored text", "Shares rose 12%.", None, "The end"],
            "title": [None] * 4, "tokens": ["given tok", None, None, ""],
            "source": ["f"] * 4, "line": [1, 2, 3, 4], "reason": [None] * 4}
    documents = pa.RecordBatch.from_pydict(rows, schema=RECORD_SCHEMA)
    write_parts([documents], RECORD_SCHEMA, str(tmp_path / "documents"), 0)
    [path] = [str(p) for p in (tmp_path / "documents").glob("*.parquet")]
    analyzer = Analyzer(frozenset({"the"}), "porter")
    counts = tokenize_file(3, path, str(tmp_path / "tokens"), analyzer)
    [written] = list((tmp_path / "tokens").glob("part-00003-*.parquet"))
    [batch] = read_batches(str(written), TOKENS_SCHEMA.names)
    analyzed = token_strings(analyzer, pa.array(["Shares rose 12%."])).to_pylist()
    assert batch.schema == TOKENS_SCHEMA
    assert batch.column("tokens").to_pylist() == ["given tok", *analyzed, "", ""]
    assert batch.column("labels").to_pylist() == rows["labels"]
    assert counts == (4, 4, 2 + len(analyzed[0].split()), 2)
