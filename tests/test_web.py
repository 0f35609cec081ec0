"""The web client as files: served at ``/`` and ``/static/<file>`` from the package (the wheel
carries them), the same page for everyone (no game state rendered by the server), nothing loaded from
outside, and the only server paths the code calls are the public API's. The client playing in a real
browser is tests/test_web_browser.py."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from api_support import ROOT, bearer, create, humans

pytest_plugins = ["api_fixtures"]

STATIC = ROOT / "service" / "web" / "static"
SOURCES = sorted(p for p in STATIC.iterdir() if p.suffix in (".html", ".js", ".css", ".svg"))


def test_the_page_at_root_is_the_static_client_and_the_same_for_everyone(client):
    first = client.get("/")
    game = create(client, "tiengow", humans(4))
    token = game["seats"][0]["token"]
    again = client.get("/", headers=bearer(token))
    assert first.status_code == again.status_code == 200
    assert first.mimetype == "text/html"
    assert first.data == again.data == (STATIC / "index.html").read_bytes()
    assert game["game"]["id"].encode() not in again.data
    assert b'<script type="module" src="/static/app.js">' in first.data


@pytest.mark.parametrize("path", [p.name for p in SOURCES if p.name != "index.html"])
def test_every_asset_is_served_with_its_type(client, path):
    r = client.get(f"/static/{path}")
    assert r.status_code == 200
    want = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}[Path(path).suffix]
    assert r.mimetype == want
    assert r.data == (STATIC / path).read_bytes()
    assert r.headers["Cache-Control"] == "no-cache"


@pytest.mark.parametrize("path", ["/static/nothing.js", "/static/__init__.py", "/static/..%2F__init__.py",
                                  "/static/app.js.map"])
def test_anything_else_under_static_is_a_404_problem(client, path):
    r = client.get(path)
    assert r.status_code == 404
    assert r.mimetype == "application/problem+json"


def test_every_module_the_client_imports_is_one_of_its_files():
    names = {p.name for p in SOURCES}
    for src in SOURCES:
        for imported in re.findall(r'from "\./([^"]+)"', src.read_text()):
            assert imported in names, f"{src.name} imports {imported}"


def test_the_client_loads_nothing_from_outside_and_calls_only_the_public_api():
    for src in SOURCES:
        text = src.read_text().replace('xmlns="http://www.w3.org/2000/svg"', "")  # a name, not a download
        # no CDN, no external font, no remote script: every URL is on this server
        assert not re.search(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text, re.I), src.name
    calls = []
    for src in SOURCES:
        calls += re.findall(r'(?:\bapi\("[A-Z]+", |\bfetch\(|\bEventSource\()[`"]([^`"]+)', src.read_text())
    assert len(calls) >= 10
    for path in calls:
        # the public API, its contract, and the client's own files: its catalogs and the rules pages
        assert path.startswith(("/v1/", "/static/i18n/", "/rules/")) or path == "/openapi.yaml", path


def test_tokens_are_kept_in_the_browsers_storage_and_never_in_a_cookie():
    code = "\n".join(p.read_text() for p in SOURCES if p.suffix == ".js")
    assert "localStorage" in code  # my games: the games this browser created or joined, with their tokens
    assert "document.cookie" not in code


CATALOGS = sorted((STATIC / "i18n").glob("*.json"))


@pytest.mark.parametrize("path", [p.name for p in CATALOGS])
def test_every_message_catalog_is_served_as_json(client, path):
    r = client.get(f"/static/i18n/{path}")
    assert r.status_code == 200 and r.mimetype == "application/json"
    assert r.data == (STATIC / "i18n" / path).read_bytes()


@pytest.mark.parametrize("path", ["/static/i18n/nothing.json", "/static/i18n/en.js", "/rules/nothing",
                                  "/rules/nothing/text", "/rules/kozel/text?lang=../x"])
def test_no_other_catalog_or_rules_page_is_served(client, path):
    r = client.get(path)
    assert r.status_code == 404 and r.mimetype == "application/problem+json"


def test_the_rules_pages_are_the_client_page_and_the_rules_text_is_docs_rules_itself(client):
    import engine

    for path in ["/rules", *(f"/rules/{rid}" for rid in engine.RULES)]:
        r = client.get(path)
        assert r.status_code == 200 and r.data == (STATIC / "index.html").read_bytes(), path
    for rid in engine.RULES:
        r = client.get(f"/rules/{rid}/text")
        assert r.status_code == 200 and r.mimetype == "text/markdown"
        assert r.headers["Content-Language"] == "en"
        assert r.data == (ROOT / "docs" / "rules" / f"{rid}.md").read_bytes()
    # a language without a translation of the page gets the English one, and is told so
    r = client.get("/rules/tiengow/text?lang=lv")
    if not (ROOT / "docs" / "rules" / "lv" / "tiengow.md").exists():
        assert r.headers["Content-Language"] == "en"
        assert r.data == (ROOT / "docs" / "rules" / "tiengow.md").read_bytes()
    for translated in sorted((ROOT / "docs" / "rules").glob("*/*.md")):
        lang, rid = translated.parent.name, translated.stem
        r = client.get(f"/rules/{rid}/text?lang={lang}")
        assert r.headers["Content-Language"] == lang and r.data == translated.read_bytes()


def test_the_wheel_ships_the_client_and_the_installed_package_serves_it(tmp_path, redis_url):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path / "dist"),
                            str(ROOT)], capture_output=True, text=True, timeout=300)
    if built.returncode != 0 and ("Could not find a version" in built.stderr or "connection" in built.stderr.lower()):
        pytest.skip(f"the build backend could not be installed here: {built.stderr[-300:]}")
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("tilehouse-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    for src in SOURCES:
        assert f"service/web/static/{src.name}" in shipped
    for cat in CATALOGS:
        assert f"service/web/static/i18n/{cat.name}" in shipped
    for page in (ROOT / "docs" / "rules").rglob("*.md"):
        assert f"service/web/rules/{page.relative_to(ROOT / 'docs' / 'rules')}" in shipped
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target),
                    str(wheel)], check=True, timeout=300)
    probe = (
        "import service, sys\n"
        f"assert service.__file__.startswith({str(target)!r}), service.__file__\n"
        f"c = service.create_app({{'REDIS_URL': {redis_url!r}}}).test_client()\n"
        "for path in ['/', '/static/app.js', '/static/style.css', '/static/i18n/en.json', '/rules/kozel/text']:\n"
        "    r = c.get(path); print(path, r.status_code, r.mimetype, len(r.data))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                         cwd=tmp_path, env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    lines = run.stdout.split("\n")
    assert lines[0].startswith("/ 200 text/html")
    assert lines[1].startswith("/static/app.js 200 text/javascript")
    assert lines[2].startswith("/static/style.css 200 text/css")
    assert lines[3].startswith("/static/i18n/en.json 200 application/json")
    assert lines[4].startswith("/rules/kozel/text 200 text/markdown")


# ------------------------------------------------------------------------------------------ catalogs

PLURAL_FORMS = ("zero", "one", "two", "few", "many", "other")
#: the plural forms each language needs (CLDR's cardinal categories for whole numbers)
NEEDED_FORMS = {"en": {"one", "other"}, "da": {"one", "other"}, "es": {"one", "other"},
                "ru": {"one", "few", "many", "other"}, "uk": {"one", "few", "many", "other"},
                "cs": {"one", "few", "many", "other"}, "sr-Latn": {"one", "few", "other"},
                "lv": {"zero", "one", "other"}, "zh-Hant": {"other"}, "zh-Hans": {"other"}}
LANGS = sorted(NEEDED_FORMS)
#: texts that may read the same in a language as in English: names, numbers, symbols, the brand
SAME_ALLOWED = re.compile(r"^(?:[\d\s.,:;+×→←·/()#%{}\-–—…]|\{\w+\}|tilehouse|AI|OK|Kozel|Tien Gow|Tiu U|6-6)*$")
#: words a language writes exactly as English does (Spanish: "Error", "Total", "no", "civil"): key -> languages
COGNATES = {"app.error": {"es"}, "kozel.summary.total": {"es"}, "option.no": {"es"}, "tile.civil": {"es"}}


def _catalog(lang: str) -> dict[str, str]:
    import json

    return json.loads((STATIC / "i18n" / f"{lang}.json").read_text())


def _split(key: str) -> tuple[str, str | None]:
    base, _, form = key.rpartition(".")
    return (base, form) if form in PLURAL_FORMS else (key, None)


def test_the_catalog_languages_are_the_ones_the_client_offers():
    offered = re.findall(r'\["([A-Za-z-]+)", "[^"]+"\]', (STATIC / "i18n.js").read_text())
    assert sorted(offered) == LANGS
    assert sorted(p.stem for p in CATALOGS) == LANGS


@pytest.mark.parametrize("lang", LANGS)
def test_each_catalog_has_every_key_of_the_english_one_with_its_placeholders_and_plural_forms(lang):
    en, cat = _catalog("en"), _catalog(lang)
    plural_bases = {_split(k)[0] for k in en if _split(k)[1]}
    for key, text in en.items():
        base, form = _split(key)
        if key.endswith(".zh") and lang != "en":
            continue  # the Chinese tile names are English's own (shown beside the translated name)
        if form is None:
            assert key in cat, f"{lang} lacks {key}"
            want = set(re.findall(r"\{(\w+)\}", text))
            assert set(re.findall(r"\{(\w+)\}", cat[key])) <= want, (lang, key, cat[key])
    for base in plural_bases:
        forms = {f for f in PLURAL_FORMS if f"{base}.{f}" in cat}
        assert NEEDED_FORMS[lang] <= forms, f"{lang} {base}: has {sorted(forms)}, needs {sorted(NEEDED_FORMS[lang])}"
    # nothing the client does not look up
    for key in cat:
        base, _ = _split(key)
        assert key in en or base in plural_bases, f"{lang} has the unknown key {key}"


@pytest.mark.parametrize("lang", [x for x in LANGS if x != "en"])
def test_each_catalog_speaks_its_language_with_no_english_left_but_names_and_numbers(lang):
    en, cat = _catalog("en"), _catalog(lang)
    left = sorted(k for k, v in cat.items() if _split(k)[0] != "lang.name" and en.get(k) == v
                  and not SAME_ALLOWED.match(v) and lang not in COGNATES.get(k, ()))
    assert left == [], f"{lang} still says in English: {left[:10]}"
    if lang.startswith("zh"):
        han = re.compile(r"[\u4e00-\u9fff]")
        words = {k: re.sub(r"\{\w+\}|tilehouse", "", v) for k, v in cat.items()}
        latin = sorted(k for k, v in words.items() if not han.search(v) and re.search(r"[a-z]{4,}", v))
        assert latin == [], f"{lang} has Latin words where Chinese was expected: {latin[:10]}"


def test_every_key_the_client_looks_up_is_in_the_english_catalog():
    en = _catalog("en")
    code = "\n".join(p.read_text() for p in SOURCES if p.suffix == ".js")
    used = set(re.findall(r'\bt\(\s*"([a-z_]+(?:\.[A-Za-z0-9_+-]+)+)"', code))
    used |= set(re.findall(r'\bsay\(c, "([a-z_.]+)"', code))
    bases = {_split(k)[0] for k in en}
    missing = sorted(k for k in used if k not in en and k not in bases)
    assert missing == []
