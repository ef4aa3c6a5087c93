"""OneVsRestClassifier in pyspark.ml's forms, on tens of documents made here: labels as indices (array<double>, as
``StringIndexer`` makes them) named by ``labelNames`` or the column's metadata, and no id column (each row's place is
its id). The same documents fitted in sparktc's own form (codes, ids) give the same model and decisions; a
``StringIndexer`` + ``OneVsRest(LogisticRegression)`` flow on the same documents decides as it does; what is not a
label index, or cannot go without ids, is refused naming it. The accessors and signatures of every stage, without
Spark: tests/ml/test_method_params.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from pyspark.ml.classification import LogisticRegression, OneVsRest
from pyspark.ml.evaluation import MultilabelClassificationEvaluator
from pyspark.ml.linalg import Vectors, VectorUDT
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sparktc.errors import ConfigError, InputError
from sparktc.ml import OneVsRestClassifier, TermSelector, TermWeighting

#: The categories, each with terms of its own (four of the twelve), named in an order that is not their codes' so
#: that an index is not a category's place among the codes.
NAMES = ["earn", "acq", "crude"]
TERMS_EACH = 4


def schema(**columns: T.DataType) -> T.StructType:
    return T.StructType([T.StructField(name, kind) for name, kind in columns.items()])


CODES, INDICES, VECTOR = T.ArrayType(T.StringType()), T.ArrayType(T.DoubleType()), VectorUDT()


def documents(count: int, seed: int, multi: bool) -> list[tuple[str, list[str], object]]:
    """``count`` documents (id, codes, a sparse vector of 12 terms): each of one category (of two when ``multi``
    draws it), holding two or three of each of its categories' terms (0.5 to 1) and one term drawn from all (0.2).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for n in range(count):
        first = n % len(NAMES)
        codes = [NAMES[first]] + ([NAMES[(first + 1) % len(NAMES)]] if multi and rng.random() < 0.3 else [])
        own = {int(t) for code in codes for t in NAMES.index(code) * TERMS_EACH + rng.choice(
            TERMS_EACH, size=int(rng.integers(2, 4)), replace=False)}
        weights = {int(rng.integers(0, 12)): 0.2} | {term: float(rng.uniform(0.5, 1.0)) for term in own}
        rows.append((f"d{n:02d}", codes, Vectors.sparse(len(NAMES) * TERMS_EACH, weights)))
    return rows


@pytest.fixture(scope="module")
def multi_label(spark):
    """Thirty training and twelve test documents, some of two categories, in sparktc's form (doc_id, labels as
    codes, features) and as indices of NAMES without ids (labels as array<double>, features).
    """
    train, test = documents(30, 1, True), documents(12, 2, True)
    coded = spark.createDataFrame(train, schema(doc_id=T.StringType(), labels=CODES, features=VECTOR))
    indexed = spark.createDataFrame([([float(NAMES.index(code)) for code in codes], vector)
                                     for _, codes, vector in train], schema(labels=INDICES, features=VECTOR))
    return coded, indexed, spark.createDataFrame(test, schema(doc_id=T.StringType(), labels=CODES, features=VECTOR))


def test_indices_without_ids_fit_the_model_and_decisions_of_codes_with_ids(multi_label):
    """The generated ids sort as the rows come, as d00, d01, ... do: the same training order, so the same LIBLINEAR
    models; a row's prediction indexes NAMES (its labels' index space), its predicted codes the same categories.
    """
    coded, indexed, test = multi_label
    ours = OneVsRestClassifier().fit(coded)
    theirs = OneVsRestClassifier(labelNames=NAMES).fit(indexed)
    assert ours.categories == theirs.categories == sorted(NAMES)
    assert ours.labels == sorted(NAMES) and theirs.labels == NAMES and theirs.getLabelNames() == NAMES
    by_codes, by_indices = ours.transform(test).collect(), theirs.transform(test).collect()
    assert [row.predicted for row in by_indices] == [row.predicted for row in by_codes]
    assert [row.scores for row in by_indices] == [row.scores for row in by_codes]  # the same weights, exactly
    assert sum(map(len, (row.predicted for row in by_codes))) >= len(by_codes)
    for row in by_indices:  # each prediction the index of its code in NAMES; each label its codes' indices
        assert [NAMES[int(index)] for index in row.prediction] == row.predicted
        assert row.label == sorted(float(NAMES.index(code)) for code in row.labels)
    for row in by_codes:
        assert [sorted(NAMES)[int(index)] for index in row.prediction] == row.predicted
    # A test set of indices: the label column is the indices given, sorted; named labelCol, it is left as it is.
    as_indices = test.select("doc_id", F.transform("labels", lambda code: F.array_position(F.lit(NAMES), code) - 1.0)
                             .alias("labels"), "features")
    scored = theirs.transform(as_indices).collect()
    assert [row.label for row in scored] == [row.label for row in by_indices]
    kept = theirs.copy({theirs.labelCol: "labels"}).transform(as_indices)
    assert "label" not in kept.columns and [row.prediction for row in kept.collect()] == [
        row.prediction for row in by_indices]


