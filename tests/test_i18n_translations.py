"""The translations beside what tests/test_web.py checks of the catalogs (every key, placeholders, plural
forms, no English value left): the catalogs of other scripts hold no Latin words but names, those of
Latin-script languages write their own letters, and the translated rules (``docs/rules/<lang>/``) follow the
English rules heading by heading and keep every option name and move id.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = ROOT / "service" / "web" / "static" / "i18n"
RULES = ROOT / "docs" / "rules"

#: names (and key caps) that stay as they are in every language
NAMES = {"tilehouse", "AI", "Esc", "JavaScript", "Tien", "Gow", "Tiu", "Kozel"}
#: letters English does not have, of each language written in the Latin script
LETTERS = {"da": "æøå", "es": "ñáéíóú¿¡", "cs": "áčďéěíňóřšťúůýž", "sr-Latn": "čćđšž", "lv": "āčēģīķļņšūž"}
PLACEHOLDER = re.compile(r"\{\w+\}")


def catalog(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((CATALOGS / f"{lang}.json").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("lang", ["zh-Hant", "zh-Hans", "ru", "uk"])
def test_a_catalog_in_another_script_has_no_latin_word_but_names(lang: str) -> None:
    words = sorted({(k, w) for k, v in catalog(lang).items()
                    for w in re.findall(r"[A-Za-z]{2,}", PLACEHOLDER.sub("", v)) if w not in NAMES})
    assert words == []


@pytest.mark.parametrize("lang", sorted(LETTERS))
def test_a_latin_script_catalog_writes_the_letters_of_its_language(lang: str) -> None:
    # English has none of these letters: a catalog left (or pasted) in English fails
    sentences = [v for v in catalog(lang).values() if len(v.split()) >= 4]
    with_letters = [v for v in sentences if any(c in LETTERS[lang] for c in v.lower())]
    assert len(with_letters) > 0.2 * len(sentences)


def headings(path: Path) -> list[int]:
    """The level of every Markdown heading of a file, outside code blocks."""
    levels, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"(#+) ", line)):
            levels.append(len(m.group(1)))
    return levels


RULE_IDS = sorted(p.stem for p in RULES.glob("*.md"))
CODE = re.compile(r"`([^`\s]+)`")


@pytest.mark.parametrize("lang", ["zh-Hant", "zh-Hans", "ru"])
@pytest.mark.parametrize("rules_id", RULE_IDS)
def test_the_translated_rules_follow_the_english_heading_by_heading(lang: str, rules_id: str) -> None:
    english, translated = RULES / f"{rules_id}.md", RULES / lang / f"{rules_id}.md"
    assert headings(translated) == headings(english)
    # option names, values and move ids are the same words in every language
    codes = [set(CODE.findall(p.read_text(encoding="utf-8"))) for p in (english, translated)]
    assert codes[0] - codes[1] == set()
