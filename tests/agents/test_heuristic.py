"""The rule-based ``heuristic`` player: always legal, deterministic, blind to hidden cards, and stronger than
random play in every variant (seats rotated over the same deals)."""

import numpy as np
import pytest

from tarocchi_rl import BatchEnv, engine
from tarocchi_rl.core.phases import DONE
from tarocchi_rl.core.state import (
    CALLED,
    CUR,
    DECLARER,
    DISCARDED,
    HAND,
    PHASE,
    PLAYED,
    SHOWN_BY,
    STOCK,
    STOCK_SHOWN,
    copy_state,
)
from tarocchi_rl.policies.base import RandomAgent
from tarocchi_rl.policies.heuristic import HeuristicAgent, heuristic_actions, heuristic_row
from tarocchi_rl.variants import VARIANTS, get_variant
from tests.support.engine import JIT_DISABLED

# every registered variant at its defaults, then the option combinations picked for a run of their own
DEFAULTS = [(v, {}) for v in VARIANTS]
CONFIGS = DEFAULTS + [
    ("mineo", {"early_solo": False}),
    ("piedmont3", {"honour_5": "angelo", "excuse_exchange": False}),
    ("piedmont4", {"accuso": True}),
]


def ids(configs):
    return [v + "".join(f"-{k}={x}" for k, x in o.items()) for v, o in configs]

BATCH = 6 if JIT_DISABLED else 256


def _positions(variant, options, batch, seed, mix=0.5):
    """Yield (env, live game indices) at every step of ``batch`` games played by a mix of random and
    heuristic actions (so that positions the heuristic steers into are reached too)."""
    env = BatchEnv(variant, batch, seed=seed, **options)
    agent = HeuristicAgent()
    rng = np.random.default_rng(seed)
    while not env.all_done():
        live = np.nonzero(~env.done())[0]
        yield env, live
        acts = env.random_actions()
        use = live[rng.random(live.size) < mix]
        if use.size:
            acts[use] = agent.act(None, None, env, use)
        acts[env.done()] = 0
        env.step(acts)


@pytest.mark.nojit
@pytest.mark.parametrize("variant,options", CONFIGS, ids=ids(CONFIGS))
def test_always_legal(variant, options):
    agent = HeuristicAgent()
    n = 0
    for env, live in _positions(variant, options, BATCH, seed=11):
        acts = agent.act(None, None, env, live)
        assert acts.dtype == np.int64 and acts.shape == live.shape
        for k, i in enumerate(live):
            assert engine.is_legal(env.state, i, acts[k], env.tables), (
                f"game {i}: illegal heuristic action {acts[k]} in phase {env.state.meta[i, PHASE]}"
            )
        n += live.size
    assert n >= 8 * BATCH  # (tarok's random bids often reach a contract that ends early: beggar, valat)
    # finished games give -1
    out = np.empty(BATCH, np.int64)
    heuristic_actions(env.state, env.tables, np.arange(BATCH, dtype=np.int64), out)
    assert (out == -1).all()


@pytest.mark.nojit
@pytest.mark.parametrize("variant,options", DEFAULTS, ids=ids(DEFAULTS))
def test_deterministic_and_read_only(variant, options):
    agent = HeuristicAgent()
    for env, live in _positions(variant, options, BATCH, seed=5):
        before = copy_state(env.state)
        a1 = agent.act(None, None, env, live)
        for x, y in zip(before, env.state, strict=True):
            assert np.array_equal(x, y), "the heuristic changed the state"
        a2 = agent.act(None, None, env, live[::-1])[::-1]  # other order, same answers
        assert np.array_equal(a1, a2)
        other = BatchEnv(variant, live.size, seed=99, **options)  # the same positions in another batch
        for f, x in zip(other.state, env.state, strict=True):
            f[:] = x[live]
        assert np.array_equal(agent.act(None, None, other, np.arange(live.size)), a1)


