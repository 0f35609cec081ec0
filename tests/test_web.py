"""Issue 12, the web client as files: served at ``/`` and ``/static/<file>`` from the package (the wheel
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
        assert path.startswith("/v1/") or path == "/openapi.yaml", path


def test_tokens_are_kept_in_session_storage_only():
    code = "\n".join(p.read_text() for p in SOURCES if p.suffix == ".js")
    assert "sessionStorage" in code
    assert "localStorage" not in code and "document.cookie" not in code


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
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target),
                    str(wheel)], check=True, timeout=300)
    probe = (
        "import service, sys\n"
        f"assert service.__file__.startswith({str(target)!r}), service.__file__\n"
        f"c = service.create_app({{'REDIS_URL': {redis_url!r}}}).test_client()\n"
        "for path in ['/', '/static/app.js', '/static/style.css']:\n"
        "    r = c.get(path); print(path, r.status_code, r.mimetype, len(r.data))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                         cwd=tmp_path, env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    lines = run.stdout.split("\n")
    assert lines[0].startswith("/ 200 text/html")
    assert lines[1].startswith("/static/app.js 200 text/javascript")
    assert lines[2].startswith("/static/style.css 200 text/css")
