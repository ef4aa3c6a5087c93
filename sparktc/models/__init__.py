"""Models: the classifiers and how their scores become decisions. One-vs-rest LIBLINEAR (``linear``),
Rocchio (``rocchio``), kNN (``knn``), the thresholding strategies SCut, SCutFBR, PCut and RCut
(``thresholds``), per-category cross-validated tuning (``tuning``), and the model bundle a training run
writes for classifying new documents (``bundle``). All but ``bundle`` are pure functions over numpy and
scipy matrices."""

__all__ = ["bundle", "knn", "linear", "rocchio", "thresholds", "tuning"]