def test_a_string_indexer_flow_and_pysparks_one_vs_rest_decide_as_it_does(spark, capsys):
    """The guide's StringIndexer block (docs/notebooks.md): the indexer's indices and metadata name the categories;
    fitted by RCut (k = 1: one category per document, as a multiclass classifier decides), the model assigns each
    test document the category pyspark's OneVsRest of LogisticRegression does, its true one.
    """
    from docs_examples import example

    def single(rows):
        return spark.createDataFrame([(codes[0], vector) for _, codes, vector in rows],
                                     schema(category=T.StringType(), features=VECTOR))

    train, test = single(documents(36, 3, False)), single(documents(12, 4, False))
    namespace = {"train": train}
    exec(example("spark-ml-string-indexer"), namespace)
    assert capsys.readouterr().out == "True\n"
    indexer, ours = namespace["indexer"], namespace["model"]
    indexed_train, indexed_test = indexer.transform(train), indexer.transform(test)
    pyspark_ovr = OneVsRest(classifier=LogisticRegression(maxIter=10, regParam=0.01), parallelism=3).fit(indexed_train)
    expected = [row.prediction for row in pyspark_ovr.transform(indexed_test).collect()]
    assert expected == [row.label for row in indexed_test.collect()]  # the test documents are separable
    assert ours.labels == indexer.labels and ours.categories == sorted(indexer.labels)
    scored = ours.transform(indexed_test.select(F.array("label").alias("labels"), "features"))
    rows = scored.collect()
    assert [row.prediction for row in rows] == [[index] for index in expected]
    assert [row.predicted for row in rows] == [[indexer.labels[int(index)]] for index in expected]
    evaluator = MultilabelClassificationEvaluator(metricName="subsetAccuracy")  # reads prediction and label
    assert evaluator.evaluate(scored) == 1.0


def test_what_is_not_a_label_index_or_needs_ids_is_refused_naming_it(spark, multi_label, tmp_path):
    coded, indexed, _ = multi_label
    work = tmp_path / "work"
    rows = [([0.0], Vectors.sparse(3, [0], [1.0])), ([1.0, 2.5], Vectors.sparse(3, [1], [1.0]))]
    halves = spark.createDataFrame(rows, schema(labels=INDICES, features=VECTOR)).coalesce(1)
    with pytest.raises(InputError, match="^OneVsRestClassifier: the training document 'part-00000-row-0000000002' has "
                                         "labels \\[1.0, 2.5\\] \\(column 'labels', Param labelsCol\\): label "
                                         "indices are whole numbers from 0, below 100,000"):
        OneVsRestClassifier(workDir=str(work)).fit(halves)
    with pytest.raises(InputError, match="the training document .* has labels \\[2.0\\] .* below 2, the number of "
                                         "names in labelNames$"):
        OneVsRestClassifier(workDir=str(work), labelNames=["a", "b"]).fit(
            spark.createDataFrame([("x", [2.0], Vectors.sparse(3, [0], [1.0]))],
                                  schema(doc_id=T.StringType(), labels=INDICES, features=VECTOR)))
    with pytest.raises(InputError, match="^OneVsRestClassifier: labelNames names label indices, and labelsCol = "
                                         "'labels' holds category codes \\(array<string>\\)"):
        OneVsRestClassifier(workDir=str(work), labelNames=NAMES).fit(coded)
    with pytest.raises(ConfigError, match="^OneVsRestClassifier: Param foldFile = '.*folds.tsv' gives each "
                                          "document's fold by its id, and the DataFrame has no ids \\(no column "
                                          "'doc_id', Param idCol\\)"):
        OneVsRestClassifier(workDir=str(work), foldFile=str(tmp_path / "folds.tsv")).fit(indexed)
    with pytest.raises(InputError, match="^OneVsRestClassifier: idCol = 'doc_id' is not a column of the DataFrame"):
        OneVsRestClassifier(workDir=str(work), idCol="doc_id").fit(indexed)  # set, it is wanted
    with pytest.raises(ConfigError, match="^Param labelNames names 'acq' twice"):
        OneVsRestClassifier(labelNames=["acq", "earn", "acq"])
    with pytest.raises(ConfigError, match="^Param labelNames = 'acq': give a list of category codes"):
        OneVsRestClassifier().setLabelNames("acq")
    assert not work.exists()  # each refused before the work directory


def test_term_ranking_and_supervised_weights_count_indices_as_the_codes_they_stand_for(spark, multi_label):
    """TermSelector's scores and TermWeighting's supervised factors over labels as indices are those over codes: a
    category is counted the same whatever names it.
    """
    coded, indexed, _ = multi_label
    by_codes = TermSelector(topK=5).fit(coded)
    by_indices = TermSelector(topK=5).fit(indexed)
    assert list(by_indices.order) == list(by_codes.order) and np.allclose(by_indices.scores, by_codes.scores)
    rows = [(codes, [float(NAMES.index(code)) for code in codes], [f"t{i}" for i in vector.indices])
            for _, codes, vector in documents(30, 1, True)]
    frame = spark.createDataFrame(rows, schema(codes=CODES, indices=INDICES, terms=CODES))
    weighting = TermWeighting(scheme="supervised")
    factors = weighting.copy({weighting.labelsCol: "codes"}).fit(frame).idf
    assert np.allclose(weighting.copy({weighting.labelsCol: "indices"}).fit(frame).idf, factors)
    assert factors.max() > factors.min()  # the terms of one category score above the term of all
