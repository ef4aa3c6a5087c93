"""Documents in integer form (issue 39: term ids against the training terms from ingest on).

Each against the string path it replaces, an independent computation from the same token strings:

* :func:`training_term_ids` against a Counter per document of the tokens among the sorted training terms, the
  tokens outside them counted;
* :func:`id_vectors` against :func:`term_vectors` over the token strings, bit for bit, for every scheme, with and
  without a ``select.min_df`` cut, on the LYRL2004 fixtures and on a seeded corpus of invented words;
* the weight stage's per-file work (``vectorize_file``, supervised weighting's ``count_training_file``) on
  Parquet files of each form: the same ``vectors`` files and the same A counts;
* ingest's token-file work on the token lists the LYRL2004 reader reads (no join, no split) against the same work
  on the token strings it read before: the training terms, the documents in integer form and the tallies.
"""

from __future__ import annotations

import gzip
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from conftest import invented_words, lyrl2004_fixture

from sparktc.corpora import lyrl2004_columnar
from sparktc.corpora.line_ranges import byte_ranges
from sparktc.corpora.records import TEST, TRAIN
from sparktc.corpora.tallies import RecordTally
from sparktc.features.term_selection import vocabulary_terms
from sparktc.features.weighting import (
    SCHEMES,
    id_vectors,
    term_factors,
    term_vectors,
    token_counts,
    training_term_ids,
    vocabulary_ids,
    vocabulary_of,
)
from sparktc.runtime.parts import parquet_files, write_parts
from sparktc.schemas import TERM_ID_RECORD_SCHEMA
from sparktc.stages.ingest.on_workers import as_term_ids
from sparktc.stages.ingest.parsing import TermTally
from sparktc.stages.weight import count_training_file, vectorize_file

pytestmark = pytest.mark.filterwarnings("error")


def fixture_corpus() -> pa.Table:
    """The LYRL2004 fixtures' documents as the reader gives them (doc_id, split, labels, tokens)."""
    tables = [pa.Table.from_batches(list(lyrl2004_columnar.read_corpus_file(lyrl2004_fixture(name).read_bytes(),
                                                                            name)))
              for name in ("lyrl2004_tokens_train.dat", "lyrl2004_tokens_test_pt0.dat.gz")]
    return pa.concat_tables(tables).select(["doc_id", "split", "labels", "tokens"])


def invented_corpus() -> pa.Table:
    """300 documents (100 training) of Zipf-drawn invented words, some of the test documents' words in no training
    document, one training and one test document of no token, labels from three categories.
    """
    rng = np.random.default_rng(39)
    words = np.array(invented_words(rng, 400))
    tokens = [" ".join(words[np.minimum(rng.zipf(1.3, rng.integers(1, 60)), len(words)) - 1]) for _ in range(300)]
    tokens[5] = tokens[150] = ""
    codes = np.array(["a", "b", "c"])
    return pa.table({"doc_id": [str(i) for i in range(300)], "split": [TRAIN] * 100 + [TEST] * 200,
                     "labels": [sorted(set(codes[rng.integers(0, 3, 2)])) for _ in range(300)], "tokens": tokens})


CORPORA = {"lyrl2004 fixtures": fixture_corpus, "invented words": invented_corpus}


def training_terms(corpus: pa.Table) -> tuple[pa.Table, int]:
    """The training terms (term_id, term, df, frequency) as weight counts them, and N."""
    train = corpus.filter(pc.equal(corpus["split"], TRAIN))
    return vocabulary_of([token_counts(train["tokens"])]), len(train)


def integer_form(corpus: pa.Table, training: pa.Table) -> tuple[pa.Table, int]:
    """``corpus`` with its token strings replaced by term_ids and term_counts; each document's tokens outside
    training.
    """
    term_ids, term_counts, outside = training_term_ids(corpus["tokens"], training["term"].combine_chunks())
    return corpus.drop_columns(["tokens"]).append_column("term_ids", term_ids).append_column(
        "term_counts", term_counts), outside


