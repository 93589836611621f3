"""The page a player meets (issue 52), each test on a desktop (1200 px, a mouse) and on a 390 px phone (touch):
the table first and the setup folded under it, challenges on a view of their own; every card of the hand shows its
index (its corner) at every width, a raised card included, and an 18-card hand on the phone in two rows of 9; the
hints of the device (taps or keys); the end of a deal as a score sheet in words whose tally agrees with the table's
running count; a reload during a deal against bots, or a challenge's deal, takes the deal back; the shipped bots in
the seat list; an unknown variant in the address said so; an away person's seat counting down, then the moves
naming the bot that played for them.

The server, the browser and the helpers are in :mod:`tests.support.browser` (skipped without Chromium or Playwright).
Everything waits for conditions (generous timeouts); nothing asserts a duration.
"""

import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import (
    ENABLED,
    MISSING,
    TIMEOUT_MS,
    VIEWPORT,
    Page,
    expect,
    open_setup,
    people_strip,
    set_up,
    shared_status,
    shot,
    take_turn,
    wait_turn,
)

if MISSING:
    pytest.skip(MISSING, allow_module_level=True)

pytestmark = pytest.mark.browser

GRACE = 10  # seconds an away person's seat waits here (serve --seat-grace): the page sees it count down
SERVE_ARGS = ["--seat-grace", str(GRACE)]  # read by the server fixture
DEVICES = {"desktop": {"viewport": VIEWPORT},
           "phone": {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}}
BIDDING = {"early", "auction", "bid"}
# every card of the hand whose corner (rank and suit) is hidden: the topmost element at the corner's middle is not
# the card itself, or the corner is off the screen's width
HIDDEN_CORNERS = """() => {
  document.querySelector("#hand-section").scrollIntoView({block: "center"});
  return [...document.querySelectorAll("#hand .card")].filter(card => {
    const c = card.querySelector(".corner").getBoundingClientRect();
    const hit = document.elementFromPoint(c.left + c.width / 2, c.top + c.height / 2);
    return c.left < 0 || c.right > window.innerWidth || !hit || hit.closest(".card") !== card;
  }).map(card => card.dataset.card);
}"""
DUMP = re.compile(r"\[|\]|\{|\}|\bTrue\b|\bFalse\b|\bNone\b|details:|poignees|chelem_announced")


