"""The label rule every corpus reader applies (sparktc.corpora.labels), on its own: what is a label, and each
reason a string is not one, exactly as a reject shows it.
"""

from __future__ import annotations

import unicodedata

import pytest

from sparktc.corpora.labels import label_problem

ACCEPTED = [
    "earn", "money-fx", "C1511", "1", "café", "interest rates", "s&p",
    "بین\u200cالملل",  # Persian "international", spelled with ZERO WIDTH NON-JOINER
    "\U0001f468\u200d\U0001f469",  # an emoji sequence joined by ZERO WIDTH JOINER
    "\ue000",  # private use: prints as a box, visibly
]

INVISIBLE = "it prints invisibly or breaks a report's line; remove it"
REJECTED = [
    ("", "label '' is empty; give the category a name"),
    ("   ", "label '   ' is only white space; give the category a name"),
    ("\u2028", "label '\\u2028' is only white space; give the category a name"),
    (" earn", "label ' earn' has white space at its start (U+0020 SPACE); remove the surrounding white space"),
    ("earn\t", "label 'earn\\t' has white space at its end (U+0009); remove the surrounding white space"),
    ("earn\n", "label 'earn\\n' has white space at its end (U+000A); remove the surrounding white space"),
    ("\xa0earn\u3000", "label '\\xa0earn\\u3000' has white space at its start and end (U+00A0 NO-BREAK SPACE, "
                       "U+3000 IDEOGRAPHIC SPACE); remove the surrounding white space"),
    (" earn ", "label ' earn ' has white space at its start and end (U+0020 SPACE); remove the surrounding "
               "white space"),
    ("ea\trn", f"label 'ea\\trn' holds U+0009, a control character, at character 3: {INVISIBLE}"),
    ("ea\x00rn", f"label 'ea\\x00rn' holds U+0000, a control character, at character 3: {INVISIBLE}"),
    ("earn\x7f", f"label 'earn\\x7f' holds U+007F, a control character, at character 5: {INVISIBLE}"),
    ("ea\x85rn", f"label 'ea\\x85rn' holds U+0085, a control character, at character 3: {INVISIBLE}"),
    ("ea\u2028rn", f"label 'ea\\u2028rn' holds U+2028 LINE SEPARATOR, a line separator, at character 3: {INVISIBLE}"),
    ("ea\u2029rn", "label 'ea\\u2029rn' holds U+2029 PARAGRAPH SEPARATOR, a paragraph separator, at character 3: "
                   f"{INVISIBLE}"),
    ("ea\u200brn", "label 'ea\\u200brn' holds U+200B ZERO WIDTH SPACE, an invisible format character, at character 3: "
                   f"{INVISIBLE}"),
    ("\ufeffearn", "label '\\ufeffearn' holds U+FEFF ZERO WIDTH NO-BREAK SPACE, an invisible format character, at "
                   f"character 1: {INVISIBLE}"),
    ("ea\u202ern", "label 'ea\\u202ern' holds U+202E RIGHT-TO-LEFT OVERRIDE, an invisible format character, at "
                   f"character 3: {INVISIBLE}"),
    ("ea\xadrn", "label 'ea\\xadrn' holds U+00AD SOFT HYPHEN, an invisible format character, at character 3: "
                 f"{INVISIBLE}"),
    ("x\udce9", f"label 'x\\udce9' holds U+DCE9, a lone surrogate, at character 2: {INVISIBLE}"),
    ("interest\xa0rates", "label 'interest\\xa0rates' holds U+00A0 NO-BREAK SPACE at character 9, white space that "
                          "prints like a plain space but is not one; use a plain space (U+0020)"),
]


@pytest.mark.parametrize("label", ACCEPTED, ids=ascii)
def test_a_label_is_accepted(label: str):
    assert label_problem(label) is None


@pytest.mark.parametrize(("label", "reason"), REJECTED, ids=[ascii(label) for label, _ in REJECTED])
def test_a_string_that_is_no_label_is_rejected_saying_why_and_what_to_do(label: str, reason: str):
    assert label_problem(label) == reason


def test_where_and_what_name_the_label_in_the_reason():
    assert label_problem("C15\x01", "in field CATEGORY", "category code") == (
        f"category code 'C15\\x01' in field CATEGORY holds U+0001, a control character, at character 4: {INVISIBLE}")
    assert label_problem("", "in field 'labels'") == "label '' in field 'labels' is empty; give the category a name"


def test_a_long_label_is_shown_shortened_and_the_character_still_named():
    reason = label_problem("a" * 100 + "\x01")
    assert reason == ("label 'aaaaaaaaaaaa...aaaaaaaaa\\x01' holds U+0001, a control character, at character 101: "
                      f"{INVISIBLE}")


def test_every_assigned_code_point_inside_a_label_follows_the_rule():
    """The quick check (str.isprintable) and the explaining one agree: inside a label, a character is refused
    exactly when it is Cc, Cf (but the two joiners), Cs, Zl, Zp, or white space other than U+0020; private use
    and unassigned code points pass. Planes 0-3 and 14 hold every assigned code point; planes 4-13 are unassigned,
    15-16 private use, represented by the first and last code point of each.
    """
    refused = {"Cc", "Cf", "Cs", "Zl", "Zp"}
    edges = [code for plane in [*range(4, 14), 15, 16] for code in (plane << 16, (plane << 16) | 0xFFFF)]
    for code in [*range(0x40000), *range(0xE0000, 0xF0000), *edges]:
        char = chr(code)
        expected_ok = (unicodedata.category(char) not in refused or char in "\u200c\u200d") and (
            char == " " or not char.isspace())
        assert (label_problem(f"a{char}b") is None) == expected_ok, hex(code)
