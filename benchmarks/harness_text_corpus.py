"""Part of the benchmark harness (:mod:`benchmarks.harness`): the synthetic raw-text corpus generator that
``benchmarks/text_corpus.py`` writes from the command line (its docstring says what the text is like) and
``benchmarks/text_scale.py`` and ``benchmarks/libmultilabel_corpus.py`` build on.
"""

from __future__ import annotations

import gzip
import json
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

BLOCK_DOCUMENTS = 2_000
FIRST_ID = 100_000
RCV1_TRAIN_SHARE = 23_149 / 804_414
FORMAT_VERSION = 1  # written into corpus.json; change it whenever the generated text changes

#: The commonest English function words, most frequent first (every one is on the SMART stop list).
STOP_WORDS = (
    "the of and to a in that is was he for it with as his on be at by i this had not are but from or have an they "
    "which one you were her all she there would their we him been has when who will more no if out so said what up "
    "its about into than them can only other new some could time these two may then do first any my now such like "
    "our over man me even most made after also did many before must through back years where much your way well "
    "down should because each just those people how too little us state good very make world still own see men work "
    "long get here between both life being under never day same another know while last might great old year off "
    "come since against go came right used take three").split()
_ONSETS = ("b c d f g h j k l m n p r s t v w y z bl br ch cl cr dr fl fr gl gr pl pr qu sc sh sk sl sm sn sp st str "
           "sw th tr tw wh").split()
_VOWELS = "a e i o u a e i o ai ea ee ie oa ou oo au".split()
_CODAS = ["", "", "", "n", "r", "s", "t", "l", "m", "d", "nd", "nt", "rt", "st", "ck", "ng", "ss", "rm", "lt", "mp",
          "x", "sh", "ch"]
# Derivational endings (Porter's steps 2-4 remove or rewrite most of them), by word class.
_NOUN_ENDINGS = ["", "", "", "", "ment", "ation", "ness", "ity", "ance", "ence", "er", "ism", "ist", "age", "ure",
                 "y", "e"]
_VERB_ENDINGS = ["", "", "", "ate", "ize", "ify", "en", "e", "e"]
_ADJECTIVE_ENDINGS = ["", "", "al", "ous", "ive", "ful", "able", "ic", "ible", "ent", "ant", "y", "ish"]
NOUN, VERB, ADJECTIVE = 0, 1, 2
#: Surface forms per root (repeats weight the commoner forms); a root's form slot f is drawn from FORM_WEIGHTS.
FORMS = 8
FORM_WEIGHTS = np.array([0.40, 0.16, 0.12, 0.10, 0.08, 0.06, 0.05, 0.03])
# Kinds of word: stop word, background root, indicative root of one of the document's categories, proper name,
# number, acronym.
KINDS = np.array([0.42, 0.345, 0.14, 0.05, 0.035, 0.01])
STOP, BACKGROUND, TOPIC, NAME, NUMBER, ACRONYM = range(6)
#: What follows a word (before the next one): separator -> weight. A sentence ends (". ") in 1 of 18 words.
SEPARATORS = {" ": 0.835, ", ": 0.055, ". ": 0.048, "? ": 0.002, "! ": 0.001, "; ": 0.004, ": ": 0.004,
              " - ": 0.004, " -- ": 0.002, "-": 0.012, "'s ": 0.01, "\u2019s ": 0.002, " (": 0.004, ") ": 0.004,
              ' "': 0.003, '" ': 0.003, ".\n\n": 0.006, "\t": 0.001, "  ": 0.002}
_SENTENCE_ENDS = (". ", "? ", "! ", ".\n\n")


@dataclass(frozen=True)
class TextShape:
    """The corpus: ``documents`` in all, ``train_share`` of them (the first ids) for training."""

    documents: int = 200_000
    seed: int = 0
    words: int = 220  # mean words per document
    labels: int = 100
    train_share: float = RCV1_TRAIN_SHARE
    roots: int = 30_000

    @property
    def train_documents(self) -> int:
        """The number of training documents, ``train_share`` of all rounded, at least one."""
        return max(1, round(self.documents * self.train_share))


def _rng(seed: int, *key: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=key)))


def _zipf(count: int, exponent: float, offset: float = 2.7) -> np.ndarray:
    weights = 1.0 / (np.arange(count) + offset) ** exponent
    return weights / weights.sum()


def _cumulative(weights: np.ndarray) -> np.ndarray:
    cumulative = np.cumsum(weights)
    return cumulative / cumulative[-1]


