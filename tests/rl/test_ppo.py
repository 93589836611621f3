"""PPO: losses against hand-computed values, the config, the rollout worker, tiny training runs (TensorBoard,
checkpoints, exact resume, reproducibility), the ``ppo:PATH`` agent, and clear errors for bad input."""

import math
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from tarocchi_rl.rl.checkpoint import CheckpointError, load_checkpoint
from tarocchi_rl.rl.config import ConfigError, TrainConfig, config_from_dict, dump_config, load_config
from tarocchi_rl.rl.losses import explained_variance, gae, ppo_loss
from tarocchi_rl.rl.network import MASKED_LOGIT, PolicyValueNet
from tarocchi_rl.rl.rollout import HEURISTIC, LEARNER, RolloutWorker
from tarocchi_rl.variants import get_variant

TINY = [
    "num_envs=8", "rollout_steps=6", "num_workers=0", "async_rollouts=false", "torch_threads=1",
    "network.hidden=[32]", "ppo.minibatch_size=64", "ppo.epochs=2", "league.snapshot_every=1",
    "league.pool_size=2", "eval.every=2", "eval.deals=3", "eval.final_deals=3", "checkpoint_every=1",
    "keep_checkpoints=1", "max_minutes=0",
]


# -- losses ---------------------------------------------------------------------------------------------------
def test_gae_hand_computed():
    # two seats' chains: samples 0 -> 2 -> 3 (payoff +1) and 1 -> 4 (payoff -0.5)
    next_idx = np.array([2, 4, 3, -1, -1])
    done = np.array([False, False, False, True, True])
    reward = np.array([0, 0, 0, 1.0, -0.5], np.float32)
    value = np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32)
    adv = gae(reward, done, value, next_idx, 1.0, 0.5)
    np.testing.assert_allclose(adv, [0.4, -0.2, 0.4, 0.6, -1.0], atol=1e-6)
    adv = gae(reward, done, value, next_idx, 0.9, 1.0)
    np.testing.assert_allclose(adv, [0.71, -0.65, 0.6, 0.6, -1.0], atol=1e-6)
    # lambda = 1: the advantage is the discounted payoff minus the value (sample 0: 0.9^2 * 1 - 0.1)
    assert adv[0] == pytest.approx(0.81 - 0.1)


def test_gae_rejects_a_chain_without_end():
    with pytest.raises(ValueError):
        gae(np.zeros(2, np.float32), np.array([False, False]), np.zeros(2, np.float32), np.array([1, -1]), 1.0, 1.0)


def test_ppo_loss_hand_computed():
    logits = torch.tensor([[0.0, 0.0], [math.log(3.0), 0.0]])  # probabilities (.5, .5) and (.75, .25)
    actions = torch.tensor([0, 1])
    old_logp = torch.log(torch.tensor([0.25, 0.5]))  # ratios 2 and 0.5
    adv = torch.tensor([1.0, 1.0])
    values, returns = torch.tensor([0.5, -1.0]), torch.tensor([1.0, 1.0])
    loss, st = ppo_loss(logits, values, actions, old_logp, adv, returns, clip=0.2, value_coef=0.5,
                        entropy_coef=0.01, normalize_advantages=False)
    # policy: mean(max(-2, -1.2), max(-0.5, -0.8)) = -0.85; value: 0.5 * mean(0.25, 4) = 1.0625
    ent = (math.log(2) + (-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))) / 2
    assert st["policy_loss"] == pytest.approx(-0.85, abs=1e-6)
    assert st["value_loss"] == pytest.approx(1.0625, abs=1e-6)
    assert st["entropy"] == pytest.approx(ent, abs=1e-6)
    assert float(loss) == pytest.approx(-0.85 + 0.5 * 1.0625 - 0.01 * ent, abs=1e-6)
    assert st["approx_kl"] == pytest.approx(((1 - math.log(2)) + (-0.5 + math.log(2))) / 2, abs=1e-6)
    assert st["clip_fraction"] == 1.0


