"""The belief head (``belief_loss > 0``): its shape, its loss (unseen cards only), a short run that lowers it on a
fixed batch, TensorBoard, checkpoints (shape checks, resume) and the parameter bound."""

import json
import math

import numpy as np
import pytest
import torch

from tarocchi_rl import engine
from tarocchi_rl.batch import BatchEnv
from tarocchi_rl.policies import HeuristicAgent
from tarocchi_rl.policies.belief import (
    belief_shape,
    belief_targets,
    location_names,
    locations_of,
    reliability,
    uniform_beliefs,
    unseen_cards,
)
from tarocchi_rl.rl.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from tarocchi_rl.rl.config import MAX_NETWORK_PARAMETERS, ConfigError, load_config, network_parameters
from tarocchi_rl.rl.losses import belief_loss
from tarocchi_rl.rl.network import build_network, check_state_shapes, load_network
from tarocchi_rl.rl.policy import PPOAgent
from tarocchi_rl.rl.rollout import RolloutWorker
from tarocchi_rl.variants import get_variant
from tests.support.checkpoints import TINY_RUN

TINY = [*TINY_RUN, "belief_loss=1.0"]


def _cfg(*extra):
    return load_config(None, [*TINY, *extra])


def _train(path, *extra):
    from tarocchi_rl.rl.trainer import train

    return train(_cfg(*extra), path, progress=False)


def _positions(variant, games=6, seed=3):
    """(obs, hidden) of every decision of heuristic deals, from the deciding seat's view."""
    env = BatchEnv(variant, games, seed=seed)
    agent = HeuristicAgent(seed)
    obs_rows, hidden_rows = [], []
    while not env.all_done():
        cur = env.current_player().astype(np.int64)
        live = cur >= 0
        obs, mask = env.observe(), env.legal_mask()
        hidden = engine.observe_privileged(env.state, env.tables, cur)
        obs_rows.append(obs[live])
        hidden_rows.append(hidden[live])
        env.step(np.where(live, agent.act(obs, mask, env, np.arange(games)), -1))
    return np.concatenate(obs_rows), np.concatenate(hidden_rows)


def test_config_and_head_shape():
    assert load_config(None, []).belief_loss == 0.0  # off by default: no head, nothing extra in the rollouts
    assert not build_network(load_config(None, []), 858, 100).has_beliefs
    with pytest.raises(ConfigError, match=r"belief_loss: must be in \[0, 1000\]"):
        load_config(None, ["belief_loss=-1"])
    for variant in ("mineo", "french4"):
        spec = get_variant(variant)
        net = build_network(_cfg(f"variant={variant}"), spec.obs_dim, spec.n_actions)
        c, n_loc = belief_shape(spec)
        assert (c, n_loc) == (spec.deck.n_cards, spec.n_players + 2) == (net.belief_shape)
        obs = torch.zeros(5, spec.obs_dim)
        logits, value, belief = net.forward_all(obs, torch.ones(5, spec.n_actions, dtype=torch.bool))
        assert logits.shape == (5, spec.n_actions) and value.shape == (5,) and belief.shape == (5, c, n_loc)
        probs = net.beliefs(obs)
        assert probs.shape == (5, c, n_loc)
        torch.testing.assert_close(probs.sum(-1), torch.ones(5, c))
        assert len(location_names(spec.n_players)) == n_loc


def test_targets_follow_the_privileged_layout_and_leave_out_seen_cards():
    spec = get_variant("french4")
    obs, hidden = _positions("french4")
    c, n_loc = belief_shape(spec)
    where = locations_of(hidden, spec.n_players, c)
    targets = belief_targets(obs, hidden, spec)
    unseen = unseen_cards(obs, spec)
    hand = next(o for o, _, name in spec.obs_rows if name == "hand")
    own = obs[:, hand:hand + c] > 0
    assert (targets[own] == -1).all()  # the seat's own cards are never targets
    assert (targets[unseen] >= 0).all()  # every card the seat cannot see has a true location
    assert (targets[~unseen] == -1).all()
    assert (where[own] == 0).all()  # location 0: the seat's own hand (relative seat 0)
    assert set(np.unique(targets[unseen])) <= set(range(n_loc)) and (targets == spec.n_players).any()  # the chien


