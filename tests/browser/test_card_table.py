"""The card table of the page (``renderTable`` in app.js) on a phone: a Mineo deal played to the end by tapping on
a 390 px wide touch viewport (never wider than the screen, every legal move visible and tappable, the highlighted
cards exactly the enabled ones), the last trick on demand (its button and the key L: the previous trick's four
cards and its winner, as the move list tells them), and the replay of the deal drawn by the same table component.

The server, the browser and the helpers are in :mod:`tests.support.browser` (skipped without Chromium or
Playwright).
"""

from typing import Any

import pytest

from tests.support.browser import (
    CLICK_SEEDS,
    ENABLED,
    MISSING,
    Page,
    expect,
    set_up,
    shot,
    wait_turn,
)

if MISSING:
    pytest.skip(MISSING, allow_module_level=True)

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
VARIANT, PLAYERS = "mineo", 4

# every legal move on screen and the topmost element at its centre (a tap reaches it): a decision's button at its
# middle, a card of the hand (which the next card may overlap) at the middle of its corner, the part always shown
REACHABLE = """() => [...document.querySelectorAll("#game [data-action]:not([disabled])")].map(b => {
  b.scrollIntoView({block: "center", inline: "nearest"});
  const r = b.getBoundingClientRect();
  const c = (b.querySelector(".corner") || b).getBoundingClientRect();
  const hit = document.elementFromPoint(c.left + c.width / 2, c.top + c.height / 2);
  return r.left >= 0 && r.right <= window.innerWidth && !!hit && hit.closest("button") === b;
})"""
# the last complete trick as the move list tells it: the cards of its plays (the last ones up to a won_by) and winner
LAST_TRICK_MOVES = """(n) => {
  const plays = [...document.querySelectorAll("#moves li")].filter(l => l.dataset.move.startsWith("play:"));
  const end = plays.map(l => l.dataset.wonBy !== undefined).lastIndexOf(true);
  if (end < 0) return null;
  return {cards: plays.slice(end - n + 1, end + 1).map(l => l.dataset.move.slice(5)), winner: plays[end].dataset.wonBy};
}"""


def scroll_width(pg: Page) -> int:
    return pg.page.evaluate("() => document.scrollingElement.scrollWidth")


def cards(pg: Page, selector: str) -> list[str]:
    return pg.page.locator(selector).evaluate_all("es => es.map(e => e.dataset.card)")


def check_last_trick(pg: Page, press: Any) -> None:
    """``press`` (the button or the key) shows the previous trick in the middle of the table, pressed again the
    trick being played."""
    want = pg.page.evaluate(LAST_TRICK_MOVES, PLAYERS)
    centre = pg.testid("trick")
    assert centre.get_attribute("data-showing") == "trick"
    press()
    expect(centre).to_have_attribute("data-showing", "last")
    assert sorted(cards(pg, "[data-testid=trick] figure.placed")) == sorted(want["cards"])
    assert len(want["cards"]) == PLAYERS
    assert pg.page.locator("[data-testid=trick] figure.winner").get_attribute("data-seat") == want["winner"]
    expect(pg.testid("last-trick-winner")).to_have_attribute("data-winner", want["winner"])
    expect(pg.testid("last-trick-button")).to_have_attribute("aria-pressed", "true")
    press()
    expect(centre).to_have_attribute("data-showing", "trick")


def test_a_deal_by_tapping_on_a_phone_and_its_replay(browser: Any, server: str) -> None:
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True, accept_downloads=True)
    pg = Page(browser, server, context)
    try:
        assert scroll_width(pg) <= PHONE["width"]
        seed = CLICK_SEEDS[VARIANT]
        set_up(pg, VARIANT, seed)
        pg.testid("start").tap()
        st = wait_turn(pg, seed, None)
        plays = 0
        seen_last = False
        for _ in range(100):
            if st["over"] == "true":
                break
            assert scroll_width(pg) <= PHONE["width"], st  # no horizontal scrolling at any point of the deal
            n = int(st["legal"])
            assert pg.page.locator(ENABLED).count() == n >= 1, st
            assert all(pg.page.evaluate(REACHABLE)), st
            legal = cards(pg, "#hand button.card.legal")
            assert legal == cards(pg, "#hand button.card:not([disabled])"), st  # highlighted = enabled
            assert len(pg.page.locator("#board .seat-plate").all()) == PLAYERS
            for s in range(1, PLAYERS):  # the others' hands face down, counted
                assert int(pg.testid(f"backs-{s}").get_attribute("data-count")) >= 1
            if st["phase"] == "play":
                plays += 1
                assert len(legal) == n  # in the card play every legal move is a card of the hand
                if pg.page.evaluate(LAST_TRICK_MOVES, PLAYERS) and not seen_last:
                    seen_last = True
                    shot(pg, "phone-table", down_to="#hand-section", top="#status")
                    check_last_trick(pg, lambda: pg.testid("last-trick-button").tap())
                    check_last_trick(pg, lambda: pg.page.keyboard.press("l"))
            pg.page.locator(ENABLED).first.tap()
            st = wait_turn(pg, seed, st["steps"])
        else:
            pytest.fail("the deal did not end")
        assert seen_last and plays >= 2
        expect(pg.testid("result")).to_be_visible()
        assert pg.testid("result").get_attribute("data-annulled") == "false"
        assert scroll_width(pg) <= PHONE["width"]

        # the replay of the deal: the same table component, every hand face up, the person's seat at the bottom
        pg.testid("replay-this").tap()
        status = pg.testid("replay-status")
        expect(status).to_have_attribute("data-index", "0")
        assert scroll_width(pg) <= PHONE["width"]
        play, rep = pg.testid("card-table"), pg.testid("replay-card-table")
        assert play.get_attribute("class") == rep.get_attribute("class") == "card-table"
        assert len(rep.locator(".felt .seat-plate").all()) == PLAYERS
        assert rep.locator(".seat-plate.pos-bottom").get_attribute("data-seat") == "0"
        for s in range(PLAYERS):
            assert pg.testid(f"replay-hand-{s}").get_attribute("data-cards")  # every hand dealt, face up
        pg.page.set_viewport_size({"width": 1200, "height": 800})
        count = int(status.get_attribute("data-count"))
        for _ in range(count // 2):
            pg.page.keyboard.press("ArrowRight")
        expect(status).to_have_attribute("data-index", str(count // 2))
        pg.testid("replay-seat").select_option("2")  # another seat at the bottom
        expect(rep.locator(".seat-plate.pos-bottom")).to_have_attribute("data-seat", "2")
        expect(pg.testid("replay-hands")).to_have_attribute("data-seat", "2")
        shot(pg, "replay-table", down_to="#replay-hands", top=".replay-nav")
        pg.check_clean()
    finally:
        context.close()
