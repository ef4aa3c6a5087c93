"""Models: the classifiers and how their scores become decisions. What a method declares (``method``) and the
methods by name (``registry``, one registration line each); one-vs-rest LIBLINEAR (``linear``),
Rocchio (``rocchio``), kNN (``knn``), LLSF's truncated-SVD least squares (``llsf``), multinomial naive
Bayes (``naive_bayes``), the one-hidden-layer network for all categories (``nnet``), scikit-learn's logistic
regression (``sklearn_linear``), the thresholding
strategies SCut, SCutFBR, proportional, PCut and RCut (``thresholds``), LibMultiLabel's micromacro-freq thresholding
across categories (``micromacro``), the decision rule that picks method and thresholding (``decision``), per-category
cross-validated tuning (``tuning``), a fold assignment taken in (``fold_file``), Platt-calibrated blends of two
methods' scores (``calibration``), and scoring batches of documents on the executors (``scoring``; linear scores in
float32, rechecked in float64 where a decision or the ranking is in doubt: ``float32_scoring``).
Pure functions over numpy, scipy and pyarrow: nothing here needs Spark.
"""

__all__ = ["calibration", "decision", "float32_scoring", "fold_file", "knn", "linear", "llsf", "method", "micromacro",
           "naive_bayes", "nnet", "registry", "rocchio", "scoring", "sklearn_linear", "thresholds", "tuning"]