def test_the_loss_masks_seen_cards():
    torch.manual_seed(0)
    logits = torch.randn(4, 6, 5)
    targets = torch.tensor([[0, 1, -1, -1, 2, 4]] * 4)
    keep = targets >= 0
    want = torch.nn.functional.cross_entropy(logits[keep], targets[keep])
    torch.testing.assert_close(belief_loss(logits, targets), want)
    moved = logits.clone()
    moved[:, 2:4] += 100 * torch.randn(4, 2, 5)  # the seen cards' logits change nothing
    torch.testing.assert_close(belief_loss(moved, targets), want)
    assert float(belief_loss(logits, torch.full((4, 6), -1))) == 0.0  # no unseen card: no loss, no NaN


def test_reliability_table():
    probs = np.full((10, 3, 4), 0.25)
    targets = np.array([[0, 1, -1]] * 10)
    r = reliability(probs, targets, bins=4)
    assert r["cards"] == 20 and r["predictions"] == 80
    b = r["bins"][1]  # [0.25, 0.5): every prediction, a quarter of them true
    assert b["count"] == 80 and math.isclose(b["mean_predicted"], 0.25) and math.isclose(b["observed"], 0.25)
    assert math.isclose(r["ece"], 0.0, abs_tol=1e-12) and math.isclose(r["nll"], math.log(4))
    sure = np.zeros((10, 3, 4))
    sure[:, :, 3] = 1.0  # always certain, always wrong
    bad = reliability(sure, targets, bins=4)
    assert math.isclose(bad["ece"], 0.5) and bad["top1"] == 0.0
    mineo = get_variant("mineo")
    assert uniform_beliefs(mineo)(np.zeros((2, mineo.obs_dim), np.float32)).shape == (2, 63, 6)


def test_rollouts_carry_the_hidden_cards_with_a_belief_head():
    out = RolloutWorker(_cfg("critic=seat").to_dict()).collect()
    assert out["hidden"].shape[1] > 0 and (belief_targets(out["obs"], out["hidden"], get_variant("mineo")) >= 0).any()
    plain = RolloutWorker(_cfg("belief_loss=0").to_dict()).collect()
    assert plain["hidden"].shape[1] == 0


