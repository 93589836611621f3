"""Learned inference in search (tarocchi_rl.search.inference, ``ismcts:...,belief=SOURCE``): determinizations
weighted by a belief model (the weighted DP, or sampling-importance-resampling) stay exact on every constraint,
are the uniform sampler's with a uniform model (chi-square over an enumerable position) and, SIR with one
candidate, its very code path; the weighted DP draws the target law (chi-square), its tables agree with a slow
memoised recursion along random draws, and SIR moves towards it with more candidates (measured); the plain and
guided searches and the agent spec take them."""

import json
import shutil

import numpy as np
import pytest

from tarocchi_rl.agents.ismcts import ISMCTSAgent
from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.core.phases import PLAY
from tarocchi_rl.core.state import CUR, PHASE, TRICK_NUM
from tarocchi_rl.core.tables import P_CARDS
from tarocchi_rl.search import determinize as D
from tarocchi_rl.search import inference as I
from tarocchi_rl.search.ismcts import ROLLOUT_RANDOM, SearchTrees
from tarocchi_rl.shipped import MODELS_DIR
from tarocchi_rl.variants import get_variant
from tests.support.determinize import (
    CONFIGS,
    annulled,
    chi_square_p,
    contents_of,
    find_small_positions,
    hidden_piles,
    ids_of,
    play_out,
    random_positions,
    sample_problems,
)
from tests.support.engine import JIT_DISABLED
from tests.support.search import Uniform, guided_search_on, unfinished_positions

P_TOLERANCE = 1e-4  # chi-square: the p-value a uniform sampler must exceed (as the uniform sampler's own test)


def n_cards(tb):
    return int(tb.params[P_CARDS])


def pile_location(kind, seat, p, n):
    """The belief location of a hidden pile of tests' hidden_piles (module table of tarocchi_rl.search.inference)."""
    return {"stock": n, "discard": n + 1}.get(kind, (seat - p) % n)


def peaked_belief(info, p, piles, contents, peak):
    """A belief float[C, L] that puts ``peak`` on the location each unknown card has in ``contents`` (one
    assignment of ``piles``) and spreads the rest evenly."""
    n_loc = I.n_locations(info.n)
    b = np.full((info.c, n_loc), (1 - peak) / (n_loc - 1))
    for (kind, seat, _), cards in zip(piles, contents, strict=True):
        for c in ids_of(info.tb, cards):
            b[c] = (1 - peak) / (n_loc - 1)
            b[c, pile_location(kind, seat, p, info.n)] = peak
    return b


def target_law(info, p, piles, consistent, belief):
    """The SIR target pi over the enumerated consistent assignments: prod over unknown cards of belief[c, loc]."""
    logw = []
    for key in consistent:
        t = 0.0
        for (kind, seat, _), cards in zip(piles, key, strict=True):
            loc = pile_location(kind, seat, p, info.n)
            t += sum(np.log(belief[c, loc]) for c in ids_of(info.tb, cards))
        logw.append(t)
    w = np.exp(np.array(logw) - max(logw))
    return w / w.sum()


def sample_frequencies(src, tb, info, i, p, consistent, belief, m, n, seed, method="sir"):
    """The counts of n weighted determinizations (``method``, m SIR candidates) over the enumerated consistent
    assignments."""
    index = {key: k for k, key in enumerate(consistent)}
    dst = I.determinize_weighted(src, i, p, tb, belief, m, n, seed=seed, method=method)
    piles = hidden_piles(src, i, p, info)
    counts = np.zeros(len(consistent))
    for j in range(n):
        key = tuple(contents_of(dst, j, piles, info))
        assert key in index, "a sample outside the consistent assignments"
        counts[index[key]] += 1
    return counts


