"""sparktc.ml's feature stages against the job's own output on Reuters-21578 R(90) (the suite's shared run): the
Analyzer's terms are the tokenize stage's tokens, TermWeighting fitted on the training documents gives the weight
stage's vocabulary, df, idf and every document's vector, TermSelector the rank stage's order and scores; Params are
refused as the configuration refuses them; the fitted stages save and load, alone and in a PipelineModel; the
vectors are Spark ML's own (ArraysToVector and VectorToArrays round trip; LinearSVC fits on them).

One fit of each kind, module-scoped, serves every test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pytest
from conftest import chi2_order, shared_data

from sparktc.errors import ConfigError, InputError, SparktcError


def job_table(run: str, name: str) -> pd.DataFrame:
    """A table of the job's run, read with pyarrow (split partitions as a column)."""
    return ds.dataset(Path(run) / name, format="parquet", partitioning="hive").to_table().to_pandas()


@pytest.fixture(scope="module")
def run(reuters21578_run) -> str:
    return reuters21578_run[0]


@pytest.fixture(scope="module")
def analyzed(spark, run):
    """Every R(90) document's terms by the Analyzer with the run's settings, cached for the module."""
    from sparktc.ml import Analyzer

    documents = spark.read.parquet(f"{run}/documents").select("doc_id", "split", "labels", "text")
    terms = Analyzer(stopList=str(shared_data("stopwords", "smart_english.stop"))).transform(documents).drop("text")
    terms.cache()
    yield terms
    terms.unpersist()


@pytest.fixture(scope="module")
def weighting(analyzed):
    """TermWeighting (the run's ltc) fitted on the training documents' terms."""
    from sparktc.ml import TermWeighting

    return TermWeighting(inputCol="terms", outputCol="features").fit(analyzed.where("split = 'train'"))


@pytest.fixture(scope="module")
def weighted(weighting, analyzed):
    frame = weighting.transform(analyzed)
    frame.cache()
    yield frame
    frame.unpersist()


@pytest.fixture(scope="module")
def selector(weighted):
    """TermSelector (the run's chi2 under max) fitted on the training documents' vectors."""
    from sparktc.ml import TermSelector

    return TermSelector(featuresCol="features", labelsCol="labels").fit(weighted.where("split = 'train'"))


def test_analyzer_terms_are_the_tokenize_stage_tokens(analyzed, run):
    tokens = job_table(run, "tokens").set_index("doc_id")["tokens"]
    terms = analyzed.select("doc_id", "terms").toPandas().set_index("doc_id")["terms"]
    assert len(terms) == len(tokens) == 10_789
    differing = [doc for doc, found in terms.items() if list(found) != (tokens[doc].split(" ") if tokens[doc] else [])]
    assert not differing


def test_term_weighting_fits_the_weight_stage_vocabulary(weighting, run):
    vocabulary = job_table(run, "vocabulary").sort_values("term_id")
    assert weighting.vocabulary == vocabulary["term"].tolist()
    np.testing.assert_array_equal(weighting.df, vocabulary["df"].to_numpy())
    np.testing.assert_array_equal(weighting.frequency, vocabulary["frequency"].to_numpy())
    np.testing.assert_array_equal(weighting.idf, vocabulary["idf"].to_numpy())
    assert weighting.documents == 7_770  # R(90)'s ApteMod training documents


def test_term_weighting_gives_the_weight_stage_vectors(weighted, run):
    job = job_table(run, "vectors").set_index("doc_id")
    found = weighted.select("doc_id", "features").toPandas()
    assert len(found) == len(job) == 10_789
    assert {vector.size for vector in found["features"]} == {21_137}
    differing = [doc for doc, vector in zip(found["doc_id"], found["features"])
                 if not (np.array_equal(vector.indices, job.at[doc, "indices"])
                         and np.array_equal(vector.values, job.at[doc, "values"].astype(np.float64)))]
    assert not differing


def test_term_selector_ranks_as_the_rank_stage(selector, run):
    ranks = job_table(run, "term_ranks").sort_values("term_id")
    np.testing.assert_array_equal(selector.order, chi2_order(run))
    np.testing.assert_array_equal(selector.scores, ranks["chi2_max"].to_numpy())


