"""``tilehouse bench http``'s default-strength latency (bench/http.py, section 4): real gunicorn, a real
worker and a private Redis, as the benchmark runs them.  Figures are not asserted (benchmarks measure
speed); what is checked is that the section measures what it says: suggestions with no params search at
the default preset's budget, and a named variant at its own."""

from __future__ import annotations

import json
import subprocess
import sys

from api_support import ROOT

import ai


def test_default_latency_searches_at_the_default_presets_budget_and_each_variant_at_its_own():
    (standard,) = [p for p in ai.get_engine("ismcts").presets if p.default]
    out = subprocess.run(
        [sys.executable, "-m", "bench.http", "--sections", "latency", "--latency-rules", "kozel,tiuu",
         "--latency-positions", "1", "--latency-repeats", "2", "--latency-variant", 'small={"iterations": 7}',
         "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert set(report) == {"default_latency"}
    figures = report["default_latency"]
    assert set(figures) == {"kozel", "tiuu"}
    for by_set in figures.values():
        assert by_set["default"]["iterations"] == standard.params["iterations"]
        assert by_set["small"]["iterations"] == 7
        for fig in by_set.values():
            assert fig["suggestions"] == 2 and 0 < fig["p50_ms"] <= fig["p90_ms"]


def test_a_latency_variant_must_be_a_named_json_object():
    for bad in ("small", "small=[1]", "default={}", "=1", "small={nope"):
        out = subprocess.run([sys.executable, "-m", "bench.http", "--latency-variant", bad], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and "--latency-variant wants NAME=JSON" in out.stderr, bad