def _draw(rng: np.random.Generator, cumulative: np.ndarray, size: int) -> np.ndarray:
    return np.minimum(np.searchsorted(cumulative, rng.random(size), side="right"), len(cumulative) - 1)


def _pick(rng: np.random.Generator, options: Sequence[str]) -> str:
    return options[int(rng.integers(len(options)))]


def _vowel_end(word: str) -> bool:
    return word[-1] in "aeiou"


def inflections(root: str, kind: int) -> list[str]:
    """The :data:`FORMS` surface forms of ``root`` (repeats allowed), as English spells them, commonest first."""
    def plural(word: str) -> str:
        if word.endswith(("s", "x", "z", "ch", "sh")):
            return word + "es"
        if word.endswith("y") and word[-2:-1] not in ("a", "e", "o", "u"):
            return word[:-1] + "ies"
        return word + "s"

    def suffixed(word: str, ending: str) -> str:  # silent e dropped and y to i before a vowel, as English does
        if word.endswith("e") and ending[0] in "aeiy":
            return word[:-1] + ending
        if word.endswith("y") and ending[0] in "aeo" and word[-2:-1] not in ("a", "e", "o", "u"):
            return word[:-1] + "i" + ending
        return word + ending

    if kind == NOUN:
        return [root, plural(root), root, plural(root), suffixed(root, "al"), root + "'s", plural(root),
                suffixed(root, "less")]
    if kind == VERB:
        return [root, plural(root), suffixed(root, "ed"), suffixed(root, "ing"), suffixed(root, "ed"),
                suffixed(root, "ing"), suffixed(root, "er"), suffixed(root, "ers")]
    adverb = root[:-1] + "ily" if root.endswith("y") else (root[:-2] + "ly" if root.endswith("le") else root + "ly")
    return [root, adverb, root, suffixed(root, "er"), suffixed(root, "est"), suffixed(root, "ness"), adverb,
            "un" + root]


def _root(rng: np.random.Generator) -> tuple[str, int]:
    syllables = 1 + int(rng.choice(3, p=[0.45, 0.4, 0.15]))
    word = "".join(_pick(rng, _ONSETS) + _pick(rng, _VOWELS) + _pick(rng, _CODAS) for _ in range(syllables))
    if rng.random() < 0.01:  # a few words with an accent (lower() and \W must treat them as letters)
        position = int(rng.integers(len(word)))
        word = word[:position] + "\u00e9" + word[position + 1:]
    kind = int(rng.choice(3, p=[0.5, 0.3, 0.2]))
    endings = (_NOUN_ENDINGS, _VERB_ENDINGS, _ADJECTIVE_ENDINGS)[kind]
    ending = _pick(rng, endings)
    if ending and _vowel_end(word) and ending[0] in "aeiou" and len(word) > 3:
        word = word[:-1]
    word += ending
    return (word if len(word) > 2 else word + "nd"), kind


def _numbers(rng: np.random.Generator, count: int) -> list[str]:
    """Numbers as news text writes them: most become digit-only tokens (dropped), some stay tokens."""
    made = []
    for _ in range(count):
        value = int(rng.integers(1, 100_000))
        form = int(rng.integers(12))
        made.append([f"{value:,}", f"{value % 100}.{value % 10}%", f"${value % 1000 / 10:.1f}", str(1950 + value % 75),
                     f"{value % 500}", f"{value % 90}m", f"{value % 30 + 1}th", f"Q{value % 4 + 1}",
                     f"{value % 20}.{value % 100:02d}", f"{value % 12 + 1}/{value % 28 + 1}", f"{value % 9 + 1}bn",
                     f"({value % 1000})"][form])
    return made


def _category_codes(rng: np.random.Generator, count: int) -> list[str]:
    codes: set[str] = set()
    while len(codes) < count:
        letter = "CEGM"[int(rng.choice(4, p=[0.45, 0.2, 0.25, 0.1]))]
        if rng.random() < 0.15:
            codes.add(letter + "".join(rng.choice(list("ABCDEFGHIJKLMNOPRSTUVWY"), 4)))
        else:
            codes.add(f"{letter}{int(rng.integers(11, 100))}{'' if rng.random() < 0.6 else int(rng.integers(1, 10))}")
    return sorted(codes)


