"""Expert iteration (tarocchi_rl/expert.py): self-play samples from the guided search, the network trained on
them, checkpoints that PPO (``init``) and the guided search (``ismcts:net``) take, and its errors."""

import contextlib
import json

import numpy as np
import pytest
import torch

from tarocchi_rl.cli import main
from tarocchi_rl.expert import ReplayBuffer, expert_iteration, self_play, train_on
from tarocchi_rl.rl.checkpoint import CheckpointError, load_checkpoint
from tarocchi_rl.rl.config import load_config
from tarocchi_rl.rl.network import build_network
from tarocchi_rl.rl.trainer import load_initial_weights
from tarocchi_rl.variants import get_variant
from tests.support.checkpoints import make_checkpoint


def _checkpoint(path, variant="mineo", hidden=(32,)):
    return make_checkpoint(path, variant, hidden)


@pytest.mark.parametrize("variant", ["mineo", "french3"])
def test_self_play_samples_are_searched_decisions_with_visit_targets(tmp_path, variant):
    cfg, net = _checkpoint(tmp_path / "a.pt", variant)
    s = self_play(net, variant, {}, deals=4, iterations=6, c_puct=1.5, mix=0.0,
                  payoff_scale=get_variant(variant).payoff_scale, rng=np.random.default_rng(0))
    n = len(s["ret"])
    assert n > 4 * 10  # every searched decision of four deals
    assert s["obs"].shape == (n, get_variant(variant).obs_dim)
    assert (s["mask"].sum(axis=1) > 1).all()  # forced decisions are not samples
    assert np.allclose(s["policy"].sum(axis=1), 1.0)
    assert (s["policy"][~s["mask"]] == 0).all()  # visits only on legal actions
    assert np.isclose((s["policy"] * 6).round(), s["policy"] * 6, atol=1e-4).all()  # visit counts / iterations
    # the value targets are payoffs / payoff_scale of the deals, and the deals are zero-sum (mean over samples of
    # a zero-sum game is not zero, but every target is a multiple of 1 / payoff_scale)
    scaled = s["ret"] * get_variant(variant).payoff_scale
    assert np.allclose(scaled, scaled.round(), atol=1e-3)


