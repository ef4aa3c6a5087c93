"""sparktc.ml's method classes and the one-vs-rest classifier's Params against the configuration they stand for,
without Spark: each method class's Params are its module's fields (name, doc, default, rule), its keyword signature
and getters and setters name them all; the estimator's own Params are the settings every method shares; a copy with
a grid's values reaches the classifier; a stage saved with flat Params reads as today's; refusals name the Param;
every stage of sparktc.ml has pyspark.ml's accessors and signatures, and the API reference shows them. Fitting,
saving and CrossValidator over them: tests/ml/test_classifier.py; labels as indices, no ids:
tests/ml/test_labels_and_ids.py.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from pyspark.ml import Model
from pyspark.ml.tuning import ParamGridBuilder

import sparktc.ml as ml
from sparktc.errors import ConfigError, InputError
from sparktc.experiment.config import TrainSettings, load_config
from sparktc.experiment.config.sections import TuneSettings
from sparktc.ml import KNN, LLSF, Liblinear, NNet, OneVsRestClassifier, OneVsRestClassifierModel, Rocchio, SklearnLinear
from sparktc.ml.classifier_params import in_param_words
from sparktc.ml.methods import CLASSIFIERS, method_keys
from sparktc.ml.params import camel_case, param_name
from sparktc.models.registry import METHODS

COLUMNS = {"featuresCol", "labelsCol", "idCol", "labelNames", "predictedCol", "predictionCol", "scoresCol", "labelCol",
           "workDir"}
#: What each Model does not set, as pyspark's Models do not (IDFModel has no setMinDocFreq): the Params its fit was
#: made by, which its data or bundle holds the result of; a Model sets the rest, what its transform reads.
FIT_ONLY = {
    "TermWeightingModel": {"scheme", "minDf", "maxFeatures", "labelsCol", "score", "globalScore"},
    "TermSelectorModel": {"labelsCol", "score", "globalScore"},
    "OneVsRestClassifierModel": {"classifier", "idCol", "workDir", "labelNames", "thresholding", "threshold", "fbr",
                                 "rcutK", "folds", "seed", "validation", "foldFile", "tuneTerms", "tuneFbr",
                                 "tuneSharedFbr", "tuneSharedTerms", "tuneObjective"},
}


def keywords(function) -> set[str]:
    return {name for name, found in inspect.signature(function).parameters.items()
            if found.kind is inspect.Parameter.KEYWORD_ONLY}


def test_every_method_that_scores_the_weighted_vectors_has_a_class_and_naive_bayes_none():
    assert list(CLASSIFIERS) == [name for name, method in METHODS.items() if method.vector_column == "values"]
    assert set(METHODS) - set(CLASSIFIERS) == {"nb"}  # raw term counts: no room for them in a features vector
    assert [cls.__name__ for cls in CLASSIFIERS.values()] == ["Liblinear", "Rocchio", "KNN", "LLSF", "NNet",
                                                             "SklearnLinear"]


@pytest.mark.parametrize("cls", [Liblinear, Rocchio, KNN, LLSF, NNet, SklearnLinear])
def test_a_method_class_is_its_modules_fields_with_a_signature_and_accessors_for_each(cls):
    spec = METHODS[cls.method]
    stage = cls()
    keys = method_keys(cls.method)
    fields = [("train", f) for f in dataclasses.fields(spec.parameters)]
    if spec.search is not None:
        fields += [("tune", f) for f in dataclasses.fields(spec.search)]
    assert {param.name for param in stage.params} == set(keys)
    assert len(keys) == len(fields)
    assert keywords(cls.__init__) == keywords(cls.setParams) == set(keys)
    for section, field in fields:
        name = param_name(section, field.name)
        param = stage.getParam(name)
        assert name in {"tuneC", "tuneSolver", "tunePositiveWeight", "tuneSharedC", "tuneSharedPositiveWeight"} \
            if section == "tune" else "_" not in name
        default = field.default_factory() if field.default is dataclasses.MISSING else field.default
        assert keys[name] == (f"{section}.{cls.method}", field.name)
        assert param.doc.startswith(field.metadata["doc"]) and param.doc.endswith(
            f"(as {section}.{cls.method}.{field.name})")
        accessor = name[:1].upper() + name[1:]
        assert getattr(stage, f"get{accessor}")() == default
        assert getattr(stage, f"set{accessor}")(default) is stage and stage.isSet(name)


def test_the_estimators_own_params_are_the_classifier_the_columns_and_the_shared_settings():
    ovr = OneVsRestClassifier()
    shared = {camel_case(f.name) for f in dataclasses.fields(TrainSettings) if f.name != "method"} | {
        "tune" + camel_case(f.name)[:1].upper() + camel_case(f.name)[1:] for f in dataclasses.fields(TuneSettings)}
    names = {param.name for param in ovr.params}
    assert names == {"classifier"} | COLUMNS | shared
    assert keywords(OneVsRestClassifier.__init__) == keywords(OneVsRestClassifier.setParams) == names
    assert isinstance(ovr.getClassifier(), Liblinear)  # the configuration's default method


def accessor_name(prefix: str, param: str) -> str:
    return prefix + param[:1].upper() + param[1:]


def accessor(stage_class: type, prefix: str, param: str):
    return getattr(stage_class, accessor_name(prefix, param), None)


@pytest.mark.parametrize("name", ml.__all__)
def test_every_param_of_every_stage_has_a_documented_typed_getter_and_setter(name):
    """pyspark.ml's conventions on each stage of sparktc.ml: an Estimator or Transformer has ``getX`` and ``setX``
    for each Param ``X``, and its keyword signature (``__init__``, ``setParams``) names them all; a Model the getters
    and the setters of what its transform reads (:data:`FIT_ONLY`: the rest). Each has a docstring and a typed
    signature, and the getter gives the Param's value.
    """
    cls = getattr(ml, name)
    stage = cls()
    names = {param.name for param in stage.params}
    model = issubclass(cls, Model)
    unset = FIT_ONLY.get(name, set()) if model else set()
    assert unset <= names
    for param in sorted(names):
        getter = accessor(cls, "get", param)
        assert getter is not None and getter.__doc__.strip(), f"{name}.{accessor_name('get', param)}"
        returned = inspect.signature(getter).return_annotation
        assert returned is not inspect.Signature.empty, f"{name}.{accessor_name('get', param)}: no return type"
        if stage.isDefined(param):
            assert getter(stage) == stage.getOrDefault(param)
        setter = accessor(cls, "set", param)
        if param in unset:
            assert setter is None, f"{name}.{accessor_name('set', param)}: the fit's, not the model's"
            continue
        assert setter is not None and setter.__doc__.strip(), f"{name}.{accessor_name('set', param)}"
        [value] = list(inspect.signature(setter).parameters.values())[1:]
        assert value.annotation is not inspect.Parameter.empty, f"{name}.{accessor_name('set', param)}: no value type"
        if stage.isDefined(param) and param != "classifier":
            assert setter(stage, stage.getOrDefault(param)) is stage and stage.isSet(param)
    if not model:
        assert keywords(cls.__init__) == keywords(cls.setParams) == names
        for found in [*inspect.signature(cls.__init__).parameters.values()][1:]:
            assert found.annotation is not inspect.Parameter.empty, f"{name}({found.name}): no type"
            if found.default is not None:  # a column's name: the signature shows the Param's default
                assert found.default == stage.getOrDefault(found.name), f"{name}({found.name}=...)"


def test_the_params_make_the_configuration_the_job_reads():
    ovr = OneVsRestClassifier(classifier=Liblinear(C=0.5, tuneC=[0.1, 1.0]), thresholding="scutfbr",
                              tuneFbr=[0.1, 0.3], folds=3)
    config = ovr.config("/tmp")
    assert config.train.method == "liblinear" and config.train.liblinear.C == 0.5 and config.train.folds == 3
    assert config.tune.liblinear.C == [0.1, 1.0] and config.tune.fbr == [0.1, 0.3]
    same = load_config({"corpus": {"format": "libsvm", "path": "/tmp"}, "weight": {"scheme": "given"},
                        "train": {"method": "liblinear", "thresholding": "scutfbr", "folds": 3,
                                  "liblinear": {"C": 0.5}},
                        "tune": {"fbr": [0.1, 0.3], "liblinear": {"C": [0.1, 1.0]}}})
    assert config.train == same.train and config.tune == same.tune
    knn = OneVsRestClassifier(classifier=KNN(k=7), thresholding="scut").config("/tmp")
    assert knn.train.method == "knn" and knn.train.knn.k == 7
    with pytest.raises(ConfigError, match="^OneVsRestClassifier: classifier = 'knn' with thresholding = 'fixed' and "
                                          "threshold = 0 assigns each document every category of any one of its k = 7 "
                                          "nearest neighbours"):
        OneVsRestClassifier(classifier=KNN(k=7)).config("/tmp")


def test_a_grid_over_the_classifiers_params_reaches_it_through_copy():
    knn = KNN(k=30)
    ovr = OneVsRestClassifier(classifier=knn, thresholding="scut")
    grid = ParamGridBuilder().addGrid(knn.k, [10, 30]).addGrid(ovr.folds, [2, 3]).build()
    copies = [ovr.copy(extra) for extra in grid]
    assert [(c.getClassifier().getK(), c.getFolds()) for c in copies] == [(10, 2), (10, 3), (30, 2), (30, 3)]
    assert knn.getK() == 30 and ovr.getFolds() == 5  # the originals keep their values
    assert all(c.getClassifier() is not knn and c.getClassifier().uid == knn.uid for c in copies)
    model = ovr._copyValues(OneVsRestClassifierModel())
    assert model.copy({knn.k: 10}).getClassifier().getK() == 10 and model.getClassifier().getK() == 30


def test_a_stage_saved_with_flat_params_is_read_as_todays():
    """The metadata of tests/fixtures/ml_flat_params (a kNN estimator saved before each method owned its
    settings): the method's Params become its classifier's, the shared ones stay, the other methods' are dropped.
    """
    metadata = {"paramMap": {"method": "knn", "knnK": 3, "thresholding": "scutfbr", "tuneFbr": [0.1, 0.3],
                             "folds": 2, "C": 0.5},
                "defaultParamMap": {"method": "liblinear", "C": 1.0, "knnK": 30, "tuneC": [], "folds": 5,
                                    "tuneNbAlpha": [], "sklearnC": 1.0}}
    read, stages = OneVsRestClassifier._upgraded(metadata, {})
    assert read["paramMap"] == {"thresholding": "scutfbr", "tuneFbr": [0.1, 0.3], "folds": 2}
    assert read["defaultParamMap"] == {"folds": 5}
    [classifier] = stages.values()
    assert isinstance(classifier, KNN) and classifier.getK() == 3 and classifier.isSet("k")
    liblinear = {"paramMap": {"C": 0.25, "tuneC": [0.1, 1.0], "tuneSharedC": True}, "defaultParamMap": {}}
    _, stages = OneVsRestClassifierModel._upgraded(liblinear, {})
    assert stages["classifier"].getC() == 0.25 and stages["classifier"].getTuneSharedC() is True
    assert stages["classifier"].getTuneC() == [0.1, 1.0]
    saved = {"paramMap": {"folds": 2}, "defaultParamMap": {}}
    assert OneVsRestClassifier._upgraded(saved, {"classifier": KNN(k=4)})[0] is saved  # saved today: as it is
    with pytest.raises(InputError, match="saved with method = 'nb', which sparktc.ml has no classifier for"):
        OneVsRestClassifier._upgraded({"paramMap": {"method": "nb"}, "defaultParamMap": {}}, {})


@pytest.mark.parametrize(("message", "words"), [
    ("tune.liblinear.shared_C = true needs tune.liblinear.C", "Liblinear.tuneSharedC = true needs Liblinear.tuneC"),
    ("train.knn.k = 0 with train.thresholding = 'scut'", "KNN.k = 0 with thresholding = 'scut'"),
    ("tune.fbr = [0.1] with train.method = 'knn'", "tuneFbr = [0.1] with classifier = 'knn'"),
    ("train.nb.alpha and train.rcut_k", "train.nb.alpha and rcutK"),
])
def test_a_configuration_message_names_the_params(message, words):
    assert in_param_words(message) == words


def test_a_params_doc_is_its_fields_meaning_and_a_wrong_value_is_refused_as_the_configuration_refuses_it():
    assert KNN().getParam("k").doc.startswith(METHODS["knn"].parameters.__dataclass_fields__["k"].metadata["doc"])
    with pytest.raises(ConfigError, match="^Param maxIter \\(train.sklearn_linear.max_iter\\) = 0 is out of range"):
        SklearnLinear(maxIter=0)
    with pytest.raises(ConfigError, match="^Param learningRate \\(train.nnet.learning_rate\\) = -1.0"):
        NNet().setLearningRate(-1.0)
    assert Rocchio(beta=None).getBeta() == Rocchio().getBeta()  # None: left as it is, the default


def test_the_guides_classifier_example_makes_the_configuration_it_says(capsys):
    from docs_examples import example

    namespace: dict = {}
    exec(example("spark-ml-classifier"), namespace)
    config = namespace["ovr"].config("/tmp")
    assert config.train.method == "knn" and config.train.knn.k == 30 and config.train.thresholding == "scutfbr"
    assert config.tune.fbr == [0.1, 0.3]
    assert capsys.readouterr().out.startswith("k: " + METHODS["knn"].parameters.__dataclass_fields__["k"].metadata[
        "doc"])


def test_the_api_reference_shows_each_stages_keyword_signature_and_params_table():
    """What mkdocs' griffe reads statically: the written-out signatures (no ``**params``), and the extension's table
    of each stage's Params (scripts/docstrings_for_mkdocs.py), a method's doc its field's meaning.
    """
    import importlib.util

    import griffe
    from conftest import REPO

    script = REPO / "scripts" / "docstrings_for_mkdocs.py"
    spec = importlib.util.spec_from_file_location("docstrings_for_mkdocs", script)
    extension = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extension)
    ml = griffe.load("sparktc.ml", search_paths=[str(REPO)])
    for path, stage in [("classifier.OneVsRestClassifier", OneVsRestClassifier()), ("methods.Liblinear", Liblinear()),
                        ("methods.KNN", KNN())]:
        signature = ml[path]["__init__"].parameters
        assert [p.kind.value for p in signature][1:] == ["keyword-only"] * len(stage.params)
        assert {p.name for p in signature} - {"self"} == {param.name for param in stage.params}
        table = extension.params_table(f"sparktc.ml.{path}")
        assert table.count("\n| `") == len(stage.params)
    k = METHODS["knn"].parameters.__dataclass_fields__["k"].metadata["doc"]
    assert f"| `k` | `30` | `getK` `setK` | {k}" in extension.params_table("sparktc.ml.methods.KNN")
    model = extension.params_table("sparktc.ml.classifier.OneVsRestClassifierModel")  # the fit's: a getter only
    assert "| `getThresholding` |" in model and "setThresholding" not in model and "`setPredictionCol`" in model
    assert "`getThresholding` `setThresholding`" in extension.params_table("sparktc.ml.classifier.OneVsRestClassifier")
    assert extension.params_table("sparktc.ml.methods.MethodParams") == ""
    assert extension.params_table("sparktc.models.knn.KnnParameters") == ""
