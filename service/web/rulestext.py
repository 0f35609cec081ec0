"""Where the full rules the client shows come from: the project's own rules pages, ``docs/rules/<id>.md``
(English, the one source) and ``docs/rules/<lang>/<id>.md`` (translations).  ``service/web/rules`` is a link
to ``docs/rules``, so the wheel ships those very files as package data and the server finds them in a
checkout, in the installed package and in the container alike."""

from __future__ import annotations

import re
from pathlib import Path

#: the rules pages, beside this module (a link to docs/rules in the repository)
RULES_DIR = Path(__file__).with_name("rules")
#: a language tag as the client sends it (en, ru, zh-Hant, sr-Latn)
LANG = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*")


def rules_file(rules_id: str, lang: str) -> tuple[Path, str]:
    """The rules page of ``rules_id`` in ``lang`` when it is translated, else the English one, and the
    language of the file chosen."""
    if lang != "en":
        translated = RULES_DIR / lang / f"{rules_id}.md"
        if translated.is_file():
            return translated, lang
    return RULES_DIR / f"{rules_id}.md", "en"
