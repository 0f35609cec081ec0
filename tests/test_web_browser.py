"""Issue 12, the web client in a real headless browser: Debian's ``chromium`` driven by Playwright's Python
package (``executable_path``: ``playwright install`` cannot download browsers here), against a real gunicorn
and a real RQ worker process (the ``server`` fixture of test_e2e).

A whole Tien Gow deal and a whole Kozel round (``target: 1``, ``opening_threshold: 0``) are played by
clicking only, and so is a whole game of the other two rule sets (Tiu U, wall and dice). One screenshot per
rule set is kept in ``.artifacts/web/`` (``TILEHOUSE_SCREENSHOTS=docs`` writes them to ``docs/screenshots/``
for the README instead), and no page may log a console error. Missing browser: the setup installs ``chromium`` with apt-get where it can (we
are root here), else every test here is skipped with a message saying why.

Select these tests with ``-m browser``; they run in the default suite.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from api_support import ROOT
from processes import apt_get
from test_e2e import processes, server  # noqa: F401  (the fixtures: gunicorn + worker.py on the test Redis)

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
except ImportError:  # pragma: no cover - the browser fixture skips with the reason
    PlaywrightTimeout = TimeoutError

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _install_chromium() -> str | None:
    """Debian's chromium (and a CJK font for the 文/武 labels) via apt-get, when we are root and have it."""
    if _chromium():
        return _chromium()
    if apt_get("chromium"):
        apt_get("fonts-wqy-microhei")  # optional: without it the 文/武 labels show as boxes
    return _chromium()


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - the test extra has it
        pytest.skip("the Python package playwright is not installed (pip install -e '.[test]')")
    path = _install_chromium()
    if path is None:
        pytest.skip("no chromium: apt-get install -y chromium was not possible on this machine")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=ARGS)
        yield b
        b.close()


def _shot_dir() -> Path:
    where = os.environ.get("TILEHOUSE_SCREENSHOTS")
    out = ROOT / "docs" / "screenshots" if where == "docs" else ROOT / ".artifacts" / "web"
    out.mkdir(parents=True, exist_ok=True)
    return out


class Page:
    """A browser tab on the client that records every console error and uncaught exception."""

    def __init__(self, browser, base: str, width: int = 1280, height: int = 860) -> None:
        self.ctx = browser.new_context(viewport={"width": width, "height": height})
        self.page = self.ctx.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e} {e.stack}"))
        self.base = base
        self.page.set_default_timeout(60_000)

    def new_game(self, rules: str, players: int, seats: list[str], options: dict[str, object],
                 clock: str = "") -> None:
        """Fill the new-game form as a person would: rule set, player count, seat kinds, options."""
        pg = self.page
        pg.goto(self.base + "/")
        pg.select_option("#rules", rules)
        pg.select_option("#players", str(players))
        for i, engine in enumerate(seats):
            if engine == "human":
                continue
            pg.select_option(f'select[data-seat="{i}"][data-k="kind"]', "ai")
            pg.select_option(f'select[data-seat="{i}"][data-k="engine"]', engine)
        for name, value in options.items():
            field = pg.locator(f'[data-opt="{name}"]')
            if isinstance(value, bool):
                field.set_checked(value)
            else:
                field.fill(str(value))
                field.dispatch_event("change")
        if clock:
            pg.select_option("#clock", clock)
        pg.click("#create")
        pg.wait_for_selector(".seat")

    def act(self, timeout: float | None = None) -> str:
        """Wait for something to do, and do one click: 'done' when the result is shown."""
        pg = self.page
        pg.wait_for_function(timeout=timeout, expression="""() => !document.body.dataset.busy && !document.body.dataset.animating && (
            document.querySelector('.dialog.result') || document.querySelector('#continue') ||
            (document.querySelector('.turn.yours') &&
             (document.querySelector('button.move') || document.querySelector('button.piece.live:not(.selected)'))))""")
        if pg.query_selector(".dialog.result"):
            return "done"
        # the page may re-render between the wait and the click (a view arrives): then look again
        for selector, action in (("#continue", "continue"), ("button.move", "move"),
                                 ("button.piece.live:not(.selected)", "select")):
            if pg.query_selector(selector):
                try:
                    pg.locator(selector).first.click(timeout=2000)
                except PlaywrightTimeout:
                    return "again"
                return action
        return "again"

    def play_to_the_end(self, limit: int = 400) -> int:
        clicks = 0
        while self.act() != "done":
            clicks += 1
            assert clicks < limit, "the game did not end"
        return clicks

    def screenshot(self, name: str) -> Path:
        path = _shot_dir() / name
        self.page.screenshot(path=str(path))
        return path

    def close(self) -> None:
        self.ctx.close()


