"""Train: the ``models`` of every category and the model bundle ``model`` that classifies new documents on its own
(:mod:`sparktc.experiment.bundle`), by the run's decision rule (:mod:`sparktc.models.decision`), chosen and
thresholded by cross-validation on the training data when the configuration asks for it
(:mod:`sparktc.models.tuning`).

A method declares one of four ways of fitting it (:mod:`sparktc.models.method`), and a module here fits each:

* ``per_category``: one model per category (LIBLINEAR, Rocchio, logistic regression, binary naive Bayes), in
  grouped tasks of categories balanced by cost;
* ``neighbours``: kNN's stored training set, thresholded per category from leave-one-out scores;
* ``from_sums``: one model for all categories from sums over the training documents (LLSF, the naive Bayes
  mixture);
* ``in_tasks``: one model for all categories fitted in a Spark task of its own on the whole training matrix (NNet,
  LLSF over many terms).

The first two share the grouped category tasks of ``category_tasks``, the last two the thresholds and the
choice of one term count and fbr for the whole model of ``joint``. ``context`` holds what they all share: the
:class:`~sparktc.stages.train.context.TrainContext` (the session, tables, rule, ...) and the ``models`` schema.
``stage`` is the entry, :func:`train`, which picks the module by the method's fitting
(:data:`~sparktc.stages.train.stage.FITTERS`), writes the bundle and applies the models to the training documents.
Weights are stored over the whole vocabulary (zero for terms outside the selection), so scoring needs no term
mapping.
"""

from sparktc.stages.train.stage import STAGE, train

__all__ = ["STAGE", "train"]
