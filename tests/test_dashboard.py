"""The dashboard in headless Chromium with the outcomes scenario's data: every chart has
its series with the stored figures, nothing is drawn without data, and a screenshot is
kept as a test artefact ($AGENTBOT_TEST_ARTEFACTS, default .artefacts/)."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from html import unescape
from pathlib import Path

import httpx
import pytest
import uvicorn
from prometheus_client.parser import text_string_to_metric_families

from bot.config import Settings
from bot.queue.sqlite import SqliteQueue
from bot.stats.charts import bar_chart
from tests.fakes.github import FakeGitHub
from tests.test_jobs_page import CHROMIUM, _free_port
from tests.test_outcomes import COSTS, _events, open_pulls, run_jobs
from tests.test_outcomes import gh as gh  # the fixture
from tests.test_worker import REPO
from webhooks.app import create_app

ROOT = Path(__file__).resolve().parents[1]
ARTEFACTS = Path(os.environ.get("AGENTBOT_TEST_ARTEFACTS", ROOT / ".artefacts"))
PASSWORD = "dash-pw"
BROWSER = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def test_a_chart_without_data_draws_nothing() -> None:
    assert "<rect" not in bar_chart("c", "t", [], {"a": []})
    assert "<rect" not in bar_chart("c", "t", ["x"], {"a": [None]})
    assert "no data yet" in bar_chart("c", "t", ["x"], {"a": [None]})
    drawn = bar_chart("c", "<t>", ["x", "y"], {"a": [1.0, None], "b": [2.0, 0.5]}, line=("cap", 3))
    assert drawn.count("<rect") == 3 and "&lt;t&gt;" in drawn
    assert 'data-series="cap" data-value="3"' in drawn


@pytest.fixture
def served(gh: FakeGitHub, tmp_path: Path) -> Iterator[str]:
    pulls = open_pulls(gh)
    data = run_jobs(tmp_path, gh, pulls, _events(pulls))
    queue = SqliteQueue(data / "agentbot.db")
    now = datetime.now(UTC)
    for n, usd in COSTS.items():  # what the four jobs spent: two today, two yesterday
        at = now if n <= 2 else now - timedelta(days=1)
        queue.record_spend(f"d{n - 1}", REPO, n, "fix_issue", usd, at)
    settings = Settings.model_validate({"max_usd_per_day": 2.0, "max_usd_per_month": 40.0})
    app = create_app(queue=queue, secret="s", settings=settings, jobs_password=PASSWORD)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)
    queue.close()


def _chromium(*args: str, profile: Path) -> str:
    assert CHROMIUM is not None
    proc = subprocess.run(
        [CHROMIUM, *BROWSER, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _series(dom: str, chart: str) -> dict[str, list[tuple[str, float]]]:
    found = re.search(rf'<figure class="chart" id="{chart}">(.*?)</figure>', dom, re.S)
    assert found, f"{chart} is missing or empty"
    out: dict[str, list[tuple[str, float]]] = {}
    for name, body in re.findall(r'<g class="series" data-series="([^"]+)">(.*?)</g>', found[1]):
        bars = re.findall(r'data-category="([^"]*)" data-value="([^"]+)"', body)
        out[unescape(name)] = [(unescape(c), float(v)) for c, v in bars]
    return out


@pytest.mark.chromium
@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_chromium_renders_every_chart_with_its_series(served: str, tmp_path: Path) -> None:
    assert httpx.get(f"{served}/dashboard").status_code == 401  # the jobs page's password
    jobs = httpx.get(f"{served}/", auth=("any", PASSWORD)).text
    assert 'href="/dashboard"' in jobs

    url = served.replace("http://", f"http://any:{PASSWORD}@") + "/dashboard"
    dom = _chromium("--dump-dom", url, profile=tmp_path / "p1")
    today = datetime.now(UTC)
    yesterday = today - timedelta(days=1)
    spend = _series(dom, "chart-spend")
    assert [v for _, v in spend["spend"] if v] == [pytest.approx(0.75), pytest.approx(1.0)]
    assert dict(spend["spend"])[today.strftime("%m-%d")] == pytest.approx(1.0)
    assert dict(spend["spend"])[yesterday.strftime("%m-%d")] == pytest.approx(0.75)
    assert 'data-series="daily cap" data-value="2"' in dom
    outcomes = _series(dom, "chart-outcomes")
    assert outcomes == {"merged": [("fix_issue", 2)], "closed": [("fix_issue", 1)],
                        "open": [("fix_issue", 1)]}  # fmt: skip
    rates = _series(dom, "chart-rates")
    assert rates == {"success": [("fix_issue", 1.0)], "unverified": [("fix_issue", 0.25)]}
    assert _series(dom, "chart-cost") == {"cost per merged PR": [("fix_issue", 0.875)]}
    queue = dict(_series(dom, "chart-queue")["jobs"])
    assert queue["done"] == 4 and queue["ignored"] == len(_events({1: 0, 2: 0, 3: 0}))
    durations = _series(dom, "chart-durations")["seconds"]
    assert durations == [("p50", 60.0), ("p95", 120.0)]  # the jobs took 30, 60, 90, 120 s
    assert 'id="tile-cost"><b>$0.88</b>' in dom and 'id="tile-zero-touch"><b>1</b>' in dom

    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTEFACTS / "dashboard.png"
    shot.unlink(missing_ok=True)
    _chromium(f"--screenshot={shot}", "--window-size=1300,1500", url, profile=tmp_path / "p2")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000

    # The same figures as Prometheus metrics.
    text = httpx.get(f"{served}/metrics").text
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }
    assert samples[("agentbot_pull_requests", (("kind", "fix_issue"), ("state", "merged")))] == 2
    assert samples[("agentbot_cost_per_merged_pr_usd", (("kind", "fix_issue"),))] == 0.875
    assert samples[("agentbot_zero_touch_merges", (("kind", "fix_issue"),))] == 1
    assert samples[("agentbot_spend_usd", (("period", "day"),))] == pytest.approx(1.0)
    assert samples[("agentbot_spend_cap_usd", (("period", "day"),))] == 2.0


def test_the_dashboard_has_no_chart_before_any_data(tmp_path: Path) -> None:
    from webhooks.dashboard import render_dashboard

    queue = SqliteQueue(tmp_path / "q.db")
    page = render_dashboard(queue)
    queue.close()
    assert "<rect" not in page and page.count('class="chart empty"') == 6
