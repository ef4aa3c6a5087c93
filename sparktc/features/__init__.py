"""Features: from text to sparse vectors and term rankings. The LYRL2004 tokenizer (``text``), ltc
weighting (``weighting``), the term-selection functions (chi-square, which ``rank`` uses, and
information gain and gain ratio) with their globalizations and Debole's reduction factor
(``term_selection``), and the CSR matrices built from vector columns (``matrix``). Pure numpy/scipy
functions, testable without Spark."""

__all__ = ["matrix", "term_selection", "text", "weighting"]
