"""``critic: perfect``: the rollouts carry the hidden cards, the learner's critic recomputes GAE with them, its loss
is logged, its weights are checkpointed (and checked) and a resumed run continues it exactly."""

import numpy as np
import pytest
import torch

from tarocchi_rl.rl.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from tarocchi_rl.rl.config import ConfigError, load_config
from tarocchi_rl.rl.losses import gae
from tarocchi_rl.rl.network import CriticNet, build_critic, privileged_dim
from tarocchi_rl.rl.rollout import RolloutWorker
from tarocchi_rl.variants import get_variant
from tests.support.checkpoints import TINY_RUN

TINY = [*TINY_RUN, "critic=perfect"]


def _cfg(*extra):
    return load_config(None, [*TINY, *extra])


def _train(path, *extra):
    from tarocchi_rl.rl.trainer import train

    return train(_cfg(*extra), path, progress=False)


def test_config_switch():
    assert load_config(None, []).critic == "seat"  # the default until ablations say otherwise
    assert build_critic(load_config(None, [])) is None
    critic = build_critic(_cfg())
    spec = get_variant("mineo")
    assert isinstance(critic, CriticNet)
    assert critic.trunk[0].in_features == spec.obs_dim + privileged_dim(spec) == 858 + 378
    with pytest.raises(ConfigError, match="critic: must be one of seat, perfect"):
        load_config(None, ["critic=oracle"])


@pytest.mark.parametrize("variant", ["mineo", "french3"])
def test_rollouts_carry_the_hidden_cards_and_the_chains(variant):
    spec = get_variant(variant)
    seat = RolloutWorker(_cfg(f"variant={variant}", "critic=seat").to_dict()).collect()
    assert seat["hidden"].shape == (len(seat["action"]), 0)  # critic: seat: nothing extra to ship
    out = RolloutWorker(_cfg(f"variant={variant}").to_dict()).collect()
    n = len(out["action"])
    assert out["hidden"].shape == (n, privileged_dim(spec)) and out["hidden"].dtype == np.float32
    c = spec.deck.n_cards
    own_hand = next(o for o, _, name in spec.obs_rows if name == "hand")
    # relative seat 0 of the hidden hands is the decider's own hand, as its observation shows it (and, in Mineo's
    # early round, the rest of its share of the deal)
    assert (out["hidden"][:, :c] >= out["obs"][:, own_hand : own_hand + c]).all()
    assert out["hidden"][:, c : spec.n_players * c].any()  # and the others' hands, which it does not
    # the chains the learner recomputes GAE along reproduce the worker's own advantages
    adv = gae(out["reward"], out["done"], out["value"], out["next_idx"], 1.0, 0.95)
    np.testing.assert_allclose(adv, out["advantage"], atol=1e-6)
    assert out["done"].sum() > 0 and ((out["next_idx"] > np.arange(n)) | (out["next_idx"] == -1)).all()


def test_the_critic_gives_the_advantages_and_targets(tmp_path):
    from tarocchi_rl.rl.trainer import Trainer

    t = Trainer(_cfg("ppo.gae_lambda=1.0", "ppo.gamma=1.0"), tmp_path / "t", progress=False)
    try:
        batch = t.workers.sample(t._weights(), [], 0)
        adv, ret, values = t._critic_targets(batch)
        b = batch[0]
        obs, hidden = torch.from_numpy(b["obs"]), torch.from_numpy(b["hidden"])
        with torch.no_grad():
            np.testing.assert_allclose(values, t.critic(obs, hidden).numpy(), atol=1e-5)
        np.testing.assert_allclose(adv, ret - values, atol=1e-5)
        # lambda = gamma = 1: the target is the payoff at the end of the seat's chain, whatever the critic says
        final = b["reward"].copy()
        for k in range(len(final) - 1, -1, -1):
            if not b["done"][k]:
                final[k] = final[b["next_idx"][k]]
        np.testing.assert_allclose(ret, final, atol=1e-5)
        assert not np.allclose(adv, b["advantage"])  # not the seat-view value head's
    finally:
        t.workers.close()


def test_a_short_run_logs_the_critic_and_checkpoints_it(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    r = _train(tmp_path / "run", "max_updates=3", "imitation.decisions=200")
    assert r["updates"] == 3 and r["imitation"]["critic_value_loss"] > 0
    ea = EventAccumulator(str(tmp_path / "run"))
    ea.Reload()
    tags = set(ea.Tags()["scalars"])
    for t in ("loss/critic_loss", "loss/critic_grad_norm", "loss/critic_explained_variance", "loss/value_loss",
              "imitation/critic_value_loss"):
        assert t in tags, t
    assert all(np.isfinite(e.value) and e.value >= 0 for e in ea.Scalars("loss/critic_loss"))
    data = load_checkpoint(tmp_path / "run")
    spec = get_variant("mineo")
    assert data["critic"]["trunk.0.weight"].shape == (32, spec.obs_dim + privileged_dim(spec))
    assert data["critic_optimizer"]["state"]  # Adam's moments: resume continues them
    assert all(not k.startswith("critic") for k in data["model"])  # the policy network is the policy's alone
    seat = _train(tmp_path / "seat", "max_updates=1", "critic=seat")
    assert seat["updates"] == 1 and "critic" not in load_checkpoint(tmp_path / "seat")


def test_resume_continues_the_critic_exactly(tmp_path):
    from tarocchi_rl.rl.trainer import resume

    _train(tmp_path / "a", "max_updates=4")
    _train(tmp_path / "b", "max_updates=2")
    assert resume(tmp_path / "b", {"max_updates": "4"}, progress=False)["updates"] == 4
    a, b = load_checkpoint(tmp_path / "a"), load_checkpoint(tmp_path / "b")
    for part in ("model", "critic"):
        for k in a[part]:
            assert torch.equal(a[part][k], b[part][k]), (part, k)  # 2 + 2 updates == 4 updates


def test_resume_refuses_a_critic_that_is_missing_or_of_another_shape(tmp_path):
    from tarocchi_rl.rl.trainer import resume

    run = tmp_path / "r"
    _train(run, "max_updates=1")
    ck = run / "checkpoints"
    (ck / "final.pt").unlink()
    data = load_checkpoint(ck / "latest.pt")
    data.pop("path")
    bad = dict(data, critic={**data["critic"], "trunk.0.weight": torch.zeros(32, 5)})
    save_checkpoint(ck / "latest.pt", bad)
    with pytest.raises(CheckpointError, match=r"critic: .*trunk.0.weight has the shape \[32, 5\]"):
        resume(run, {"max_updates": "2"}, progress=False)
    save_checkpoint(ck / "latest.pt", {k: v for k, v in data.items() if k not in ("critic", "critic_optimizer")})
    with pytest.raises(CheckpointError, match="critic"):
        resume(run, {"max_updates": "2"}, progress=False)