def chi_square_against(counts, law, min_expected=5.0):
    """The chi-square p-value of counts against a law, the cells expecting fewer than ``min_expected`` pooled."""
    expected = law * counts.sum()
    small = expected < min_expected
    c = np.append(counts[~small], counts[small].sum())
    e = np.append(expected[~small], expected[small].sum())
    keep = e > 0
    return chi_square_p(c[keep], e[keep])


# ----------------------------------------------------------------------------------------------------------
# the sampler


@pytest.mark.parametrize("method", ["exact", "sir"])
@pytest.mark.parametrize(("variant", "options"), CONFIGS)
def test_weighted_samples_satisfy_every_constraint(variant, options, method):
    """Random positions, random sharp beliefs (Dirichlet 0.3): every determinization passes the explicit predicate
    of the uniform sampler's tests and plays out to a zero-sum end."""
    n_games = 8 if JIT_DISABLED else 40
    src, tb, info = random_positions(variant, options, n_games, seed=5 + len(variant))
    rng = np.random.default_rng(7)
    checked = 0
    for i in range(n_games):
        if annulled(src, i, info):
            continue
        for p in range(info.n):
            belief = rng.dirichlet(np.full(I.n_locations(info.n), 0.3), size=info.c)
            dst = I.determinize_weighted(src, i, p, tb, belief, 8, 3, seed=100 * i + p, method=method)
            for j in range(3):
                assert sample_problems(src, i, p, info, dst, j) == [], (variant, options, i, p, j)
            assert (play_out(dst, tb).sum(axis=1) == 0).all()
            checked += 1
    assert checked >= n_games


@pytest.mark.nojit
@pytest.mark.parametrize("method", ["exact", "sir"])
def test_weighted_samples_without_the_jit(method):
    """The kernels as plain Python (NUMBA_DISABLE_JIT=1 in ``make test-nojit``): late French positions, a sharp
    belief, every sample consistent."""
    src, tb, info = random_positions("french3", {}, 30, seed=13)
    rows = [i for i in range(30) if src.meta[i, PHASE] == PLAY and src.meta[i, TRICK_NUM] >= 14][:3]
    assert rows
    rng = np.random.default_rng(2)
    for i in rows:
        p = int(src.meta[i, CUR])
        belief = rng.dirichlet(np.full(I.n_locations(info.n), 0.3), size=info.c)
        dst = I.determinize_weighted(src, i, p, tb, belief, 4, 2, seed=i, method=method)
        assert all(sample_problems(src, i, p, info, dst, j) == [] for j in range(2))


@pytest.mark.parametrize("variant", ["mineo", "piedmont4", "french4"])
def test_one_candidate_is_the_uniform_sampler(variant):
    """SIR with M = 1 is the uniform sampler's own call: the same rows from the same seeds, whatever the belief."""
    src, tb, info = random_positions(variant, {}, 20, seed=9)
    rng = np.random.default_rng(1)
    for i in range(20):
        if annulled(src, i, info):
            continue
        p = int(src.meta[i, CUR]) % info.n
        belief = rng.dirichlet(np.ones(I.n_locations(info.n)), size=info.c)
        got = I.determinize_weighted(src, i, p, tb, belief, 1, 6, seed=i, method="sir")
        want = D.determinize(src, i, p, tb, n=6, seed=i, parallel=False)
        for a, b in zip(got, want, strict=True):
            assert np.array_equal(a, b), (variant, i)


SMALL = [("mineo", 21), ("french3", 22), ("piedmont4", 23), ("french4", 24)]


@pytest.mark.parametrize("method", ["exact", "sir"])
@pytest.mark.parametrize(("variant", "seed"), SMALL)
def test_uniform_belief_keeps_the_uniform_law(variant, seed, method):
    """A uniform model: the determinizations are uniform over the consistent deals (chi-square over an enumerated
    small position, p > P_TOLERANCE); SIR with M = 8 candidates."""
    options = {"accuso": True} if variant == "piedmont4" else {}
    positions = find_small_positions(variant, options, 1, seed)
    assert positions, "no small position found"
    for src, tb, info, i, p, consistent in positions:
        belief = I.uniform_beliefs(1, info.n, info.c)[0]
        n = 60 * len(consistent)
        counts = sample_frequencies(src, tb, info, i, p, consistent, belief, 8, n, seed, method)
        pval = chi_square_p(counts, np.full(len(consistent), n / len(consistent)))
        assert pval > P_TOLERANCE, (variant, method, i, p, len(consistent), pval)