def test_ppo_loss_normalises_advantages_and_survives_masks():
    logits = torch.tensor([[0.0, 0.0, MASKED_LOGIT], [1.0, MASKED_LOGIT, MASKED_LOGIT]], requires_grad=True)
    loss, st = ppo_loss(logits, torch.zeros(2), torch.tensor([1, 0]), torch.log(torch.tensor([0.5, 1.0])),
                        torch.tensor([3.0, -1.0]), torch.zeros(2), 0.2, 0.5, 0.01)
    loss.backward()
    assert torch.isfinite(logits.grad).all() and math.isfinite(loss.item())
    assert st["entropy"] == pytest.approx(math.log(2) / 2, abs=1e-6)  # the forced row has entropy 0
    # normalised advantages (+1/sqrt(2), -1/sqrt(2)) * ratio 1: policy loss 0
    assert st["policy_loss"] == pytest.approx(0.0, abs=1e-6)


def test_explained_variance():
    assert explained_variance(np.array([1.0, 2, 3]), np.array([1.0, 2, 3])) == 1.0
    assert explained_variance(np.zeros(3), np.array([1.0, 2, 3])) == 0.0
    # residuals (0, 0, 1): variance 2/9 against 2/3
    assert explained_variance(np.array([1.0, 2, 2]), np.array([1.0, 2, 3])) == pytest.approx(2 / 3)
    assert math.isnan(explained_variance(np.zeros(3), np.ones(3)))


def test_network_masks_with_a_finite_constant():
    net = PolicyValueNet(5, 3, (8,))
    mask = torch.tensor([[True, False, True]])
    logits, value = net(torch.randn(1, 5), mask)
    assert logits[0, 1] == MASKED_LOGIT and torch.isfinite(logits).all() and value.shape == (1,)


# -- config ---------------------------------------------------------------------------------------------------
def test_config_files_load():
    for v in ("mineo", "piedmont3", "piedmont4", "french3", "french4"):
        cfg = load_config(f"configs/ppo_{v}.yaml")
        assert cfg.variant == v and cfg.num_workers >= 1
        assert cfg.payoff_scale == get_variant(v).payoff_scale  # the variant's: 10, or 100 for French Tarot


def test_from_scratch_configs_load_and_differ_from_the_default_only_as_they_say():
    """configs/scratch_V.yaml: no imitation, lr 3e-4 -> 5e-5, entropy 0.01; the rest is the default config's."""
    for v in ("mineo", "french3"):
        scratch, default = load_config(f"configs/scratch_{v}.yaml"), load_config(f"configs/ppo_{v}.yaml")
        assert scratch.imitation.decisions == 0 < default.imitation.decisions
        assert (scratch.ppo.lr, scratch.ppo.lr_end, scratch.ppo.entropy_coef) == (3e-4, 5e-5, 0.01)
        for same in ("variant", "num_envs", "rollout_steps", "network", "league", "eval", "payoff_scale"):
            assert getattr(scratch, same) == getattr(default, same), same


def test_payoff_scale_defaults_to_the_variant():
    assert load_config(None, ["variant=mineo"]).payoff_scale == 10.0
    assert load_config(None, ["variant=french3"]).payoff_scale == 100.0
    assert load_config(None, ["variant=french3", "payoff_scale=50"]).payoff_scale == 50.0
    assert load_config(None, ["payoff_scale=null"]).payoff_scale == 10.0
    assert "payoff_scale: 100.0" in dump_config(load_config(None, ["variant=french4"]))  # resolved in config.yaml
    with pytest.raises(ConfigError, match="payoff_scale: must be > 0"):
        load_config(None, ["payoff_scale=0"])