def test_a_whole_tien_gow_deal_is_played_by_clicking_with_no_console_error(browser, server):  # noqa: F811
    tab = Page(browser, server)
    tab.new_game("tiengow", 4, ["human", "greedy", "random", "greedy"], {"deals": 1})
    # the hand is sorted into its civil and military groups, drawn as SVG tiles
    assert tab.page.locator(".handgroup.civil svg.tile").count() + tab.page.locator(
        ".handgroup.military svg.tile").count() == 8
    # Hint: the AI's candidates for our seat as bars of visits with their mean reward, the best one marked
    pg = tab.page
    pg.wait_for_selector(".turn.yours")
    pg.click("#hintbtn")
    pg.wait_for_selector(".hint .hintrow.best", timeout=90_000)
    rows = pg.locator(".hint .hintrow")
    assert rows.count() >= 1 and "visits" in rows.first.inner_text()
    assert pg.locator(".hint .hintrow.best .bar").count() == 1
    pg.click(".hint .hintrow.best")  # selects that move's tiles: its buttons appear, or it plays at once
    shot_taken = False
    clicks = 0
    while tab.act() != "done":
        clicks += 1
        if not shot_taken and tab.page.locator(".trick .slot svg.tile").count() >= 2 \
                and tab.page.locator(".turn.yours").count():
            tab.screenshot("tiengow.png")
            shot_taken = True
        assert clicks < 300
    result = tab.page.locator(".dialog.result")
    assert result.locator("table.results").first.locator("tbody tr").count() == 4
    assert "Rematch" in result.inner_text()
    # the log tells the deal in words, trick by trick, to the settlement
    log = tab.page.locator("#logitems").inner_text()
    assert "wins trick" in log and "Deal 1 ends" in log
    if not shot_taken:
        tab.screenshot("tiengow.png")
    tab.screenshot("tiengow-result.png")
    assert tab.errors == []
    tab.close()


def test_a_whole_kozel_round_is_played_by_clicking_and_reveals_the_hands_left(browser, server):  # noqa: F811
    tab = Page(browser, server)
    tab.new_game("kozel", 2, ["human", "greedy"], {"target": 1, "opening_threshold": 0})
    line_seen = False
    clicks = 0
    while tab.act() != "done":
        clicks += 1
        if not line_seen and tab.page.locator(".linetile").count() >= 4 and tab.page.locator(".turn.yours").count():
            # both open ends of the line are shown
            assert tab.page.locator("button.end.left").count() == 1
            assert tab.page.locator("button.end.right").count() == 1
            tab.screenshot("kozel.png")
            line_seen = True
        assert clicks < 300
    result = tab.page.locator(".dialog.result")
    assert "Hands left in round 1" in result.inner_text()
    assert result.locator("table.results").count() >= 2
    # Rematch: the next game with the same seats and options, and this tab holds its seat there
    first = tab.page.url
    tab.page.click("#rematch")
    tab.page.wait_for_function(f"location.href !== {first!r} && document.querySelectorAll('.seat').length === 2")
    tab.page.wait_for_selector(".seat.me")
    assert "Goat at 1" in tab.page.locator(".statusline").inner_text()
    assert tab.errors == []
    tab.close()


@pytest.mark.parametrize("rules, players, seats", [
    ("tiuu", 2, ["human", "greedy"]),
    ("tiengow_wall", 3, ["human", "greedy", "random"]),
])
def test_a_whole_tiu_u_game_and_a_whole_wall_and_dice_game_are_played_by_clicking(
        browser, server, rules, players, seats):  # noqa: F811
    tab = Page(browser, server)
    tab.new_game(rules, players, seats, {}, clock="300+3")
    # a time control: the human seat shows its time left, the AI seats none
    assert tab.page.locator(".seat .clock").count() == 1
    assert tab.page.locator(".seat.me .clock").inner_text().startswith(("5:00", "4:5"))
    clicks = 0
    shot = False
    for _ in range(400):
        action = tab.act()
        if action == "done":
            break
        clicks += action in ("move", "select")
        if not shot and clicks >= 6 and tab.page.locator(".turn.yours").count():
            tab.screenshot(f"{rules}.png")
            shot = True
    else:
        pytest.fail("the game did not end")
    log = tab.page.locator("#logitems").inner_text()
    assert clicks >= 6 and "\nYou " in "\n" + log, log
    # the result: ranking with scores and payoffs, and each game's table
    result = tab.page.locator(".dialog.result")
    assert result.locator("table.results").first.locator("tbody tr").count() == players
    assert "Game 1" in result.inner_text()
    assert tab.errors == []
    tab.close()