def test_a_short_run_lowers_the_belief_loss_and_logs_it(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    obs, hidden = _positions("mineo", games=16, seed=11)
    targets = torch.from_numpy(belief_targets(obs, hidden, get_variant("mineo")))

    def fixed_batch_loss(net):
        with torch.no_grad():
            return float(belief_loss(net.belief_logits(torch.from_numpy(obs)), targets))

    spec = get_variant("mineo")
    torch.manual_seed(0)
    before = fixed_batch_loss(build_network(_cfg(), spec.obs_dim, spec.n_actions))
    assert math.isclose(before, math.log(6), rel_tol=0.05)  # near-uniform at the start
    r = _train(tmp_path / "run", "max_updates=6", "ppo.lr=3e-3", "ppo.lr_schedule=constant")
    assert r["updates"] == 6
    after = fixed_batch_loss(load_network(tmp_path / "run").net)
    assert after < before - 0.1, (before, after)
    ea = EventAccumulator(str(tmp_path / "run"))
    ea.Reload()
    tags = set(ea.Tags()["scalars"])
    for t in ("loss/belief", "belief/ece", "belief/top1", "belief/nll", "loss/policy_loss"):
        assert t in tags, t
    assert all(np.isfinite(e.value) and e.value > 0 for e in ea.Scalars("loss/belief"))
    assert all(0 <= e.value <= 1 for e in ea.Scalars("belief/ece"))


def test_resume_continues_the_belief_head_exactly(tmp_path):
    from tarocchi_rl.rl.trainer import resume

    _train(tmp_path / "a", "max_updates=3")
    _train(tmp_path / "b", "max_updates=2")
    assert resume(tmp_path / "b", {"max_updates": "3"}, progress=False)["updates"] == 3
    a, b = load_checkpoint(tmp_path / "a"), load_checkpoint(tmp_path / "b")
    assert "belief.weight" in a["model"]
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k  # 2 + 1 updates == 3 updates


def test_checkpoint_shape_checks_cover_the_head(tmp_path):
    from tarocchi_rl.rl.trainer import resume

    cfg = _cfg()
    spec = get_variant("mineo")
    state = build_network(cfg, spec.obs_dim, spec.n_actions).state_dict()
    check_state_shapes(state, cfg, "here")
    with pytest.raises(CheckpointError, match=r"belief.weight has the shape \[5, 32\]"):
        check_state_shapes({**state, "belief.weight": torch.zeros(5, 32)}, cfg, "here")
    with pytest.raises(CheckpointError, match="belief.bias is missing"):
        check_state_shapes({k: v for k, v in state.items() if k != "belief.bias"}, cfg, "here")
    with pytest.raises(CheckpointError, match="'belief.weight' is not one of its tensors"):
        check_state_shapes(state, _cfg("belief_loss=0"), "here")
    run = tmp_path / "r"
    _train(run, "max_updates=1")
    ck = run / "checkpoints"
    (ck / "final.pt").unlink()
    data = load_checkpoint(ck / "latest.pt")
    data.pop("path")
    save_checkpoint(ck / "latest.pt", dict(data, model={**data["model"], "belief.bias": torch.zeros(7)}))
    with pytest.raises(CheckpointError, match=r"belief.bias has the shape \[7\]"):
        resume(run, {"max_updates": "2"}, progress=False)


def test_the_parameter_bound_counts_the_head():
    spec = get_variant("french4")
    c, n_loc = belief_shape(spec)
    net = build_network(_cfg("variant=french4", "network.hidden=[48, 16]"), spec.obs_dim, spec.n_actions)
    assert sum(p.numel() for p in net.parameters()) == network_parameters(spec.obs_dim, spec.n_actions, [48, 16],
                                                                          c * n_loc)
    # a one-layer trunk that fits without the head, and not with it: the head's (width + 1) * C * L parameters count
    per_unit = network_parameters(spec.obs_dim, spec.n_actions, [2]) - network_parameters(spec.obs_dim,
                                                                                         spec.n_actions, [1])
    width = MAX_NETWORK_PARAMETERS // per_unit - 1
    assert (network_parameters(spec.obs_dim, spec.n_actions, [width]) <= MAX_NETWORK_PARAMETERS
            < network_parameters(spec.obs_dim, spec.n_actions, [width], c * n_loc))
    assert load_config(None, ["variant=french4", f"network.hidden=[{width}]"]).network.hidden == [width]
    with pytest.raises(ConfigError, match="network.hidden: a network of"):
        load_config(None, ["variant=french4", f"network.hidden=[{width}]", "belief_loss=0.5"])


def test_a_checkpoint_as_an_agent_gives_beliefs(tmp_path):
    _train(tmp_path / "run", "max_updates=1")
    agent = PPOAgent(str(tmp_path / "run"))
    obs, _ = _positions("mineo", games=2)
    assert agent.has_beliefs
    b = agent.beliefs(obs[:7])
    assert b.shape == (7, 63, 6) and b.dtype == np.float32
    np.testing.assert_allclose(b.sum(-1), 1.0, atol=1e-5)
    _train(tmp_path / "plain", "max_updates=1", "belief_loss=0")
    plain = PPOAgent(str(tmp_path / "plain"))
    assert not plain.has_beliefs
    with pytest.raises(ValueError, match="no belief head"):
        plain.beliefs(obs[:1])


def test_the_calibration_experiment_writes_its_table_and_plot(tmp_path, capsys):
    from experiments.studies import belief_calibration

    _train(tmp_path / "run", "max_updates=1")
    out_json, out_png = tmp_path / "cal.json", tmp_path / "cal.png"
    assert belief_calibration.main(["--model", str(tmp_path / "run"), "--deals", "3", "--players", "self",
                                    "--json", str(out_json), "--png", str(out_png)]) == 0
    r = json.loads(out_json.read_text())
    assert r["deals"] == 3 and r["decisions"] > 0 and len(r["model"]["bins"]) == 10
    assert r["model"]["cards"] > 0 and 0 <= r["model"]["ece"] <= 1
    assert math.isclose(r["uniform"]["nll"], math.log(6), rel_tol=1e-6)
    assert r["counts"]["nll"] < r["uniform"]["nll"]  # the hand sizes alone already tell something
    assert sum(b["count"] for b in r["model"]["bins"]) == r["model"]["predictions"] == 6 * r["model"]["cards"]
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _train(tmp_path / "plain", "max_updates=1", "belief_loss=0")
    with pytest.raises(SystemExit, match="has no belief model"):
        belief_calibration.main(["--model", str(tmp_path / "plain"), "--json", str(out_json), "--png", str(out_png)])
