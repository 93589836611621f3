"""The page of ``tarocchi-rl serve`` in a real browser (Playwright driving the system Chromium, /usr/bin/chromium):
a whole deal of every variant by clicking only against heuristic bots, the downloaded record scored again by
:func:`tarocchi_rl.records.replay` (payoffs and itemised bonuses as the page shows them), a deal played with the
keyboard only, the replay view (a downloaded file, a pasted line of an arena ``games.jsonl``; stepped with the
buttons and the keys), two people in two browser contexts at one table with bots, a variant of each family
(opened, joined by its link, a reload mid-deal taking the seat back with the whole move list, the stored game
replayed), and no console or page error anywhere.

The server, the browser and the helpers are in :mod:`tests.support.browser` (skipped without Chromium or
Playwright).
"""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tarocchi_rl.records import replay
from tarocchi_rl.variants import VARIANTS, get_variant
from tests.support.browser import (
    CLICK_SEEDS,
    ENABLED,
    KEYBOARD_SEED,
    KEYBOARD_VARIANT,
    MISSING,
    WAIT_TURN,
    Page,
    check_against_replay,
    download,
    expect,
    open_setup,
    people_strip,
    play_by_clicking,
    result_of,
    set_up,
    shared_status,
    shot,
    take_turn,
    wait_turn,
)

if MISSING:
    pytest.skip(MISSING, allow_module_level=True)

pytestmark = pytest.mark.browser

RECORDS: dict[str, str] = {}  # variant -> the text of a downloaded record (the replay test reuses one)


def play_and_download(pg: Page, variant: str, tmp_path: Path) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    seed = CLICK_SEEDS[variant]
    set_up(pg, variant, seed)
    turns: list[int] = []

    def mid_deal(st: dict[str, str]) -> None:  # the screenshot: a few tricks into the card play
        if st["phase"] == "play":
            turns.append(1)
            if len(turns) == 4 and variant in ("mineo", "french4"):
                shot(pg, f"table-{variant}", down_to="#hand-section")

    phases = play_by_clicking(pg, seed, mid_deal)
    shown = result_of(pg)
    assert shown["annulled"] == "false" and "play" in phases, (shown, phases)  # a real deal, not all passes
    path, record = download(pg, tmp_path, lambda: pg.testid("download-record").click())
    assert path.name == f"tarocchi-{variant}-{seed}.json"
    assert record["format"] == "tarocchi-record/1" and record["variant"] == variant
    RECORDS[variant] = path.read_text()
    return path, record, shown


# -- the tests ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", VARIANTS)
def test_a_deal_by_clicking_scores_as_its_record(web: Page, variant: str, tmp_path: Path) -> None:
    _, record, shown = play_and_download(web, variant, tmp_path)
    check_against_replay(shown, record)
    if variant == "french4":
        assert shown["bonuses"], "the screenshot of the score should itemise bonuses"
        shot(web, "score-french4", element="#result")


