"""Rebuilding a game from one seat's view (tarocchi_rl.search.seat_view): what the bot protocol stands on.

For random games of every variant (and option sets), at every decision: the rebuilt game shows the seat the
same view, the same observation and the same legal actions as the real one; two real deals that look alike to
the seat (the replay oracle draws the second) give byte-identical requests; impossible views are refused with
an error naming the entry.
"""

import numpy as np
import pytest

from tarocchi_rl.game import make
from tarocchi_rl.search.seat_view import ViewCache, ViewError, rebuild
from tarocchi_rl.views import Views, seat_request
from tests.oracles.oracle_determinize import sample_deal

CASES = [("mineo", {}), ("mineo", {"early_solo": False}), ("piedmont3", {}), ("piedmont4", {"accuso": True}),
         ("french3", {}), ("french4", {}), ("french4", {"excuse_last_trick": "trick_winner"})]


def random_views(variant: str, options: dict, seed: int) -> Views:
    g = make(variant, **options)
    rng = np.random.default_rng(seed)
    return Views(g, rng.permutation(g.deck.n_cards).tolist())


@pytest.mark.parametrize("variant,options", CASES, ids=[f"{v}-{o}" for v, o in CASES])
def test_rebuilt_game_matches_the_seat_view_observation_and_legal_actions(variant, options):
    rng = np.random.default_rng(11)
    checked = 0
    for game_seed in range(3):
        v = random_views(variant, options, game_seed)
        cache = ViewCache()
        while not v.is_terminal():
            p = v.current_player()
            req = seat_request(v, p)
            for c in (None, cache):  # from the deal, and continuing the previous request's rebuild
                r = rebuild(v.game, p, req["hand"], req["history"], cache=c)
                assert r.view(p) == v.view(p)
                assert np.array_equal(r.state.observation(p), v.state.observation(p))
                assert r.legal_actions() == v.legal_actions()
                assert r.state.phase == req["decision"]
            checked += 1
            legal = v.legal_actions()
            v.apply(legal[rng.integers(len(legal))])
    assert checked > 40


def test_same_view_from_different_hidden_cards_gives_the_same_request_and_position():
    for variant in ("mineo", "piedmont3", "french4"):
        g = make(variant)
        rng = np.random.default_rng(5)
        state = g.new_state(3)
        for _ in range(30):  # into the card play
            legal = state.legal_actions()
            state.apply(legal[rng.integers(len(legal))])
        p = state.current_player()
        other = sample_deal(state, p, rng)
        assert other.deal() != state.deal()  # the hidden cards differ
        views = []
        for s in (state, other):
            v = Views(g, [g.deck.card_id(c) for h in s.deal()["hands"] for c in h]
                      + [g.deck.card_id(c) for c in s.deal()["stock"]])
            for a in s.history:
                v.apply(a)
            views.append(v)
        r0, r1 = (seat_request(v, p) for v in views)
        assert r0 == r1
        a = rebuild(g, p, r0["hand"], r0["history"])
        b = rebuild(g, p, r1["hand"], r1["history"])
        assert a.deck_ids() == b.deck_ids()
        assert np.array_equal(a.state.observation(p), views[1].state.observation(p))


def play_until(variant: str, seed: int, phase: str, min_plays: int = 0) -> Views:
    v = random_views(variant, {}, seed)
    rng = np.random.default_rng(seed)
    while not v.is_terminal():
        if v.state.phase == phase and sum(e.count(":play:") for e in v.view(0)[1:]) >= min_plays:
            return v
        legal = v.legal_actions()
        v.apply(legal[rng.integers(len(legal))])
    raise AssertionError("no such position")


def test_impossible_views_are_refused_with_the_entry_named():
    v = play_until("french4", 2, "play", min_plays=6)
    p = v.current_player()
    req = seat_request(v, p)
    g = v.game
    hand, hist = req["hand"], req["history"]
    plays = [k for k, e in enumerate(hist) if ":play:" in e]
    k = plays[0]
    seat, _, card = hist[k].split(":")
    mine = next(c for c in hand if f":play:{c}" not in " ".join(hist))

    def refused(hand_, hist_, match):
        with pytest.raises(ViewError, match=match):
            rebuild(g, p, hand_, hist_)

    if int(seat) != p:  # another seat plays a card dealt to this seat
        refused(hand, hist[:k] + [f"{seat}:play:{mine}"] + hist[k + 1:], rf"history\[{k}\].*your card")
    refused(hand, hist[:k] + [hist[k]] + hist[k:], rf"history\[{k + 1}\]")  # a step twice: out of turn
    refused(hand, hist + ["0:bid:garde"], rf"history\[{len(hist)}\]")
    refused(hand, hist[:k] + ["9:play:KC"], rf"history\[{k}\].*seat 9 out of range")
    refused(hand, hist[:k] + [f"{seat}:play:ZZ"], rf"history\[{k}\].*unknown")
    refused(hand, hist[:k] + [f"{seat}:play:KC;wat:1"], rf"history\[{k}\].*unknown part")
    refused(hand[:-1], hist, "hand: seat .* is dealt 18 cards")
    refused(hand[:-1] + [hand[0]], hist, "hand: a card is named twice")
    refused(hand, [hist[0], 5], r"history\[1\]: an entry must be a string")


def test_a_revoke_is_impossible():
    """A seat that did not follow a suit cannot play that suit later (the core's exclusions)."""
    g = make("french4")
    d = g.deck
    for seed in range(40):
        v = random_views("french4", {}, seed)
        rng = np.random.default_rng(seed)
        while not v.is_terminal():
            legal = v.legal_actions()
            v.apply(legal[rng.integers(len(legal))])
        hist = v.view(0)[1:]
        hand = seat_request(v, 0)["hand"]
        plays = [(k, e.split(":")) for k, e in enumerate(hist) if ":play:" in e]
        for t in range(0, len(plays) - 4, 4):
            lead = int(d.suit[d.card_id(plays[t][1][2])])
            if lead > 3:
                continue
            for _, (q, _, c) in plays[t + 1:t + 4]:
                if q == "0" or d.suit[d.card_id(c)] in (lead, 5):  # 5: the Excuse, playable at any time
                    continue
                k2 = next((k for k, (q2, _, _) in plays[t + 4:] if q2 == q), None)
                if k2 is None:
                    continue
                seen = {card for k, (_, _, card) in plays if k < k2} | set(hand)
                x = next((d.names[y] for y in range(d.n_cards) if d.suit[y] == lead and d.names[y] not in seen),
                         None)
                if x is None:
                    continue
                rebuild(g, 0, hand, hist[:k2])  # the real history up to there is fine
                with pytest.raises(ViewError, match=rf"history\[{k2}\].*impossible"):
                    rebuild(g, 0, hand, hist[:k2] + [f"{q}:play:{x}"])
                return
    pytest.fail("no revoke candidate found in 40 games")