def test_lazy_self_play_searches_like_the_leaderboards_guided_agent(tmp_path, monkeypatch):
    from tarocchi_rl import expert

    seen = []
    real = expert.guided_search

    def spy(*args, **kwargs):
        seen.append((kwargs["mix"], kwargs["lazy"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(expert, "guided_search", spy)
    cfg, net = _checkpoint(tmp_path / "a.pt")
    s = self_play(net, "mineo", {}, deals=3, iterations=6, c_puct=1.5, mix=1.0, payoff_scale=10.0,
                  rng=np.random.default_rng(0), lazy=True)
    assert seen and set(seen) == {(1.0, True)}
    assert np.allclose(s["policy"].sum(axis=1), 1.0) and (s["policy"][~s["mask"]] == 0).all()


def test_training_moves_the_network_towards_the_search(tmp_path):
    cfg, net = _checkpoint(tmp_path / "a.pt")
    s = self_play(net, "mineo", {}, deals=6, iterations=8, c_puct=1.5, mix=0.0, payoff_scale=10.0,
                  rng=np.random.default_rng(1))
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(0)
    first = train_on(net, opt, s, epochs=1, minibatch=256, value_coef=1.0, gen=gen)
    last = train_on(net, opt, s, epochs=20, minibatch=256, value_coef=1.0, gen=gen)
    assert last["cross_entropy"] < first["cross_entropy"] - 0.05
    assert last["value_loss"] < first["value_loss"]


def test_expert_iteration_writes_checkpoints_that_ppo_and_the_search_take(tmp_path, capsys):
    _checkpoint(tmp_path / "a.pt")
    out = tmp_path / "ex"
    assert main(["expert", "--init", str(tmp_path / "a.pt"), "--out", str(out), "--rounds", "2", "--deals", "4",
                 "--iterations", "4", "--no-progress"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rounds"] == 2 and summary["samples"] > 0
    log = [json.loads(line) for line in (out / "expert.jsonl").read_text().splitlines()]
    assert [e["round"] for e in log] == [1, 2]
    assert sum(e["samples"] for e in log) == summary["samples"]
    final = load_checkpoint(out)
    assert final["config"]["imitation"]["decisions"] == 0 and final["config"]["init"] is None
    round2 = load_checkpoint(out / "checkpoints/round_2.pt")
    assert all(torch.equal(final["model"][k], round2["model"][k]) for k in final["model"])
    # PPO starts from it
    cfg = load_config(None, ["variant=mineo", "network.hidden=[32]", f"init={out}"])
    spec = get_variant("mineo")
    net = build_network(cfg, spec.obs_dim, spec.n_actions)
    load_initial_weights(net, cfg)
    assert all(torch.equal(net.state_dict()[k], final["model"][k]) for k in final["model"])
    assert main(["train", "--set", "variant=mineo", "--set", "network.hidden=[32]", "--set", f"init={out}",
                 "--set", "num_workers=0", "--set", "max_updates=1", "--set", "num_envs=8", "--set", "eval.every=0",
                 "--set", "eval.final_deals=0", "--set", "imitation.decisions=1000", "--out", str(tmp_path / "run"),
                 "--no-progress"]) == 0
    assert "imitation" not in json.loads(capsys.readouterr().out.strip().splitlines()[-1])  # init replaces it
    # and the guided search plays with it
    assert main(["eval", "--variant", "mineo", "--agents", f"ismcts:net={out},iterations=4,heuristic",
                 "--deals", "2"]) == 0


def test_init_errors_name_the_checkpoint_and_the_mismatch(tmp_path):
    _checkpoint(tmp_path / "a.pt")
    spec = get_variant("french3")
    for sets, message in ((["variant=french3", "network.hidden=[32]"], "trained on mineo"),
                          (["variant=mineo", "network.hidden=[64]"], "does not fit the network of this config")):
        cfg = load_config(None, [*sets, f"init={tmp_path / 'a.pt'}"])
        spec = get_variant(cfg.variant)
        with pytest.raises(CheckpointError, match=message):
            load_initial_weights(build_network(cfg, spec.obs_dim, spec.n_actions), cfg)
    cfg = load_config(None, [f"init={tmp_path / 'missing.pt'}"])
    with pytest.raises(CheckpointError):
        load_initial_weights(build_network(cfg, get_variant("mineo").obs_dim, get_variant("mineo").n_actions), cfg)


@pytest.mark.parametrize("args, message", [
    (["--rounds", "0"], "rounds"),
    (["--iterations", "1e9"], "invalid int"),
    (["--lr", "nan"], "lr"),
    (["--mix", "2"], "mix"),
    (["--buffer", "-1"], "buffer"),
    (["--lazy"], "expert: --lazy: lazy priors need mix = 1"),
])
def test_bad_expert_options_are_one_line_errors(tmp_path, capsys, args, message):
    _checkpoint(tmp_path / "a.pt")
    with pytest.raises(SystemExit) if message == "invalid int" else contextlib.nullcontext():
        code = main(["expert", "--init", str(tmp_path / "a.pt"), "--out", str(tmp_path / "ex"), *args])
        assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "ex").exists()


def test_expert_refuses_a_non_empty_out_and_writes_nothing(tmp_path):
    _checkpoint(tmp_path / "a.pt")
    (tmp_path / "ex").mkdir()
    (tmp_path / "ex" / "keep.txt").write_text("x")
    with pytest.raises(ValueError, match="not an empty directory"):
        expert_iteration(str(tmp_path / "a.pt"), tmp_path / "ex", rounds=1, deals=1, iterations=1, progress=False)
    assert sorted(p.name for p in (tmp_path / "ex").iterdir()) == ["keep.txt"]


def _round(n: int, tag: float) -> dict:
    return {"obs": np.full((n, 2), tag, np.float32), "ret": np.full(n, tag, np.float32)}


def test_the_replay_buffer_keeps_the_newest_rounds_that_fit():
    buf = ReplayBuffer(10)
    buf.add(_round(4, 1.0))
    buf.add(_round(4, 2.0))
    assert len(buf) == 8 and buf.samples()["ret"].tolist() == [1.0] * 4 + [2.0] * 4  # the oldest first
    buf.add(_round(4, 3.0))  # 12 > 10: round 1 goes
    assert buf.samples()["ret"].tolist() == [2.0] * 4 + [3.0] * 4
    buf.add(_round(20, 4.0))  # the newest round is kept whole even over the capacity
    assert buf.samples()["ret"].tolist() == [4.0] * 20
    none = ReplayBuffer(0)
    none.add(_round(3, 1.0))
    none.add(_round(2, 2.0))
    assert none.samples()["ret"].tolist() == [2.0, 2.0]  # 0: this round's samples only (as before the buffer)


def test_expert_iteration_trains_on_the_buffer(tmp_path, capsys):
    _checkpoint(tmp_path / "a.pt")
    out = tmp_path / "ex"
    assert main(["expert", "--init", str(tmp_path / "a.pt"), "--out", str(out), "--rounds", "3", "--deals", "2",
                 "--iterations", "4", "--buffer", "100000", "--no-progress"]) == 0
    log = [json.loads(line) for line in (out / "expert.jsonl").read_text().splitlines()]
    assert [e["trained_on"] for e in log] == list(np.cumsum([e["samples"] for e in log]))


def test_learned_inference_in_self_play_uses_the_belief_head(tmp_path, monkeypatch):
    cfg = load_config(None, ["variant=french3", "network.hidden=[32]", "belief_loss=1.0"])
    spec = get_variant("french3")
    net = build_network(cfg, spec.obs_dim, spec.n_actions).eval()
    calls = []
    real = net.beliefs
    monkeypatch.setattr(net, "beliefs", lambda obs: calls.append(len(obs)) or real(obs))
    s = self_play(net, "french3", {}, deals=2, iterations=6, c_puct=1.5, mix=0.0,
                  payoff_scale=spec.payoff_scale, rng=np.random.default_rng(0), beliefs=True)
    assert sum(calls) == len(s["ret"]) > 0  # one belief row per searched decision
    assert np.allclose(s["policy"].sum(axis=1), 1.0) and (s["policy"][~s["mask"]] == 0).all()
    plain = build_network(load_config(None, ["variant=french3", "network.hidden=[32]"]), spec.obs_dim,
                          spec.n_actions)
    with pytest.raises(ValueError, match="belief head"):
        self_play(plain, "french3", {}, deals=1, iterations=2, c_puct=1.5, mix=0.0, payoff_scale=spec.payoff_scale,
                  rng=np.random.default_rng(0), beliefs=True)