def test_a_deal_with_the_keyboard_only(web: Page, tmp_path: Path) -> None:
    page = web.page
    keys = page.keyboard

    def focused() -> str | None:
        return page.evaluate("() => document.activeElement && document.activeElement.dataset.testid || null")

    def tab_to(testid: str) -> None:
        for _ in range(40):
            keys.press("Tab")
            if focused() == testid:
                return
        pytest.fail(f"Tab never reached {testid}")

    tab_to("variant")
    for _ in range(len(VARIANTS)):
        if web.testid("variant").input_value() == KEYBOARD_VARIANT:
            break
        keys.press("ArrowDown")
    assert web.testid("variant").input_value() == KEYBOARD_VARIANT
    assert web.testid("human-seat").input_value() == "0"
    for k in range(1, get_variant(KEYBOARD_VARIANT).n_players):
        assert web.testid(f"seat-bot-{k}").input_value() == "heuristic"  # the server's default bot
    tab_to("seed")
    keys.type(str(KEYBOARD_SEED))
    tab_to("start")
    keys.press("Enter")
    st = wait_turn(web, KEYBOARD_SEED, None)
    phases = []
    for _ in range(300):
        if st["over"] == "true":
            break
        phases.append(st["phase"])
        n = int(st["legal"])
        if n >= 2:  # the arrows move between the legal moves and wrap around
            keys.press("ArrowRight")
            assert page.evaluate("() => document.activeElement.dataset.index") == "1"
            keys.press("ArrowLeft")
            keys.press("ArrowLeft")
            assert page.evaluate("() => document.activeElement.dataset.index") == str(n - 1)
        keys.press("1")
        active = page.evaluate("() => ({...document.activeElement.dataset})")
        assert active["index"] == "0" and active["key"] == "1", active
        keys.press("Enter")
        st = wait_turn(web, KEYBOARD_SEED, st["steps"])
    else:
        pytest.fail("the deal did not end")
    shown = result_of(web)
    assert shown["annulled"] == "false" and "play" in phases
    assert focused() == "download-record"  # the end of the deal focuses the download
    _, record = download(web, tmp_path, lambda: keys.press("Enter"))
    check_against_replay(shown, record)
    tab_to("replay-this")
    keys.press("Enter")
    status = web.testid("replay-status")
    status.wait_for(state="visible")
    count = len(record["actions"]) + 1
    expect(status).to_have_attribute("data-index", "0")
    expect(status).to_have_attribute("data-count", str(count))
    keys.press("End")
    expect(status).to_have_attribute("data-index", str(count - 1))
    assert json.loads(web.testid("replay-result").get_attribute("data-payoffs")) == shown["payoffs"]
    keys.press("Home")
    expect(status).to_have_attribute("data-index", "0")


def step_through(pg: Page, count: int, payoffs: list[int], screenshot: str | None = None, buttons: bool = True,
                 keys: bool = True) -> None:
    """From step 0 to the end and back with the buttons (``buttons``), with the arrow keys (``keys``), First / Last
    and Home / End; the index and count checked at every step, the result (the same payoffs) at the last one."""
    status, page = pg.testid("replay-status"), pg.page

    def at(k: int) -> None:  # one round trip a step
        expect(page.locator(f"[data-testid=replay-status][data-index='{k}'][data-count='{count}']")).to_be_attached()

    def at_end() -> None:
        at(count - 1)
        expect(status).to_have_attribute("data-phase", "done")
        expect(pg.testid("replay-result")).to_be_visible()
        assert json.loads(pg.testid("replay-result").get_attribute("data-payoffs")) == payoffs

    at(0)
    expect(pg.testid("replay-first")).to_be_disabled()
    expect(pg.testid("replay-prev")).to_be_disabled()
    expect(pg.testid("replay-result")).to_be_hidden()
    n_players = len(payoffs)
    hands0 = [pg.testid(f"replay-hand-{s}").get_attribute("data-cards") for s in range(n_players)]
    assert all(hands0)  # every hand shown at the deal
    for k in range(1, count if buttons else 0):
        pg.testid("replay-next").click()
        at(k)
        if screenshot and k == count // 2:
            expect(pg.testid("replay-move")).to_have_attribute("data-index", str(k))
            shot(pg, screenshot, down_to="#replay-hands")
    for k in range(count - 2 if buttons else -1, -1, -1):
        if k == count - 2:
            at_end()
            expect(pg.testid("replay-next")).to_be_disabled()
            expect(pg.testid("replay-last")).to_be_disabled()
        pg.testid("replay-prev").click()
        at(k)
    assert [pg.testid(f"replay-hand-{s}").get_attribute("data-cards") for s in range(n_players)] == hands0
    pg.testid("replay-last").click()
    at_end()
    pg.testid("replay-first").click()
    at(0)
    if not keys:
        return
    page.locator("#replay-move").click()  # the focus off any control: the keys step the replay
    for k in range(1, count):
        page.keyboard.press("ArrowRight")
        at(k)
    at_end()
    page.keyboard.press("ArrowRight")  # stays at the end
    at_end()
    for k in range(count - 2, -1, -1):
        page.keyboard.press("ArrowLeft")
        at(k)
    page.keyboard.press("End")
    at_end()
    page.keyboard.press("Home")
    at(0)