def test_term_selector_keeps_the_top_k_terms_of_each_vector(selector, weighted, run):
    model = selector.copy({selector.topK: 100})
    best = {int(term) for term in chi2_order(run)[:100]}
    rows = model.transform(weighted).select("features", "selected").limit(300).collect()
    assert any(row.selected.indices.size for row in rows)
    for row in rows:
        kept = [int(i) for i in row.features.indices if i in best]
        assert list(row.selected.indices) == kept and row.selected.size == row.features.size
        np.testing.assert_array_equal(row.selected.values, [row.features[i] for i in kept])


def test_supervised_weighting_factors_are_the_rank_score(analyzed, run):
    from sparktc.ml import TermWeighting

    model = TermWeighting(scheme="supervised", score="ig", globalScore="avg").fit(analyzed.where("split = 'train'"))
    ranks = job_table(run, "term_ranks").sort_values("term_id")
    np.testing.assert_array_equal(model.idf, ranks["ig_avg"].to_numpy())


@pytest.mark.parametrize("make, words", [
    (lambda ml: ml.TermWeighting(scheme="ltf"), "scheme (weight.scheme) = 'ltf' is not allowed"),
    (lambda ml: ml.TermWeighting(minDf=0), "minDf (select.min_df) = 0 is out of range"),
    (lambda ml: ml.TermWeighting(minDf="3"), "minDf (select.min_df) = '3': expected int"),
    (lambda ml: ml.TermWeighting(scheme="given"), "scheme (weight.scheme) = 'given' is a vector corpus's"),
    (lambda ml: ml.Analyzer(ngrams=4), "ngrams (tokenize.ngrams) = 4 is out of range"),
    (lambda ml: ml.Analyzer(analyzer="nltk"), "analyzer (tokenize.analyzer) = 'nltk' is not allowed"),
    (lambda ml: ml.TermSelector(score="frequency"), "score (rank.score) = 'frequency'"),
    (lambda ml: ml.TermSelector().setGlobalScore("min"), "globalScore (rank.global_score) = 'min' is not allowed"),
    (lambda ml: ml.TermSelector(topK=-1), "topK (select.top_k) = -1 is out of range"),
    (lambda ml: ml.ArraysToVector(size=0), "size must be an integer in [1, 2147483647]"),
    (lambda ml: ml.VectorToArrays(inputCol=3), "inputCol must be a str"),
])
def test_a_wrong_param_is_refused_naming_it(make, words):
    import sparktc.ml as ml

    with pytest.raises(ConfigError) as refused:
        make(ml)
    assert words in str(refused.value)


def test_a_grids_numpy_values_and_tuples_are_taken_as_the_configuration_takes_them():
    from sparktc.ml import Liblinear, TermWeighting

    minimum = TermWeighting(minDf=np.int64(3)).getMinDf()
    assert minimum == 3 and type(minimum) is int
    liblinear = Liblinear(C=np.float64(0.5), tuneC=(0.1, 1.0))
    assert type(liblinear.getC()) is float and liblinear.getTuneC() == [0.1, 1.0]


def test_a_value_a_stage_cannot_take_is_not_offered_as_allowed():
    from sparktc.ml import TermWeighting

    with pytest.raises(ConfigError) as refused:
        TermWeighting(scheme="ltf")
    assert str(refused.value).endswith("allowed values: 'ltc', 'tfidf', 'sklearn', 'binary', 'supervised'")


def test_a_wrong_value_set_past_the_setters_is_refused_before_spark_work(spark, analyzed):
    from sparktc.ml import Analyzer, TermWeighting

    weighting = TermWeighting()
    with pytest.raises(ConfigError, match=r"scheme \(weight.scheme\) = 'bm25' is not allowed"):
        weighting.copy({weighting.scheme: "bm25"}).fit(analyzed)  # as a ParamGridBuilder's grid sets it
    with pytest.raises(InputError, match="inputCol = 'words' is not a column of the DataFrame"):
        TermWeighting(inputCol="words").fit(analyzed)
    with pytest.raises(InputError, match="inputCol = 'doc_id' is string, not terms"):
        TermWeighting(inputCol="doc_id").fit(analyzed)
    with pytest.raises(ConfigError, match="stopList \\(tokenize.stop_list\\) = '/nowhere/english.stop': no such file"):
        Analyzer(stopList="/nowhere/english.stop").transform(spark.createDataFrame([("a text",)], ["text"]))
    with pytest.raises(InputError, match="outputCol = 'terms' is a column of the DataFrame already"):
        Analyzer().transform(analyzed.withColumn("text", analyzed["doc_id"]))


