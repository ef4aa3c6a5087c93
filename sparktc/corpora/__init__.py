"""Corpora: the collections the papers use, read into one kind of record. Readers of Reuters-21578 SGML
(``reuters21578``), LYRL2004 token and qrels files line by line (``lyrl2004``) and in columnar form
(``lyrl2004_columnar``), LYRL2004 vector files, ltc-weighted and kept as given (``lyrl2004_vectors``), JSON Lines
(``jsonl``), multi-label LIBSVM vectors (``libsvm``), LibMultiLabel's tab-separated texts (``libmultilabel_text``)
and plain text (``plain_text``); the rows of a table Spark reads, held to JSON Lines' checks (``table``); over the
file handling they share (``files``: gzip and bz2, encodings, line numbers; ``line_ranges``: a large plain file cut
into byte ranges, one parsing task each); the records every reader yields, documents with split and labels or
rejects naming file, line and reason (``records``), and what a parsing task counts in those it writes (``tallies``);
the one rule every reader holds labels to (``labels``); each document's labels from the qrels, closed under the
hierarchy, as a parsing task attaches them (``label_index``), over canonical decimal ids recognised from an Arrow
array's bytes (``decimals``); and the synthetic corpus written in the LYRL2004
format (``synthetic``: its shape and files), its model (``synthetic_model``: word and category distributions,
calibrated) and its documents (``synthetic_documents``: drawn a block at a time and written as token-file and qrels
text), over the names it is made of (``synthetic_categories``: the vocabulary, the topic hierarchy, the industries
tree, the regions and the random streams). What a corpus format is (``formats``: its files, reader, records and
categories), each format's module declaring its own, and the formats by name (``registry``), which the rest of
sparktc asks instead of naming formats. Plain Python, numpy and pyarrow.
"""

__all__ = ["decimals", "files", "formats", "jsonl", "label_index", "labels", "libmultilabel_text", "libsvm",
           "line_ranges", "lyrl2004", "lyrl2004_columnar", "lyrl2004_vectors", "plain_text", "records", "registry",
           "reuters21578", "synthetic", "synthetic_categories", "synthetic_documents", "synthetic_model", "table",
           "tallies"]
