"""ISMCTS guided by a network (tarocchi_rl.search.guided, ``ismcts:net=PATH``): legal decisions in every variant,
visit bookkeeping, the prior and the values steering the search, one forward pass per iteration step,
reproducibility, the agent spec and its errors."""

import numpy as np
import pytest

from tarocchi_rl.agents.ismcts import ISMCTSAgent
from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.batch import BatchEnv
from tarocchi_rl.variants import get_variant
from tests.support.checkpoints import make_checkpoint
from tests.support.search import Uniform, guided_search_on, unfinished_positions

VARIANTS = ["mineo", "piedmont3", "piedmont4", "french3", "french4"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_guided_searches_give_legal_actions_and_count_one_root_visit_per_iteration(variant):
    env, idx = unfinished_positions(variant, 12, seed=4)
    before = [x.copy() for x in env.state]
    ev = Uniform()
    actions, visits = guided_search_on(env, idx, ev, 40)
    mask = env.legal_mask()[idx]
    assert mask[np.arange(len(idx)), actions].all()
    assert (visits.sum(axis=1) == 40).all()
    assert (visits[~mask] == 0).all()
    assert (visits[np.arange(len(idx)), actions] == visits.max(axis=1)).all()  # the most visited
    # the root priors, then at most one batch of leaves per iteration step (every seat's view of each leaf)
    assert ev.calls <= 1 + 40
    assert ev.positions <= len(idx) + 40 * len(idx) * env.num_players
    for x, y in zip(before, env.state, strict=True):  # the search plays on scratch rows only
        assert (x == y).all()


def test_the_prior_steers_the_visits():
    env, idx = unfinished_positions("mineo", 16, seed=6)
    mask = env.legal_mask()[idx]
    favourite = env.num_actions - 1 - mask[:, ::-1].argmax(axis=1)  # each game's highest legal action

    def confident(obs, m):
        p = np.where(m, 0.01, 0.0).astype(np.float32)
        # the favourite of a root position: only the root's rows are the first call's, in the order of idx
        if len(obs) == len(idx) and (m == mask).all():
            p[np.arange(len(idx)), favourite] = 1.0
        return p / p.sum(axis=1, keepdims=True), np.zeros(len(obs), np.float32)

    actions, visits = guided_search_on(env, idx, confident, 60)
    assert (actions == favourite).all()
    assert (visits[np.arange(len(idx)), favourite] > 30).all()


def test_the_values_steer_the_visits():
    """A value head that pays the root's player +1 whenever its hand no longer holds one chosen card (the highest
    card it may play): with a uniform prior the search learns to play that card."""
    from tarocchi_rl import engine
    from tarocchi_rl.core.obs_layout import S_HAND, S_SEAT
    from tarocchi_rl.core.phases import PLAY
    from tarocchi_rl.core.state import CUR, PHASE, alloc_state

    env = BatchEnv("french3", 64, seed=12)
    rng = np.random.default_rng(12)
    for i in range(64):  # into the card play, a few tricks in
        while env.state.meta[i, PHASE] != PLAY:
            engine.step_row(env.state, i, engine.random_action_row(env.state, i, env.tables), env.tables)
        for _ in range(int(rng.integers(0, 12))):
            engine.step_row(env.state, i, engine.random_action_row(env.state, i, env.tables), env.tables)
    mask = env.legal_mask()
    idx = np.flatnonzero((mask.sum(axis=1) > 2) & (env.state.meta[:, PHASE] == PLAY))[:8]
    assert len(idx) >= 4
    hand, seat_at = env.tables.obs[S_HAND], env.tables.obs[S_SEAT]
    n_cards = {name: size for _, size, name in get_variant("french3").obs_rows}["hand"]
    seats = env.state.meta[idx, CUR]
    chosen_action = env.num_actions - 1 - mask[idx, ::-1].argmax(axis=1)
    chosen_card = np.zeros(len(idx), np.int64)
    for r, i in enumerate(idx):  # the card that leaves the hand when the chosen action is played
        one = alloc_state(1)
        for dst, src in zip(one, env.state, strict=True):
            dst[0] = src[i]
        before = np.zeros((1, env.observe().shape[1]), np.float32)
        engine.observe_batch(one, env.tables, np.array([seats[r]]), before)
        engine.step_row(one, 0, int(chosen_action[r]), env.tables)
        after = np.zeros_like(before)
        engine.observe_batch(one, env.tables, np.array([seats[r]]), after)
        gone = np.flatnonzero(before[0, hand:hand + n_cards] > after[0, hand:hand + n_cards])
        assert len(gone) == 1
        chosen_card[r] = gone[0]

    def rewarding(r):
        def evaluate(obs, m):
            p = m.astype(np.float32)
            p /= p.sum(axis=1, keepdims=True)
            viewer = obs[:, seat_at:seat_at + env.num_players].argmax(axis=1)
            return p, ((viewer == seats[r]) & (obs[:, hand + chosen_card[r]] == 0)).astype(np.float32)
        return evaluate

    for r in range(len(idx)):  # one game per search: the evaluator knows its chosen card
        actions, visits = guided_search_on(env, idx[r:r + 1], rewarding(r), 80)
        assert actions[0] == chosen_action[r]
        assert visits[0, chosen_action[r]] > 40


def test_a_rollout_mix_gives_finished_deals_their_payoffs():
    env, idx = unfinished_positions("piedmont3", 6, seed=9)
    for mix in (0.0, 0.5, 1.0):
        actions, visits = guided_search_on(env, idx, Uniform(), 30, mix=mix, rollout="random")
        assert (visits.sum(axis=1) == 30).all()
        assert env.legal_mask()[idx][np.arange(len(idx)), actions].all()


class RowsPerCall(Uniform):
    """Uniform, recording how many positions each call evaluates."""

    def __init__(self):
        super().__init__()
        self.rows = []

    def __call__(self, obs, mask):
        self.rows.append(len(obs))
        return super().__call__(obs, mask)


def test_with_rollouts_alone_only_the_acting_seat_is_evaluated():
    """mix=1: leaf values come from rollouts, so each new leaf costs one observation (the actor's, for its
    prior) instead of one per seat; the search still takes every root visit."""
    env, idx = unfinished_positions("mineo", 8, seed=12)
    every, actor = Uniform(), RowsPerCall()
    guided_search_on(env, idx, every, 30, mix=0.5, rollout="random")
    actions, visits = guided_search_on(env, idx, actor, 30, mix=1.0, rollout="random")
    assert (visits.sum(axis=1) == 30).all()
    assert actor.rows[0] == len(idx)  # the root priors
    assert max(actor.rows[1:]) <= len(idx)  # then at most one observation per game and iteration step
    assert actor.positions < every.positions / 2  # mineo: four seats' views per leaf with mix < 1


@pytest.mark.parametrize("variant", ["mineo", "french3"])
def test_lazy_priors_evaluate_a_node_on_its_second_visit_only(variant):
    """lazy: a new node is only rolled out; the descent stops at a node on its second visit to evaluate its prior.
    So fewer positions are evaluated than with a prior per new node (yet some are: the nodes visited twice), and
    the search still takes every root visit and plays legal actions."""
    env, idx = unfinished_positions(variant, 8, seed=21)
    eager, lazy = RowsPerCall(), RowsPerCall()
    guided_search_on(env, idx, eager, 60, mix=1.0, rollout="random")
    actions, visits = guided_search_on(env, idx, lazy, 60, mix=1.0, rollout="random", lazy=True)
    assert (visits.sum(axis=1) == 60).all()
    assert env.legal_mask()[idx][np.arange(len(idx)), actions].all()
    assert lazy.rows[0] == len(idx)  # the root priors, before the loop
    assert 0 < lazy.positions - len(idx) < eager.positions - len(idx)
    with pytest.raises(ValueError, match="lazy priors need mix = 1"):
        guided_search_on(env, idx, Uniform(), 5, mix=0.5, lazy=True)


def test_guided_search_is_reproducible():
    env, idx = unfinished_positions("french4", 8, seed=3)
    a1, v1 = guided_search_on(env, idx, Uniform(), 50, seed=11, mix=0.5)
    a2, v2 = guided_search_on(env, idx, Uniform(), 50, seed=11, mix=0.5)
    _, v3 = guided_search_on(env, idx, Uniform(), 50, seed=99, mix=0.5)
    assert (a1 == a2).all() and (v1 == v2).all()
    assert not (v1 == v3).all()


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    """A freshly initialised mineo network saved as a training checkpoint."""
    path = tmp_path_factory.mktemp("guided") / "final.pt"
    make_checkpoint(path)
    return path


@pytest.mark.parametrize("options, iterations, lazy, games, seed", [
    ("iterations=20,mix=0.25,c_puct=2,seed=3", 20, False, 6, 8),
    ("iterations=25,mix=1,lazy=1,rollout=random", 25, True, 5, 9),  # lazy priors
])
def test_the_agent_spec_plays_a_guided_search_with_a_checkpoint(options, iterations, lazy, games, seed,
                                                                 tiny_checkpoint):
    agent = make_agent(f"ismcts:net={tiny_checkpoint},{options}", seed=0)
    assert agent.needs_obs and agent.lazy == lazy
    env, idx = unfinished_positions("mineo", games, seed=seed)
    actions, visits = agent.search(env.observe()[idx], env, idx)
    assert env.legal_mask()[idx][np.arange(len(idx)), actions].all()
    assert (visits.sum(axis=1) == iterations).all()


def test_a_time_budget_calibrates_the_iterations(tiny_checkpoint):
    agent = ISMCTSAgent(net=str(tiny_checkpoint), time_budget=0.01, seed=1)
    env, idx = unfinished_positions("mineo", 4, seed=8)
    _, visits = agent.search(env.observe()[idx], env, idx)
    n = visits.sum(axis=1)
    assert (n >= 1).all() and (n == n[0]).all()
    assert agent._cost is not None and agent._cost > 0


@pytest.mark.parametrize("spec, message", [
    ("ismcts:net=/no/such/bot", "no/such/bot"),
    ("ismcts:net=PATH,prior=PATH", "excludes prior"),
    ("ismcts:net=PATH,workers=2", "excludes prior and workers"),
    ("ismcts:net=PATH,mix=1.5", "mix"),
    ("ismcts:net=PATH,mix=nan", "mix"),
    ("ismcts:net=PATH,c_puct=-1", "c_puct"),
    ("ismcts:net=PATH,c_puct=inf", "c_puct"),
    ("ismcts:net=PATH,lazy=1", "lazy=1: lazy priors need mix = 1"),
    ("ismcts:lazy=1,mix=1", "lazy=1 needs net"),
    ("ismcts:net=PATH,mix=1,lazy=2", "lazy"),
    ("ismcts:net=PATH,mix=1,lazy=0.5", "lazy"),
])
def test_bad_guided_specs_are_errors_naming_the_option(spec, message, tiny_checkpoint):
    with pytest.raises(ValueError, match=message):
        make_agent(spec.replace("PATH", str(tiny_checkpoint)), seed=0)


def test_the_bot_protocol_answers_with_the_guided_search(tiny_checkpoint):
    import json

    from tarocchi_rl.bot import BotServer, Referee

    msg = Referee().handle(json.dumps({"type": "new", "variant": "mineo", "seed": 4}))
    req = dict(msg["request"], want=["search"])
    spec = f"ismcts:net={tiny_checkpoint},iterations=30"
    a = BotServer(spec, make_agent).handle(json.dumps(req))
    b = BotServer(spec, make_agent).handle(json.dumps(req))
    assert a == b and a["type"] == "action"  # seeded by the request
    visits = a["search"]["visits"]
    assert a["action"] in visits and sum(visits.values()) == 30