def test_the_stop_list_is_a_packaged_name_or_a_file_as_the_configuration_takes_it(spark, tmp_path, monkeypatch):
    from sparktc.ml import Analyzer

    smart = Path(__file__).resolve().parents[2] / "conf" / "stopwords" / "smart_english.stop"
    assert {"the", "again"} <= set(smart.read_text().split())
    texts = spark.createDataFrame([("The bank rates rose again",)], ["text"])
    # Each Analyzer reads its stop list when it transforms, on the driver: one Spark job scores them all.
    for column, stop_list in (("by_name", "smart"), ("by_path", str(smart)), ("default", None)):
        texts = Analyzer(outputCol=column, **({"stopList": stop_list} if stop_list else {})).transform(texts)
    # A file that exists is taken as a path, as tokenize.stop_list takes it: a name only where no such file is.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "smart").write_text("bank\n")
    row = Analyzer(stopList="smart", outputCol="file").transform(texts).first()
    assert row.by_name == row.by_path == ["bank", "rate", "rose"]
    assert row.default == ["the", "bank", "rate", "rose", "again"]  # the configuration's default, "": none
    assert row.file == ["the", "rate", "rose", "again"]
    with pytest.raises(ConfigError, match="^Param stopList \\(tokenize.stop_list\\) = 'smrt': no such file or "
                                          "directory; give a file's path or a packaged stop list's name: smart$"):
        Analyzer(stopList="smrt").transform(texts)


def test_an_unknown_stop_list_is_refused_when_the_param_is_set():
    from sparktc.ml import Analyzer

    refusal = ("^Param stopList \\(tokenize.stop_list\\) = 'klingon': no such file or directory; give a file's path "
               "or a packaged stop list's name: smart$")
    with pytest.raises(ConfigError, match=refusal):
        Analyzer(stopList="klingon")
    analyzer = Analyzer(stopList="smart")
    for setting in (lambda: analyzer.setStopList("klingon"), lambda: analyzer.setParams(stopList="klingon"),
                    lambda: analyzer.copy({analyzer.stopList: "klingon"})):
        with pytest.raises(ConfigError, match=refusal):
            setting()
    assert analyzer.getStopList() == "smart"


def test_models_save_and_load_alone_and_in_a_pipeline(spark, weighting, selector, run, tmp_path):
    from pyspark.ml import PipelineModel

    from sparktc.ml import Analyzer, ArraysToVector, TermSelectorModel, TermWeightingModel, VectorToArrays

    weighting.save(str(tmp_path / "weighting"))
    loaded = TermWeightingModel.load(str(tmp_path / "weighting"))
    assert loaded.uid == weighting.uid and loaded.vocabulary == weighting.vocabulary
    assert loaded.getScheme() == "ltc" and loaded.documents == weighting.documents
    np.testing.assert_array_equal(loaded.idf, weighting.idf)
    with pytest.raises(SparktcError, match=r"exists already.*write\(\)\.overwrite\(\)\.save"):
        weighting.save(str(tmp_path / "weighting"))
    for stage in (Analyzer(), ArraysToVector(size=3), VectorToArrays()):  # the transformers: the same refusal
        with pytest.raises(InputError, match=f"exists already: {type(stage).__name__} is not saved over it"):
            stage.save(str(tmp_path / "weighting"))
    selector.copy({selector.topK: 50}).write().overwrite().save(str(tmp_path / "weighting"))
    with pytest.raises(InputError, match="holds a saved TermSelectorModel, not a TermWeightingModel"):
        TermWeightingModel.load(str(tmp_path / "weighting"))
    reloaded = TermSelectorModel.load(str(tmp_path / "weighting"))
    assert reloaded.getTopK() == 50
    np.testing.assert_array_equal(reloaded.order, selector.order)

    pipeline = PipelineModel([Analyzer(stopList=str(shared_data("stopwords", "smart_english.stop"))), weighting,
                              selector.copy({selector.topK: 500})])
    pipeline.save(str(tmp_path / "pipeline"))
    # Read straight from Parquet: Spark 4.3 feeds such a scan's batches to Arrow UDFs as they are (columnar input),
    # which fails once the rows hold a VectorUDT column; the stages' mapInArrow does not.
    spark.read.parquet(f"{run}/documents").select("doc_id", "text").orderBy("doc_id").limit(40) \
        .write.parquet(str(tmp_path / "texts"))
    texts = spark.read.parquet(str(tmp_path / "texts"))
    before = pipeline.transform(texts).select("doc_id", "selected").collect()
    after = PipelineModel.load(str(tmp_path / "pipeline")).transform(texts).select("doc_id", "selected").collect()
    assert before == after and any(row.selected.numNonzeros() for row in after)