def _hidden_shuffle(st, i, tb, spec, rng):
    """Redistribute the cards seat CUR cannot see among the places that hold them (other hands, the unseen
    stock, another seat's discard), keeping each place's size; cards the seat can place stay put (shown
    stock, shown poignee / accuso cards, discarded trumps, Mineo's called trump). Inferred voids are ignored,
    so this hides more than the rules do: an agent that passes it reads nothing it should not."""
    deck = spec.deck
    m = st.meta[i]
    p = m[CUR]
    n = spec.n_players
    fixed = set()
    for s in range(n):
        fixed |= set(deck.cards_of(st.cards[i, SHOWN_BY + s]))
    if m[STOCK_SHOWN] == 1:
        fixed |= set(deck.cards_of(st.cards[i, STOCK]))
    if m[CALLED] >= 0:
        fixed.add(int(m[CALLED]))
    rows = [HAND + s for s in range(n) if s != p]
    held = np.zeros(2, np.uint64)
    for r in [HAND + s for s in range(n)] + [PLAYED + s for s in range(n)] + [DISCARDED]:
        held |= st.cards[i, r]
    if m[STOCK_SHOWN] != 1 and not (held & st.cards[i, STOCK]).any():  # an unseen stock nobody holds
        rows.append(STOCK)
    if m[DECLARER] != p:
        rows.append(DISCARDED)
    pools, pool = {}, []
    for r in rows:
        movable = [c for c in deck.cards_of(st.cards[i, r]) if c not in fixed and not (r == DISCARDED and c < 21)]
        pools[r] = movable
        pool += movable
    rng.shuffle(pool)
    k = 0
    for r in rows:
        keep = [c for c in deck.cards_of(st.cards[i, r]) if c not in pools[r]]
        new = pool[k : k + len(pools[r])]
        k += len(pools[r])
        st.cards[i, r] = deck.mask_of(keep + new)


@pytest.mark.nojit
@pytest.mark.parametrize("variant,options", CONFIGS, ids=ids(CONFIGS))
def test_blind_to_hidden_cards(variant, options):
    spec = get_variant(variant)
    rng = np.random.default_rng(3)
    checked = 0
    for env, live in _positions(variant, options, BATCH, seed=21):
        for i in live[:3]:
            a = heuristic_row(env.state, i, env.tables)
            st = copy_state(env.state)
            _hidden_shuffle(st, i, env.tables, spec, rng)
            assert heuristic_row(st, i, env.tables) == a, f"game {i}: the action depends on hidden cards"
            checked += 1
    assert checked > 50


def _rotated_payoffs(variant, deals, seed, options=None):
    """Mean payoff per deal of one heuristic seat against random seats: each deal is played once with the
    heuristic in every seat (env.set_deals replays it); returns (per-deal means, per-seat means). Where the
    payoffs are not zero-sum (tarok: the declarer's opponents score 0), the payoff of a random player in the same
    seat on the same deal is subtracted (duplicate), so that 0 means "as good as random" there too."""
    env = BatchEnv(variant, deals, seed=seed, **(options or {}))
    n = env.num_players
    decks = env.state.deck[:, : env.spec.deck.n_cards].copy()
    agent = HeuristicAgent()
    res = np.zeros((deals, n))
    for h in range(n):
        for heuristic in (True, False) if not env.spec.zero_sum else (True,):
            env.set_deals(decks)
            env.state.rng[:] = np.arange(1, deals + 1, dtype=np.uint64) * np.uint64(7919) + np.uint64(h)
            while not env.all_done():
                acts = env.random_actions()
                sel = np.nonzero((env.current_player() == h) & ~env.done())[0]
                if sel.size and heuristic:
                    acts[sel] = agent.act(None, None, env, sel)
                acts[env.done()] = 0
                env.step(acts)
            res[:, h] += env.returns()[:, h] if heuristic else -env.returns()[:, h]
    return res.mean(axis=1), res.mean(axis=0)


@pytest.mark.skipif(JIT_DISABLED, reason="strength runs need the JIT")
@pytest.mark.parametrize("variant", VARIANTS)
def test_beats_random(variant):
    per_deal, per_seat = _rotated_payoffs(variant, 300, seed=2024)
    mean = per_deal.mean()
    half = 1.96 * per_deal.std(ddof=1) / np.sqrt(per_deal.size)
    print(f"\n{variant}: heuristic seat vs random, mean payoff per deal {mean:.3f} ± {half:.3f} "
          f"(per seat {np.round(per_seat, 2).tolist()})")
    assert mean - half > 0


@pytest.mark.skipif(JIT_DISABLED, reason="needs the JIT")
def test_agent_protocol_with_mask():
    env = BatchEnv("mineo", 64, seed=4)
    agent, rnd = HeuristicAgent(), RandomAgent(0)
    assert agent.name == "heuristic" and agent.needs_obs is False
    while not env.all_done():
        live = np.nonzero(~env.done())[0]
        mask = env.legal_mask()[live]
        acts = agent.act(None, mask, env, live)
        assert mask[np.arange(live.size), acts].all()
        full = np.zeros(env.batch_size, np.int64)
        full[live] = np.where(live % 2 == 0, acts, rnd.act(None, mask))
        env.step(full)
    assert (env.state.meta[:, PHASE] == DONE).all()
