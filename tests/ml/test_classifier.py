"""sparktc.ml's OneVsRestClassifier on the Reuters-21578 R(90) run's own training vectors (a few categories of the
first documents: fits of seconds): saved in a PipelineModel and loaded, it decides again, and so does one saved before
each method owned its settings; only its bundle outlives a fit, until the process ends; wrong Params, settings that
cannot work together and rows it cannot train on are refused. Against the job's decisions and models on the whole of
R(90), and the docs' CrossValidator block, whose grid over the classifier's C reaches the classifier:
tests/ml/test_pipeline.py. The method classes' Params against their modules' fields, without Spark:
tests/ml/test_method_params.py.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pyspark.ml import Pipeline, PipelineModel
from pyspark.ml.linalg import Vectors, VectorUDT
from pyspark.sql import functions as F

from sparktc.errors import ConfigError, InputError
from sparktc.experiment.config import load_config
from sparktc.ml import KNN, Liblinear, OneVsRestClassifier, OneVsRestClassifierModel, classifier, training_tables

REPO = Path(__file__).resolve().parents[2]
#: A small training set for the tests that fit many times: these categories' labels only, the first documents by id.
SMALL_CATEGORIES = ["acq", "crude", "earn", "trade"]
SMALL_DOCUMENTS = 600


@pytest.fixture(scope="module")
def vectors(spark, reuters21578_run):
    """The run's weighted vectors (doc_id, labels, features as Spark ML sparse vectors over its vocabulary, split)."""
    output = reuters21578_run[0]
    n_terms = len(pd.read_parquet(f"{output}/vocabulary", columns=["term_id"]))
    as_vector = F.udf(lambda indices, values: Vectors.sparse(n_terms, indices, values), VectorUDT(), useArrow=False)
    return spark.read.parquet(f"{output}/vectors").select(
        "doc_id", "labels", as_vector("indices", "values").alias("features"), F.col("split").cast("string")).cache()


@pytest.fixture(scope="module")
def job_settings(reuters21578_run) -> dict:
    """The run's [train] settings as Params (the configuration it was run with, read back from its file): its
    LIBLINEAR classifier's and the shared ones.
    """
    from conftest import reuters21578_overrides

    train = load_config(str(REPO / "conf" / "reuters21578.toml"), reuters21578_overrides()).train
    assert train.method == "liblinear"
    own = train.liblinear
    return {"classifier": Liblinear(solver=own.solver, C=own.C, epsilon=own.epsilon, bias=own.bias),
            "threshold": train.threshold, "thresholding": train.thresholding}


@pytest.fixture(scope="module")
def small(vectors):
    """The first training documents by id, their labels cut to a few categories: fits of a few seconds."""
    kept = F.array(*map(F.lit, SMALL_CATEGORIES))
    return (vectors.filter(F.col("split") == "train").drop("split").orderBy("doc_id").limit(SMALL_DOCUMENTS)
            .withColumn("labels", F.array_intersect("labels", kept)).cache())


@pytest.fixture(scope="module")
def fitted(small, job_settings) -> OneVsRestClassifierModel:
    """One fit of the run's settings on the small training set, shared by the tests that score with it (the whole
    R(90) fit, against the job's decisions and models, is tests/ml/test_pipeline.py's).
    """
    return OneVsRestClassifier(**job_settings).fit(small)


def decisions(frame) -> dict[str, list[str]]:
    return {row.doc_id: list(row.predicted) for row in frame.select("doc_id", "predicted").collect()}