def test_the_replay_view(web: Page, tmp_path: Path) -> None:
    from tarocchi_rl.arena import run_arena

    variant = "mineo"
    if variant not in RECORDS:  # run alone (or on another xdist worker): play the deal here
        play_and_download(web, variant, tmp_path)
        web.testid("new-deal").wait_for()
    path = tmp_path / "record.json"
    path.write_text(RECORDS[variant])
    record = json.loads(RECORDS[variant])
    web.testid("tab-replay").click()
    assert web.testid("replay-view").is_visible() and not web.testid("play-view").is_visible()
    web.testid("replay-file").set_input_files(str(path))
    web.testid("replay-load").click()
    web.testid("replay-status").wait_for(state="visible")
    step_through(web, len(record["actions"]) + 1, replay(record).returns(), screenshot="replay-mineo")

    # a line of an arena games.jsonl, pasted whole with the line number chosen
    out_dir = tmp_path / "arena"
    run_arena("french4", ["heuristic", "random"], deals=1, seed=3, out_dir=out_dir, progress=False)
    text = (out_dir / "games.jsonl").read_text()
    lines = text.splitlines()
    assert len(lines) >= 2
    line = json.loads(lines[1])
    web.testid("replay-text").fill(text)  # typing or pasting drops the file chosen above: the text is loaded
    assert web.testid("replay-file").evaluate("e => e.files.length") == 0
    web.testid("replay-line").fill("2")
    web.testid("replay-load").click()
    status = web.testid("replay-status")
    count = len(line["actions"]) + 1
    expect(status).to_have_attribute("data-count", str(count))
    expect(web.testid("replay-error")).to_have_text("")
    step_through(web, count, replay(line).returns(), buttons=False)

    # a bad line is an error on the page, not a page error
    web.testid("replay-line").fill(str(len(lines) + 5))
    web.testid("replay-load").click()
    expect(web.testid("replay-error")).to_have_attribute("data-error", "true")
    expect(web.testid("replay-error")).to_contain_text(f"line {len(lines) + 5}")


def test_a_move_refused_as_busy_is_sent_again(web: Page) -> None:
    """The page against a busy server (the WebSocket routed through Playwright): the first move is answered with
    the server's busy frame instead of reaching it; the page says so, sends it again after ``retry_after`` and the
    deal goes on."""
    refused: list[str] = []

    def route(ws: Any) -> None:
        server = ws.connect_to_server()

        def from_page(message: Any) -> None:
            if not refused and json.loads(message).get("type") == "act":
                refused.append(message)
                ws.send(json.dumps({"type": "error", "error": "the server is busy: try again", "busy": True,
                                    "retry_after": 1}))
            else:
                server.send(message)

        ws.on_message(from_page)
        server.on_message(lambda message: ws.send(message))

    web.page.route_web_socket(re.compile(r".*/ws$"), route)
    seed = CLICK_SEEDS["french3"]
    set_up(web, "french3", seed)
    web.testid("start").click()
    st = wait_turn(web, seed, None)
    web.page.locator(ENABLED).first.click()
    expect(web.testid("error")).to_contain_text("trying again in 1 s")
    expect(web.testid("error")).to_have_text("")  # sent again, answered
    after = web.page.wait_for_function(WAIT_TURN, arg=[st["steps"], str(seed)]).json_value()
    assert len(refused) == 1 and int(after["steps"]) > int(st["steps"])


def test_a_table_closed_for_its_lifetime_says_why(web: Page) -> None:
    def route(ws: Any) -> None:
        ws.connect_to_server()
        ws.close(code=4001, reason="open too long")

    web.page.route_web_socket(re.compile(r".*/ws$"), route)
    set_up(web, "french3", CLICK_SEEDS["french3"])
    web.testid("start").click()
    expect(web.page.locator("#connection")).to_have_text("table closed (open too long): deal again")


