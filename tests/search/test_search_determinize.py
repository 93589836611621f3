"""The fast determinizer (tarocchi_rl.search.determinize) on the core's batch state.

- Property test over thousands of random positions of every variant, each seat as observer: every sample
  looks the same to the observer (observation, legal actions), keeps the hand sizes, conserves the cards,
  respects the public exclusions and counts, has a consistent deal and plays out to a zero-sum end; and the
  true deal satisfies every constraint the sampler uses (an explicit Python predicate, written apart from
  the kernels: tests/support/determinize.py).
- The constraints equal those of the slow replaying determinizer (the oracle, tests/oracles/oracle_determinize.py)
  where both apply.
- Chi-square: on small late-game positions (with a revealed void) the samples are uniform over the consistent
  assignments, enumerated by brute force.
"""

import hashlib

import numpy as np
import pytest

import tarocchi_rl
from tarocchi_rl.bits import seed_states
from tarocchi_rl.core.phases import DISCARD, PLAY
from tarocchi_rl.core.state import DISCARDS_LEFT, EXCLUDED, HAND, PHASE, TRICK_NUM, alloc_state
from tarocchi_rl.search import determinize as D
from tarocchi_rl.variants import get_variant
from tests.support.determinize import (
    CONFIGS,
    FAMILY_FRENCH,
    SPEC_OF,
    Info,
    S,
    annulled,
    card_bit,
    chi_square_p,
    contents_of,
    exclusions_truthful,
    find_small_positions,
    hidden_piles,
    pc,
    placement_violations,
    play_out,
    random_positions,
    sample_problems,
    tables,
)
from tests.support.engine import JIT_DISABLED


def check_positions(variant, options, n_games, n_samples, seed, use_row=False):
    src, tb, info = random_positions(variant, options, n_games, seed)
    checked = 0
    for i in range(n_games):
        if annulled(src, i, info):
            continue
        assert exclusions_truthful(src, i, info) == [], (variant, i)
        for p in range(info.n):
            piles = hidden_piles(src, i, p, info)
            truth = [x for _, _, x in piles]
            assert placement_violations(src, i, p, info, truth) == [], (variant, i, p)  # the true deal
            dst = alloc_state(n_samples)
            dst.rng[:] = seed_states(seed * 1000 + i * 10 + p, n_samples)
            if use_row:
                for j in range(n_samples):
                    assert D.determinize_row(src, i, p, tb, dst, j)
            else:
                D.determinize(src, i, p, tb, dst=dst)
            for j in range(n_samples):
                problems = sample_problems(src, i, p, info, dst, j)
                assert problems == [], (variant, options, i, p, j, problems)
            pay = play_out(dst, tb)
            assert (pay.sum(axis=1) == 0).all()
            checked += 1
    return checked


@pytest.mark.parametrize(("variant", "options"), CONFIGS)
def test_samples_are_consistent_over_random_positions(variant, options):
    n_games = 12 if JIT_DISABLED else 400
    checked = check_positions(variant, options, n_games, 3, seed=len(variant) + 7 * len(options))
    assert checked >= n_games * 2


@pytest.mark.nojit
@pytest.mark.parametrize("variant", ["mineo", "piedmont4", "french3"])
def test_row_kernel_samples_are_consistent(variant):
    options = {"accuso": True} if variant == "piedmont4" else {}
    assert check_positions(variant, options, 8 if JIT_DISABLED else 60, 2, seed=3, use_row=True) >= 8


def test_samples_vary_and_plans_can_be_reused():
    src, tb, info = random_positions("french4", {}, 40, 11)
    SPEC_OF[id(tb)] = get_variant("french4")
    i = next(k for k in range(40) if src.meta[k, PHASE] == PLAY and 3 <= src.meta[k, TRICK_NUM] < 10)
    dst = D.determinize(src, i, 0, tb, n=64, seed=1)
    hands = {tuple(S(dst, j, HAND + s) for s in range(4)) for j in range(64)}
    assert len(hands) > 50
    plan = D.make_plan(src, i, 0, tb)  # ISMCTS: one plan per root, many samples
    again = alloc_state(64)
    again.rng[:] = seed_states(1, 64)
    D.sample_batch(src, i, 0, tb, *plan, again)
    assert (again.cards == dst.cards).all() and (again.deck == dst.deck).all()
    assert not D.sample_row(src, i, 1, tb, *plan, again, 0)  # a plan belongs to its seat
    with pytest.raises(RuntimeError, match="no card assignment"):
        D.determinize(src, i, 7, tb, n=2)


