"""Invariants over random Mineo games on the batched core: cards conserved at every step, 327 thirds in
total, zero-sum payoffs, the partnership and the payoff structure of docs/rules.md §2."""

import numpy as np
import pytest

from tarocchi_rl import BatchEnv, engine
from tarocchi_rl.core.state import (
    DECLARER,
    DISCARDED,
    HAND,
    MULT,
    PARTNER,
    PAYOFF,
    PHASE,
    PLAYED,
    POINTS,
    SIDE,
    STOCK,
    STOCK_SHOWN,
)
from tarocchi_rl.variants import mineo
from tests.support.engine import JIT_DISABLED

BATCH = 16 if JIT_DISABLED else 512
ALL_CARDS = (1 << 63) - 1


def _set_bits(words):
    return int(words[0]) | (int(words[1]) << 64)


def _card_sets(env, i):
    """The 63 cards as a partition: hands, cards played, discard, and the monte while not taken."""
    st = env.state
    parts = [st.cards[i, HAND + s] for s in range(4)] + [st.cards[i, PLAYED + s] for s in range(4)]
    parts.append(st.cards[i, DISCARDED])
    if st.meta[i, STOCK_SHOWN] == 0:
        parts.append(st.cards[i, STOCK])
    return [_set_bits(p) for p in parts]


@pytest.mark.nojit
@pytest.mark.parametrize("early_solo", [True, False])
def test_cards_conserved_points_327_payoffs_zero_sum(early_solo):
    env = BatchEnv("mineo", BATCH, seed=7, early_solo=early_solo)
    deck_mask = _set_bits(mineo.DECK.mask_of(range(63)))
    steps = 0
    while not env.all_done():
        for i in range(BATCH):
            if env.state.meta[i, PHASE] in (mineo.EARLY,):
                continue  # the rest of the deal is not handed out yet
            sets = _card_sets(env, i)
            union = 0
            for s in sets:
                assert union & s == 0, f"game {i}: a card is in two places"
                union |= s
            assert union == deck_mask, f"game {i}: cards lost"
        env.step(env.random_actions())
        steps += 1
    meta = env.state.meta
    played = meta[:, DECLARER] >= 0
    assert played.sum() > 0
    assert (meta[played, POINTS] + meta[played, POINTS + 1] == mineo.TOTAL_THIRDS).all()
    assert (meta[:, PAYOFF : PAYOFF + 4].sum(axis=1) == 0).all()
    assert (meta[~played, PAYOFF : PAYOFF + 4] == 0).all()


@pytest.mark.nojit
def test_payoff_structure_solo_and_pairs():
    env = BatchEnv("mineo", BATCH, seed=11)
    while not env.all_done():
        env.step(env.random_actions())
    m = env.state.meta
    for i in range(BATCH):
        if m[i, DECLARER] < 0:
            continue
        pay = m[i, PAYOFF : PAYOFF + 4]
        sides = m[i, SIDE : SIDE + 4]
        d = pay[m[i, DECLARER]]
        if m[i, PARTNER] < 0:  # solo: soloist +3D, each opponent -D
            assert sides.sum() == 3
            assert all(pay[s] * -3 == d for s in range(4) if sides[s] == 1)
        else:  # pairs: +D, +D, -D, -D
            assert sides.sum() == 2 and pay[m[i, PARTNER]] == d
            assert all(pay[s] == -d for s in range(4) if sides[s] == 1)
        if m[i, MULT] == 2:
            assert d % 2 == 0


def test_fused_rollout_plays_the_same_games_as_stepping():
    """The fused kernel consumes each game's RNG exactly like BatchEnv.random_actions + step."""
    n = 64
    env = BatchEnv("mineo", n, seed=3)
    while not env.all_done():
        env.step(env.random_actions())
    from tarocchi_rl.bits import seed_states
    from tarocchi_rl.core.state import alloc_state

    st = alloc_state(n)
    st.rng[:] = seed_states(3, n)
    payoff = np.zeros((n, 4), np.int64)
    counts = np.zeros((n, 2), np.int64)
    engine.rollout_random_batch(st, env.tables, 1, payoff, counts)
    assert (payoff == env.returns()).all()
    assert (st.meta == env.state.meta).all()