def test_saved_in_a_pipeline_model_and_loaded_it_decides_again(spark, fitted, vectors, tmp_path):
    test = vectors.filter(F.col("split") == "test").drop("split").limit(400)
    before = decisions(fitted.transform(test))
    PipelineModel(stages=[fitted]).save(str(tmp_path / "pipeline"))
    loaded = PipelineModel.load(str(tmp_path / "pipeline"))
    [stage] = loaded.stages
    assert isinstance(stage, OneVsRestClassifierModel) and stage.uid == fitted.uid
    assert stage.bundle.path.startswith(str(tmp_path))  # its own copy: the fit's work directory may go
    assert stage.getClassifier().getC() == fitted.getClassifier().getC() and stage.categories == fitted.categories
    assert stage.getClassifier().uid == fitted.getClassifier().uid
    assert decisions(loaded.transform(test)) == before
    assert sum(map(len, before.values())) > 100
    # The feature stages' refusals: a path that exists is not saved over, another stage's save is not loaded.
    with pytest.raises(InputError, match="pipeline exists already: OneVsRestClassifierModel is not saved over it; "
                                         "save it elsewhere, or replace it with stage.write\\(\\).overwrite"):
        fitted.save(str(tmp_path / "pipeline"))
    [saved] = (tmp_path / "pipeline" / "stages").iterdir()
    with pytest.raises(InputError, match="holds a saved OneVsRestClassifierModel, not a OneVsRestClassifier;"):
        OneVsRestClassifier.load(str(saved))
    # The estimator is saved with its Params and its classifier's (in a folder of its own), alone or in a Pipeline.
    ovr = OneVsRestClassifier(classifier=KNN(k=7), tuneFbr=[0.1, 0.3], thresholding="scutfbr")
    Pipeline(stages=[ovr]).save(str(tmp_path / "estimator"))
    [again] = Pipeline.load(str(tmp_path / "estimator")).getStages()
    assert isinstance(again, OneVsRestClassifier) and again.settings() == ovr.settings()
    assert isinstance(again.getClassifier(), KNN) and again.getClassifier().getK() == 7
    with pytest.raises(InputError, match="estimator exists already: OneVsRestClassifier is not saved over it"):
        ovr.save(str(tmp_path / "estimator"))


def test_the_fit_leaves_only_its_bundle_which_outlives_the_model_until_the_process_ends(small, vectors, tmp_path,
                                                                                          monkeypatch):
    """``pipeline.fit(train).transform(test)`` in one line: the model goes before its lazy DataFrame runs, and the
    DataFrame still reads the bundle; the work directory is removed at exit.
    """
    at_exit = []
    monkeypatch.setattr(classifier.atexit, "register", lambda function, *args: at_exit.append((function, args)))
    test = vectors.filter(F.col("split") == "test").drop("split").limit(100)
    # kNN scores against the training vectors: the bundle's own copy, the fit's tables being gone.
    scored = OneVsRestClassifier(workDir=str(tmp_path / "work"), classifier=KNN(k=10), thresholding="scut",
                                 folds=2).fit(small).transform(test)
    gc.collect()
    [work] = os.listdir(tmp_path / "work")
    assert work.startswith("sparktc-ovr-") and os.listdir(tmp_path / "work" / work) == ["model"]
    assert {code for row in scored.collect() for code in row.predicted} == set(SMALL_CATEGORIES)
    assert at_exit == [(training_tables.remove_work_dir, (str(tmp_path / "work" / work),))]
    function, args = at_exit[0]
    function(*args)
    assert os.listdir(tmp_path / "work") == []


@pytest.mark.parametrize(("stage", "params", "named"), [
    (Liblinear, {"C": -1.0}, "^Param C \\(train.liblinear.C\\) = -1.0 is out of range; expected > 0$"),
    (Liblinear, {"C": "big"}, "^Param C \\(train.liblinear.C\\) = 'big': expected float"),
    (Liblinear, {"tuneC": [1.0, 0.0]}, "^Param tuneC \\(tune.liblinear.C\\) = \\[1.0, 0.0\\] is out of range"),
    (KNN, {"k": 0}, "^Param k \\(train.knn.k\\) = 0 is out of range"),
    (OneVsRestClassifier, {"thresholding": "best"}, "^Param thresholding \\(train.thresholding\\) = 'best' is not "
                                                    "allowed"),
    (OneVsRestClassifier, {"rcutK": 0}, "^Param rcutK \\(train.rcut_k\\) = 0 is out of range"),
    (OneVsRestClassifier, {"featuresCol": ""}, "^Param featuresCol is \"\"; give a column's name$"),
    (OneVsRestClassifier, {"workDir": 3}, "^Param workDir must be a str"),
    (OneVsRestClassifier, {"classifier": "knn"}, "^Param classifier = 'knn': give one of sparktc.ml's methods, "
                                                 "Liblinear, Rocchio, KNN, LLSF, NNet, SklearnLinear"),
])
def test_a_wrong_param_is_refused_when_set(stage, params, named):
    with pytest.raises(ConfigError, match=named):
        stage(**params)
    with pytest.raises(ConfigError, match=named):
        stage().setParams(**params)