def test_arrays_and_vectors_round_trip(spark, run):
    from pyspark.ml.linalg import DenseVector, SparseVector, VectorUDT

    from sparktc.ml import ArraysToVector, VectorToArrays

    vectors = spark.read.parquet(f"{run}/vectors").select("doc_id", "indices", "values").orderBy("doc_id").limit(200)
    as_vectors = ArraysToVector(size=21_137).transform(vectors)
    assert isinstance(as_vectors.schema["features"].dataType, VectorUDT)
    back = VectorToArrays(indicesCol="ids", valuesCol="weights").transform(as_vectors).collect()
    for row in back:
        assert row.features == SparseVector(21_137, row.indices, [float(v) for v in row["values"]])
        assert row.ids == row.indices and row.weights == [float(v) for v in row["values"]]
    dense = spark.createDataFrame([(DenseVector([0.0, 2.5, 0.0, 1.0]),), (SparseVector(4, [0, 3], [0.0, 7.0]),)],
                                  ["features"])
    assert [(row.indices, row["values"]) for row in VectorToArrays().transform(dense).collect()] == \
        [([1, 3], [2.5, 1.0]), ([3], [7.0])]  # zeros are not entries, stored or not
    with pytest.raises(ConfigError, match="size is not set"):
        ArraysToVector().transform(vectors)


def test_spark_linear_svc_fits_on_the_weighted_vectors(weighted):
    from pyspark.ml.classification import LinearSVC
    from pyspark.sql import functions as F

    train = weighted.where("split = 'train'").withColumn("label", F.array_contains("labels", "earn").cast("double"))
    model = LinearSVC(featuresCol="features", labelCol="label", maxIter=5).fit(train)
    assert model.numFeatures == 21_137
    test = model.transform(weighted.where("split = 'test'").withColumn(
        "label", F.array_contains("labels", "earn").cast("double")))
    accuracy = test.where("prediction = label").count() / test.count()
    assert accuracy > 0.9  # earn is a third of the test documents: a vector-blind model would score about 0.64


def test_sklearn_settings_give_scikit_learns_tfidf_vectorizer(spark):
    """LibMultiLabel's features (scikit-learn's analyzer, bigrams, min_df, max_features, smoothed idf) through
    Analyzer and TermWeighting equal ``TfidfVectorizer``'s own: same terms (n-grams named with their spaces), same
    order, same weights (to the float32 the job stores).
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    from sparktc.ml import Analyzer, TermWeighting

    rng = np.random.default_rng(41)
    words = [f"w{i:02d}_x" if i % 7 == 0 else f"word{i:02d}" for i in range(40)]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(2, 25)))).title() + "." for _ in range(60)]
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_features=150)
    expected = vectorizer.fit_transform(texts[:45]), vectorizer.transform(texts[45:])
    frame = spark.createDataFrame([(i, text) for i, text in enumerate(texts)], "id int, text string")
    terms = Analyzer(analyzer="sklearn", stemmer="none", ngrams=2).transform(frame)
    model = TermWeighting(scheme="sklearn", minDf=2, maxFeatures=150).fit(terms.where("id < 45"))
    assert model.vocabulary == vectorizer.get_feature_names_out().tolist()
    assert any(" " in term for term in model.vocabulary)
    rows = model.transform(terms).orderBy("id").select("features").collect()
    got = np.array([row.features.toArray() for row in rows])
    np.testing.assert_allclose(got, np.vstack([part.toarray() for part in expected]), rtol=0, atol=1e-7)
