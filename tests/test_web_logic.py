"""The web client's own logic, run in Node on the very modules the browser loads: the hint rows (equivalent
moves merged, the AI's choice first, a reason from the move), the rules text without references to sources,
sections and files, and the language chosen from the browser's tags.  The whole client in a real browser is
tests/test_web_browser.py."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from api_support import ROOT

STATIC = ROOT / "service" / "web" / "static"

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="no node to run the client's modules")

#: what the modules need of a browser to be imported: no page, an empty catalog (t() answers the key)
PRELUDE = """
globalThis.document = { getElementById: () => null, documentElement: {} };
globalThis.window = { matchMedia: () => ({ matches: false }) };
"""


def _node(body: str) -> object:
    script = PRELUDE + f"const base = {json.dumps(STATIC.as_uri())};\n" + body
    done = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


#: each test's question, asked of one Node process for them all (a process takes a second or two to start)
ASKED: dict[str, str] = {}


def ask(name: str, expression: str) -> None:
    ASKED[name] = expression


@pytest.fixture(scope="module")
def answers() -> dict[str, object]:
    imports = """
const { hintRows, fishPoints } = await import(base + "/hints.js");
const { RULESETS } = await import(base + "/games.js");
const { clean, renderMarkdown } = await import(base + "/rules.js");
const { matchLang } = await import(base + "/i18n.js");
const fs = await import("node:fs");
const out = {};
"""
    body = "".join(f"out[{json.dumps(k)}] = await (async () => {{ {v} }})();\n" for k, v in ASKED.items())
    return _node(imports + body + "console.log(JSON.stringify(out));")  # type: ignore[return-value]


KOZEL_VIEW = {
    "rules": "kozel", "you": 0, "status": "active", "to_move": 0,
    "table": {"ends": [3, 3], "bazaar_size": 4, "line": []},
    "legal_moves": [
        {"id": "play:6-3@left", "action": "play", "tiles": ["6-3"], "end": "left"},
        {"id": "play:6-3@right", "action": "play", "tiles": ["6-3"], "end": "right"},
        {"id": "play:3-3@left", "action": "play", "tiles": ["3-3"], "end": "left"},
        {"id": "play:3-3@right", "action": "play", "tiles": ["3-3"], "end": "right"},
        {"id": "draw", "action": "draw", "tiles": []},
    ],
}


SAME_ENDS = {"best": "play:6-3@right", "candidates": [
    {"move": "play:6-3@left", "visits": 30, "mean_reward": 0.5},
    {"move": "play:6-3@right", "visits": 40, "mean_reward": 0.6},
    {"move": "play:3-3@left", "visits": 20, "mean_reward": 0.4},
    {"move": "play:3-3@right", "visits": 10, "mean_reward": 0.1},
]}
ask("same_ends", f"return hintRows({json.dumps(SAME_ENDS)}, {json.dumps(KOZEL_VIEW)}, RULESETS.kozel);")


def test_a_kozel_hint_lists_one_tile_on_two_ends_showing_the_same_number_once(answers):
    rows = answers["same_ends"]
    assert [r["move"] for r in rows] == ["play:6-3@right", "play:3-3@left"]
    assert [r["best"] for r in rows] == [True, False]
    # the merged rows pool their playouts: 6-3 on either end 70, 3-3 on either end 30
    assert "{count}" not in rows[0]["value"] and rows[0]["value"].startswith("hint.rating.best")
    assert rows[0]["reason"] == "reason.kozel.pips" and rows[1]["reason"] == "reason.kozel.double"
    assert abs(rows[0]["share"] - (30 * 0.5 + 40 * 0.6) / 70) < 1e-9
    assert abs(rows[1]["share"] - (20 * 0.4 + 10 * 0.1) / 30) < 1e-9


PAYOFFS = {"best": "play:6-3@right", "candidates": [
    {"move": "play:6-3@left", "visits": 30, "mean_reward": 0.5, "mean_payoff": 1.0},
    {"move": "play:6-3@right", "visits": 10, "mean_reward": 0.6, "mean_payoff": 3.0},
    {"move": "play:3-3@left", "visits": 0, "mean_reward": None, "mean_payoff": None},
]}
ask("payoffs", f"return hintRows({json.dumps(PAYOFFS)}, {json.dumps(KOZEL_VIEW)}, RULESETS.kozel);")


def test_a_hint_row_shows_the_moves_payoff_in_the_games_unit_with_its_playouts(answers):
    rows = answers["payoffs"]
    # Kozel's unit is pips this round (the catalog is empty here: t() answers the key); the browser test
    # reads the English text
    assert rows[0]["value"].startswith("hint.value.pips") and "hint.confidence" in rows[0]["value"]
    assert rows[1]["value"] == "hint.rating.unexplored"


OTHER_ENDS = {**KOZEL_VIEW, "table": {**KOZEL_VIEW["table"], "ends": [3, 6]}}
TWO_ENDS = {"best": "play:6-3@left", "candidates": [
    {"move": "play:6-3@left", "visits": 30, "mean_reward": 0.5},
    {"move": "play:6-3@right", "visits": 40, "mean_reward": 0.6}]}
ask("other_ends", f"return hintRows({json.dumps(TWO_ENDS)}, {json.dumps(OTHER_ENDS)}, RULESETS.kozel);")


def test_one_tile_on_two_ends_showing_different_numbers_stays_two_moves(answers):
    rows = answers["other_ends"]
    assert [r["move"] for r in rows] == ["play:6-3@left", "play:6-3@right"]


ask("fish", 'return ["6-6", "4-4", "4-1", "2-1", "3-2", "1-1"].map(fishPoints);')


def test_a_tiu_u_catch_is_explained_by_the_fish_points_it_catches(answers):
    points = answers["fish"]
    assert points == [24, 16, 5, 1, 0, 2]  # big fish 2 a pip; small fish their red pips (docs/rules/tiuu.md)


ask("rules", r"""
const pages = {};
for (const dir of ["", "ru/", "zh-Hant/", "zh-Hans/"]) {
  for (const id of ["tiengow", "tiengow_wall", "kozel", "tiuu"]) {
    const path = new URL(`../../../docs/rules/${dir}${id}.md`, base + "/").pathname;
    if (fs.existsSync(path)) pages[dir + id] = renderMarkdown(fs.readFileSync(path, "utf8")).replace(/<[^>]+>/g, " ");
  }
}
return {
  aside: clean("Seats are numbered in turn order (§1, `tiles.md`). Ties lose."),
  sentence: clean("It follows seeds 001/004 as written up in `sources/tiengow.md`. Low totals are good."),
  choice: clean("**Choice** §11 #9: the earlier group stays best."),
  pages,
};
""")


def test_the_rules_text_keeps_the_rules_and_drops_sources_sections_and_files(answers):
    out = answers["rules"]
    assert out["aside"] == "Seats are numbered in turn order. Ties lose."
    assert out["sentence"] == "Low totals are good."
    assert out["choice"] == "**Choice**: the earlier group stays best."
    assert len(out["pages"]) >= 4
    for name, text in out["pages"].items():
        for banned in ("§", "seed", ".md", "shared/", "README"):
            assert banned not in text, (name, banned)
        assert len(text) > 2000, name  # the rules themselves are still there


ask("langs", """return ["ru-RU", "zh-TW", "zh-HK", "zh-CN", "zh", "zh-Hant-TW", "sr", "sr-Cyrl", "da-DK",
  "es-419", "pt-BR", "en-GB", "lv", "uk-UA", "cs"].map(matchLang);""")


def test_the_language_comes_from_the_browsers_tags(answers):
    got = answers["langs"]
    assert got == ["ru", "zh-Hant", "zh-Hant", "zh-Hans", "zh-Hans", "zh-Hant", "sr-Latn", None, "da", "es", None,
                   "en", "lv", "uk", "cs"]
