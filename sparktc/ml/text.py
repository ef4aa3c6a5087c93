"""The tokenize stage's analyzers as a Spark ML Transformer: texts -> terms.

:class:`Analyzer` runs the code the tokenize stage and classify run (:func:`sparktc.features.text.token_strings`
with :func:`sparktc.stages.tokenize.worker_analyzer`'s analyzer, one per Python worker with its table of stems),
batch by batch (:func:`sparktc.ml.vectors.appended`): a document's terms are the tokenize stage's stored tokens of it,
named as the vocabulary names them (:func:`sparktc.features.text.term_names`: a scikit-learn n-gram "bank of england"
with its spaces).
"""

from __future__ import annotations

import pyarrow as pa
from pyspark import keyword_only
from pyspark.ml import Transformer
from pyspark.sql import DataFrame
from pyspark.sql.types import ArrayType, StringType, StructField

from sparktc.corpora.records import split_tokens
from sparktc.errors import InputError
from sparktc.experiment.config import resolve_stop_list
from sparktc.features.text import ANALYZERS, TermFeatures, stop_words_of, term_names, token_strings
from sparktc.ml.params import (
    HasInputCol,
    HasOutputCol,
    check_column,
    check_output_column,
    setting_default,
    setting_label,
    setting_param,
)
from sparktc.ml.persistence import Persistent
from sparktc.ml.vectors import appended
from sparktc.runtime import storage
from sparktc.stages.tokenize import worker_analyzer

__all__ = ["Analyzer"]


class Analyzer(Transformer, HasInputCol, HasOutputCol, Persistent):
    """Texts (``inputCol``, string) -> terms (``outputCol``, array<string>) by the tokenize stage's analyzer.

    The Params are [tokenize]'s, with its defaults and rules: ``analyzer`` (lyrl2004 | sklearn), ``stopList`` (a stop
    list file, one word per line, or a packaged stop list's name, "smart", as ``tokenize.stop_list`` takes them
    (:func:`sparktc.experiment.config.resolve_stop_list`; a name no stop list has, or no such file, is refused when
    set), read on the driver at each transform; "", the default,
    keeps every word), ``stemmer`` (porter | none) and ``ngrams`` (1 to 3). [tokenize]'s title settings
    (``title_weight``, ``title_terms``) are not Params: they need a title column beside the text, and the texts here
    are the whole documents (Reuters-21578's hold their titles). A null text has no terms.

    Example::

        analyzer = Analyzer(inputCol="text", outputCol="terms", stopList="smart")
        analyzer.transform(spark.createDataFrame([("Bank rates rose",)], ["text"])).first().terms
        # ['bank', 'rate', 'rose']
    """

    analyzer = setting_param("tokenize", "analyzer", "analyzer", "the analyzer: " + ", ".join(ANALYZERS))
    stopList = setting_param("tokenize", "stop_list", "stopList", "the stop list: a file, one word per line, or a "
                             "packaged one's name (\"smart\"); \"\" keeps every word", check=resolve_stop_list)
    stemmer = setting_param("tokenize", "stemmer", "stemmer", "the stemmer: porter or none")
    ngrams = setting_param("tokenize", "ngrams", "ngrams", "runs of up to this many adjacent stems are terms too")

    @keyword_only
    def __init__(self, *, inputCol: str = "text", outputCol: str = "terms", analyzer: str | None = None,
                 stopList: str | None = None, stemmer: str | None = None, ngrams: int | None = None) -> None:
        super().__init__()
        self._setDefault(inputCol="text", outputCol="terms",
                         **{name: setting_default("tokenize", key) for name, key in (
                             ("analyzer", "analyzer"), ("stopList", "stop_list"), ("stemmer", "stemmer"),
                             ("ngrams", "ngrams"))})
        self._set(**self._input_kwargs)

    @keyword_only
    def setParams(self, *, inputCol: str | None = None, outputCol: str | None = None, analyzer: str | None = None,
                  stopList: str | None = None, stemmer: str | None = None, ngrams: int | None = None) -> Analyzer:
        """Set the Params given."""
        return self._set(**self._input_kwargs)

    def setAnalyzer(self, value: str) -> Analyzer:
        """Set ``analyzer``."""
        return self._set(analyzer=value)

    def setStopList(self, value: str) -> Analyzer:
        """Set ``stopList``."""
        return self._set(stopList=value)

    def setStemmer(self, value: str) -> Analyzer:
        """Set ``stemmer``."""
        return self._set(stemmer=value)

    def setNgrams(self, value: int) -> Analyzer:
        """Set ``ngrams``."""
        return self._set(ngrams=value)

    def getAnalyzer(self) -> str:
        """The analyzer's name."""
        return self.getOrDefault(self.analyzer)

    def getStopList(self) -> str:
        """The stop list: a file, or a packaged stop list's name ("" for none)."""
        return self.getOrDefault(self.stopList)

    def getStemmer(self) -> str:
        """The stemmer's name."""
        return self.getOrDefault(self.stemmer)

    def getNgrams(self) -> int:
        """The longest n-gram."""
        return self.getOrDefault(self.ngrams)

    def _transform(self, dataset: DataFrame) -> DataFrame:
        self.checked()
        check_column(self, dataset, "inputCol", lambda found: isinstance(found, StringType), "texts (string)")
        output = check_output_column(self, dataset)
        spark = dataset.sparkSession
        label = setting_label("tokenize", "stop_list", "stopList")
        stop_list = resolve_stop_list(self.getStopList(), label)  # a name, or a file's absolute path, or a URI
        try:
            stop_words = stop_words_of(stop_list, lambda path: storage.read_text(spark, path))
        except OSError as error:  # a URI's file: its file system is asked only now
            raise InputError(f"{label} = {stop_list!r} cannot be read ({error.strerror or error}); give a stop list "
                             "file, one word per line, or \"\" for none") from None
        stemmer, name = self.getStemmer(), self.getAnalyzer()
        features = TermFeatures(self.getNgrams(), joiner=ANALYZERS[name].joiner)

        column = self.getInputCol()

        def terms(batch: pa.RecordBatch) -> list[pa.Array]:
            analyzer = worker_analyzer(stop_words, stemmer, name)
            lists = split_tokens(token_strings(analyzer, batch.column(column), features=features))
            return [pa.ListArray.from_arrays(lists.offsets, term_names(lists.values))]

        return appended(dataset, [StructField(output, ArrayType(StringType()))], terms)
