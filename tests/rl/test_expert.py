"""Expert iteration (tarocchi_rl/expert/): search targets, shards, the loss, the gate, runs that resume elsewhere."""

import io
import json
import shutil
import zipfile

import numpy as np
import pytest
import torch

from tarocchi_rl.cli import main
from tarocchi_rl.core.phases import DECISION_KINDS
from tarocchi_rl.expert.config import ExpertConfig, load_expert_config
from tarocchi_rl.expert.labels import KIND_OF_PHASE, Labeller
from tarocchi_rl.expert.learn import ReplayBuffer, expert_loss, to_tensors, train_round
from tarocchi_rl.expert.run import RESUME_FILE, load_resumable, resume, start
from tarocchi_rl.expert.shards import FIELDS, Shard, ShardError
from tarocchi_rl.expert.workers import split_deals
from tarocchi_rl.rl.checkpoint import CheckpointError, load_checkpoint
from tarocchi_rl.rl.config import ConfigError
from tarocchi_rl.rl.network import build_network, load_network
from tarocchi_rl.variants import get_variant
from tests.support.checkpoints import make_checkpoint

TINY = ["num_workers=0", "deals_per_round=3", "search.games=3", "search.budget.bid=4", "search.budget.discard=4",
        "search.budget.play=6", "gate.deals=4", "gate.search_deals=2",
        "gate.search=ismcts:iterations=4,rollout=heuristic", "learn.buffer=100000", "torch_threads=1",
        "network.hidden=[32]"]


def _config(tmp_path, variant="french3", *extra):
    make_checkpoint(tmp_path / "init.pt", variant, (32,))
    return load_expert_config(None, [f"variant={variant}", f"init={tmp_path / 'init.pt'}", *TINY, *extra])