# ----------------------------------------------------------------------------------------------------------
# the slow determinizer's constraints


def plan_allowed(plan):
    """{card bit (Python int): set of pile indices} of a plan, and the piles [(kind, seat)]."""
    pi, pm = plan.ints, plan.masks
    kinds = ("hand", "discard", "stock", "future")
    piles = [(kinds[pi[D.I_PILE + 4 * q]], int(pi[D.I_PILE + 4 * q + 1])) for q in range(pi[D.I_P])]
    allowed = {}
    for q in range(len(piles)):
        x = int(pm[D.M_FIX + 2 * q]) | (int(pm[D.M_FIX + 2 * q + 1]) << 64)
        while x:
            b = x & -x
            allowed[b] = {q}
            x ^= b
    for k in range(pi[D.I_K]):
        x = int(pm[D.M_CLS + 2 * k]) | (int(pm[D.M_CLS + 2 * k + 1]) << 64)
        a = {q for q in range(len(piles)) if pi[D.I_CLS + 2 * k + 1] >> q & 1}
        while x:
            b = x & -x
            allowed[b] = a
            x ^= b
    return allowed, piles


@pytest.mark.parametrize(("variant", "options"), CONFIGS)
def test_constraints_match_the_slow_determinizer(variant, options):
    from tests.oracles.oracle_determinize import Proposal

    game = tarocchi_rl.make(variant, **options)
    rng = np.random.default_rng(5)
    compared = 0
    for g in range(6 if JIT_DISABLED else 30):
        s = game.new_state(g)
        trail = [s.clone()]
        while not s.is_terminal():
            la = s.legal_actions()
            s.apply(la[rng.integers(len(la))])
            trail.append(s.clone())
        for k in sorted(set(rng.choice(len(trail), 4).tolist())):
            state = trail[k]
            st = state._env.state
            tb = state._env.tables
            if state.phase == "early" or annulled(st, 0, Info(tb)):
                continue
            deck = [int(c) for c in st.deck[0, : game.deck.n_cards]]
            for p in range(game.num_players):
                prop = Proposal(game, deck, state.history, p)
                if prop.caps:
                    continue  # count constraints are modelled differently
                mine, piles = plan_allowed(D.make_plan(st, 0, p, tb))
                for c in range(game.deck.n_cards):
                    b = card_bit(tb, c)
                    if c not in prop.allowed:
                        assert b not in mine, (variant, k, p, c)
                        continue
                    theirs = {(kind, seat if kind != "stock" else -1)
                              for q, (kind, seat, size) in enumerate(prop.piles) if prop.allowed[c] >> q & 1 and size}
                    if b not in mine:  # a card he showed: pinned to him
                        assert len(theirs) == 1, (variant, k, p, c)
                        continue
                    assert {piles[q] for q in mine[b]} == theirs, (variant, k, p, game.deck.names[c])
                compared += 1
    assert compared > 20


# ----------------------------------------------------------------------------------------------------------
# uniformity


