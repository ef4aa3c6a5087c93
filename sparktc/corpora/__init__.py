"""Corpora: readers of the formats the papers use (Reuters-21578 SGML, LYRL2004 token and qrels files, JSON
Lines, plain text), the record types every reader yields (documents with their split and labels, and
rejects that name file, line and reason), and the synthetic corpus written in the LYRL2004 format.
Plain Python and pyarrow: nothing here starts Spark."""

__all__ = ["files", "jsonl", "lyrl2004", "lyrl2004_columnar", "plain_text", "records", "reuters21578", "synthetic"]