@pytest.mark.parametrize("make", CORPORA.values(), ids=CORPORA.keys())
def test_term_ids_are_each_documents_training_terms_counted(make):
    corpus = make()
    training, _ = training_terms(corpus)
    position = {term: i for i, term in enumerate(training["term"].to_pylist())}
    ints, outside = integer_form(corpus, training)
    assert outside.dtype == np.int32 and outside.sum() > 0
    for tokens, ids, counts, out in zip(corpus["tokens"].to_pylist(), ints["term_ids"].to_pylist(),
                                        ints["term_counts"].to_pylist(), outside.tolist()):
        counted = Counter(tokens.split())
        assert out == sum(n for token, n in counted.items() if token not in position)
        pairs = sorted((position[token], n) for token, n in counted.items() if token in position)
        assert (ids, counts) == ([i for i, _ in pairs], [n for _, n in pairs])
    assert ints.schema.field("term_ids").type == ints.schema.field("term_counts").type == pa.list_(pa.int32())


@pytest.mark.parametrize("min_df", [1, 2])
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("make", CORPORA.values(), ids=CORPORA.keys())
def test_vectors_from_term_ids_are_the_token_strings_vectors_bit_for_bit(make, scheme, min_df):
    corpus = make()
    training, n_train = training_terms(corpus)
    kept = vocabulary_terms(training["df"].to_numpy(), training["frequency"].to_numpy(), min_df, 0, 0.0)
    vocabulary = training.take(pa.array(kept))
    assert (len(vocabulary) < len(training)) == (min_df > 1)
    df = vocabulary["df"].to_numpy()
    scores = np.random.default_rng(1).random(len(df)) if scheme == "supervised" else None
    factors = term_factors(scheme, df, n_train, scores)
    ints, _ = integer_form(corpus, training)
    expected = term_vectors(corpus["tokens"], vocabulary["term"].combine_chunks(), factors, scheme)
    found = id_vectors(ints["term_ids"], ints["term_counts"], vocabulary_ids(training, vocabulary), factors, scheme)
    for name, a, b in zip(("indices", "values", "counts"), expected, found):
        assert a.equals(b), name


def test_the_weight_stages_file_work_is_the_same_on_either_form(tmp_path):
    corpus = invented_corpus()
    training, n_train = training_terms(corpus)
    vocabulary = training.take(pa.array(vocabulary_terms(training["df"].to_numpy(), training["frequency"].to_numpy(),
                                                         2, 0, 0.0)))
    terms, df = vocabulary["term"].combine_chunks(), vocabulary["df"].to_numpy()
    factors = term_factors("ltc", df, n_train)
    to_vocabulary = vocabulary_ids(training, vocabulary)
    ints, _ = integer_form(corpus, training)
    for name, table in (("strings", corpus), ("ints", ints)):
        write_parts(table.to_batches(max_chunksize=64), table.schema, str(tmp_path / name), 0)
    [strings_file], [ints_file] = parquet_files(str(tmp_path / "strings")), parquet_files(str(tmp_path / "ints"))
    counted = vectorize_file(0, strings_file, str(tmp_path / "from-strings"), terms, factors, "ltc")
    assert vectorize_file(0, ints_file, str(tmp_path / "from-ints"), terms, factors, "ltc", to_vocabulary) == counted
    for split in (TRAIN, TEST):
        [a], [b] = (parquet_files(str(tmp_path / form / f"split={split}")) for form in ("from-strings", "from-ints"))
        assert pq.read_table(a).equals(pq.read_table(b))
    n, a_counts = count_training_file(strings_file, terms, ["a", "b", "c"])
    assert n == n_train
    found_n, found_counts = count_training_file(ints_file, terms, ["a", "b", "c"], to_vocabulary)
    assert found_n == n
    assert (found_counts != a_counts).nnz == 0