@pytest.mark.parametrize(("variant", "seed"), SMALL)
def test_exact_method_draws_the_target_law(variant, seed):
    """A belief peaked (0.6) on one consistent assignment: the weighted DP's determinizations follow the target
    pi (prod of the beliefs over the unknown cards, normalised over the consistent deals): chi-square against pi
    (cells expecting < 5 pooled) p > P_TOLERANCE, and the total variation distance is sampling noise."""
    options = {"accuso": True} if variant == "piedmont4" else {}
    src, tb, info, i, p, consistent = find_small_positions(variant, options, 1, seed)[0]
    piles = hidden_piles(src, i, p, info)
    belief = peaked_belief(info, p, piles, consistent[len(consistent) // 2], 0.6)
    pi = target_law(info, p, piles, consistent, belief)
    assert I.plan_of(src, i, p, tb, belief)[1][I.B_MODE] == I.METHOD_EXACT
    n = 60 * len(consistent)
    counts = sample_frequencies(src, tb, info, i, p, consistent, belief, 8, n, seed, "exact")
    pval = chi_square_against(counts, pi)
    assert pval > P_TOLERANCE, (variant, i, p, len(consistent), pval)
    assert 0.5 * np.abs(counts / n - pi).sum() < 0.05


def test_peaked_belief_moves_the_samples_towards_it():
    """A belief peaked (0.6) on one consistent assignment: with SIR its share of the samples grows with M, from
    the uniform 1/|consistent| towards the target law pi, and the total variation distance to pi shrinks; the
    exact method is closest."""
    positions = find_small_positions("mineo", {}, 1, 21)
    src, tb, info, i, p, consistent = positions[0]
    piles = hidden_piles(src, i, p, info)
    star = len(consistent) // 2
    belief = peaked_belief(info, p, piles, consistent[star], 0.6)
    pi = target_law(info, p, piles, consistent, belief)
    n = 4000
    share, tv = {}, {}
    for m in (1, 8, 64, "exact"):
        method, k = ("exact", 8) if m == "exact" else ("sir", m)
        freq = sample_frequencies(src, tb, info, i, p, consistent, belief, k, n, seed=3, method=method) / n
        share[m], tv[m] = round(float(freq[star]), 3), round(0.5 * float(np.abs(freq - pi).sum()), 3)
    print(f"|consistent| {len(consistent)}, pi(star) {pi[star]:.3f}; share of star {share}; TV to pi {tv}")
    assert share[1] < 3.0 / len(consistent) + 0.02  # M = 1: uniform
    assert share[1] < share[8] < share[64] < share["exact"]
    assert tv["exact"] < tv[64] < tv[8] < tv[1]
    assert tv[64] < 0.5 * tv[1] and tv["exact"] < 0.05


def test_truth_peaked_beliefs_place_more_cards_where_they_are():
    """Mid-deal positions, a belief putting 0.7 on every unseen card's true location: the share of unknown cards
    a determinization places where they really are rises from the uniform sampler's through SIR to the exact
    method's (measured, printed)."""
    src, tb, info = random_positions("french4", {}, 60, seed=31)
    rows = [i for i in range(60) if src.meta[i, PHASE] == PLAY and 2 <= src.meta[i, TRICK_NUM] <= 8][:12]
    assert len(rows) >= 6
    right = {"uniform": 0, "sir": 0, "exact": 0}
    total = 0
    for i in rows:
        p = int(src.meta[i, CUR])
        piles = hidden_piles(src, i, p, info)
        truth = [x for _, _, x in piles]
        belief = peaked_belief(info, p, piles, truth, 0.7)
        total += 10 * sum(bin(x).count("1") for x in truth)
        for name, (method, m) in {"uniform": ("sir", 1), "sir": ("sir", 8), "exact": ("exact", 8)}.items():
            dst = I.determinize_weighted(src, i, p, tb, belief, m, 10, seed=i, method=method)
            for j in range(10):
                got = contents_of(dst, j, piles, info)
                right[name] += sum(bin(t & g).count("1") for t, g in zip(truth, got, strict=True))
    share = {k: round(v / total, 3) for k, v in right.items()}
    print("unknown cards placed where they are:", share)
    assert share["uniform"] < share["sir"] < share["exact"]
    assert share["exact"] > share["uniform"] + 0.2


def test_mineo_early_round_falls_back_to_sir():
    """Eight piles (Mineo's early round): the weighted DP's tables are too large, the plan samples by SIR."""
    from tarocchi_rl.variants.mineo import EARLY

    src, tb, info = random_positions("mineo", {}, 40, seed=2)
    early = [i for i in range(40) if src.meta[i, PHASE] == EARLY]
    assert early
    i = early[0]
    p = int(src.meta[i, CUR])
    belief = I.uniform_beliefs(1, info.n, info.c)[0]
    _, bi, _ = I.plan_of(src, i, p, tb, belief, "exact", 4)
    assert bi[I.B_MODE] == I.METHOD_SIR and bi[I.B_M] == 4
    dst = I.determinize_weighted(src, i, p, tb, belief, 4, 3, method="exact")
    assert all(sample_problems(src, i, p, info, dst, j) == [] for j in range(3))


def _oracle_splits(pi, bi, bf, rng):
    """A slow, obvious weighted DP (a memoised recursion over (card, rooms) in Python): g(k, R) = sum over the piles q
    card k may take, R[q] > 0, of w[k, q] g(k+1, R - e_q); 1 past the last card; 0 at the cap layer where a capped
    pile took more than its cap. Walks one draw (piles chosen at random) and returns, card by card, (the rooms,
    the law of card k's pile by the oracle)."""
    import functools

    n_piles, kk, kb = int(pi[D.I_P]), int(bi[I.B_K]), int(bi[I.B_KB])
    rooms = [int(pi[D.I_PILE + D.PILE_W * q + D.PILE_ROOM]) for q in range(n_piles)]
    caps = [int(pi[D.I_PILE + D.PILE_W * q + D.PILE_CAP]) for q in range(n_piles)]
    piles = [int(bi[I.B_CARD + I.CARD_W * k + I.CARD_PILES]) for k in range(kk)]
    w = [[float(bf[k * D.MAXP + q]) for q in range(n_piles)] for k in range(kk)]

    @functools.cache
    def g(k, r):
        if k == kb and any(c >= 0 and room - x > c for c, room, x in zip(caps, rooms, r, strict=True)):
            return 0.0
        if k == kk:
            return 1.0
        return sum(w[k][q] * g(k + 1, r[:q] + (r[q] - 1,) + r[q + 1:])
                   for q in range(n_piles) if piles[k] >> q & 1 and r[q] > 0)

    r, walk = tuple(rooms), []
    for k in range(kk):
        law = np.array([w[k][q] * g(k + 1, r[:q] + (r[q] - 1,) + r[q + 1:]) if piles[k] >> q & 1 and r[q] > 0
                        else 0.0 for q in range(n_piles)])
        law /= law.sum()
        walk.append((r, law))
        q = int(rng.choice(n_piles, p=law))
        r = r[:q] + (r[q] - 1,) + r[q + 1:]
    return walk


def _tables_follow_the_oracle(src, i, p, tb, belief, rng, max_cards=40):
    """The law of each card's pile read from the exact tables of game i seen by p equals :func:`_oracle_splits`'
    (1e-9) along one random draw. Returns the belief plan's ints, or None when the position is not an exact one
    (or too large for the recursion)."""
    try:
        plan, bi, bf = I.plan_of(src, i, p, tb, belief)
    except RuntimeError:
        return None
    if bi[I.B_MODE] != I.METHOD_EXACT or bi[I.B_K] > max_cards:
        return None
    r = np.zeros(D.MAXP, np.int64)
    acc = np.zeros(D.MAXP, np.float64)
    for k, (rooms, law) in enumerate(_oracle_splits(plan.ints, bi, bf, rng)):
        r[: len(rooms)] = rooms
        total = I._dp_split(plan.ints, bi, bf, k, r, acc)
        np.testing.assert_allclose(acc[: len(rooms)] / total, law, rtol=1e-9, atol=1e-12,
                                   err_msg=f"row {i} seat {p} card {k} rooms {rooms}")
    return bi


@pytest.mark.nojit
@pytest.mark.parametrize(("variant", "options"), CONFIGS, ids=[v + "".join(f"-{o}" for o in opts)
                                                               for v, opts in CONFIGS])
def test_exact_tables_match_a_slow_recursion(variant, options):
    """The weighted DP's tables (one layout for every layer, filled by a stencil; entry by entry near the caps and
    the last card) against a memoised recursion in Python: along random draws from positions of every phase
    with random beliefs, the law of each card's pile read from the tables is the recursion's."""
    src, tb, info = random_positions(variant, options, 60, seed=11)
    rng = np.random.default_rng(5)
    checked = 0
    for i in range(src.meta.shape[0]):
        belief = rng.dirichlet(np.ones(I.n_locations(info.n)), size=info.c)
        checked += _tables_follow_the_oracle(src, i, int(src.meta[i, CUR]), tb, belief, rng) is not None
    assert checked >= 30, checked


@pytest.mark.nojit
def test_exact_tables_with_a_count_cap_match_a_slow_recursion():
    """Piedmont3, the dealer discarded a trump: the others know he keeps at most as many discardable cards as
    discards are left (a count cap, checked at the DP's cap layer); the tables still follow the recursion."""
    import tarocchi_rl

    deck = get_variant("piedmont3").deck
    forced = [c for c in range(78) if deck.suit[c] >= 4 or deck.names[c].startswith("K")]
    others = [c for c in range(78) if c not in forced]
    np.random.default_rng(0).shuffle(others)
    dealer = forced + others[:2]
    env = tarocchi_rl.BatchEnv("piedmont3", 1, seed=0)
    env.set_deals(np.array([others[2:27] + others[27:52] + dealer]))
    env.step(np.array([78 + next(c for c in range(78) if deck.names[c] == "T5")]))  # the dealer discards a trump
    rng = np.random.default_rng(2)
    for p in (0, 1):
        for _ in range(3):
            belief = rng.dirichlet(np.ones(I.n_locations(3)), size=78)
            bi = _tables_follow_the_oracle(env.state, 0, p, env.tables, belief, rng, max_cards=80)
            assert bi is not None and bi[I.B_KB] >= 0  # an exact plan with a cap layer


def test_bad_beliefs_are_refused():
    src, tb, info = random_positions("mineo", {}, 4, seed=3)
    with pytest.raises(ValueError, match="card x location"):
        I.log_beliefs(np.ones((1, 5, 6)), info.n, info.c)
    with pytest.raises(ValueError, match="finite"):
        I.log_beliefs(np.full((1, info.c, 6), np.nan), info.n, info.c)
    with pytest.raises(ValueError, match="belief_samples"):
        I.determinize_weighted(src, 0, 0, tb, I.uniform_beliefs(1, info.n, info.c)[0], 0, 2)


# ----------------------------------------------------------------------------------------------------------
# the searches and the agent


def _trees(env, live, log_b, m, iterations=120, method="sir"):
    scale = get_variant(env.variant).payoff_scale
    priors = np.zeros((len(live), env.num_actions), np.float32)
    seeds = np.arange(1, len(live) + 1, dtype=np.uint64)
    trees = SearchTrees(env.state, live, env.tables, iterations, 0.7, scale, ROLLOUT_RANDOM, priors, 0.0, seeds,
                        log_beliefs=log_b, belief_method=method, belief_samples=m)
    trees.run(iterations // 2)
    trees.run(iterations - iterations // 2)
    return trees.decisions()


def test_search_with_one_candidate_is_the_plain_search_and_with_beliefs_stays_legal():
    env, live = unfinished_positions("french4", 6, 4)
    n_c = n_cards(env.tables)
    log_b = I.log_beliefs(np.random.default_rng(0).dirichlet(np.ones(6), size=(len(live), n_c)), 4, n_c)
    plain = _trees(env, live, None, 1)
    one = _trees(env, live, log_b, 1)
    assert np.array_equal(plain[0], one[0]) and np.array_equal(plain[1], one[1])
    mask = env.legal_mask()[live]
    for method in ("sir", "exact"):
        actions, visits = _trees(env, live, log_b, 6, method=method)
        assert mask[np.arange(len(live)), actions].all()
        assert np.allclose(visits.sum(axis=1), 120)
    with pytest.raises(ValueError, match="card x location"):
        _trees(env, live, log_b[:, :10], 6)


def test_guided_search_takes_beliefs():
    env, live = unfinished_positions("mineo", 5, 2)
    n_c = n_cards(env.tables)
    log_b = I.log_beliefs(I.uniform_beliefs(len(live), 4, n_c), 4, n_c)
    plain = guided_search_on(env, live, Uniform(), 40)
    one = guided_search_on(env, live, Uniform(), 40, log_beliefs=log_b, belief_method="sir", belief_samples=1)
    assert np.array_equal(plain[0], one[0]) and np.array_equal(plain[1], one[1])
    for method in ("sir", "exact"):
        actions, visits = guided_search_on(env, live, Uniform(), 40, log_beliefs=log_b, belief_method=method,
                                           belief_samples=4)
        assert env.legal_mask()[live][np.arange(len(live)), actions].all()
        assert np.allclose(visits.sum(axis=1), 40)


@pytest.mark.parametrize("spec", ["ismcts:iterations=40,belief=uniform,belief_method=sir,belief_samples=4",
                                  "ismcts:iterations=40,belief=uniform",
                                  "ismcts:iterations=20,net=bot:piedmont3,mix=1,belief=uniform,belief_samples=3",
                                  "ismcts:time=0.002,belief=uniform"])
def test_agents_with_beliefs_play_legal_games(spec):
    from tarocchi_rl.arena import run_arena

    r = run_arena("piedmont3", [spec, "heuristic"], deals=2, seed=0, progress=False, make_agent=make_agent)
    assert r["deals"] == 2


def test_agent_spec_errors(tmp_path):
    no_beliefs = tmp_path / "bot"  # a bot exported without a belief model (whichever shipped bots have one)
    shutil.copytree(MODELS_DIR / "mineo", no_beliefs, ignore=shutil.ignore_patterns("belief.onnx"))
    manifest = json.loads((no_beliefs / "manifest.json").read_text())
    (no_beliefs / "manifest.json").write_text(json.dumps({**manifest, "belief": None}))
    for spec, match in [("ismcts:belief_samples=4", "need belief=SOURCE"),
                        ("ismcts:belief_method=sir", "need belief=SOURCE"),
                        ("ismcts:belief=uniform,belief_method=best", "belief_method must be exact or sir"),
                        ("ismcts:belief=uniform,belief_samples=0", "belief_samples must be"),
                        ("ismcts:belief=uniform,belief_samples=2000", "belief_samples must be"),
                        ("ismcts:belief=uniform,belief_samples=x", "belief_samples must be an integer"),
                        ("ismcts:belief=", "belief must be"),
                        (f"ismcts:belief=onnx:{no_beliefs}", "no belief model there")]:
        with pytest.raises(ValueError, match=match) as e:
            make_agent(spec)
        assert "\n" not in str(e.value)
    agent = make_agent("ismcts:iterations=10,belief=uniform")
    assert isinstance(agent, ISMCTSAgent) and agent.belief_samples == I.DEFAULT_BELIEF_SAMPLES and agent.needs_obs
    assert agent.belief_method == "exact"


def test_a_model_of_another_shape_is_a_clear_error():
    class Wrong:
        has_beliefs = True

        def beliefs(self, obs):
            return np.ones((len(obs), 3, 3), np.float32)

    env, live = unfinished_positions("mineo", 3, 5)
    agent = ISMCTSAgent(iterations=10, belief="uniform")
    agent._belief_model = Wrong()
    with pytest.raises(ValueError, match="belief=uniform: beliefs: expected"):
        agent.act(env.observe()[live], env.legal_mask()[live], env, live)
    assert (env.state.meta[live, PHASE] >= 0).all()


def test_a_checkpoint_with_a_belief_head_drives_plain_and_guided_searches(tmp_path):
    """belief=CHECKPOINT (the belief model's own interface, beliefs(obs) -> [B, C, L]) in plain and guided
    searches (net= and belief= the same checkpoint: loaded once); a checkpoint without one is refused."""
    from tarocchi_rl.arena import run_arena
    from tests.support.checkpoints import make_checkpoint

    ckpt = str(tmp_path / "belief.pt")
    make_checkpoint(ckpt, "piedmont3", belief_loss=1.0)  # a fresh network with a belief head
    for spec in (f"ismcts:iterations=30,belief={ckpt}", f"ismcts:iterations=20,net={ckpt},mix=1,belief={ckpt}"):
        agent = make_agent(spec)
        assert agent._belief_model is not None and agent._belief_model.has_beliefs
        r = run_arena("piedmont3", [agent, "heuristic"], deals=1, seed=0, progress=False, make_agent=make_agent)
        assert r["deals"] == 1
    make_checkpoint(tmp_path / "plain.pt", "piedmont3")
    with pytest.raises(ValueError, match="no belief model there"):
        make_agent(f"ismcts:iterations=10,belief={tmp_path / 'plain.pt'}")


def test_a_checkpoint_model_of_a_search_runs_on_one_thread(tmp_path):
    """A search calls its torch models once a decision under a time budget: their forward passes run on one
    thread (as the ONNX ones do; torch's default pool waits for cores on a busy machine), and torch's own setting
    is the same after the call as before."""
    import torch

    from tarocchi_rl.batch import BatchEnv
    from tarocchi_rl.rl.policy import PPOAgent
    from tests.support.checkpoints import make_checkpoint

    ckpt = str(tmp_path / "belief.pt")
    make_checkpoint(ckpt, "piedmont3", belief_loss=1.0)  # a fresh network with a belief head
    agent = make_agent(f"ismcts:iterations=5,net={ckpt},mix=1,belief={ckpt}")
    model = agent._belief_model
    assert model.threads == 1
    seen = []
    beliefs, forward = model.net.beliefs, model.net.forward
    model.net.beliefs = lambda x: (seen.append(torch.get_num_threads()), beliefs(x))[1]
    model.net.forward = lambda *a: (seen.append(torch.get_num_threads()), forward(*a))[1]
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        env = BatchEnv("piedmont3", 2, seed=0)
        env.reset(seed=0)
        obs, mask = env.observe(), env.legal_mask()
        model.beliefs(obs)
        model.run(obs, mask, env)
        assert seen == [1, 1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ValueError, match="threads must be >= 1"):
        PPOAgent(path=ckpt, threads=0)
