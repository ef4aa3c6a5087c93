"""What a label (a category name) may be: the one rule every corpus reader applies to the labels it reads.

A label names a category in every table and report, so it must print as exactly what it is: two labels
that look the same must be the same label. :func:`label_problem` says why a string is not a label:

* empty, or white space only: give the category a name;
* white space at its start or end (any character ``str.strip`` removes: U+0020, tab, no-break space,
  U+2028 ...): remove the surrounding white space; ``"earn"`` and ``" earn"`` would be two categories;
* a control character (Unicode category Cc: C0, DEL, C1), a line or paragraph separator (Zl, Zp), a lone
  surrogate (Cs) or an invisible format character (Cf: zero width space, byte order mark, bidirectional
  controls, soft hyphen ...) anywhere: remove it. ZERO WIDTH NON-JOINER and ZERO WIDTH JOINER (U+200C,
  U+200D) are kept: Persian and Indic scripts and emoji sequences spell words with them;
* white space other than the plain space U+0020 inside it (no-break space, ideographic space ...): it prints
  like a plain space but is another label; use a plain space.

Readers apply the rule to labels as their format delimits them and normalize nothing else: the LIBSVM and
LYRL2004 qrels, hierarchy and list formats separate fields by white space, so their labels never hold any.
Pure Python, no Spark: the readers run it on the executors, configuration checks may run it on the driver.
"""

from __future__ import annotations

import reprlib
import unicodedata

__all__ = ["label_problem"]

#: Unicode categories that never belong in a label, with how a message names them.
_INVISIBLE = {
    "Cc": "a control character",
    "Cf": "an invisible format character",
    "Cs": "a lone surrogate",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}
#: Format characters that are part of the spelling of words (Persian, Indic scripts, emoji sequences).
_JOINERS = frozenset("\u200c\u200d")


def _named(char: str) -> str:
    """``U+0009`` or ``U+00A0 NO-BREAK SPACE``: the code point, with its Unicode name when it has one."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" {name}" if name else "")


def label_problem(label: str, where: str = "", what: str = "label") -> str | None:
    """Why ``label`` is not a label (module docstring), or None when it is one.

    The reason shows the label quoted (shortened by :mod:`reprlib` when long), the character at fault and
    what to do; ``where`` (``"in field 'labels'"``) follows the label in it, ``what`` names it
    (``"category code"``).
    """
    # str.isprintable is False exactly for Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs other than U+0020: one C call
    # clears the usual label; the rest only explains a rejected one (or passes Co, Cn and the joiners).
    if label and label.isprintable() and label[0] != " " and label[-1] != " ":
        return None
    subject = f"{what} {reprlib.repr(label)}" + (f" {where}" if where else "")
    if not label.strip():
        return f"{subject} is {'empty' if not label else 'only white space'}; give the category a name"
    # str.strip removes exactly the characters str.isspace accepts.
    ends = {end: char for end, char in (("start", label[0]), ("end", label[-1])) if char.isspace()}
    if ends:
        chars = ", ".join(dict.fromkeys(map(_named, ends.values())))
        return f"{subject} has white space at its {' and '.join(ends)} ({chars}); remove the surrounding white space"
    for position, char in enumerate(label, 1):
        kind = _INVISIBLE.get(unicodedata.category(char))
        if kind is not None and char not in _JOINERS:
            return (f"{subject} holds {_named(char)}, {kind}, at character {position}: it prints invisibly or "
                    "breaks a report's line; remove it")
        if char.isspace() and char != " ":
            return (f"{subject} holds {_named(char)} at character {position}, white space that prints like a "
                    "plain space but is not one; use a plain space (U+0020)")
    return None
