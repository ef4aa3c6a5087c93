"""Saving and loading :mod:`sparktc.ml`'s stages: Spark ML's own layout, so a saved ``PipelineModel`` holding them
loads with ``PipelineModel.load`` in a fresh session.

Every stage writes ``path/metadata`` as pyspark's ``DefaultParamsWriter`` does (class, uid, Params); a Model that
carries data (a vocabulary, a term order) writes it beside, ``path/data``, as Parquet written by pyarrow on the
driver (:func:`sparktc.runtime.parts.write_parts`: model-sized tables, as the weight stage writes ``vocabulary``), and
its own metadata's ``extra`` (small values: counts); a model whose data is files of its own (the one-vs-rest
classifier's model bundle) writes and reads them itself (:meth:`PersistentModel._save_data`,
:meth:`PersistentModel._load_data`). A Param whose value is a stage (the one-vs-rest classifier's ``classifier``) is
saved as that stage in a folder of its own, ``path/NAME``, as pyspark's OneVsRest saves its classifier; a stage whose
Params were renamed reads what an earlier version saved (:meth:`Persistent._upgraded`). An existing ``path`` is
refused unless the writer was asked to overwrite (``stage.write().overwrite().save(path)``, pyspark's semantic), and is
then removed first.
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

import pyarrow as pa
from pyspark.ml.param import Params
from pyspark.ml.util import (
    DefaultParamsReader,
    DefaultParamsWriter,
    MLReadable,
    MLReader,
    MLWritable,
    MLWriter,
)
from pyspark.sql import SparkSession

from sparktc.errors import InputError
from sparktc.runtime import storage
from sparktc.runtime.parts import read_small, write_parts

__all__ = ["StageWriter", "StageReader", "Persistent", "PersistentModel"]

Stage = TypeVar("Stage", bound=Params)
DATA = "data"


class StageWriter(MLWriter):
    """Writes a stage's metadata (and a :class:`PersistentModel`'s data) under a path that must not exist unless
    :meth:`overwrite` was called.
    """

    def __init__(self, instance: Params) -> None:
        super().__init__()
        self.instance = instance

    def save(self, path: str) -> None:
        """Save the stage at ``path``; InputError when ``path`` exists and the writer does not overwrite."""
        if not isinstance(path, str):
            raise InputError(f"save: path must be a str; got {type(path).__name__} {path!r}")
        if not self.shouldOverwrite and storage.exists(self.sparkSession, path):
            raise InputError(f"{path} exists already: {type(self.instance).__name__} is not saved over it; save it "
                             "elsewhere, or replace it with stage.write().overwrite().save(path)")
        super().save(path)

    def _handleOverwrite(self, path: str) -> None:
        storage.delete(self.sparkSession, path)  # asked for by overwrite(): a session of either kind

    def saveImpl(self, path: str) -> None:
        """Write ``path/metadata``, each stage Param's stage in ``path/NAME`` and, for a model with data,
        ``path/data``.
        """
        instance = self.instance
        stages = {name: instance.getOrDefault(name) for name in instance._stage_params if instance.isSet(name)}
        extra = instance._save_data(self.sparkSession, path) if isinstance(instance, PersistentModel) else None
        params = {param.name: value for param, value in instance._paramMap.items() if param.name not in stages}
        DefaultParamsWriter.saveMetadata(instance, path, self.sparkSession, extraMetadata={"extra": extra},
                                         paramMap=params)
        for name, stage in stages.items():
            stage.write().session(self.sparkSession).save(storage.join(path, name))


class StageReader(MLReader[Stage], Generic[Stage]):
    """Reads what :class:`StageWriter` wrote, as the class it was saved from."""

    def __init__(self, cls: type) -> None:
        super().__init__()
        self.cls = cls

    def load(self, path: str) -> Stage:
        """The stage saved at ``path``."""
        spark = self.sparkSession
        if not storage.exists(spark, storage.join(path, "metadata")):
            raise InputError(f"{path}: no saved {self.cls.__name__} (no metadata); give the path it was saved to")
        metadata = DefaultParamsReader.loadMetadata(path, spark)
        saved = metadata["class"].rpartition(".")[2]
        if saved != self.cls.__name__:
            raise InputError(f"{path} holds a saved {saved}, not a {self.cls.__name__}; load it with {saved}.load")
        stages = {name: DefaultParamsReader.loadParamsInstance(storage.join(path, name), spark)
                  for name in self.cls._stage_params if storage.exists(spark, storage.join(path, name, "metadata"))}
        metadata, stages = self.cls._upgraded(metadata, stages)
        if issubclass(self.cls, PersistentModel):
            instance = self.cls._load_data(spark, path, metadata.get("extra"))
        else:
            instance = self.cls()
        instance._resetUid(metadata["uid"])
        DefaultParamsReader.getAndSetParams(instance, metadata)
        return instance._set(**stages)


class Persistent(MLWritable, MLReadable):
    """A stage saved by :class:`StageWriter` and loaded by :class:`StageReader`."""

    #: The Params whose values are stages, each saved in a folder of its own named after it.
    _stage_params: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def _upgraded(cls, metadata: dict[str, Any], stages: dict[str, Params]) -> tuple[dict[str, Any],
                                                                                     dict[str, Params]]:
        """The saved metadata and stage Params as this class reads them: as saved, unless the class maps what an
        earlier version of it saved.
        """
        return metadata, stages

    def write(self) -> StageWriter:
        """The writer of this stage."""
        return StageWriter(self)

    @classmethod
    def read(cls) -> StageReader:
        """The reader of this class."""
        return StageReader(cls)


class PersistentModel(Persistent):
    """A model with data: :meth:`_data` gives it as a table (of :attr:`_columns`) and small values (JSON),
    :meth:`_from_data` makes the model from them; a model whose data is not a table overrides :meth:`_save_data`
    and :meth:`_load_data` instead.
    """

    _columns: tuple[str, ...] = ()

    def _save_data(self, spark: SparkSession, path: str) -> Any:
        """Write the model's data under ``path`` (``path/data``, :meth:`_data`'s table) and give its small values."""
        table, extra = self._data()
        write_parts(table.to_batches(), table.schema, storage.join(path, DATA), 0)
        return extra

    @classmethod
    def _load_data(cls, spark: SparkSession, path: str, extra: Any) -> PersistentModel:
        """The model of the data :meth:`_save_data` wrote under ``path`` and its small values ``extra``."""
        return cls._from_data(read_small(storage.join(path, DATA), list(cls._columns)), extra)

    def _data(self) -> tuple[pa.Table, Any]:
        raise NotImplementedError

    @classmethod
    def _from_data(cls, table: pa.Table, extra: Any) -> PersistentModel:
        raise NotImplementedError
