"""Invariants over random games of the 78-card variants: cards conserved at every step, 77 (231 thirds) /
81 (243 thirds) / 91 (182 half points) in total, zero-sum payoffs."""

import numpy as np
import pytest

from tarocchi_rl import BatchEnv
from tarocchi_rl.core.points import card_points
from tarocchi_rl.core.state import DECLARER, DISCARDED, HAND, PAYOFF, PLAYED, POINTS, STOCK, WON
from tests.support.engine import JIT_DISABLED

BATCH = 8 if JIT_DISABLED else 256
ALL = (1 << 128) - 1


def _bits(w):
    return int(w[0]) | (int(w[1]) << 64)


def _check_conserved(env, i, n, deck_bits, stock_size):
    st = env.state
    places = [st.cards[i, HAND + s] for s in range(n)] + [st.cards[i, PLAYED + s] for s in range(n)]
    places.append(st.cards[i, DISCARDED])
    union = 0
    for p in places:
        b = _bits(p)
        assert union & b == 0, f"game {i}: a card in two places"
        union |= b
    stock = _bits(st.cards[i, STOCK])
    aside = stock & ~union
    assert aside in (0, stock) and bin(stock).count("1") == stock_size
    assert union | stock == deck_bits, f"game {i}: cards lost"


@pytest.mark.nojit
@pytest.mark.parametrize(
    "variant,options,total",
    [
        ("piedmont3", {}, 231),
        ("piedmont4", {}, 243),
        ("french3", {}, 182),
        ("french4", {}, 182),
        ("french3", {"excuse_last_trick": "trick_winner"}, 182),
        ("french4", {"excuse_last_trick": "trick_winner"}, 182),
    ],
)
def test_cards_conserved_points_total_zero_sum(variant, options, total):
    env = BatchEnv(variant, BATCH, seed=17, **options)
    n = env.num_players
    deck_bits = _bits(env.spec.deck.mask_of(range(78)))
    stock_size = env.spec.stock_size
    while not env.all_done():
        for i in range(BATCH):
            _check_conserved(env, i, n, deck_bits, stock_size)
        env.step(env.random_actions())
    m = env.state.meta
    assert (m[:, PAYOFF : PAYOFF + n].sum(axis=1) == 0).all()
    tb = env.tables
    assert card_points(np.uint64((1 << 64) - 1), np.uint64((1 << 64) - 1), tb) == total  # the deck's points
    played = m[:, DECLARER] >= 0
    assert played.any()
    k = 3 if variant == "piedmont3" else 2
    assert (m[played, POINTS : POINTS + k].sum(axis=1) == total).all()
    for i in np.nonzero(played)[0]:  # every card ends in a won pile, the discard or the chien
        piles = _bits(env.state.cards[i, DISCARDED]) | _bits(env.state.cards[i, STOCK])
        for s in range(n):
            piles |= _bits(env.state.cards[i, WON + s])
        ex = 1 << 32  # EX is kept by its owner unless it was played to the last trick
        assert piles | ex == deck_bits


@pytest.mark.nojit
def test_piedmont4_accuso_points_are_added():
    env = BatchEnv("piedmont4", BATCH, seed=3, accuso=True, accuso_points=5)
    while not env.all_done():
        env.step(env.random_actions())
    from tarocchi_rl.variants.piedmont import ACCUSO_DECL

    m = env.state.meta
    bonus = 15 * m[:, ACCUSO_DECL : ACCUSO_DECL + 4].clip(min=0).sum(axis=1)
    assert (m[:, POINTS] + m[:, POINTS + 1] == 243 + bonus).all()
    assert (m[:, PAYOFF : PAYOFF + 4].sum(axis=1) == 0).all()


def test_fused_rollout_plays_the_same_games_as_stepping_every_variant():
    from tarocchi_rl import engine
    from tarocchi_rl.bits import seed_states
    from tarocchi_rl.core.state import alloc_state

    for variant in ("piedmont3", "piedmont4", "french3", "french4"):
        env = BatchEnv(variant, 32, seed=9)
        while not env.all_done():
            env.step(env.random_actions())
        st = alloc_state(32)
        st.rng[:] = seed_states(9, 32)
        payoff = np.zeros((32, 4), np.int64)
        engine.rollout_random_batch(st, env.tables, 1, payoff, np.zeros((32, 2), np.int64))
        assert (payoff[:, : env.num_players] == env.returns()).all(), variant
        assert (st.meta == env.state.meta).all() and (st.cards == env.state.cards).all(), variant