@pytest.fixture(params=list(DEVICES))
def device(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def open_page(browser: Any, server: str, device: str, path: str = "/") -> Page:
    pg = Page(browser, server, browser.new_context(accept_downloads=True, **DEVICES[device]))
    if path != "/":
        pg.page.goto(server + path)
        pg.page.wait_for_selector("body[data-ready=true]", state="attached")
    return pg


def press(pg: Page, locator: Any, device: str) -> None:
    """A tap on the phone, a click on the desktop."""
    if device == "phone":
        locator.tap()
    else:
        locator.click()


def play_turn(pg: Page, st: dict[str, str], device: str, seed: int) -> dict[str, str]:
    """The first legal move (a bid that is not a pass in the auction: the deal gets card play), then the next turn."""
    enabled = pg.page.locator(ENABLED)
    actions = enabled.evaluate_all("bs => bs.map(b => b.dataset.action)")
    pick = next((k for k, a in enumerate(actions) if "pass" not in a), 0) if st["phase"] in BIDDING else 0
    press(pg, enabled.nth(pick), device)
    return wait_turn(pg, seed, st["steps"])


def moves_list(pg: Page) -> list[list[str]]:
    return pg.page.locator("#moves li").evaluate_all("ls => ls.map(l => [l.dataset.index, l.textContent])")


def box(pg: Page, selector: str) -> dict[str, float]:
    return pg.page.locator(selector).evaluate(
        "e => { const r = e.getBoundingClientRect(); return {top: r.top + window.scrollY, bottom: r.bottom + "
        "window.scrollY, height: window.innerHeight}; }")


def check_hand(pg: Page, device: str, hovered: bool = False) -> None:
    """Every card's index shows; a hovered (raised further) legal card hides none of its neighbours'."""
    assert pg.page.evaluate(HIDDEN_CORNERS) == []
    if device == "desktop" and not hovered:
        legal = pg.page.locator("#hand button.card.legal")
        if legal.count():
            legal.nth(legal.count() // 2).hover()
            check_hand(pg, device, hovered=True)
            pg.page.mouse.move(0, 0)


# -- the tests ------------------------------------------------------------------------------------------------------
def test_the_table_first_every_index_shown_hints_of_the_device_and_a_score_sheet(browser: Any, server: str,
                                                                                 device: str) -> None:
    """French tarot, four players (18 cards a hand), played to the end: the layout, the hand, the hints, the sheet."""
    pg = open_page(browser, server, device)
    try:
        seed = 10
        set_up(pg, "french4", seed)
        press(pg, pg.testid("start"), device)
        st = wait_turn(pg, seed, None)
        expect(pg.testid("setup-panel")).not_to_have_attribute("open", "")  # folded while the deal is on
        board, hand, panel = box(pg, "#board"), box(pg, "#hand-section"), box(pg, "#setup-panel")
        assert board["top"] < board["height"] / 3 and hand["top"] < board["height"], (board, hand)  # on screen 1
        assert panel["top"] > hand["bottom"]  # the setup under the table
        assert not pg.testid("challenges").is_visible()  # challenges: a view of their own
        hint = pg.testid("hint")
        if device == "phone":
            expect(hint).to_contain_text("tap")
            expect(pg.page.locator(".help-touch")).to_be_visible()
            expect(pg.page.locator(".help-keys")).to_be_hidden()
        else:
            expect(hint).to_contain_text("keys 1-9, arrows, Enter")
            expect(pg.page.locator(".help-keys")).to_be_visible()
            expect(pg.page.locator(".help-touch")).to_be_hidden()
        plays = 0
        for _ in range(200):
            if st["over"] == "true":
                break
            if st["phase"] == "play":
                plays += 1
                if plays == 1:  # 18 cards: one row on the desktop, two of 9 on the phone (docs/web.md)
                    assert len(pg.page.locator("#hand .card").all()) == 18
                    expect(pg.testid("hand")).to_have_attribute("data-rows", "2" if device == "phone" else "1")
                    assert "(L)" not in pg.testid("last-trick-button").inner_text() or device == "desktop"
                    shot(pg, f"page-{device}", down_to="#hand-section")  # the page from its top
                check_hand(pg, device)
                assert ("tap" in hint.inner_text()) is (device == "phone")
            st = play_turn(pg, st, device, seed)
        else:
            pytest.fail("the deal did not end")
        assert plays >= 10
        check_sheet(pg)
        if device == "phone":
            shot(pg, "score-phone", element="#result")
        headline = pg.testid("sheet-headline").inner_text()
        press(pg, pg.testid("replay-this"), device)  # the replay's last step: the same sheet
        press(pg, pg.testid("replay-last"), device)
        expect(pg.testid("replay-sheet-headline")).to_have_text(headline)
        pg.check_clean()
    finally:
        pg.context.close()


def check_sheet(pg: Page) -> None:
    """The end of the deal in words: contract, oudlers and the points needed, the points made, the base and the
    multiplier, the score and the payoffs; no Python dump; each side's tricks (the table's running count, on the
    seat plates) plus what is counted at the end make its final card points."""
    result = pg.testid("result")
    expect(result).to_be_visible()
    terms = pg.page.locator("[data-testid=sheet] dt").evaluate_all("ds => ds.map(d => d.dataset.term)")
    assert terms[:4] == ["Contract", "Oudlers", "Card points", "Base"] and terms[-2:] == ["Score", "Payoffs"], terms
    headline = pg.testid("sheet-headline").inner_text()
    assert re.search(r"(made|failed) by \d+: the taker [+−]\d+, each defender [+−]\d+", headline), headline
    text = result.inner_text()
    assert not DUMP.search(text), text
    plates = {int(s): float(p) for s, p in pg.page.locator("#board .seat-plate").evaluate_all(
        "ps => ps.map(p => [p.dataset.seat, p.dataset.points])")}
    sides = pg.page.locator("[data-testid=tally] li").evaluate_all(
        "ls => ls.map(l => ({seats: l.dataset.seats.split(',').map(Number), tricks: Number(l.dataset.tricks), "
        "end: Number(l.dataset.end), final: Number(l.dataset.final)}))")
    finals = pg.page.locator("[data-testid=sides-points] li").evaluate_all(
        "ls => ls.map(l => Number(l.dataset.points))")
    assert len(sides) == 2 and len(finals) == 2
    for side, final in zip(sides, finals, strict=True):
        assert sum(plates[s] for s in side["seats"]) == pytest.approx(side["tricks"], abs=1e-6)
        assert side["tricks"] + side["end"] == pytest.approx(side["final"], abs=1e-6)
        assert side["final"] == pytest.approx(final, abs=1e-6)
    if any(side["end"] for side in sides):
        expect(pg.testid("tally")).to_contain_text("counted only at the end: the taker's discard")


def test_a_reload_takes_a_deal_against_bots_back(browser: Any, server: str, games_db: Path, device: str) -> None:
    """Mid-deal the page reloads: the same deal, the same seat, every move so far, the setup still folded; its
    connection then drops and the page takes the deal back by itself; played to the end, the deal is stored once,
    finished (not abandoned)."""
    from tarocchi_rl.web.store import open_store

    pg = open_page(browser, server, device)
    try:
        seed = {"desktop": 5, "phone": 9}[device]  # (a record of its own: the store is the module's)
        set_up(pg, "mineo", seed)
        press(pg, pg.testid("start"), device)
        st = wait_turn(pg, seed, None)
        plays = 0
        while st["over"] != "true" and plays < 3:
            plays += st["phase"] == "play"
            st = play_turn(pg, st, device, seed)
        assert st["over"] != "true"
        before = moves_list(pg)
        pg.page.reload()
        pg.page.wait_for_selector("body[data-ready=true]", state="attached")
        st = wait_turn(pg, seed, None)
        assert st["steps"] == str(len(before)) and st["yourTurn"] == "true"
        assert moves_list(pg) == before
        expect(pg.testid("setup-panel")).not_to_have_attribute("open", "")
        expect(pg.testid("connection")).to_have_attribute("data-state", "open")
        # a dropped connection (the page kept): the page asks for its deal back by itself, its list replaced
        pg.page.evaluate("() => { document.querySelectorAll('#moves li').forEach(li => li.dataset.old = '1'); "
                         "app.ws.close(); }")
        pg.page.wait_for_function("() => !document.querySelector('#moves li[data-old]')")
        expect(pg.testid("connection")).to_have_attribute("data-state", "open")
        assert moves_list(pg) == before and shared_status(pg)["yourTurn"] == "true"
        for _ in range(200):
            if st["over"] == "true":
                break
            st = play_turn(pg, st, device, seed)
        record = pg.page.evaluate("() => app.record")
        assert record and pg.page.evaluate("() => sessionStorage.getItem('tarocchi-deal')") is None  # it is over
        pg.check_clean()
    finally:
        pg.context.close()
    store = open_store(f"sqlite:///{games_db}", create=False)
    try:
        games = []
        for _ in range(100):  # the server's writer thread stores the finished game
            games = [g for g in store.finished_games(practice=True) if g["record"] == record]
            if games:
                break
            time.sleep(0.1)
        assert len(games) == 1, "the deal is stored once, finished"
        assert [s["kind"] for s in games[0]["seats"]] == ["person", "bot", "bot", "bot"]
    finally:
        store.close()


def test_a_challenge_has_a_view_of_its_own_and_its_deal_survives_a_reload(browser: Any, server: str,
                                                                          device: str) -> None:
    pg = open_page(browser, server, device)
    try:
        press(pg, pg.testid("tab-challenges"), device)
        expect(pg.testid("challenges")).to_be_visible()
        expect(pg.testid("play-view")).to_be_hidden()
        start = pg.page.locator("[data-testid^=challenge-play-]").first
        press(pg, start, device)
        expect(pg.testid("play-view")).to_be_visible()
        expect(pg.testid("challenges")).to_be_hidden()
        expect(pg.testid("tab-play")).to_have_attribute("aria-pressed", "true")
        st = pg.page.wait_for_function(
            "() => { const s = document.querySelector('[data-testid=status]').dataset;"
            " return s.busy === 'false' && s.yourTurn === 'true' ? {...s} : false; }").json_value()
        pg.page.reload()
        pg.page.wait_for_selector("body[data-ready=true]", state="attached")
        back = pg.page.wait_for_function(
            "(steps) => { const s = document.querySelector('[data-testid=status]').dataset;"
            " return s.busy === 'false' && s.steps === steps ? {...s} : false; }", arg=st["steps"]).json_value()
        assert back["yourTurn"] == "true" and back["seat"] == st["seat"] and back["variant"] == st["variant"]
        pg.check_clean()
    finally:
        pg.context.close()


def test_the_shipped_bots_in_the_seat_list_and_the_variant_in_the_address(browser: Any, server: str,
                                                                          device: str) -> None:
    pg = open_page(browser, server, device, "/?variant=french9")
    try:
        expect(pg.testid("error")).to_contain_text('unknown variant "french9" in the address')
        expect(pg.testid("error")).to_contain_text("french3")
        pg.page.goto(server + "/?variant=french3")
        pg.page.wait_for_selector("body[data-ready=true]", state="attached")
        expect(pg.testid("variant")).to_have_value("french3")
        expect(pg.testid("error")).to_have_text("")
        options = pg.testid("seat-bot-1").locator("option").evaluate_all("os => os.map(o => o.value)")
        assert "bot:french3" in options and "heuristic" in options and "bot:mineo" not in options, options
        seed = 8
        set_up(pg, "french3", seed, bot="bot:french3")
        press(pg, pg.testid("start"), device)
        st = wait_turn(pg, seed, None)
        for _ in range(60):
            if st["over"] == "true" or pg.page.locator("#moves li[data-seat='1']").count():
                break
            st = play_turn(pg, st, device, seed)
        expect(pg.page.locator("#moves li[data-seat='1']").first).to_contain_text("seat 1 (bot:french3)")
        assert pg.testid("seat-1").get_attribute("data-player") == "bot:french3"
        pg.check_clean()
    finally:
        pg.context.close()


def test_an_away_seat_counts_down_and_the_moves_name_the_bot_playing_for_it(browser: Any, server: str,
                                                                           device: str) -> None:
    """A (on the device) opens a table for two people and two bots, B joins and leaves: A sees B's seat count down
    from the grace, then the moves that the replacement bot plays for B as 'seat 2 (heuristic for a person)'."""
    seats = ["human", "heuristic", "human", "heuristic"]
    a = open_page(browser, server, device)
    b = open_page(browser, server, "desktop")
    try:
        open_setup(a, friends=True)
        a.testid("variant").select_option("mineo")
        for k, who in enumerate(seats):
            a.testid(f"friend-seat-{k}").select_option(who)
        press(a, a.testid("open-table"), device)
        expect(a.testid("table-code")).to_have_text(re.compile(r"^[2-9A-Z]{8}$"))
        b.page.goto(a.testid("table-link").get_attribute("href"))
        expect(b.testid("status")).to_have_attribute("data-seat", "2")
        expect(a.page.locator("#people li[data-seat='2']")).to_have_attribute("data-state", "present")
        b.context.close()
        countdown = a.testid("away-countdown-2")
        expect(countdown).to_contain_text(re.compile(r"a bot (plays for them in \d+ s|takes the seat now)"))
        assert 0 <= int(countdown.get_attribute("data-left")) <= GRACE
        expect(a.page.locator("#people li[data-seat='2']")).to_have_attribute("data-state", "replaced",
                                                                            timeout=TIMEOUT_MS + 1000 * GRACE)
        assert people_strip(a)[2] == "replaced"
        for _ in range(300):  # A plays on until the bot has played for B
            if a.page.locator("#moves li[data-by='replacement']").count():
                break
            st = shared_status(a)
            if st.get("over") == "true":
                break
            if st.get("yourTurn") == "true" and st.get("busy") == "false":
                take_turn(a, st)
            else:
                a.page.wait_for_timeout(50)
        replaced = a.page.locator("#moves li[data-by='replacement']").first
        expect(replaced).to_contain_text("seat 2 (heuristic for a person)")
        assert replaced.get_attribute("data-bot") == "heuristic"
        a.check_clean()
    finally:
        a.context.close()