def invented_token_file(words: list[str], n_documents: int, seed: int, first_id: int) -> bytes:
    """A well-formed token file of ``n_documents`` documents of ``words``, a few tokens to a line."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(n_documents):
        tokens = [words[k] for k in rng.integers(0, len(words), rng.integers(1, 30))]
        lines = [" ".join(tokens[at:at + 7]) for at in range(0, len(tokens), 7)]
        records.append("\n".join([f".I {first_id + i}", ".W", *lines]) + "\n\n")
    return "".join(records).encode("ascii")


# Records the columnar reader leaves to the line reader (so their piece gives token strings): an empty document and
# a line not UTF-8 (both rejected), a non-ASCII token (accepted).
BAD_RECORDS = b".I 5000\n.W\n\n.I 5001\n.W\nab\xff\n.I 5002\n.W\ncaf\xc3\xa9 lulu\n\n"


def converted(batches: list[pa.RecordBatch], terms: pa.StringArray) -> tuple[pa.Table, RecordTally]:
    """Records batches as ingest's token-file task converts and counts them: the table it writes and its tally."""
    convert, tally = as_term_ids(terms), RecordTally()
    written = [convert(batch) for batch in batches]
    for batch in written:
        tally.add(batch)
    return pa.Table.from_batches(written, schema=TERM_ID_RECORD_SCHEMA), tally


@pytest.mark.parametrize("read", ["whole file, gzipped", "byte ranges"])
def test_token_lists_give_what_the_token_strings_gave(read):
    # Expected: the string path, as ingest ran before (pieces read in columnar form joined their tokens into strings,
    # which the conversion split): the lists must give the same training terms, documents, rejects, lines and tallies.
    words = invented_words(np.random.default_rng(7), 200)
    training = invented_token_file(words[:120], 300, seed=1, first_id=1)
    test = invented_token_file(words, 200, seed=2, first_id=1000) + BAD_RECORDS + invented_token_file(
        words, 200, seed=3, first_id=6000)  # words[120:] are in no training document
    training_source = "lyrl2004_tokens_train.dat"

    def training_terms_read_by(reader) -> pa.Table:  # as ingest's first job counts them (TermTally)
        tally = TermTally()
        for batch in reader(training, training_source):
            tally.add(batch)
        tally.finish()
        return vocabulary_of([tally.counts])

    counted = {lists: training_terms_read_by(reader) for lists, reader in (
        (False, lyrl2004_columnar.read_corpus_file), (True, lyrl2004_columnar.read_corpus_lists))}
    assert counted[True].equals(counted[False]) and len(counted[False]) == 120
    terms = counted[False]["term"].combine_chunks()

    def records(lists: bool) -> list[pa.RecordBatch]:
        if read == "byte ranges":  # one task per range, each its newlines before it
            source, file = "lyrl2004_tokens_test_pt1.dat", pa.BufferReader(test)
            return [batch for start, end in byte_ranges(len(test), 3000) for batch in lyrl2004_columnar.read_range(
                file, len(test), source, start, end, test[:start].count(b"\n"), lists)]
        return list(lyrl2004_columnar.read_token_file(gzip.compress(test), "lyrl2004_tokens_test_pt1.dat.gz", TEST,
                                                      piece_bytes=3000, lists=lists))

    listed, strings = records(lists=True), records(lists=False)
    types = {str(batch.schema.field("tokens").type) for batch in listed}
    assert types == {"string", "list<item: string>"}  # pieces of both kinds: the conversion takes either
    expected, expected_tally = converted(strings, terms)
    found, tally = converted(listed, terms)
    assert found.equals(expected)
    assert vars(tally) == vars(expected_tally)
    assert expected_tally.reasons[None] == 401 and sum(expected_tally.reasons.values()) == 403
    assert expected_tally.tokens_outside > 0 and expected_tally.tokens > expected_tally.tokens_outside
