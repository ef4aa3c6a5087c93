"""A mkdocs hook: the settings reference of docs/methods.md, ``<!-- settings: train -->`` and
``<!-- settings: tune -->``, made from the configuration's fields when the site is built
(:func:`sparktc.experiment.config.settings_table`), so that the page shows each setting's meaning as its field
declares it and never goes stale.
"""

from __future__ import annotations

import re
from typing import Any

from sparktc.experiment.config import settings_table

#: Where a section's table goes on a page.
MARK = re.compile(r"^<!-- settings: (train|tune) -->$", re.MULTILINE)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """The page with each mark replaced by its section's settings table."""
    return MARK.sub(lambda found: settings_table(found[1]), markdown)
