"""The rank stage's A(t, c) counts (X^T Y per chunk of training documents, summed) against document-by-
document counts in plain Python, and its term_ranks against 2x2 tables scored by scipy's chi2_contingency.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy.stats import chi2_contingency, entropy
from sklearn.metrics import mutual_info_score

from sparktc.experiment.config import load_config
from sparktc.features import term_selection
from sparktc.features.matrix import term_category_counts
from sparktc.features.term_selection import SCORE_COLUMNS, chi2, contingency_2x2
from sparktc.runtime.parts import add_counts
from sparktc.runtime.runner import Tables
from sparktc.stages import rank as rank_stage
from sparktc.stages.rank import count_file, rank

CATEGORIES = ["C15", "ECAT", "GCAT", "M14"]  # sorted, as the categories table orders them
TERMS = ["bond", "goal", "oil", "price", "share", "vote"]
# Training documents: (term ids, labels). Document 1 repeats a term (it counts once), document 3 has
# no terms, document 5 no labels, document 6 null lists.
DOCUMENTS = [
    ([0, 3, 5], ["ECAT", "M14"]),
    ([1, 1, 4], ["GCAT"]),
    ([2, 3], ["M14"]),
    ([], ["C15", "ECAT"]),
    ([3, 4], ["C15"]),
    ([0, 2, 3, 4], []),
    (None, None),
    ([3, 5], ["GCAT", "ECAT"]),
]


def by_hand(documents) -> np.ndarray:
    """A[t, c], one document at a time."""
    A = np.zeros((len(TERMS), len(CATEGORIES)), dtype=np.int64)
    for indices, labels in documents:
        for t in set(indices or []):
            for c in set(labels or []):
                A[t, CATEGORIES.index(c)] += 1
    return A


def columns(documents) -> tuple[pa.Array, pa.Array]:
    return (pa.array([d[0] for d in documents], pa.list_(pa.int32())),
            pa.array([d[1] for d in documents], pa.list_(pa.string())))


def test_counts_of_each_chunk_and_their_sum_match_document_by_document_counts():
    chunks = [DOCUMENTS[:3], DOCUMENTS[3:6], DOCUMENTS[6:]]
    counts = [term_category_counts(*columns(chunk), CATEGORIES, len(TERMS)) for chunk in chunks]
    for chunk, A in zip(chunks, counts):
        assert A.shape == (len(TERMS), len(CATEGORIES)) and A.dtype == np.int64
        assert np.array_equal(A.toarray(), by_hand(chunk))
    total = None
    for chunk, A in zip(chunks, counts):
        total = add_counts(total, (len(chunk), A))
    assert total[0] == len(DOCUMENTS)
    assert np.array_equal(total[1].toarray(), by_hand(DOCUMENTS))
    # Spot checks worked out by hand: "price" (3) is in documents 0, 2, 4, 5, 7.
    assert by_hand(DOCUMENTS)[3].tolist() == [1, 2, 1, 2]  # C15: 4; ECAT: 0, 7; GCAT: 7; M14: 0, 2


def test_sliced_columns_are_counted_from_their_own_offsets():
    indices, labels = columns(DOCUMENTS)
    A = term_category_counts(indices.slice(2, 4), labels.slice(2, 4), CATEGORIES, len(TERMS))
    assert np.array_equal(A.toarray(), by_hand(DOCUMENTS[2:6]))


def test_counts_give_the_chi2_of_hand_worked_2x2_tables():
    A = term_category_counts(*columns(DOCUMENTS), CATEGORIES, len(TERMS)).toarray()
    df = np.array([sum(t in set(d[0] or []) for d in DOCUMENTS) for t in range(len(TERMS))])
    n_positive = np.array([sum(c in (d[1] or []) for d in DOCUMENTS) for c in CATEGORIES])
    scores = chi2(*contingency_2x2(A, df[:, None], n_positive, len(DOCUMENTS)))
    # "price" and ECAT: A = 2 (docs 0, 7), B = 3 (2, 4, 5), C = 1 (3), D = 2 (1, 6).
    assert contingency_2x2(A[3, 1], df[3], n_positive[1], len(DOCUMENTS)) == (2, 3, 1, 2)
    assert scores[3, 1] == pytest.approx(chi2_contingency([[2, 3], [1, 2]], correction=False)[0], rel=1e-12)


def test_bad_term_ids_and_labels_are_errors():
    with pytest.raises(ValueError, match="term id 6 is outside the vocabulary's 6 terms"):
        term_category_counts(*columns([([1, 6], ["GCAT"])]), CATEGORIES, len(TERMS))
    with pytest.raises(ValueError, match="label GSPO is not in the categories table"):
        term_category_counts(*columns([([1], ["GCAT", "GSPO"])]), CATEGORIES, len(TERMS))


def write_vectors(directory, documents, rows_per_file: int) -> None:
    directory.mkdir(parents=True)
    for number, start in enumerate(range(0, len(documents), rows_per_file)):
        chunk = documents[start:start + rows_per_file]
        indices, labels = columns(chunk)
        table = pa.table({"doc_id": [f"d{start + i}" for i in range(len(chunk))], "labels": labels,
                          "indices": indices, "values": pa.array([[1.0] * len(d[0] or []) for d in chunk],
                                                                 pa.list_(pa.float32()))})
        pq.write_table(table, directory / f"part-{number:05d}.parquet", row_group_size=2)


def test_count_file_sums_its_batches(tmp_path, monkeypatch):
    monkeypatch.setattr(rank_stage, "BATCH_ROWS", 3)  # three batches in the file
    write_vectors(tmp_path / "split=train", DOCUMENTS, rows_per_file=len(DOCUMENTS))
    documents, A = count_file(str(tmp_path / "split=train" / "part-00000.parquet"), CATEGORIES, len(TERMS))
    assert documents == len(DOCUMENTS)
    assert np.array_equal(A.toarray(), by_hand(DOCUMENTS))


@pytest.mark.parametrize("rows_per_file", [3, 1])  # 1: eight files, summed in two rounds of the tree reduction
def test_rank_over_several_files_matches_scipy_tables(spark, tmp_path, monkeypatch, rows_per_file):
    monkeypatch.setattr(term_selection, "BLOCK_TERMS", 4)  # terms scored in two blocks
    root = tmp_path / "run"
    write_vectors(root / "vectors" / "split=train", DOCUMENTS, rows_per_file=rows_per_file)
    write_vectors(root / "vectors" / "split=test", [([0, 1], ["GCAT"])] * 5, rows_per_file=5)  # not counted
    df = [sum(t in set(d[0] or []) for d in DOCUMENTS) for t in range(len(TERMS))]
    n_positive = [sum(c in (d[1] or []) for d in DOCUMENTS) for c in CATEGORIES]
    (root / "vocabulary").mkdir()
    frequency = [7 * t + 1 for t in range(len(TERMS))]  # the weight stage's count, carried over as it is
    pq.write_table(pa.table({"term_id": pa.array(range(len(TERMS)), pa.int32()), "term": TERMS,
                             "df": pa.array(df, pa.int64()), "frequency": pa.array(frequency, pa.int64()),
                             "idf": [1.0] * len(TERMS)}),
                   root / "vocabulary" / "part-00000.parquet")
    (root / "categories").mkdir()
    pq.write_table(pa.table({"category": CATEGORIES[::-1], "train_positives": pa.array(n_positive[::-1], pa.int64())}),
                   root / "categories" / "part-00000.parquet")

    report = rank(spark, load_config(None, ["corpus.format=synthetic"]),
                  Tables(root=str(root), staging=str(tmp_path / "staging")))
    assert (report.rows_in, report.rows_out) == (len(TERMS), len(TERMS))
    assert report.details == {"scores": list(SCORE_COLUMNS), "categories": len(CATEGORIES),
                              "train_documents": len(DOCUMENTS)}
    parts = sorted((tmp_path / "staging" / "term_ranks").glob("part-*.parquet"))
    assert len(parts) == 1
    read_back = spark.read.parquet(str(tmp_path / "staging" / "term_ranks")).schema
    assert [(f.name, f.dataType.typeName()) for f in read_back.fields] == [
        ("term_id", "integer"), ("term", "string"), ("df", "long"), ("frequency", "long"),
        *((f"{score}_{glob}", "double") for score in ("chi2", "ig", "gr") for glob in ("max", "avg", "mean"))]
    rows = spark.read.parquet(str(tmp_path / "staging" / "term_ranks")).collect()
    assert [r.term_id for r in rows] == list(range(len(TERMS)))  # in term_id order
    A = by_hand(DOCUMENTS)
    shares = np.array(n_positive) / len(DOCUMENTS)
    for row in rows:
        t = row.term_id
        tables = [np.array([[A[t, j], df[t] - A[t, j]],
                            [n_positive[j] - A[t, j], len(DOCUMENTS) - df[t] - n_positive[j] + A[t, j]]])
                  for j in range(len(CATEGORIES))]
        # Independent computations: scipy's chi-square, scikit-learn's mutual information (nats, to bits), and
        # gain ratio as IG over the category's entropy H(c) in bits (scipy), 0 where H(c) = 0.
        per_category = {
            "chi2": [0.0 if (table.sum(axis=0) == 0).any() or (table.sum(axis=1) == 0).any()
                     else chi2_contingency(table, correction=False)[0] for table in tables],
            "ig": [mutual_info_score(None, None, contingency=table) / math.log(2) for table in tables],
        }
        entropies = [entropy(table.sum(axis=0), base=2) for table in tables]
        per_category["gr"] = [ig / h if h > 0 else 0.0 for ig, h in zip(per_category["ig"], entropies)]
        assert (row.term, row.df, row.frequency) == (TERMS[t], df[t], frequency[t])
        for score, values in per_category.items():
            assert getattr(row, f"{score}_max") == pytest.approx(max(values), rel=1e-12, abs=1e-12)
            assert getattr(row, f"{score}_avg") == pytest.approx(float(shares @ values), rel=1e-12, abs=1e-12)
            assert getattr(row, f"{score}_mean") == pytest.approx(float(np.mean(values)), rel=1e-12, abs=1e-12)