@pytest.fixture(scope="module")
def french3_labels(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("labels")
    cfg = _config(tmp, "french3", "belief_loss=1.0")
    lab = Labeller(cfg.to_dict(), 0, 1)
    return cfg, lab.label(lab.net.state_dict(), 3, 1)


def test_search_targets_are_the_searched_decisions_with_their_visits_and_outcomes(french3_labels):
    cfg, out = french3_labels
    spec = get_variant("french3")
    shard = Shard.from_arrays(out["shard"], "labels", spec.obs_dim, spec.n_actions)  # every field checked
    a = shard.arrays
    n = len(shard)
    assert n == out["stats"]["samples"] > 3 * 10
    assert (a["mask"].sum(axis=1) > 1).all()  # forced decisions are not samples
    assert np.allclose(a["policy"].sum(axis=1), 1.0) and (a["policy"][~a["mask"]] == 0).all()
    budget = np.array(cfg.search.budget.of_kind())[KIND_OF_PHASE[a["phase"].astype(int)]]
    assert np.allclose((a["policy"] * budget[:, None]).round(), a["policy"] * budget[:, None], atol=1e-3)  # visits
    scaled = a["outcome"] * cfg.payoff_scale  # outcomes are the deals' payoffs of the deciding seats
    assert np.allclose(scaled, scaled.round(), atol=1e-3)
    assert (np.abs(a["search_value"]) <= np.abs(a["outcome"]).max() * 50 + 50).all()
    assert a["belief"].shape == (n, spec.deck.n_cards) and (a["belief"] >= -1).all()
    by_kind = out["stats"]["by_kind"]
    assert set(by_kind) == set(DECISION_KINDS)
    assert sum(k["searched"] + k["anchored"] for k in by_kind.values()) == n
    assert all(k["decisions"] >= k["forced"] + k["searched"] for k in by_kind.values())


def test_a_kind_with_no_budget_is_played_by_the_network_its_own_policy_an_anchor(tmp_path):
    cfg = _config(tmp_path, "french3", "search.budget.bid=0", "search.budget.discard=0", "search.anchor=false")
    lab = Labeller(cfg.to_dict(), 0, 1)
    out = lab.label(lab.net.state_dict(), 2, 1)
    kinds = {DECISION_KINDS[k] for k in KIND_OF_PHASE[out["shard"]["phase"].astype(int)]}
    assert kinds == {"play"}  # without anchors: not a sample
    assert out["stats"]["by_kind"]["bid"]["searched"] == 0 < out["stats"]["by_kind"]["bid"]["decisions"]
    cfg.search.anchor = True
    lab = Labeller(cfg.to_dict(), 0, 1)
    out = lab.label(lab.net.state_dict(), 2, 1)
    a = Shard.from_arrays(out["shard"]).arrays
    bids = KIND_OF_PHASE[a["phase"].astype(int)] == DECISION_KINDS.index("bid")
    assert bids.any() and out["stats"]["by_kind"]["bid"]["anchored"] == bids.sum()
    own, _ = lab.net.eval()(torch.from_numpy(a["obs"][bids]), torch.from_numpy(a["mask"][bids]))
    assert np.allclose(a["policy"][bids], torch.softmax(own, dim=1).detach().numpy(), atol=1e-5)  # the net's
    assert (a["action"][bids] == a["policy"][bids].argmax(axis=1)).all()  # its most probable move played


def test_sharpened_targets_keep_the_argmax_and_reach_one_hot():
    from tarocchi_rl.expert.learn import sharpened

    p = torch.tensor([[0.5, 0.3, 0.2, 0.0], [1e-3, 2e-3, 0.997, 0.0]])
    assert torch.equal(sharpened(p, 1.0), p)
    for tau in (0.5, 0.1, 1e-3):
        q = sharpened(p, tau)
        assert torch.allclose(q.sum(dim=1), torch.ones(2)) and torch.equal(q.argmax(dim=1), p.argmax(dim=1))
        assert (q[:, 3] == 0).all() and (q.max(dim=1).values >= p.max(dim=1).values - 1e-6).all()
    assert torch.equal(sharpened(p, 0.0), torch.tensor([[1.0, 0, 0, 0], [0, 0, 1.0, 0]]))


def test_q_targets_move_the_prior_by_the_values_and_a_seldom_visited_action_little():
    from tarocchi_rl.expert.labels import q_improved_policy

    prior = np.array([[0.4, 0.4, 0.2, 0.0]])
    mask = np.array([[True, True, True, False]])
    visits = np.array([[100.0, 100.0, 1.0, 0.0]])
    means = np.array([[0.5, 0.3, 1.0, np.nan]])  # the third: one lucky rollout
    v = np.array([0.4])
    assert np.allclose(q_improved_policy(prior, visits, means, v, mask, 0.0, 10.0), prior)  # weight 0: the prior
    p = q_improved_policy(prior, visits, means, v, mask, 20.0, 10.0)
    assert np.isclose(p.sum(), 1.0) and p[0, 3] == 0.0
    q0, q1 = (100 * 0.5 + 10 * 0.4) / 110, (100 * 0.3 + 10 * 0.4) / 110
    assert np.isclose(p[0, 0] / p[0, 1], np.exp(20 * (q0 - q1)), rtol=1e-4)  # the values' difference, in logits
    assert p[0, 0] > 0.4 > p[0, 1] and p[0, 2] < p[0, 0]  # one visit's 1.0 shrunk to (1 + 4) / 11
    unseen = q_improved_policy(prior, np.zeros((1, 4)), np.full((1, 4), np.nan), v, mask, 20.0, 0.0)
    assert np.allclose(unseen, prior)  # nothing searched: nothing moves


def test_labels_with_q_targets_are_policies_over_the_legal_moves(tmp_path):
    cfg = _config(tmp_path, "french3", "search.target=q")
    lab = Labeller(cfg.to_dict(), 0, 1)
    a = Shard.from_arrays(lab.label(lab.net.state_dict(), 2, 1)["shard"]).arrays
    assert np.allclose(a["policy"].sum(axis=1), 1.0) and (a["policy"][~a["mask"]] == 0).all()
    assert (a["policy"][a["mask"]] > 0).all()  # every legal move keeps a share of the prior
    with pytest.raises(ConfigError, match="search.target: must be one of visits, q"):
        _config(tmp_path, "french3", "search.target=values")


def test_labels_depend_on_seed_stream_and_round_only(tmp_path):
    cfg = _config(tmp_path, "piedmont3")
    a, b = Labeller(cfg.to_dict(), 0, 1), Labeller(cfg.to_dict(), 0, 1)
    w = a.net.state_dict()
    first, again = a.label(w, 2, 5), b.label(w, 2, 5)
    assert np.array_equal(first["shard"]["obs"], again["shard"]["obs"])
    assert np.array_equal(first["shard"]["action"], again["shard"]["action"])
    other = a.label(w, 2, 6)
    assert not np.array_equal(first["shard"]["obs"][:5], other["shard"]["obs"][:5])


def test_shards_round_trip_and_refuse_what_is_not_a_shard(french3_labels, tmp_path):
    _, out = french3_labels
    shard = Shard.from_arrays(out["shard"])
    path = tmp_path / "s.npz"
    shard.write(path)
    back = Shard.read(path)
    assert all(np.array_equal(back.arrays[k], shard.arrays[k]) for k in FIELDS)
    with pytest.raises(ShardError, match="expected 7|wide"):
        Shard.read(path, obs_dim=7)

    def refused(arrays, match):
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        with pytest.raises(ShardError, match=match):
            Shard.from_bytes(buf.getvalue(), "bad.npz")

    good = dict(shard.arrays)
    refused({k: v for k, v in good.items() if k != "policy"}, "missing")
    refused({**good, "obs": good["obs"].copy() * np.nan}, "NaN")
    bad_action = good["action"].copy()
    bad_action[0] = np.flatnonzero(~good["mask"][0])[0]
    refused({**good, "action": bad_action}, "legal")
    refused({**good, "policy": good["policy"] * 2}, "sum")
    refused({**good, "obs": np.array([object()] * len(good["obs"]))}, "unreadable|pickle")
    with pytest.raises(ShardError, match="not a NumPy archive"):
        Shard.from_bytes(b"not a zip", "junk.npz")
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("obs.npy", b"\0" * (1 << 24))
    from tarocchi_rl.expert import shards

    old, shards.MAX_EXPANDED_BYTES = shards.MAX_EXPANDED_BYTES, 1 << 20
    try:
        with pytest.raises(ShardError, match="expand"):
            Shard.from_bytes(bomb.getvalue(), "bomb.npz")
    finally:
        shards.MAX_EXPANDED_BYTES = old


def test_the_loss_moves_the_network_to_the_search_and_its_parts_are_named(french3_labels):
    cfg, out = french3_labels
    spec = get_variant("french3")
    torch.manual_seed(0)
    net = build_network(cfg.train_config(), spec.obs_dim, spec.n_actions)
    arrays = Shard.from_arrays(out["shard"]).arrays
    batch = to_tensors(arrays, np.arange(len(arrays["outcome"])), torch.device("cpu"))
    _, before = expert_loss(net, batch, cfg.learn, cfg.belief_loss)
    assert set(before) == {"kl", "value_loss", "belief"} and float(before["kl"]) >= -1e-5
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    cfg.learn.epochs, cfg.learn.minibatch_size = 30, 64
    train_round(net, opt, arrays, cfg.learn, torch.Generator().manual_seed(0), torch.device("cpu"), cfg.belief_loss)
    _, after = expert_loss(net, batch, cfg.learn, cfg.belief_loss)
    assert float(after["kl"]) < 0.8 * float(before["kl"])
    assert float(after["value_loss"]) < float(before["value_loss"])
    cfg.learn.ppo_coef = 0.5
    _, with_pg = expert_loss(net, batch, cfg.learn, cfg.belief_loss)
    assert "pg_loss" in with_pg and torch.isfinite(with_pg["pg_loss"])


def test_the_replay_buffer_keeps_the_newest_samples():
    def shard(n, tag):
        a = {k: np.zeros((n, *([2] if shape else [])), dt) for k, (dt, shape) in FIELDS.items()}
        a["mask"][:, 0], a["policy"][:, 0], a["behaviour"][:] = True, 1.0, 1.0
        a["outcome"][:] = tag
        return Shard.from_arrays(a)

    buf = ReplayBuffer(10)
    for tag, n in enumerate((4, 4, 4)):
        buf.add(shard(n, tag))
    assert len(buf) == 10
    assert list(buf.arrays()["outcome"]) == [0, 0, 1, 1, 1, 1, 2, 2, 2, 2]


def test_a_run_stops_and_resumes_from_its_carry_directory_on_another_machine(tmp_path, capsys):
    cfg = _config(tmp_path, "french3", "max_rounds=1", "carry_every_minutes=0")
    result = start(cfg, tmp_path / "run", carry=tmp_path / "carry", progress=False)
    assert result["rounds"] == 1
    carry = tmp_path / "carry"
    assert sorted(p.name for p in carry.iterdir()) == ["config.yaml", "log.jsonl", RESUME_FILE]
    first = json.loads((carry / "log.jsonl").read_text().splitlines()[0])
    for key in ("targets_per_s", "train_samples_per_s", "vs_previous", "vs_search", "kept", "minutes", "by_kind"):
        assert key in first
    # a new machine: only what is committed (the carry directory) survives
    moved = tmp_path / "elsewhere" / "carry"
    shutil.copytree(carry, moved)
    shutil.rmtree(tmp_path / "run")
    out = resume(moved, tmp_path / "run2", carry=moved, overrides={"max_rounds": 2}, progress=False)
    assert out["rounds"] == 2
    rounds = [json.loads(line)["round"] for line in (moved / "log.jsonl").read_text().splitlines()]
    assert rounds == [1, 2]
    data = load_resumable(moved)
    assert data["expert"]["round"] == 2
    # the carried state is a PPO checkpoint of the best network (ppo:, export, init= read it)
    net = load_network(moved / RESUME_FILE).net
    assert net.obs_dim == get_variant("french3").obs_dim
    assert (tmp_path / "run2" / "checkpoints" / "best.pt").is_file()
    assert len(list((tmp_path / "run2" / "shards").glob("*.npz"))) >= 1


def test_a_run_resumed_where_it_ran_reloads_its_buffer_and_a_short_buffer_only_labels(tmp_path):
    """Resumed in its own directory, the buffer comes back from the shard files of the completed rounds (a shard of
    a later round, or a damaged one, is left out); with learn.min_buffer above what the buffer holds, a round labels
    and neither trains nor gates (the learner and the best network unchanged)."""
    from tarocchi_rl.expert.run import ExpertRun

    cfg = _config(tmp_path, "french3", "max_rounds=1")
    start(cfg, tmp_path / "run", progress=False)
    shards = sorted((tmp_path / "run" / "shards").glob("*.npz"))
    held = sum(len(Shard.read(f)) for f in shards)
    assert held > 0
    (tmp_path / "run" / "shards" / "round_00002_w0.npz").write_bytes(shards[0].read_bytes())  # not completed
    (tmp_path / "run" / "shards" / "round_00001_w9.npz").write_bytes(b"not a shard")
    data = load_resumable(tmp_path / "run")
    run = ExpertRun(cfg, tmp_path / "run", None, None, False)
    run.restore(data)
    assert run.reload_shards() == held
    learner = {k: v.clone() for k, v in run.net.state_dict().items()}
    out = resume(tmp_path / "run", overrides={"max_rounds": 2, "learn.min_buffer": 100000}, progress=False)
    assert out["rounds"] == 2 and out["kept"] == data["expert"]["kept"]
    last = json.loads((tmp_path / "run" / "log.jsonl").read_text().splitlines()[-1])
    assert last["filling"] is True and last["kept"] is False and "vs_previous" not in last, last
    after = load_resumable(tmp_path / "run")["expert"]["learner"]
    assert all(torch.equal(after[k], learner[k]) for k in learner)  # no training while the buffer fills


def test_resume_keeps_the_config_but_its_stopping_rules(tmp_path):
    cfg = _config(tmp_path, "piedmont3", "max_rounds=1")
    start(cfg, tmp_path / "run", progress=False)
    with pytest.raises(ConfigError, match="keeps its config"):
        resume(tmp_path / "run", overrides={"learn.buffer": 10}, progress=False)
    resume(tmp_path / "run", overrides={"max_rounds": 2, "learn.lr": 0.003}, progress=False)  # from the next round
    rounds = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert [(r["round"], r["lr"]) for r in rounds] == [(1, cfg.learn.lr), (2, 0.003)]
    assert load_resumable(tmp_path / "run")["expert"]["optimizer"]["param_groups"][0]["lr"] == 0.003
    with pytest.raises(CheckpointError, match="no resume.pt"):
        resume(tmp_path / "nothing", progress=False)
    ppo = tmp_path / "ppo.pt"
    make_checkpoint(ppo, "piedmont3")
    with pytest.raises(CheckpointError, match="not a resumable"):
        load_resumable(ppo)


def test_a_carried_state_of_the_largest_network_fits_in_ten_megabytes(tmp_path):
    from tarocchi_rl.expert.run import ExpertRun
    from tarocchi_rl.rl.checkpoint import save_checkpoint

    biggest = max(("mineo", "piedmont3", "piedmont4", "french3", "french4", "tarok3", "tarok4"),
                  key=lambda v: get_variant(v).obs_dim * 256 + 256 * get_variant(v).deck.n_cards * 5)
    cfg = load_expert_config(None, [f"variant={biggest}", f"init=bot:{biggest}", "belief_loss=1.0"])
    run = ExpertRun(cfg, tmp_path / "run", None, None, False)
    x = torch.zeros(8, get_variant(biggest).obs_dim)
    run.net(x, torch.ones(8, get_variant(biggest).n_actions, dtype=torch.bool))[0].sum().backward()
    run.opt.step()  # Adam's moments exist
    save_checkpoint(tmp_path / "resume.pt", run.state())
    assert (tmp_path / "resume.pt").stat().st_size < 10 * 2**20
    back = load_checkpoint(tmp_path / "resume.pt")
    run.restore(back)  # the compact moments load back


@pytest.mark.parametrize("args, message", [
    (["expert", "--out", "X"], "needs --config"),
    (["expert", "--config", "configs/expert_french3.yaml", "--out", "{tmp}/o", "--set", "search.leaf=magic"],
     "search.leaf"),
    (["expert", "--config", "configs/expert_french3.yaml", "--out", "{tmp}/o", "--set", "search.budget.play=-1"],
     "search.budget.play"),
    (["expert", "--resume", "{tmp}/none"], "no resume.pt"),
])
def test_bad_expert_runs_are_one_line_errors(tmp_path, capsys, args, message):
    code = main([a.replace("{tmp}", str(tmp_path)) for a in args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_every_variant_has_an_expert_config_that_validates():
    from pathlib import Path

    from tarocchi_rl.variants import VARIANTS

    for v in VARIANTS:
        cfg = load_expert_config(Path("configs") / f"expert_{v}.yaml")
        assert isinstance(cfg, ExpertConfig) and cfg.variant == v and cfg.init == f"bot:{v}"


def test_deals_are_split_evenly_over_workers():
    assert split_deals(10, 3) == [4, 3, 3] and sum(split_deals(7, 7)) == 7 and split_deals(1, 2) == [1, 0]