@pytest.mark.parametrize(
    ("variant", "seed", "partner"),
    [("mineo", 21, False), ("mineo", 25, True), ("french3", 22, False), ("piedmont4", 23, False),
     ("french4", 24, False)],
)
def test_chi_square_uniform_over_consistent_deals(variant, seed, partner):
    options = {"accuso": True} if variant == "piedmont4" else {}
    positions = find_small_positions(variant, options, 2, seed, partner=partner)
    assert positions, "no small position with a revealed void found"
    for src, tb, info, i, p, consistent in positions:
        total = D.make_plan(src, i, p, tb).f[0]  # the DP's count (French: petit sec deals not removed)
        assert round(total) == len(consistent) or (info.fam == FAMILY_FRENCH and round(total) > len(consistent))
        index = {key: k for k, key in enumerate(consistent)}
        n = 100 * len(consistent)
        dst = D.determinize(src, i, p, tb, n=n, seed=seed)
        piles = hidden_piles(src, i, p, info)
        counts = np.zeros(len(consistent))
        for j in range(n):
            key = tuple(contents_of(dst, j, piles, info))
            assert key in index, "a sample outside the consistent assignments"
            counts[index[key]] += 1
        pval = chi_square_p(counts, np.full(len(consistent), n / len(consistent)))
        assert pval > 1e-4, (variant, i, p, len(consistent), pval)


# ----------------------------------------------------------------------------------------------------------
# scenarios and speed


@pytest.mark.nojit
def test_forced_trump_discard_caps_the_dealers_hand():
    """Piedmont3: the dealer holds every trump, EX and the Kings; once he discards a trump, the others know he
    keeps at most as many discardable cards as discards left (none at the end)."""
    spec, tb = tables("piedmont3", {})
    SPEC_OF[id(tb)] = spec
    info = Info(tb)
    deck = spec.deck
    forced = [c for c in range(78) if deck.suit[c] >= 4 or deck.names[c].startswith("K")]  # 26 cards
    others = [c for c in range(78) if c not in forced]
    rng = np.random.default_rng(0)
    rng.shuffle(others)
    dealer = forced + others[:2]  # 28 cards: 25 dealt + the stock
    order = others[2:27] + others[27:52] + dealer[:25] + dealer[25:]
    env = tarocchi_rl.BatchEnv("piedmont3", 1, seed=0)
    env.set_deals(np.array([order]))
    st = env.state
    trump = next(c for c in range(78) if deck.names[c] == "T5")
    for a in (78 + trump, 78 + others[0], 78 + others[1]):
        assert st.meta[0, PHASE] == DISCARD
        env.step(np.array([a]))
        for p in (0, 1):
            truth = [x for _, _, x in hidden_piles(st, 0, p, info)]
            assert placement_violations(st, 0, p, info, truth) == []
            n = 20 if JIT_DISABLED else 200
            dst = D.determinize(st, 0, p, tb, n=n, seed=p)
            for j in range(n):
                assert sample_problems(st, 0, p, info, dst, j) == []
                held = S(dst, j, HAND + 2) & info.discardable
                assert pc(held) <= st.meta[0, DISCARDS_LEFT]
    assert S(st, 0, EXCLUDED + 2) & info.discardable == info.discardable  # after the discard: an exclusion


# ----------------------------------------------------------------------------------------------------------
# a recording of plans and samples (refactoring guard)

# sample_digest() of the kernels before the plan layout got its names (commit 1a47ccd), for 4 and for
# RECORDED_GAMES random positions: the sampler must draw exactly the same deals from the same RNG states. A change
# of the rules may change the positions: re-record (python -m tests.search.test_search_determinize)
# with the sampler of before. Re-recorded when the family's fix-ups moved from I_FLAGS (F_PARTNER 1, F_STOCK 2,
# F_PETIT 4) to I_FIX (issue 34): the digests of the plans with the old flags put back and I_FIX cleared matched
# the old recording exactly (plans and samples), for every configuration and the forced discard.
RECORDED_GAMES = 1000
# (Issue 54 moved the family's own state columns, FAMILY_META + k: mineo and piedmont4-accuso re-recorded; with the
# old column order their samples hash to the old recording.)
RECORDED_SAMPLES = {
    "mineo": ("397048f8a0fa15b7", "6d43a33d2b11bd4c"),
    "mineo,early_solo=False": ("f5a779569b67061d", "86a11e4c3888c233"),
    "piedmont3": ("fbf01e370ccc8475", "44652d21f6b8530c"),
    "piedmont4,accuso=True": ("ee76eb602a3a988a", "1019d8ad85c3120f"),
    "french3": ("618bc2b646edb0a0", "30dc2b2511ff6ec8"),
    "french4": ("b86208297ad7296d", "7f31eec859393617"),
}
RECORDED_FORCED_DISCARD = "1932e244472a304a"