class TextModel:
    """What every block shares: the word tables (lower case, capitalized, upper case) and the categories."""

    def __init__(self, shape: TextShape) -> None:
        rng = _rng(shape.seed, 0)
        seen: set[str] = set(STOP_WORDS)
        roots: list[tuple[str, int]] = []
        while len(roots) < shape.roots:
            root, kind = _root(rng)
            if root not in seen:
                seen.add(root)
                roots.append((root, kind))
        # Short roots take the frequent ranks (in random order among roots of one length).
        order = np.lexsort((rng.random(len(roots)), [len(root) for root, _ in roots]))
        roots = [roots[i] for i in order]
        forms = [form for root, kind in roots for form in inflections(root, kind)]
        names = [roots[i][0].capitalize() for i in rng.choice(len(roots), len(roots) // 40, replace=False)]
        acronyms = [roots[i][0].upper()[:5] for i in rng.choice(len(roots), len(roots) // 60, replace=False)]
        numbers = _numbers(rng, 3000)
        stops = list(STOP_WORDS)
        # One word table: [forms | names | acronyms | numbers | stop words], then the same capitalized.
        lower = [*forms, *names, *acronyms, *numbers, *stops]
        self.offsets = dict(zip(("forms", "names", "acronyms", "numbers", "stops"),
                                np.cumsum([0, len(forms), len(names), len(acronyms), len(numbers)]).tolist()))
        self.table = np.array([*lower, *(word[:1].upper() + word[1:] for word in lower)], dtype=object)
        self.capital = len(lower)
        self.counts = {"roots": len(roots), "names": len(names), "acronyms": len(acronyms), "numbers": len(numbers),
                       "stops": len(stops)}
        self.background = _cumulative(_zipf(len(roots), 1.07))
        self.stop_curve = _cumulative(_zipf(len(stops), 1.0, 1.5))
        self.form_curve = _cumulative(FORM_WEIGHTS)
        self.kind_curve = _cumulative(KINDS)
        self.separators = np.array(list(SEPARATORS), dtype=object)
        self.separator_curve = _cumulative(np.array(list(SEPARATORS.values())))
        self.sentence_end = np.isin(self.separators, _SENTENCE_ENDS)
        self.codes = _category_codes(rng, shape.labels)
        self.category_curve = _zipf(shape.labels, 1.15, 1.8)
        # Indicative roots: 40 per category from ranks 200 .. 8,000 of the background curve.
        self.indicative = rng.integers(200, min(8_000, len(roots)), size=(shape.labels, 40))
        self.indicative_curve = _cumulative(_zipf(40, 0.8, 1.0))


@dataclass
class Block:
    """Consecutive documents: ids, splits, labels and texts."""

    ids: list[int]
    splits: list[str]
    labels: list[list[str]]
    texts: list[str]


def generate_block(model: TextModel, shape: TextShape, block: int) -> Block:
    """Documents ``block * BLOCK_DOCUMENTS`` .. (at most the corpus's end), from the block's own random stream."""
    rng = _rng(shape.seed, 1, block)
    start = block * BLOCK_DOCUMENTS
    n = min(BLOCK_DOCUMENTS, shape.documents - start)
    # Labels: 1 + Poisson(2.2) distinct categories by the Gumbel top-k trick over the skewed frequencies.
    per_document = np.minimum(1 + rng.poisson(2.2, n), 10)
    keys = np.log(model.category_curve)[None, :] + rng.gumbel(size=(n, len(model.codes)))
    ranked = np.argsort(-keys, axis=1)
    labels = [sorted(model.codes[c] for c in ranked[d, :per_document[d]]) for d in range(n)]
    lengths = np.clip(np.round(rng.lognormal(np.log(shape.words) - 0.125, 0.5, n)), 25, 2_000).astype(np.int64)
    total = int(lengths.sum())
    doc_of = np.repeat(np.arange(n), lengths)
    kinds = _draw(rng, model.kind_curve, total)
    words = np.empty(total, dtype=np.int64)
    forms = _draw(rng, model.form_curve, total)

    def where(kind: int) -> np.ndarray:
        return np.flatnonzero(kinds == kind)

    slots = where(BACKGROUND)
    words[slots] = _draw(rng, model.background, len(slots)) * FORMS + forms[slots]
    slots = where(TOPIC)
    chosen = (rng.random(len(slots)) * per_document[doc_of[slots]]).astype(np.int64)
    categories = ranked[doc_of[slots], chosen]
    roots = model.indicative[categories, _draw(rng, model.indicative_curve, len(slots))]
    words[slots] = roots * FORMS + forms[slots]
    for kind, table in ((NAME, "names"), (ACRONYM, "acronyms"), (NUMBER, "numbers")):
        slots = where(kind)
        words[slots] = model.offsets[table] + rng.integers(model.counts[table], size=len(slots))
    slots = where(STOP)
    words[slots] = model.offsets["stops"] + _draw(rng, model.stop_curve, len(slots))
    separators = _draw(rng, model.separator_curve, total)
    ends = np.cumsum(lengths) - 1
    separators[ends] = 2  # ". ", stripped below
    # Capitalize each document's first word and every word after a sentence end.
    starts = np.zeros(total, dtype=bool)
    starts[1:] = model.sentence_end[separators[:-1]]
    starts[ends[:-1] + 1] = True
    starts[0] = True
    words[starts] += model.capital
    pieces = np.empty(2 * total, dtype=object)
    pieces[0::2] = model.table[words]
    pieces[1::2] = model.separators[separators]
    bounds = np.concatenate([[0], 2 * np.cumsum(lengths)]).tolist()
    texts = ["".join(pieces[bounds[d]:bounds[d + 1]].tolist()).rstrip() for d in range(n)]
    ids = list(range(FIRST_ID + start, FIRST_ID + start + n))
    splits = ["train" if start + d < shape.train_documents else "test" for d in range(n)]
    return Block(ids, splits, labels, texts)


def jsonl_lines(block: Block) -> Iterator[str]:
    """The block's documents as sparktc JSON Lines, one ``{"id", "text", "labels", "split"}`` object per line."""
    for doc_id, text, labels, split in zip(block.ids, block.texts, block.labels, block.splits):
        yield json.dumps({"id": doc_id, "text": text, "labels": labels, "split": split}, ensure_ascii=False) + "\n"


def file_blocks(shape: TextShape, files: int) -> list[range]:
    """The blocks each file holds: consecutive, as even as the blocks allow."""
    blocks = -(-shape.documents // BLOCK_DOCUMENTS)
    files = max(1, min(files, blocks))
    bounds = [blocks * k // files for k in range(files + 1)]
    return [range(bounds[k], bounds[k + 1]) for k in range(files)]


def write_corpus(output: Path, shape: TextShape, files: int = 8, compress: bool = False) -> dict:
    """Write the corpus into ``output`` (created; files of an earlier corpus of other names are left alone) and
    ``corpus.json``; returns what corpus.json holds and the seconds it took. corpus.json holds nothing but what the
    shape and ``files`` decide: sparktc's corpus digest covers every file in the corpus directory, and the same
    corpus written again must have the same digest (a benchmark's runs are compared by it).
    """
    began = time.monotonic()
    output.mkdir(parents=True, exist_ok=True)
    model = TextModel(shape)
    written = []
    for number, blocks in enumerate(file_blocks(shape, files)):
        name = f"part-{number:03d}.jsonl" + (".gz" if compress else "")
        partial = output / f".{name}.partial"
        opener = (lambda p: gzip.open(p, "wt", encoding="utf-8", compresslevel=6)) if compress else \
            (lambda p: open(p, "w", encoding="utf-8"))
        documents = 0
        with opener(partial) as out:
            for block in blocks:
                generated = generate_block(model, shape, block)
                out.writelines(jsonl_lines(generated))
                documents += len(generated.ids)
        os.replace(partial, output / name)
        written.append({"file": name, "documents": documents, "bytes": (output / name).stat().st_size})
    record = {"generator": "benchmarks/text_corpus.py", "format_version": FORMAT_VERSION, "shape": asdict(shape),
              "train_documents": shape.train_documents, "categories": model.codes, "files": written,
              "bytes": sum(f["bytes"] for f in written)}
    (output / "corpus.json").write_text(json.dumps(record, indent=2) + "\n")
    return {**record, "seconds": round(time.monotonic() - began, 1)}


def corpus_is_complete(output: Path, shape: TextShape, files: int, compress: bool) -> bool:
    """Whether ``output`` holds this generator's corpus of ``shape`` in ``files`` files, all present at their sizes."""
    try:
        record = json.loads((output / "corpus.json").read_text())
    except (OSError, ValueError):
        return False
    suffix = ".jsonl.gz" if compress else ".jsonl"
    return (record.get("format_version") == FORMAT_VERSION and record.get("shape") == asdict(shape)
            and len(record.get("files", [])) == len(file_blocks(shape, files))
            and all(f["file"].endswith(suffix) and (output / f["file"]).is_file()
                    and (output / f["file"]).stat().st_size == f["bytes"] for f in record["files"]))