# -- two people at one table ----------------------------------------------------------------------------------------
# variant -> the seats A opens with (people: "human"; A sits at the first, B joins at the second) and a seed typed in
# the form (a practice table, stored as one), or None (the server deals). One variant of each family, one bot at
# least; the people always bid, so that the deal gets a contract and card play.
SHARED_DEALS: dict[str, tuple[list[str], int | None]] = {
    "mineo": (["human", "heuristic", "human", "heuristic"], None),  # people at seats 0 and 2, facing each other
    "piedmont3": (["human", "human", "heuristic"], None),
    "french4": (["human", "heuristic", "human", "heuristic"], 10),
}
RELOAD_AT = 3  # B reloads its page at its third turn of the card play


def moves_shown(pg: Page) -> list[tuple[int, int, str, str]]:
    """The page's move list: (index, seat, move, text) of each line."""
    return [tuple(m) for m in pg.page.locator("#moves li").evaluate_all(
        "ls => ls.map(l => [Number(l.dataset.index), Number(l.dataset.seat), l.dataset.move, l.textContent])")]


@pytest.mark.parametrize("variant", list(SHARED_DEALS))
def test_two_people_at_one_table_with_bots(browser: Any, server: str, games_db: Path, tmp_path: Path,
                                           variant: str) -> None:
    """A opens a table (people and bots, listed in the lobby), B sees it in the lobby and joins by its link; both
    play until the deal is over; B reloads mid-deal, gets its seat back with the token kept in localStorage and
    its whole move list as its seat saw it; the stored game has both persons and its record replays to the
    payoffs both pages show."""
    from tarocchi_rl.game import make
    from tarocchi_rl.web.store import open_store
    from tests.support.web_views import card_names, visible_cards

    seats, seed = SHARED_DEALS[variant]
    seat_a, seat_b = [k for k, s in enumerate(seats) if s == "human"]
    bots = {k: "bot" for k, s in enumerate(seats) if s != "human"}
    a = Page(browser, server)
    open_setup(a, friends=True)  # "Play with friends", folded in the setup panel
    a.testid("variant").select_option(variant)
    for k, who in enumerate(seats):
        a.testid(f"friend-seat-{k}").select_option(who)
    if seed is not None:
        a.testid("seed").fill(str(seed))
    a.testid("open-lobby").check()
    a.testid("open-table").click()
    expect(a.testid("table-code")).to_have_text(re.compile(r"^[2-9A-Z]{8}$"))
    code = a.testid("table-code").inner_text()
    link = a.testid("table-link").get_attribute("href")
    assert link == f"{server}/?table={code}" and a.page.url == link
    expect(a.testid("status")).to_have_attribute("data-waiting-for", "1")
    assert people_strip(a) == {seat_a: "you", seat_b: "waiting", **bots}

    b = Page(browser, server)
    open_setup(b, friends=True)
    expect(b.testid(f"lobby-join-{code}")).to_be_visible()  # the lobby lists the table that waits for B
    b.page.goto(link)
    b.page.wait_for_selector("body[data-ready=true]", state="attached")
    for pg, seat in ((a, seat_a), (b, seat_b)):
        expect(pg.testid("status")).to_have_attribute("data-seat", str(seat))
        expect(pg.testid("status")).to_have_attribute("data-code", code)
    expect(a.page.locator(f"#people li[data-seat='{seat_b}']")).to_have_attribute("data-state", "present")
    c = Page(browser, server)  # a third person types the code (lower case, with a dash): every seat is taken
    open_setup(c, friends=True)
    c.testid("join-code").fill(f"{code[:4]}-{code[4:]}".lower())
    c.testid("join").click()
    expect(c.testid("error")).to_have_text(f"table {code} is full: every person's seat is taken "
                                           "(a seat's token takes it back)")
    c.check_clean()
    c.context.close()
    token = b.page.evaluate(f"() => JSON.parse(localStorage.getItem('tarocchi-seat:{code}')).token")
    assert token and a.page.evaluate(f"() => localStorage.getItem('tarocchi-seat:{code}')") != token

    turns = {"a": 0, "b": 0, "b-play": 0}
    after_reload: list[tuple[int, int, str, str]] = []
    for _ in range(400):
        sa, sb = shared_status(a), shared_status(b)
        if sa.get("over") == "true" and sb.get("over") == "true":
            break
        mover, name, st = (a, "a", sa) if sa.get("yourTurn") == "true" and sa.get("busy") == "false" else \
            (b, "b", sb) if sb.get("yourTurn") == "true" and sb.get("busy") == "false" else (None, "", {})
        if mover is None:
            a.page.wait_for_timeout(30)
            continue
        turns[name] += 1
        if name == "b" and st["phase"] == "play":
            turns["b-play"] += 1
            if turns["b-play"] == 2 and variant == "mineo":
                shot(a, "shared-table-a", down_to="#hand-section")
                shot(b, "shared-table-b", down_to="#hand-section")
            if turns["b-play"] == RELOAD_AT and not after_reload:  # B reloads in the middle of the card play
                before = moves_shown(b)
                b.page.reload()
                b.page.wait_for_selector("body[data-ready=true]", state="attached")
                expect(b.testid("status")).to_have_attribute("data-seat", str(seat_b))
                expect(b.testid("status")).to_have_attribute("data-your-turn", "true")
                expect(a.page.locator(f"#people li[data-seat='{seat_b}']")).to_have_attribute("data-state", "present")
                assert people_strip(b) == {seat_a: "present", seat_b: "you", **bots}
                after_reload = moves_shown(b)
                assert after_reload == before  # the whole deal so far, as B's seat saw it
                steps = int(shared_status(b)["steps"])
                assert [m[0] for m in after_reload] == list(range(steps))
                seen_by_a = moves_shown(a)
                assert [m[:2] for m in seen_by_a] == [m[:2] for m in after_reload]
                public = [k for k, m in enumerate(seen_by_a) if "?" not in m[2] and "?" not in after_reload[k][2]]
                assert len(public) >= steps - 8 and all(seen_by_a[k][2] == after_reload[k][2] for k in public)
                # a dropped connection (the page kept): B's page joins again by itself, its lines replaced, not doubled
                b.page.evaluate("() => { document.querySelectorAll('#moves li').forEach(li => li.dataset.old = '1'); "
                                "app.ws.close(); }")
                b.page.wait_for_function("() => !document.querySelector('#moves li[data-old]')")
                expect(b.page.locator("#connection")).to_have_attribute("data-state", "open")
                assert moves_shown(b) == before
                continue
        take_turn(mover, st)
    else:
        pytest.fail(f"the deal did not end: {turns}")
    assert after_reload and turns["a"] >= 2, turns

    shown_a, shown_b = result_of(a), result_of(b)
    assert shown_a == shown_b and shown_a["annulled"] == "false"
    _, record = download(a, tmp_path, lambda: a.testid("download-record").click())
    assert replay(record).returns() == shown_a["payoffs"]
    assert record.get("practice", False) is (seed is not None)
    assert b.page.evaluate(f"() => localStorage.getItem('tarocchi-seat:{code}')") is None  # the deal is over
    names = set(make(variant).deck.names)  # nothing B's page listed after the reload names a card hidden from B
    hidden = card_names([m[2] for m in after_reload], names) - visible_cards(record, len(after_reload), seat_b)
    assert not hidden, f"seat {seat_b} was shown {sorted(hidden)}"

    store = open_store(f"sqlite:///{games_db}", create=False)
    try:
        game = None
        for _ in range(100):  # the server writes the finished game from its writer thread
            game = next((g for g in store.finished_games(practice=True) if g["record"] == record), None)
            if game:
                break
            a.page.wait_for_timeout(100)
        assert game is not None, "the finished game is not in the database"
        assert game["practice"] is (seed is not None)
        kinds = [s["kind"] for s in game["seats"]]
        people = {s["name"] for s in game["seats"] if s["kind"] == "person"}
        assert kinds == ["person" if s == "human" else "bot" for s in seats] and len(people) == 2
        assert replay(game["record"]).returns() == shown_a["payoffs"]
        by_b = {who for _, seat, who in store.moves_by(game["id"]) if seat == seat_b}
        assert by_b <= {"person", "forced"}  # no bot played B's seat, the reload included
    finally:
        store.close()
    for pg in (a, b):
        pg.check_clean()
        pg.context.close()
