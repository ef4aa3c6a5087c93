"""Features: from text to sparse vectors and term rankings. The LYRL2004 tokenizer (``text``), the term
weighting schemes, ltc, tf-idf, scikit-learn's, binary and supervised (``weighting``), the term-selection
functions (chi-square, information gain and gain ratio, all three scored by ``rank``) with their
globalizations and Debole's reduction factor (``term_selection``), and the CSR matrices built from vector
columns (``matrix``). Pure numpy/scipy functions, testable without Spark.
"""

__all__ = ["matrix", "term_selection", "text", "weighting"]