def sample_digest(variant, options, n_games, seed=101, n_samples=4):
    """sha256 (16 hex digits) of the plans' piles and classes and of the samples (a batch from the plan, or
    determinize_row one by one) of ``n_games`` random positions, every seat as observer."""
    src, tb, info = random_positions(variant, options, n_games, seed)
    h = hashlib.sha256()
    for i in range(n_games):
        for p in range(info.n):
            try:
                plan = D.make_plan(src, i, p, tb)
            except RuntimeError:
                h.update(b"inconsistent")
                continue
            pi, pm = plan.ints, plan.masks
            h.update(pi[: D.I_LAY].tobytes())
            for q in range(pi[D.I_P]):
                h.update(pm[D.M_PILE + 2 * q : D.M_PILE + 2 * q + 2].tobytes())
                h.update(pm[D.M_FIX + 2 * q : D.M_FIX + 2 * q + 2].tobytes())
            for k in range(pi[D.I_K]):
                h.update(pm[D.M_CLS + 2 * k : D.M_CLS + 2 * k + 2].tobytes())
            h.update(pm[D.M_U : D.M_U + 2].tobytes())
            dst = alloc_state(n_samples)
            dst.rng[:] = seed_states(seed + 100 * i + p, n_samples)
            if (i + p) % 2:
                for j in range(n_samples):
                    h.update(bytes([bool(D.determinize_row(src, i, p, tb, dst, j))]))
            else:
                D.sample_batch(src, i, p, tb, *plan, dst)
            for x in dst:
                h.update(np.ascontiguousarray(x).tobytes())
    return h.hexdigest()[:16]


def forced_discard_digest(n_samples=50):
    """sample_digest of the forced trump discard scenario (below: the count cap on the dealer's hand), each
    observer after each discard."""
    spec, tb = tables("piedmont3", {})
    deck = spec.deck
    forced = [c for c in range(78) if deck.suit[c] >= 4 or deck.names[c].startswith("K")]
    others = [c for c in range(78) if c not in forced]
    np.random.default_rng(0).shuffle(others)
    dealer = forced + others[:2]
    env = tarocchi_rl.BatchEnv("piedmont3", 1, seed=0)
    env.set_deals(np.array([others[2:27] + others[27:52] + dealer[:25] + dealer[25:]]))
    trump = next(c for c in range(78) if deck.names[c] == "T5")
    h = hashlib.sha256()
    for a in (78 + trump, 78 + others[0], 78 + others[1]):
        env.step(np.array([a]))
        for p in (0, 1):
            plan = D.make_plan(env.state, 0, p, tb)
            h.update(plan.ints[: D.I_LAY].tobytes())
            dst = D.determinize(env.state, 0, p, tb, n=n_samples, seed=p)
            for x in dst:
                h.update(np.ascontiguousarray(x).tobytes())
    return h.hexdigest()[:16]


def _config_key(variant, options):
    return variant + "".join(f",{k}={v}" for k, v in sorted(options.items()))


@pytest.mark.nojit
@pytest.mark.parametrize(("variant", "options"), CONFIGS)
def test_samples_match_the_recording(variant, options):
    small, full = RECORDED_SAMPLES[_config_key(variant, options)]
    assert sample_digest(variant, options, 4) == small
    if not JIT_DISABLED:
        assert sample_digest(variant, options, RECORDED_GAMES) == full


@pytest.mark.nojit
def test_capped_samples_match_the_recording():
    assert forced_discard_digest() == RECORDED_FORCED_DISCARD


if __name__ == "__main__":  # print a new recording (python -m tests.search.test_search_determinize)
    for v, o in CONFIGS:
        print(f"    {_config_key(v, o)!r}: ({sample_digest(v, o, 4)!r}, {sample_digest(v, o, RECORDED_GAMES)!r}),")
    print(f"RECORDED_FORCED_DISCARD = {forced_discard_digest()!r}")