@pytest.mark.parametrize("old", ["reward_scale", "total_decisions"])
def test_the_old_key_names_are_unknown_keys(tmp_path, old):
    """The names before the renames (reward_scale: payoff_scale, total_decisions: total_samples) are read no more:
    in a config file, a --set and a config dict each is the unknown-key error naming it (and the file)."""
    unknown = f"{old}: unknown key \\(known here: .*payoff_scale.*total_samples"
    path = tmp_path / "old.yaml"
    path.write_text(f"variant: mineo\n{old}: 10\n")
    with pytest.raises(ConfigError, match=f"^{re.escape(str(path))}: {unknown}"):
        load_config(path)
    with pytest.raises(ConfigError, match=f"^{unknown}"):
        load_config(None, [f"{old}=10"])
    with pytest.raises(ConfigError, match=f"^{unknown}"):
        config_from_dict({**TrainConfig().to_dict(), old: 10})


def test_config_overrides_and_errors(tmp_path):
    cfg = load_config(None, ["ppo.lr=1e-4", "network.hidden=[64, 32]", "variant=french3", "async_rollouts=false"])
    assert cfg.ppo.lr == 1e-4 and cfg.network.hidden == [64, 32] and cfg.variant == "french3"
    assert cfg.async_rollouts is False
    bad = {
        "ppo.lrr=1": "ppo.lrr: unknown key",
        "ppo.lr=-1": "ppo.lr: must be > 0",
        "num_envs=many": "num_envs: expected an integer",
        "variant=bridge": "unknown variant 'bridge'",
        "network.hidden=12": "network.hidden: expected a list",
        "league.self_play_share=0.9": "self_play_share + heuristic_share",
        "options={angelo: 3}": "options:",
        "ppo": "expected key=value",
    }
    for ov, msg in bad.items():
        with pytest.raises(ConfigError, match=msg.replace("(", r"\(").replace("+", r"\+")):
            load_config(None, [ov])
    f = tmp_path / "c.yaml"
    f.write_text("variant: mineo\nppo: {epochs: 0}\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: ppo\.epochs: must be >= 1"):
        load_config(f)
    f.write_text("variant: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(f)
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.yaml")


# -- rollouts -------------------------------------------------------------------------------------------------
def _cfg(*extra, variant="mineo"):
    return load_config(None, [f"variant={variant}", *TINY, *extra])


def test_seatings_follow_the_league_shares():
    w = RolloutWorker(_cfg("league.self_play_share=1.0", "league.heuristic_share=0").to_dict())
    assert all((w._draw_seating() == LEARNER).all() for _ in range(20))
    w = RolloutWorker(_cfg("league.self_play_share=0", "league.heuristic_share=1.0").to_dict())
    for _ in range(50):
        s = w._draw_seating()
        assert 1 <= (s == LEARNER).sum() <= 3 and ((s == LEARNER) | (s == HEURISTIC)).all()


@pytest.mark.parametrize("variant", ["mineo", "piedmont3", "french3", "french4"])
def test_rollout_chains_end_with_the_payoffs(variant):
    cfg = _cfg("league.self_play_share=1.0", "league.heuristic_share=0", "payoff_scale=1", variant=variant)
    w = RolloutWorker(cfg.to_dict())
    out = w.collect()
    n = out["stats"]["learner_samples"]
    assert out["obs"].shape[0] == n == len(out["advantage"]) and n > 0
    assert out["mask"][np.arange(n), out["action"]].all()  # every sampled action was legal
    # gamma = 1, self-play: the returns of a deal's seats are its payoffs, which sum to zero per deal
    assert np.isfinite(out["ret"]).all()
    assert out["stats"]["all_decisions"] == n  # self-play: the learner makes every decision
    sums = out["stats"]["sums"]
    assert sums["payoff/self_play"][1] == cfg.num_envs  # one deal per game with rollout_steps < a deal
    assert abs(sums["payoff/self_play"][0]) < 1e-9  # zero-sum payoffs: the seats' mean is 0


def test_local_pool_sends_the_league_when_it_changed_and_restores_exactly():
    from tarocchi_rl.rl.workers import LocalPool, make_worker_pool

    pool = make_worker_pool(_cfg())
    assert isinstance(pool, LocalPool) and len(pool) == 1
    w = pool.workers[0]
    weights = {k: v.clone() for k, v in w.net.state_dict().items()}
    assert len(pool.sample(weights, [(5, weights)], 1)) == 1 and w.pool_ids() == [5]
    w.pool = []
    pool.sample(weights, [(5, weights)], 1)
    assert w.pool_ids() == []  # the same league version: not sent again
    pool.sample(weights, [(6, weights)], 2)
    assert w.pool_ids() == [6]
    states = pool.state_dicts()
    with pytest.raises(ValueError, match="2 worker states for 1 workers"):
        pool.load_state_dicts(states * 2)
    a = pool.sample(weights, [], 3)[0]
    pool.load_state_dicts(states)
    b = pool.sample(weights, [], 3)[0]
    for k in ("obs", "action", "logp", "advantage"):
        np.testing.assert_array_equal(a[k], b[k])


# -- training runs --------------------------------------------------------------------------------------------
def _train(tmp_path, name, *extra):
    from tarocchi_rl.rl.trainer import train

    return train(_cfg(*extra), tmp_path / name, progress=False)


def _weights(run_dir, final=True):
    data = load_checkpoint(run_dir, latest=not final)
    return data


def test_tiny_run_logs_checkpoints_and_evaluates(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    r = _train(tmp_path, "run", "max_updates=3")
    run = tmp_path / "run"
    assert r["updates"] == 3 and r["samples"] > 0 and r["decisions"] >= r["samples"]
    assert (run / "config.yaml").is_file() and (run / "checkpoints/final.pt").is_file()
    assert sorted(p.name for p in (run / "checkpoints").glob("update_*.pt")) == ["update_000002.pt"]
    ea = EventAccumulator(str(run))
    ea.Reload()
    tags = set(ea.Tags()["scalars"])
    for t in ("loss/policy_loss", "loss/value_loss", "loss/entropy", "loss/approx_kl", "loss/explained_variance",
              "perf/decisions_per_s", "returns_seat/0", "train/lr", "bids/pass", "eval/vs_heuristic/mean",
              "eval/vs_random/ci_low", "eval_final/vs_heuristic/mean"):
        assert t in tags, t
    assert "config/text_summary" in ea.Tags()["tensors"]  # the resolved config as text
    lines = (run / "eval.jsonl").read_text().splitlines()
    assert len(lines) == 2 and '"final": true' in lines[-1]
    data = load_checkpoint(run)
    assert data["update"] == 3 and len(data["pool"]) == 2  # snapshot every update, pool of 2


def test_same_seed_same_run_and_exact_resume(tmp_path):
    from tarocchi_rl.rl.trainer import resume

    _train(tmp_path, "a", "max_updates=4", "eval.every=0", "eval.final_deals=0")
    _train(tmp_path, "b", "max_updates=4", "eval.every=0", "eval.final_deals=0")
    _train(tmp_path, "c", "max_updates=2", "eval.every=0", "eval.final_deals=0")
    r = resume(tmp_path / "c", {"max_updates": "4"}, progress=False)
    assert r["updates"] == 4
    a, b, c = (load_checkpoint(tmp_path / x) for x in "abc")
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k  # reproducible from the seed
        assert torch.equal(a["model"][k], c["model"][k]), k  # 2 + 2 updates == 4 updates
    assert a["samples"] == c["samples"] and [p[0] for p in a["pool"]] == [p[0] for p in c["pool"]]
    # provenance: the commit of each start and resume (this checkout's HEAD), where the run was at each
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent)
    assert [s["from_update"] for s in a["sources"]] == [0] and [s["from_update"] for s in c["sources"]] == [0, 2]
    if head.returncode == 0:  # a git checkout
        assert {s["git_commit"] for s in c["sources"]} == {head.stdout.strip()}
    _train(tmp_path, "d", "max_updates=1", "seed=7", "eval.every=0", "eval.final_deals=0")
    d = load_checkpoint(tmp_path / "d")
    assert not all(torch.equal(a["model"][k], d["model"][k]) for k in a["model"])


def test_a_checkpoint_with_an_old_key_name_is_refused_naming_it(tmp_path):
    """A checkpoint whose config has a name from before the renames (``reward_scale``) neither builds its network
    nor resumes: a CheckpointError naming the file and the unknown key."""
    from tarocchi_rl.rl.network import load_network
    from tarocchi_rl.rl.trainer import resume
    from tests.support.checkpoints import make_checkpoint

    ck = tmp_path / "old/checkpoints/latest.pt"
    ck.parent.mkdir(parents=True)
    make_checkpoint(ck)
    data = torch.load(ck, weights_only=False)
    data["config"]["reward_scale"] = data["config"].pop("payoff_scale")
    torch.save(data, ck)
    unknown = "reward_scale: unknown key"
    with pytest.raises(CheckpointError, match=re.escape(f"checkpoint {ck}: its config is invalid: {unknown}")):
        load_network(ck)
    with pytest.raises(CheckpointError, match=re.escape(f"checkpoint {ck} holds an invalid config: {unknown}")):
        resume(tmp_path / "old", {"max_updates": "2"}, progress=False)


def test_resume_errors(tmp_path):
    from tarocchi_rl.rl.trainer import resume, train

    with pytest.raises(CheckpointError, match="no checkpoint"):
        resume(tmp_path, progress=False)
    with pytest.raises(CheckpointError, match="not found"):
        resume(tmp_path / "nowhere", progress=False)
    _train(tmp_path, "r", "max_updates=1", "eval.every=0", "eval.final_deals=0")
    with pytest.raises(ValueError, match="keeps its config"):
        resume(tmp_path / "r", {"ppo.lr": "0.1"}, progress=False)
    with pytest.raises(ValueError, match="already holds a run"):
        train(_cfg(), tmp_path / "r", progress=False)
    (tmp_path / "r/checkpoints/final.pt").unlink()  # else --resume falls back to it (test_checkpoint_integrity)
    (tmp_path / "r/checkpoints/latest.pt").write_bytes(b"\x00garbage")
    with pytest.raises(CheckpointError, match="corrupt"):
        resume(tmp_path / "r", progress=False)
    torch.save({"weights": 1}, tmp_path / "r/checkpoints/latest.pt")
    with pytest.raises(CheckpointError, match="not a tarocchi-rl PPO checkpoint"):
        resume(tmp_path / "r", progress=False)


def test_ray_workers_train(tmp_path):
    ray = pytest.importorskip("ray")
    try:
        r = _train(tmp_path, "ray", "num_workers=1", "async_rollouts=true", "max_updates=3", "eval.every=0",
                   "eval.final_deals=0")
        assert r["updates"] == 3 and r["samples"] > 0 and r["decisions_per_s"] > 0
        assert load_checkpoint(tmp_path / "ray")["workers"][0]["env_rng"].shape == (8,)  # the actor's RNG saved
    finally:
        ray.shutdown()


# -- the agent ------------------------------------------------------------------------------------------------
def test_ppo_agent_spec_in_the_arena_and_cli(tmp_path, capsys):
    import json

    from tarocchi_rl.agents.specs import make_agent, split_agent_specs
    from tarocchi_rl.arena import run_arena
    from tarocchi_rl.cli import main

    _train(tmp_path, "p", "max_updates=1", "eval.every=0", "eval.final_deals=0")
    run = tmp_path / "p"
    r = run_arena("mineo", [f"ppo:{run}", "heuristic"], deals=4, seed=1, progress=False, make_agent=make_agent)
    assert r["games"] == 4 * 14 and r["table"][0]["agent"] == f"ppo:{run}"
    assert split_agent_specs(f"ppo:{run},greedy=false,heuristic") == [f"ppo:{run},greedy=false", "heuristic"]
    assert make_agent(f"ppo:{run},greedy=false").greedy is False
    assert main(["eval", "--variant", "mineo", "--agents", f"ppo:{run},random", "--deals", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["deals"] == 2
    with pytest.raises(ValueError, match="trained on mineo, not french3"):
        run_arena("french3", [f"ppo:{run}", "heuristic"], deals=2, progress=False, make_agent=make_agent)
    for spec, msg in ((f"ppo:{tmp_path}/none", "not found"), ("ppo:", "needs a checkpoint"),
                      (f"ppo:{run},fast=1", "unknown argument")):
        with pytest.raises(ValueError, match=msg):
            make_agent(spec)
    assert main(["eval", "--variant", "mineo", "--agents", f"ppo:{tmp_path},random", "--deals", "2"]) == 2
    assert "no checkpoint" in capsys.readouterr().err


def test_train_cli_errors(tmp_path, capsys):
    from tarocchi_rl.cli import main

    assert main(["train", "--set", "ppo.nope=1", "--out", str(tmp_path / "x")]) == 2
    assert "ppo.nope: unknown key" in capsys.readouterr().err
    assert main(["train", "--resume", str(tmp_path / "missing")]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["train", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "not found" in capsys.readouterr().err


def test_default_config_is_the_documented_one():
    cfg = TrainConfig().validate()
    assert cfg.num_workers == 1 and cfg.async_rollouts and cfg.network.hidden == [256, 256]



def test_imitation_warm_start_learns_the_heuristic(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    r = _train(tmp_path, "im", "max_updates=1", "eval.every=1", "eval.final_deals=0", "num_envs=32",
               "imitation.decisions=30000", "network.hidden=[64]")
    st = r["imitation"]
    assert st["decisions"] >= 30000
    # a uniform policy agrees with the heuristic on ~1 decision in 4 (average 1 / number of legal actions)
    assert st["accuracy"] > 0.6, st
    ea = EventAccumulator(str(tmp_path / "im"))
    ea.Reload()
    assert "imitation/accuracy" in ea.Tags()["scalars"]
    first = [e.value for e in ea.Scalars("imitation/accuracy")]
    assert first[-1] > first[0]
    lines = (tmp_path / "im/eval.jsonl").read_text().splitlines()
    assert '"update": 0' in lines[0]  # the warm start's own evaluation


class _FirstLegal:
    """A teacher unlike the heuristic: the lowest legal action index (it reads the mask it is given)."""

    name = "first-legal"

    def act(self, obs, mask, env, idx):
        assert obs.shape[0] == mask.shape[0] == len(idx)
        return mask.argmax(axis=1).astype(np.int64)


def test_imitation_teacher_is_any_agent_spec(tmp_path):
    from tarocchi_rl.policies import make_baseline
    from tarocchi_rl.rl.imitation import teacher_chunks
    from tarocchi_rl.rl.trainer import train

    chunk = next(teacher_chunks(_FirstLegal(), "french3", {}, 8, 0, 1.0, 100))
    assert (chunk["action"] == chunk["mask"].argmax(axis=1)).all() and chunk["mask"].shape[0] == len(chunk["ret"])

    def factory(spec, seed):
        return _FirstLegal() if spec == "first-legal" else make_baseline(spec, seed)

    r = train(_cfg("max_updates=1", "num_envs=32", "imitation.decisions=20000", "imitation.teacher=first-legal",
                   "network.hidden=[64]"), tmp_path / "t", progress=False, agent_factory=factory)
    assert r["imitation"]["teacher"] == "first-legal" and r["imitation"]["accuracy"] > 0.9, r["imitation"]
    with pytest.raises(ValueError, match="imitation.teacher"):
        _cfg("imitation.teacher=")
    with pytest.raises(ValueError, match="unknown baseline 'nonsense'"):  # before any file of the run is written
        train(_cfg("imitation.decisions=1000", "imitation.teacher=nonsense"), tmp_path / "bad", progress=False,
              agent_factory=factory)
    assert not (tmp_path / "bad").exists()