def test_one_click_gives_you_against_three_ai_on_a_360_pixel_phone_played_with_the_keyboard(
        browser, server):  # noqa: F811
    tab = Page(browser, server, width=360, height=740)
    pg = tab.page
    pg.goto(server + "/")
    assert pg.evaluate("document.documentElement.scrollWidth") <= 360
    pg.click("#quick")
    pg.wait_for_selector(".seat")
    assert "Tien Gow" in pg.title() or "Tien Gow" in pg.locator("#title").inner_text()
    assert pg.locator(".seat").count() == 4 and pg.locator(".seat .chip.ai").count() == 3
    pg.wait_for_selector(".turn.yours", timeout=120_000)
    assert pg.evaluate("document.documentElement.scrollWidth") <= 360
    # Tab reaches the hand; Enter selects a tile and Enter on the first move button plays it
    for _ in range(40):
        pg.keyboard.press("Tab")
        if pg.evaluate("document.activeElement.matches('button.piece.live')"):
            break
    else:
        pytest.fail("Tab never reached a playable tile")
    logged = pg.locator("#logitems li").count()
    played = f"document.querySelectorAll('#logitems li').length > {logged}"
    # Enter selects the tile (and the focus stays on it); a tile that makes exactly one move plays at
    # once; following a pair or more, Tab on to more tiles until the move buttons appear
    for _ in range(8):
        pg.keyboard.press("Enter")
        pg.wait_for_function("!document.body.dataset.busy")
        if pg.evaluate(f"!!document.querySelector('button.move') || {played}"):
            break
        assert pg.evaluate("document.activeElement.matches('button.piece.selected')")
        for _ in range(40):
            pg.keyboard.press("Tab")
            if pg.evaluate("document.activeElement.matches('button.piece.live:not(.selected)')"):
                break
    if not pg.evaluate(played):
        for _ in range(40):
            pg.keyboard.press("Tab")
            if pg.evaluate("document.activeElement.matches('button.move')"):
                break
        else:
            pytest.fail("Tab never reached the move buttons")
        pg.keyboard.press("Enter")
    pg.wait_for_function(played)
    assert pg.evaluate("document.documentElement.scrollWidth") <= 360
    # the top bar still offers resigning (issue 11) at 360 px
    assert pg.locator("#resignbtn").is_visible()
    tab.screenshot("tiengow-phone.png")
    assert tab.errors == []
    tab.close()


def test_an_open_seat_is_taken_through_its_link_in_another_browser(browser, server):  # noqa: F811
    host = Page(browser, server)
    pg = host.page
    pg.goto(server + "/")
    pg.select_option("#rules", "kozel")
    pg.select_option('select[data-seat="1"][data-k="kind"]', "open")
    pg.click("#create")
    pg.wait_for_selector(".invite")
    assert "Waiting for 1 player to join" in pg.locator(".statusline").inner_text()
    link = pg.locator(".invite input").input_value()
    assert "#/join/" in link
    guest = Page(browser, server)  # another browser context: its own sessionStorage, no token of the host's
    guest.page.goto(link)
    guest.page.fill("#joinname", "Bob")
    guest.page.click("#joinbtn")
    guest.page.wait_for_selector(".hand svg.tile")
    assert guest.page.locator(".seat.me .name").inner_text() == "Bob"
    pg.wait_for_function("!document.querySelector('.invite')")
    assert "Bob takes seat 2" in pg.locator("#logitems").inner_text()
    # the two humans play on, each in his own browser: whoever is to move clicks
    clicks = 0
    for _ in range(200):
        for tab in (host, guest):
            if tab.page.locator(".turn.yours").count() and not tab.page.locator(".dialog.result").count():
                try:
                    clicks += tab.act(timeout=3000) in ("move", "select")
                except PlaywrightTimeout:
                    continue  # the turn passed to the other browser meanwhile
        if clicks >= 4:
            break
        pg.wait_for_timeout(100)
    assert clicks >= 4
    assert "\nYou " in "\n" + pg.locator("#logitems").inner_text()
    assert "\nYou " in "\n" + guest.page.locator("#logitems").inner_text()
    assert host.errors == [] and guest.errors == []
    host.close()
    guest.close()
