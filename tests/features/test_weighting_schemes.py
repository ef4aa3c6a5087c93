"""The [weight] schemes (REFERENCE.md section 3; sparktc.features.weighting), each against an independent
computation.

* ltc, tfidf (Debole & Sebastiani 2005, eq. 4-5), sklearn, binary and supervised against scipy.sparse formulas
  on a random term-frequency matrix, training rows fixing N and df, test rows holding terms outside training;
  tfidf equal to ltc value for value;
* sklearn against scikit-learn's own ``TfidfVectorizer`` fitted on the training texts;
* supervised through the Spark stages on a small JSON Lines corpus, chi-square and information gain: every
  training and test vector against tf x the f_max score computed here from training-only 2x2 tables (scipy's
  chi2_contingency, scikit-learn's mutual_info_score), the vocabulary's factor against the rank stage's score,
  and relabelling test documents changes no weight;
* a bundle trained with supervised weights classifies the test documents as the pipeline's evaluate did;
* the same run's documents through the tokenize and weight stages as LibMultiLabel's tutorial builds features
  (scikit-learn's analyzer, trigrams, min_df, the most frequent terms) give ``TfidfVectorizer``'s vocabulary and
  vectors.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import invented_words
from scipy import sparse
from scipy.stats import chi2_contingency
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.metrics import mutual_info_score

from sparktc.apps.classify import classify
from sparktc.apps.pipeline import run as run_stages
from sparktc.experiment.bundle import load_bundle
from sparktc.experiment.config import load_config
from sparktc.features.text import STORED_SPACE
from sparktc.features.weighting import SCHEMES, term_factors, term_frequencies, term_vectors, weighted_rows
from sparktc.runtime.runner import Tables
from sparktc.stages import tokenize as tokenize_stage
from sparktc.stages import weight as weight_stage

# --- the formulas, without Spark -------------------------------------------------------------------------


def normalized(w: sparse.csr_matrix) -> sparse.csr_matrix:
    """Rows divided by their Euclidean norm; all-zero rows stay zero."""
    norms = np.sqrt(np.asarray(w.multiply(w).sum(axis=1)).ravel())
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return sparse.csr_matrix(sparse.diags(scale) @ w)


def reference(scheme: str, tf: sparse.csr_matrix, n_train: int, scores: np.ndarray | None) -> sparse.csr_matrix:
    """Each scheme written out from its definition over the tf matrix (N and df from its first n_train rows)."""
    tf = sparse.csr_matrix(tf, dtype=np.float64)
    df = np.asarray((tf[:n_train] > 0).sum(axis=0)).ravel()
    w = tf.copy()
    if scheme == "ltc":  # Lewis et al. 2004: (1 + ln tf) ln(N / df)
        w.data = (1.0 + np.log(w.data)) * np.log(n_train / df)[w.indices]
    elif scheme == "tfidf":  # Debole & Sebastiani 2005, eq. 4: tf(t, d) = 1 + log #(t, d) if #(t, d) > 0, else 0
        tf_part = tf.copy()
        tf_part.data = 1.0 + np.log(tf_part.data)
        w = sparse.csr_matrix(tf_part @ sparse.diags(np.log(n_train / df)))  # idf = log(|Tr| / #Tr(t))
    elif scheme == "sklearn":
        w.data = w.data * (np.log((1.0 + n_train) / (1.0 + df)) + 1.0)[w.indices]
    elif scheme == "binary":
        w.data = np.ones_like(w.data)
    else:
        w.data = (1.0 + np.log(w.data)) * scores[w.indices]
    return normalized(w)  # Debole & Sebastiani's eq. 5, cosine normalization


@pytest.fixture(scope="module")
def random_tf():
    """(tf over the training vocabulary, (row, term id) pairs with -1 for terms outside it, rows, n_train, scores)."""
    rng = np.random.default_rng(16)
    n_train, n_test, n_terms, n_unseen = 30, 10, 25, 5
    dense = rng.integers(1, 5, size=(n_train + n_test, n_terms + n_unseen)) * (rng.random((40, 30)) < 0.3)
    dense[:n_train, n_terms:] = 0  # the last terms occur in test rows only: outside the vocabulary
    dense[:, 0] = 2  # in every training document: idf 0 for ltc and tfidf
    dense[n_train, :] = 0
    dense[n_train, n_terms:] = 1  # a test document of unseen terms only: an empty vector
    dense[n_train + 1, :] = 0
    dense[n_train + 1, 0] = 3  # a test document of a zero-factor term only (for ltc, tfidf and supervised)
    assert (dense[:n_train, :n_terms] > 0).any(axis=0).all()
    rows, columns = np.nonzero(dense)
    counts = dense[rows, columns]
    rows, term_ids = np.repeat(rows, counts), np.repeat(columns, counts)
    order = rng.permutation(len(rows))  # token occurrences come in any order
    term_ids = np.where(term_ids < n_terms, term_ids, -1)[order]
    scores = rng.random(n_terms) * 5
    scores[[0, 3]] = 0.0  # supervised scores of 0: the terms keep their entries with weight 0
    return sparse.csr_matrix(dense[:, :n_terms]), rows[order], term_ids, len(dense), n_train, scores


@pytest.mark.parametrize("scheme", SCHEMES)
def test_every_scheme_equals_its_formula(random_tf, scheme):
    tf, rows, term_ids, n_rows, n_train, scores = random_tf
    df = np.asarray((tf[:n_train] > 0).sum(axis=0)).ravel()
    factors = term_factors(scheme, df, n_train, scores if scheme == "supervised" else None)
    offsets, indices, values, counts = weighted_rows(rows, term_ids, n_rows, factors, scheme)
    expected = reference(scheme, tf, n_train, scores)
    # Every term present keeps its entry, whatever its weight (0 for a factor of 0).
    np.testing.assert_array_equal(offsets, tf.indptr)
    np.testing.assert_array_equal(indices, tf.indices)
    np.testing.assert_array_equal(counts, tf.data)
    weights = sparse.csr_matrix((values.astype(np.float64), indices, offsets), shape=tf.shape)
    np.testing.assert_allclose(weights.toarray(), expected.toarray(), rtol=0, atol=1e-6)
    assert values.dtype == np.float32
    norms = np.linalg.norm(weights.toarray(), axis=1)
    assert np.all(np.isclose(norms, 1.0, atol=1e-6) | (norms == 0))
    assert offsets[n_train + 1] == offsets[n_train]  # unseen terms only: an empty vector
    if scheme in ("ltc", "tfidf", "supervised"):  # a factor of 0 only: the entry stays, at 0
        assert offsets[n_train + 2] - offsets[n_train + 1] == 1
        np.testing.assert_array_equal(values[offsets[n_train + 1]:offsets[n_train + 2]], 0.0)


@pytest.mark.parametrize("n_terms", [50, 2**30])  # 32-bit keys; keys past 2^32 (5 rows x 2^30 terms)
def test_term_frequencies_count_each_documents_terms(n_terms):
    rng = np.random.default_rng(39)
    rows = np.sort(rng.integers(0, 5, 400))
    term_ids = np.where(rng.random(400) < 0.1, -1, rng.integers(0, 50, 400) * (n_terms // 50))
    expected = sorted(Counter((r, t) for r, t in zip(rows.tolist(), term_ids.tolist()) if t >= 0).items())
    doc, term, tf = term_frequencies(rows, term_ids, 5, n_terms)
    assert list(zip(doc.tolist(), term.tolist())) == [key for key, _ in expected]
    assert tf.tolist() == [count for _, count in expected]


def test_tfidf_is_ltc_value_for_value(random_tf):
    tf, rows, term_ids, n_rows, n_train, _ = random_tf
    df = np.asarray((tf[:n_train] > 0).sum(axis=0)).ravel()
    ltc = weighted_rows(rows, term_ids, n_rows, term_factors("ltc", df, n_train), "ltc")
    tfidf = weighted_rows(rows, term_ids, n_rows, term_factors("tfidf", df, n_train), "tfidf")
    for a, b in zip(ltc, tfidf):
        np.testing.assert_array_equal(a, b)


def test_term_factors_refuse_bad_arguments():
    df = np.array([1, 2, 3])
    with pytest.raises(ValueError, match="scores must be given for scheme 'supervised'.*None"):
        term_factors("supervised", df, 3)
    with pytest.raises(ValueError, match="scores must be given .* got scheme 'ltc' with scores given"):
        term_factors("ltc", df, 3, np.ones(3))
    with pytest.raises(ValueError, match=r"scheme must be one of .*; got 'bm25'"):
        term_factors("bm25", df, 3)
    with pytest.raises(ValueError, match=r"scores must have one value per term of df, shape \(3,\); got \(2,\)"):
        term_factors("supervised", df, 3, np.ones(2))
    with pytest.raises(ValueError, match="scores must be finite"):
        term_factors("supervised", df, 3, np.array([1.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match="df must lie in 1..n_documents=3"):
        term_factors("sklearn", np.array([0, 1, 4]), 3)
    with pytest.raises(ValueError, match=r"scheme must be one of .*; got 'bnc'"):
        weighted_rows(np.array([0]), np.array([0]), 1, np.ones(1), "bnc")


def test_sklearn_scheme_equals_scikit_learns_tfidf_vectorizer():
    rng = np.random.default_rng(2005)
    words = invented_words(rng, 60)
    train = [" ".join(rng.choice(words[:50], size=rng.integers(1, 30))) for _ in range(40)]
    test = [" ".join(rng.choice(words, size=rng.integers(1, 30))) for _ in range(15)] + [" ".join(words[50:53]), ""]
    vectorizer = TfidfVectorizer(analyzer=str.split, sublinear_tf=False, smooth_idf=True, norm="l2")
    expected_train = vectorizer.fit_transform(train)
    expected_test = vectorizer.transform(test)
    terms = sorted({t for text in train for t in text.split()})
    assert terms == vectorizer.get_feature_names_out().tolist()
    df = np.array([sum(term in text.split() for text in train) for term in terms])
    factors = term_factors("sklearn", df, len(train))
    for texts, expected in ((train, expected_train), (test, expected_test)):
        indices, values, counts = term_vectors(pa.array(texts), pa.array(terms), factors, "sklearn")
        offsets = indices.offsets.to_numpy()
        got = sparse.csr_matrix((values.values.to_numpy(), indices.values.to_numpy(), offsets),
                                shape=(len(texts), len(terms)))
        np.testing.assert_allclose(got.toarray(), expected.toarray(), rtol=0, atol=1e-6)
    assert len(indices[len(test) - 2]) == len(indices[len(test) - 1]) == 0  # unseen terms only; no text


# --- supervised weighting through the Spark stages -------------------------------------------------------------

CATEGORIES = ["acq", "crude", "earn"]
ONLY_TEST = "zinc"  # a label of test documents only: a category without training positives
COMMON = "reuter"  # in every training document: every score of it is 0


def make_corpus(relabel: bool = False, seed: int = 2003) -> dict[str, dict]:
    """36 training and 12 test JSON Lines documents by id; with ``relabel``, the same texts with every test
    document's labels changed.
    """
    rng = np.random.default_rng(seed)
    words = invented_words(rng, 70)
    general, topical = words[:40], {c: words[40 + 8 * i: 48 + 8 * i] for i, c in enumerate(CATEGORIES)}
    documents = {}
    for i in range(48):
        split = "train" if i < 36 else "test"
        labels = [c for c in CATEGORIES if rng.random() < 0.4] or [CATEGORIES[i % 3]]
        tokens = list(rng.choice(general, size=int(rng.integers(3, 12))))
        for c in labels:
            tokens += list(rng.choice(topical[c], size=int(rng.integers(1, 5))))
        tokens += [COMMON] * (split == "train" or i % 2) + list(rng.choice(words[64:], size=int(split == "test")))
        if split == "test" and relabel:
            labels = [c for c in [*CATEGORIES, ONLY_TEST] if c not in labels][:2]
        documents[f"d{i:02d}"] = {"id": f"d{i:02d}", "text": " ".join(tokens), "labels": labels, "split": split}
    documents["d47"]["text"] = f"{COMMON} {words[69]}"  # a test document whose only training term scores 0
    return documents


def supervised_config(corpus: Path, score: str):
    return load_config(None, ["corpus.format=jsonl", f"corpus.path={corpus}", "tokenize.stemmer=none",
                              "weight.scheme=supervised", f"rank.score={score}"])


@pytest.fixture(scope="module")
def supervised(spark, tmp_path_factory):
    """(corpus documents, output) of ingest .. evaluate under chi-square supervised weights."""
    base = tmp_path_factory.mktemp("supervised")
    documents = make_corpus()
    (base / "corpus").mkdir()
    (base / "corpus" / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in documents.values()))
    output = base / "run"
    run_stages(spark, supervised_config(base / "corpus", "chi2"), str(output))
    return documents, output


def chi2_of(a: int, b: int, c: int, d: int) -> float:
    """The Pearson chi-square of the 2x2 table by scipy; 0 where a margin is 0 (term or category in all or no
    documents), as REFERENCE.md section 4's formula with its 0 denominator.
    """
    table = np.array([[a, b], [c, d]])
    if (table.sum(axis=0) == 0).any() or (table.sum(axis=1) == 0).any():
        return 0.0
    return float(chi2_contingency(table, correction=False)[0])


def expected_vectors(documents: dict[str, dict], score: str) -> tuple[list[str], dict[str, dict[int, float]]]:
    """The vocabulary and every document's supervised vector, from the training documents alone: f_max over
    the categories of chi-square or information gain (bits) times 1 + ln tf, cosine-normalized.
    """
    train = [d for d in documents.values() if d["split"] == "train"]
    terms = sorted({t for d in train for t in d["text"].split()})
    categories = sorted({c for d in documents.values() for c in d["labels"]})  # ingest's: every label seen
    present = np.array([[t in d["text"].split() for t in terms] for d in train])
    member = np.array([[c in d["labels"] for c in categories] for d in train])
    best = np.zeros(len(terms))
    for t in range(len(terms)):
        for c in range(len(categories)):
            x, y = present[:, t], member[:, c]
            if score == "chi2":
                value = chi2_of(int(np.sum(x & y)), int(np.sum(x & ~y)), int(np.sum(~x & y)), int(np.sum(~x & ~y)))
            else:
                value = mutual_info_score(x, y) / math.log(2)
            best[t] = max(best[t], value)
    vectors = {}
    for doc_id, d in documents.items():
        counts = pd.Series([t for t in d["text"].split() if t in terms]).value_counts()
        w = {terms.index(t): (1 + math.log(n)) * best[terms.index(t)] for t, n in counts.items()}
        norm = math.sqrt(sum(v * v for v in w.values()))
        vectors[doc_id] = {t: v / norm if norm else 0.0 for t, v in w.items()}
    return terms, vectors


def assert_vectors(spark, output: Path, documents: dict[str, dict], score: str) -> None:
    terms, expected = expected_vectors(documents, score)
    vocabulary = spark.read.parquet(str(output / "vocabulary")).orderBy("term_id").toPandas()
    assert vocabulary["term"].tolist() == terms
    rows = {r.doc_id: r for r in spark.read.parquet(str(output / "vectors")).collect()}
    assert sorted(rows) == sorted(documents)
    for doc_id, want in expected.items():
        got = rows[doc_id]
        assert list(got.indices) == sorted(want), doc_id
        np.testing.assert_allclose(got.values, [want[t] for t in sorted(want)], rtol=0, atol=1e-6, err_msg=doc_id)


def test_supervised_chi2_weights_equal_a_training_only_computation(spark, supervised):
    documents, output = supervised
    assert_vectors(spark, output, documents, "chi2")
    terms = spark.read.parquet(str(output / "vocabulary")).orderBy("term_id").toPandas()
    # The score of a term in every training document is 0: its entry stays, with weight 0.
    d47 = spark.read.parquet(str(output / "vectors")).filter("doc_id = 'd47'").first()
    assert [terms["term"][i] for i in d47.indices] == [COMMON] and list(d47.values) == [0.0]
    # The vocabulary's factor is the rank stage's score of the same column, and the report names it.
    ranks = spark.read.parquet(str(output / "term_ranks")).orderBy("term_id").toPandas()
    np.testing.assert_allclose(terms["idf"], ranks["chi2_max"], rtol=1e-12, atol=0)
    manifest = json.loads((output / "manifests" / "weight.json").read_text())
    assert manifest["details"]["scheme"] == "supervised" and manifest["details"]["score"] == "chi2_max"
    assert manifest["settings"]["rank"] == {"score": "chi2", "global_score": "max"}


def test_supervised_information_gain_weights_equal_a_training_only_computation(spark, supervised, tmp_path):
    documents, output = supervised
    weight_stage.weight(spark, supervised_config(output.parent / "corpus", "ig"), Tables(str(output), str(tmp_path)))
    assert_vectors(spark, tmp_path, documents, "ig")


def test_test_labels_do_not_change_supervised_weights(spark, supervised, tmp_path):
    """The weight stage rerun on the run's tokens and categories with every test document relabelled, some
    with a category of test documents only, as ingest would have written them.
    """
    documents, output = supervised
    relabelled = make_corpus(relabel=True)
    assert all(relabelled[i]["labels"] != documents[i]["labels"] for i in documents if documents[i]["split"] == "test")
    tokens = spark.read.parquet(str(output / "tokens")).toPandas()
    tokens["labels"] = [relabelled[doc_id]["labels"] for doc_id in tokens["doc_id"]]
    positives = tokens.explode("labels").groupby(["labels", "split"]).size().unstack(fill_value=0)
    assert positives.loc[ONLY_TEST, "train"] == 0 and positives.loc[ONLY_TEST, "test"] > 0
    categories = pd.DataFrame({"category": positives.index, "name": positives.index, "parent": None,
                               "train_positives": positives["train"], "test_positives": positives["test"]})
    for name, table in (("tokens", tokens), ("categories", categories)):
        schema = spark.read.parquet(str(output / name)).schema
        spark.createDataFrame(table, schema).write.parquet(str(tmp_path / "in" / name))
    weight_stage.weight(spark, supervised_config(output.parent / "corpus", "chi2"),
                        Tables(str(tmp_path / "in"), str(tmp_path / "out")))

    def vectors(run: Path) -> list[tuple]:
        return [(r.doc_id, r.split, list(r.indices), list(r.values), list(r.counts))
                for r in spark.read.parquet(str(run / "vectors")).orderBy("doc_id").collect()]

    def vocabulary(run: Path) -> pd.DataFrame:
        return spark.read.parquet(str(run / "vocabulary")).orderBy("term_id").toPandas()

    assert vectors(tmp_path / "out") == vectors(output)
    pd.testing.assert_frame_equal(vocabulary(tmp_path / "out"), vocabulary(output))


def test_the_weight_stage_depends_on_rank_settings_under_supervised_weights_only(tmp_path):
    def config(*overrides):
        return load_config(None, ["corpus.format=jsonl", f"corpus.path={tmp_path}", *overrides])
    assert weight_stage.STAGE.sections_of(config("weight.scheme=supervised")) == ("weight", "select.min_df", "rank")
    for scheme in ("ltc", "tfidf", "sklearn", "binary"):
        assert weight_stage.STAGE.sections_of(config(f"weight.scheme={scheme}")) == ("weight", "select.min_df")


def test_a_supervised_bundle_classifies_as_the_pipeline(spark, supervised, tmp_path):
    documents, output = supervised
    source = tmp_path / "test.jsonl"
    source.write_text("".join(json.dumps({"id": d["id"], "text": d["text"]}) + "\n"
                              for d in documents.values() if d["split"] == "test"))
    bundle = load_bundle(spark, str(output / "model"))
    assert bundle.scheme == "supervised"
    classify(spark, bundle, str(source), str(tmp_path / "out"))
    classified = pd.read_parquet(tmp_path / "out" / "predictions").set_index("doc_id").sort_index()
    expected = spark.read.parquet(str(output / "predictions")).toPandas().set_index("doc_id").loc[classified.index]
    assert len(classified) == 12
    assert [list(p) for p in classified["predicted"]] == [list(p) for p in expected["predicted"]]
    np.testing.assert_allclose(np.vstack(classified["top_scores"]), np.vstack(expected["top_scores"]),
                               rtol=0, atol=1e-9)


def test_scikit_learns_features_through_the_tokenize_and_weight_stages(spark, supervised, tmp_path):
    documents, output = supervised
    train = [d["text"] for d in documents.values() if d["split"] == "train"]
    counts = CountVectorizer(min_df=2, ngram_range=(1, 3)).fit_transform(train)
    totals = np.sort(np.asarray(counts.sum(axis=0)).ravel())[::-1]
    top_k = max(k for k in range(1, len(totals)) if totals[k - 1] > totals[k])  # the last cut without a tie across
    root = tmp_path / "in"
    root.mkdir()
    for name in ("documents", "categories"):
        (root / name).symlink_to(output / name)
    config = load_config(None, ["corpus.format=jsonl", f"corpus.path={output.parent / 'corpus'}",
                                "tokenize.analyzer=sklearn", "tokenize.stemmer=none", "tokenize.ngrams=3",
                                "weight.scheme=sklearn", "select.min_df=2", "rank.score=frequency",
                                f"select.top_k={top_k}"])
    tokenize_stage.tokenize(spark, config, Tables(str(root), str(root)))
    report = weight_stage.weight(spark, config, Tables(str(root), str(tmp_path / "out")))
    vectorizer = TfidfVectorizer(min_df=2, max_features=top_k, ngram_range=(1, 3))
    vectorizer.fit(train)
    vocabulary = pd.read_parquet(tmp_path / "out" / "vocabulary").sort_values("term_id")
    assert vocabulary["term"].tolist() == vectorizer.get_feature_names_out().tolist()
    assert any(" " in term for term in vocabulary["term"])
    tokens = pd.read_parquet(root / "tokens")["tokens"]
    assert tokens.str.contains(f"\\w+{STORED_SPACE}\\w+{STORED_SPACE}\\w+").any()  # trigrams, stored with DEL
    np.testing.assert_allclose(vocabulary["idf"], vectorizer.idf_, rtol=1e-12)
    assert report.details["vocabulary"] == top_k and report.details["below_min_df"] > 0
    for split in ("train", "test"):
        vectors = pd.read_parquet(tmp_path / "out" / "vectors" / f"split={split}").sort_values("doc_id")
        expected = vectorizer.transform([documents[doc_id]["text"] for doc_id in vectors["doc_id"]]).toarray()
        got = np.zeros_like(expected)
        for row, (indices, values) in enumerate(zip(vectors["indices"], vectors["values"])):
            got[row, indices] = values
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-7)  # stored as float32
