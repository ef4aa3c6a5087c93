"""How ingest plans its parsing tasks for the session's cores, without Spark: a task's share of the bytes, the
gzipped files inflated before they are parsed in byte ranges, and the tasks in the order they run.
"""

from __future__ import annotations

import gzip

import pytest

from sparktc.corpora import files, line_ranges
from sparktc.corpora.registry import FORMATS
from sparktc.runtime.session import TASKS_PER_CORE
from sparktc.stages.ingest.parsing import (
    Inflated,
    Inflating,
    Parsing,
    inflate_file,
    planned_sizes,
    task_units,
    to_inflate,
)

MiB = 1 << 20
TOKENS = b"".join(b".I %d\n.W\nalpha beta gamma delta %d\n\n" % (n, n % 97) for n in range(2000, 40000))


def test_a_share_is_the_bytes_over_the_tasks_within_the_bounds():
    assert line_ranges.range_share(100 * MiB, 16) == -(-100 * MiB // 16)
    assert line_ranges.range_share(10 * MiB, 16) == line_ranges.MIN_RANGE_BYTES  # not below the minimum
    assert line_ranges.range_share(10 << 30, 16) == line_ranges.RANGE_BYTES  # nor above the maximum
    assert line_ranges.range_share(0, 0) == line_ranges.MIN_RANGE_BYTES


def test_a_gzipped_file_is_planned_by_its_trailer(tmp_path):
    plain, packed, empty = tmp_path / "a.dat", tmp_path / "b.dat.gz", tmp_path / "c.dat.gz"
    plain.write_bytes(TOKENS)
    packed.write_bytes(gzip.compress(TOKENS[:5000]) + gzip.compress(TOKENS))  # two members: the last one's length
    empty.write_bytes(b"")
    assert planned_sizes([str(plain), str(packed), str(empty)]) == {
        str(plain): len(TOKENS), str(packed): len(TOKENS), str(empty): 0}


@pytest.mark.parametrize("cores", [1, 2, 16])
def test_gzipped_files_larger_than_a_share_are_inflated(tmp_path, monkeypatch, cores: int):
    monkeypatch.setattr(line_ranges, "MIN_RANGE_BYTES", 1)
    small, large, plain = tmp_path / "small.dat.gz", tmp_path / "large.dat.gz", tmp_path / "plain.dat"
    small.write_bytes(gzip.compress(TOKENS[:1000]))
    large.write_bytes(gzip.compress(TOKENS))
    plain.write_bytes(TOKENS[:1000])  # plain: parsed in byte ranges as it is
    assert to_inflate([str(small), str(large), str(plain)], cores) == [str(large)]
    monkeypatch.setattr(line_ranges, "MIN_RANGE_BYTES", len(TOKENS))  # a share no smaller: nothing to inflate
    assert to_inflate([str(small), str(large), str(plain)], cores) == []


def test_an_inflated_file_holds_the_contents_and_a_damaged_one_stages_nothing(tmp_path):
    good, cut = tmp_path / "good.dat.gz", tmp_path / "cut.dat.gz"
    good.write_bytes(gzip.compress(TOKENS) + b"\x00\x00" + gzip.compress(b"tail\n"))
    cut.write_bytes(gzip.compress(TOKENS)[:-9])
    staged = tmp_path / "inflated"
    assert inflate_file(str(good), str(staged)) == Inflated(str(good), f"{staged}/good.dat", len(TOKENS) + 5)
    assert (staged / "good.dat").read_bytes() == TOKENS + b"tail\n"  # staged plain, under its plain name
    assert inflate_file(str(cut), str(staged)) == Inflated(str(cut), None, 0)
    assert sorted(path.name for path in staged.iterdir()) == ["good.dat"]  # no partial file left


def test_gunzip_chunks_give_the_members_contents_in_order():
    data = gzip.compress(TOKENS) + gzip.compress(b"x" * 5 * MiB)
    chunks = list(files.gunzip_chunks(data))
    assert len(chunks) > 1 and b"".join(chunks) == TOKENS + b"x" * 5 * MiB


def test_an_inflated_file_is_cut_into_shares_and_its_records_keep_the_compressed_name(tmp_path, monkeypatch):
    monkeypatch.setattr(line_ranges, "MIN_RANGE_BYTES", 1)
    form = FORMATS["lyrl2004"]
    train, test = str(tmp_path / "train.dat"), str(tmp_path / "test.dat.gz")
    staged = str(tmp_path / "inflated" / "test.dat")
    documents = Parsing([train, test], form.reader, str(tmp_path / "tokens"), ranges=form.ranges,
                        inflated={test: staged})
    first = Inflating([test], str(tmp_path / "inflated"))
    units = task_units([first, documents], {train: 300, staged: 900}, cores=2)
    share = -(-1200 // (TASKS_PER_CORE * 2))
    assert units[0] == (0, 0, test, test, 0, -1, 0)  # the inflating task: the whole compressed file
    ranged = [unit for unit in units if unit[0] == 1]
    assert [unit[1] for unit in ranged] == list(range(len(ranged)))  # each parsing's tasks numbered in order
    staged_units = [unit for unit in ranged if unit[3] == staged]
    assert {unit[2] for unit in staged_units} == {test}  # named by the compressed file
    assert [(unit[4], unit[5]) for unit in staged_units] == line_ranges.byte_ranges(900, share)
    assert len(staged_units) == 3 and all(unit[6] == 900 for unit in staged_units)