def test_a_param_of_another_stage_or_method_is_no_keyword():
    """The signatures are explicit, as pyspark's: a method's setting is its classifier's, not the estimator's."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'C'"):
        OneVsRestClassifier(C=1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'regParam'"):
        OneVsRestClassifier().setParams(regParam=0.1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'C'"):
        KNN(C=1.0)


def test_params_that_cannot_work_together_are_refused_before_any_spark_work(small, tmp_path):
    work = tmp_path / "work"
    refusals = [
        ({"tuneFbr": [0.1, 0.3]}, "tuneFbr = \\[0.1, 0.3\\] with thresholding = 'fixed'.*set thresholding = 'scutfbr'"),
        ({"classifier": Liblinear(tuneSharedC=True)}, "Liblinear.tuneSharedC = true needs Liblinear.tuneC"),
    ]
    for params, message in refusals:
        with pytest.raises(ConfigError, match=message):
            OneVsRestClassifier(workDir=str(work), **params).fit(small)
    with pytest.raises(InputError, match="^OneVsRestClassifier: featuresCol = 'tokens' is not a column of the "
                                         "DataFrame"):
        OneVsRestClassifier(workDir=str(work), featuresCol="tokens").fit(small)
    with pytest.raises(InputError, match="^OneVsRestClassifier: labelsCol = 'doc_id' is string, not category codes "
                                         "\\(array<string>\\)"):
        OneVsRestClassifier(workDir=str(work), labelsCol="doc_id").fit(small)
    assert not work.exists()  # refused before the work directory, and before any job


def test_a_cluster_master_needs_a_work_directory(small, monkeypatch):
    from sparktc.ml import classifier

    monkeypatch.setattr(classifier.session, "master", lambda spark: "spark://cluster:7077")
    with pytest.raises(ConfigError, match="Param workDir is not set, and the master is 'spark://cluster:7077'"):
        OneVsRestClassifier().fit(small)


def test_bad_training_rows_are_named_and_the_work_directory_removed(spark, tmp_path):
    work = tmp_path / "work"
    rows = [("d1", ["a"], Vectors.sparse(3, [0], [1.0])), ("d1", ["b"], Vectors.sparse(3, [1], [1.0]))]
    frame = spark.createDataFrame(rows, ["doc_id", "labels", "features"])
    with pytest.raises(InputError, match="doc id 'd1' is given 2 times \\(column of Param idCol\\)"):
        OneVsRestClassifier(workDir=str(work)).fit(frame)
    few = spark.createDataFrame([("d1", ["a"], Vectors.sparse(3, [0], [1.0])),
                                 ("d2", ["b"], Vectors.sparse(3, [1], [1.0]))], ["doc_id", "labels", "features"])
    with pytest.raises(ConfigError, match="OneVsRestClassifier: folds = 5 with 2 training documents"):
        OneVsRestClassifier(workDir=str(work), thresholding="scut").fit(few)
    sizes = spark.createDataFrame([("d1", ["a"], Vectors.sparse(3, [0], [1.0])),
                                   ("d2", ["b"], Vectors.sparse(4, [1], [1.0]))], ["doc_id", "labels", "features"])
    with pytest.raises(InputError, match="vectors of sizes 3, 4"):
        OneVsRestClassifier(workDir=str(work)).fit(sizes)
    assert os.listdir(work) == []


def test_transform_refuses_an_output_column_already_there(fitted, vectors):
    with pytest.raises(InputError, match="^OneVsRestClassifierModel: predictedCol = 'labels' is a column of the "
                                         "DataFrame already"):
        fitted.copy({fitted.predictedCol: "labels"}).transform(vectors)


def test_vectors_become_the_lists_of_their_non_zero_entries():
    import pyarrow as pa

    from sparktc.ml.training_tables import vector_entries

    struct = pa.struct([("type", pa.int8()), ("size", pa.int32()), ("indices", pa.list_(pa.int32())),
                        ("values", pa.list_(pa.float64()))])
    rows = [{"type": 0, "size": 6, "indices": [1, 4], "values": [0.5, 2.0]},
            {"type": 1, "size": None, "indices": None, "values": [0.0, 3.0, 0.0, 1e-3, 0.0, 0.0]},
            None,
            {"type": 0, "size": 6, "indices": [0, 2, 5], "values": [1.0, 0.0, -4.0]},
            {"type": 0, "size": 6, "indices": [], "values": []}]
    indices, values, sizes = vector_entries(pa.array(rows, struct))
    assert indices.to_pylist() == [[1, 4], [1, 3], [], [0, 5], []]
    assert values.to_pylist() == [[0.5, 2.0], [3.0, np.float32(1e-3)], [], [1.0, -4.0], []]
    assert values.type == pa.list_(pa.float32()) and indices.type == pa.list_(pa.int32())
    assert list(sizes) == [6, 6, -1, 6, 6]  # a null vector's size is -1: the fit names its document


def test_labels_become_indices_of_the_models_categories_and_unknown_ones_come_after():
    from sparktc.ml.classifier import label_indices

    position = {"acq": 0, "crude": 1, "earn": 2}
    assert label_indices(["earn", "acq"], position) == [0.0, 2.0]
    assert label_indices(["zinc", "crude", "gold", "crude"], position) == [1.0, 3.0, 4.0]
    assert label_indices([], position) == [] and label_indices(None, position) is None


def test_a_pipeline_saved_with_flat_params_loads_and_decides_as_it_did(spark):
    """tests/fixtures/ml_flat_params: saved before each method owned its settings (its README shows how), read
    with today's stages: the kNN estimator's knnK is its classifier's k, the LIBLINEAR model's C its classifier's C,
    and the model decides the eight documents as it did then.
    """
    saved = REPO / "tests" / "fixtures" / "ml_flat_params"
    [estimator] = Pipeline.load(str(saved / "pipeline")).getStages()
    assert isinstance(estimator.getClassifier(), KNN) and estimator.getClassifier().getK() == 3
    assert (estimator.getThresholding(), estimator.getTuneFbr(), estimator.getFolds()) == ("scutfbr", [0.1, 0.3], 2)
    assert estimator.uid == "OneVsRestClassifier_3eccdaafbd16"
    [model] = PipelineModel.load(str(saved / "pipeline-model")).stages
    assert isinstance(model.getClassifier(), Liblinear)
    assert (model.getClassifier().getC(), model.getClassifier().getEpsilon(), model.getThresholding()) == (
        0.5, 0.01, "fixed")
    rows = [(f"d{i}", labels, Vectors.sparse(4, terms, [1.0] * len(terms))) for i, (labels, terms) in enumerate([
        (["a"], [0]), (["a"], [0, 1]), (["b"], [2]), (["b"], [2, 3]), (["a", "b"], [1, 2]), ([], [3]),
        (["a"], [0, 3]), (["b"], [2, 3])])]
    scored = model.transform(spark.createDataFrame(rows, ["doc_id", "labels", "features"]))
    assert decisions(scored) == {"d0": ["a"], "d1": ["a"], "d2": ["b"], "d3": ["b"], "d4": ["a", "b"], "d5": [],
                                 "d6": ["a"], "d7": ["b"]}
