"""``tarocchi-rl export`` and the ``onnx:DIR`` agent: the bot directory (ONNX model, manifest, golden positions,
model card), the agent against torch (probabilities, greedy actions over 10,000 arena decisions), play without
torch, and the refusals (manifest mismatches, damaged files, bad CLI input), each in one line."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest

from tarocchi_rl.agents.specs import make_agent, split_agent_specs
from tarocchi_rl.arena import run_arena
from tarocchi_rl.cli import main
from tarocchi_rl.policies.onnx_policy import (
    MANIFEST_FORMAT,
    ManifestMismatchError,
    OnnxAgent,
    OnnxPolicyError,
    engine_facts,
    layout_fingerprint,
    observation_layout,
)
from tarocchi_rl.rl.export import ExportError, export_policy, read_golden
from tarocchi_rl.rl.policy import PPOAgent
from tarocchi_rl.variants import get_variant
from tarocchi_rl.variants.phases import PHASE_NAMES
from tests.support.no_torch import NO_TORCH

ROOT = Path(__file__).resolve().parents[2]


def _manifest(bot):
    return json.loads((bot / "manifest.json").read_text())


# -- the directory --------------------------------------------------------------------------------------------
def test_export_writes_a_self_describing_bot(bot, checkpoint):
    assert sorted(p.name for p in bot.iterdir()) == ["README.md", "golden.jsonl", "manifest.json", "policy.onnx"]
    m = _manifest(bot)
    spec = get_variant("mineo")
    assert m["format"] == MANIFEST_FORMAT and m["variant"] == "mineo" and m["options"] == {"early_solo": True}
    assert m["obs_dim"] == spec.obs_dim == sum(s["size"] for s in m["observation_layout"])
    assert m["observation_layout"][0] == {"name": "hand", "offset": 0, "size": 63}
    assert m["layout_fingerprint"] == layout_fingerprint(observation_layout(spec))
    assert m["num_actions"] == len(m["actions"]) == spec.n_actions
    assert m["actions"][0] == "play:" + spec.deck.names[0] and m["actions"][-1] == "rivanto"
    assert [i["name"] for i in m["inputs"]] == ["obs", "mask"] and [o["name"] for o in m["outputs"]] == ["probs",
                                                                                                      "value"]
    assert m["network"]["hidden"] == [64, 64] and m["network"]["activation"] == "relu"
    prov = m["provenance"]
    assert prov["config"]["variant"] == "mineo" and prov["update"] == 0 and prov["samples"] == 0
    assert len(prov["checkpoint_sha256"]) == 64 and "git_commit" in prov and prov["tarocchi_rl_version"]
    for opp in ("heuristic", "random"):
        e = m["evaluation"]["opponents"][opp]
        assert e["deals"] == 4 and e["ci95"][0] <= e["mean_payoff_per_deal"] <= e["ci95"][1]
    assert m["verification"]["max_abs_prob_diff"] <= 1e-5
    card = (bot / "README.md").read_text()
    for heading in ("## What it plays", "## How strong", "## How it was trained", "## What it cannot do",
                    "## How to load it"):
        assert heading in card
    assert "| heuristic |" in card and "onnx:THIS_DIR" in card
    # this checkpoint was saved without the trainer's sources: the card says so rather than guess
    assert prov["training_sources"] is None and "training commit not recorded; exported from commit" in card


def test_the_model_card_names_the_commits_that_trained_the_bot(bot):
    from tarocchi_rl.rl.export import model_card

    m = json.loads((bot / "manifest.json").read_text())
    m["provenance"]["training_sources"] = [{"from_update": 0, "git_commit": "a" * 40, "git_dirty": False},
                                           {"from_update": 700, "git_commit": "b" * 40, "git_dirty": True}]
    card = model_card(m)
    assert f"trained from commit {'a' * 12}, then {'b' * 12} (with uncommitted changes) from update 700" in card
    assert "from the weights of" not in card
    m["provenance"]["config"]["init"] = "runs/first/checkpoints/latest.pt"  # a run continued from other weights
    assert "from the weights of `runs/first/checkpoints/latest.pt` (config `init`), then" in model_card(m)


def test_the_model_card_names_the_fixed_opponent_of_the_league(bot):
    from tarocchi_rl.rl.export import model_card

    m = json.loads((bot / "manifest.json").read_text())
    m["provenance"]["config"]["league"].update(opponent="bot:mineo", heuristic_share=0.4)
    assert "the fixed opponent `bot:mineo` (0.4) and past snapshots" in model_card(m)


def test_onnx_model_passes_the_checker_with_a_dynamic_batch(bot):
    model = onnx.load(str(bot / "policy.onnx"))
    onnx.checker.check_model(model, full_check=True)
    ins = {i.name: i.type.tensor_type for i in model.graph.input}
    outs = {o.name: o.type.tensor_type for o in model.graph.output}
    assert set(ins) == {"obs", "mask"} and set(outs) == {"probs", "value"}
    assert ins["obs"].elem_type == onnx.TensorProto.FLOAT and ins["mask"].elem_type == onnx.TensorProto.BOOL
    assert [d.dim_value for d in ins["obs"].shape.dim][1:] == [858]
    for t in (*ins.values(), *outs.values()):
        assert t.shape.dim[0].dim_param and not t.shape.dim[0].dim_value  # the batch axis is symbolic
    assert len(outs["value"].shape.dim) == 1
    assert {p.key: p.value for p in model.metadata_props}["format"] == MANIFEST_FORMAT


def test_golden_positions_cover_every_phase(bot):
    obs, mask, probs, recs = read_golden(bot / "golden.jsonl")
    assert len(recs) >= 256 and obs.shape == (len(recs), 858) and mask.shape == probs.shape == (len(recs), 131)
    phases = {r["phase"] for r in recs}
    # Mineo's six decision phases, each well represented
    assert phases == {"early", "auction", "discard", "scommessa", "rivanto", "play"}
    assert min(sum(r["phase"] == p for r in recs) for p in phases) >= 256 // 6 - 1
    assert (probs[~mask] == 0).all() and np.allclose(probs.sum(axis=1), 1, atol=1e-5)
    rules = get_variant("mineo").rules
    for r in recs:
        assert r["mask"][r["greedy_id"]] == 1 and r["greedy_id"] == int(np.argmax(r["probs"]))
        assert r["greedy_action"] == rules.action_to_string(r["greedy_id"], PHASE_NAMES.index(r["phase"]))


# -- the agent against torch ----------------------------------------------------------------------------------
def test_probabilities_match_torch_on_the_golden_positions(bot, checkpoint):
    obs, mask, probs, recs = read_golden(bot / "golden.jsonl")
    agent = make_agent(f"onnx:{bot}")
    got = agent.probabilities(obs, mask)
    assert got.dtype == np.float32 and got.shape == probs.shape
    np.testing.assert_allclose(got, probs, rtol=0, atol=1e-5)  # the torch values stored at export
    ppo = PPOAgent(path=str(checkpoint))
    np.testing.assert_allclose(got, ppo.probabilities(obs, mask), rtol=0, atol=1e-5)  # torch, now
    values = agent.value(obs, mask)
    assert values.shape == (len(recs),)
    np.testing.assert_allclose(values, [r["value"] for r in recs], rtol=0, atol=1e-5)
    assert (agent.act(obs, mask) == [r["greedy_id"] for r in recs]).all()


class _Both:
    """Asks the onnx and the ppo agent on every decision and counts the agreements (plays ppo's action)."""

    name = "onnx+ppo"
    needs_obs = True
    needs_mask = True

    def __init__(self, onnx_agent, ppo_agent):
        self.onnx, self.ppo = onnx_agent, ppo_agent
        self.decisions = self.same = 0

    def act(self, obs, mask, env, idx):
        a, b = self.onnx.act(obs, mask, env, idx), self.ppo.act(obs, mask, env, idx)
        self.decisions += len(a)
        self.same += int((a == b).sum())
        return b


def test_greedy_actions_equal_ppo_over_10000_arena_decisions(bot, checkpoint):
    both = _Both(make_agent(f"onnx:{bot}"), make_agent(f"ppo:{checkpoint}"))
    run_arena("mineo", [both, "heuristic", "random"], deals=30, seed=3, progress=False, make_agent=make_agent)
    assert both.decisions >= 10_000
    assert both.same == both.decisions


def test_sampling_follows_the_probabilities_and_the_seed(bot):
    obs, mask, probs, recs = read_golden(bot / "golden.jsonl")
    row = int(np.argmax([(np.array(r["probs"]) > 0.05).sum() for r in recs]))  # a row with several likely moves
    k = 20_000
    agent = make_agent(f"onnx:{bot},greedy=false,seed=5")
    acts = agent.act(np.repeat(obs[row : row + 1], k, 0), np.repeat(mask[row : row + 1], k, 0))
    assert mask[row, acts].all()
    freq = np.bincount(acts, minlength=mask.shape[1]) / k
    assert np.abs(freq - probs[row]).max() < 0.02
    again = make_agent(f"onnx:{bot},greedy=false,seed=5").act(np.repeat(obs[row : row + 1], k, 0),
                                                               np.repeat(mask[row : row + 1], k, 0))
    assert (acts == again).all()


def test_spec_options_and_threads(bot):
    a = make_agent(f"onnx:{bot}")
    assert a.greedy and a.threads == 1 and a.session.get_session_options().intra_op_num_threads == 1
    b = make_agent(f"onnx:path={bot},threads=2,greedy=false,seed=3")
    assert not b.greedy and b.session.get_session_options().intra_op_num_threads == 2
    assert split_agent_specs(f"onnx:{bot},threads=2,heuristic") == [f"onnx:{bot},threads=2", "heuristic"]
    for spec, msg in (("onnx:", "needs a bot directory"), (f"onnx:{bot},fast=1", "unknown argument 'fast'"),
                      (f"onnx:{bot},threads=0", "threads must be >= 1"), (f"onnx:{bot},seed=x", "seed must be an "
                      "integer"), (f"onnx:{bot},greedy=maybe", "greedy must be true or false")):
        with pytest.raises(ValueError, match=msg):
            make_agent(spec)


def test_the_agent_refuses_another_game(bot):
    with pytest.raises(ValueError, match="trained on mineo, not french3"):
        run_arena("french3", [f"onnx:{bot}", "heuristic"], deals=1, progress=False, make_agent=make_agent)
    with pytest.raises(ValueError, match="trained with options"):
        run_arena("mineo", [f"onnx:{bot}", "heuristic"], deals=1, options={"early_solo": False}, progress=False,
                  make_agent=make_agent)


# -- without torch --------------------------------------------------------------------------------------------
PLAY = """
import json, sys
try:
    import torch  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("torch could be imported")
from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.arena import run_arena
from tarocchi_rl.cli import main

bot = sys.argv[1]
r = run_arena("mineo", [f"onnx:{bot}", "heuristic"], deals=3, seed=1, progress=False, make_agent=make_agent)
agent = make_agent(f"onnx:{bot}")
assert main(["eval", "--variant", "mineo", "--agents", f"onnx:{bot},random", "--deals", "2", "--json"]) == 0
loaded = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
assert not loaded, loaded
print("games", r["games"])
"""


def test_the_onnx_agent_plays_where_torch_cannot_be_imported(bot, tmp_path):
    (tmp_path / "sitecustomize.py").write_text(NO_TORCH)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(PLAY), str(bot)], capture_output=True, text=True,
                       env=env, cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "games 42" in p.stdout  # 3 deals x 14 seatings
    assert '"deals": 2' in p.stdout  # the eval command's JSON


# -- refusals -------------------------------------------------------------------------------------------------
def _copy(bot, tmp_path, **changes):
    d = tmp_path / "copy"
    shutil.copytree(bot, d)
    m = _manifest(d)
    for k, v in changes.items():
        if v is None:
            del m[k]
        else:
            m[k] = v
    (d / "manifest.json").write_text(json.dumps(m))
    return d


def _mismatch(bot, tmp_path, field, **changes):
    d = _copy(bot, tmp_path, **changes)
    with pytest.raises(ManifestMismatchError) as e:
        OnnxAgent(d)
    msg = str(e.value)
    assert f"field {field}" in msg and "\n" not in msg, msg
    shutil.rmtree(d)
    return msg


def test_manifest_mismatches_name_the_field(bot, tmp_path):
    m = _manifest(bot)
    _mismatch(bot, tmp_path, "format", format="tarocchi-policy/9")
    _mismatch(bot, tmp_path, "variant", variant="tressette")
    assert "unknown option 'nope'" in _mismatch(bot, tmp_path, "options", options={"nope": 1})
    _mismatch(bot, tmp_path, "options", options={"early_solo": "yes"})
    _mismatch(bot, tmp_path, "options", options={})  # not the resolved options
    french = engine_facts("french3")  # a consistent manifest of another variant than the engine's mineo
    _mismatch(bot, tmp_path, "obs_dim", variant="mineo", obs_dim=french["obs_dim"])
    layout = [dict(s) for s in m["observation_layout"]]
    layout[0]["size"], layout[1]["offset"] = 62, 62  # a layout the engine does not have, fingerprinted
    msg = _mismatch(bot, tmp_path, "layout_fingerprint", observation_layout=layout,
                    layout_fingerprint=layout_fingerprint(layout))
    assert "section 0" in msg
    assert "damaged" in _mismatch(bot, tmp_path, "layout_fingerprint", layout_fingerprint="0" * 64)
    _mismatch(bot, tmp_path, "num_actions", num_actions=130)
    actions = list(m["actions"])
    actions[5] = "play:XX"
    assert "at id 5" in _mismatch(bot, tmp_path, "actions", actions=actions)
    assert "missing" in _mismatch(bot, tmp_path, "actions", actions=None)
    assert issubclass(ManifestMismatchError, ValueError)


def test_damaged_directories_name_the_file(bot, tmp_path):
    with pytest.raises(OnnxPolicyError, match="bot directory .* not found"):
        OnnxAgent(tmp_path / "nowhere")
    d = _copy(bot, tmp_path)
    (d / "policy.onnx").write_bytes((bot / "policy.onnx").read_bytes()[:1000])
    with pytest.raises(OnnxPolicyError, match=r"policy.onnx is not a loadable ONNX model"):
        OnnxAgent(d)
    (d / "policy.onnx").unlink()
    with pytest.raises(OnnxPolicyError, match=r"policy.onnx not found"):
        OnnxAgent(d)
    (d / "manifest.json").write_text("{not json")
    with pytest.raises(OnnxPolicyError, match=r"manifest.json: not valid JSON"):
        OnnxAgent(d)
    (d / "manifest.json").unlink()
    with pytest.raises(OnnxPolicyError, match=r"manifest.json not found"):
        OnnxAgent(d)


def test_cli_errors_are_one_line(bot, checkpoint, tmp_path, capsys):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    cases = [
        (["export", "--agent", "heuristic", "--out", str(tmp_path / "o")], "export takes a trained policy"),
        (["export", "--agent", f"ppo:{tmp_path}/missing.pt", "--out", str(tmp_path / "o")], "not found"),
        (["export", "--agent", f"ppo:{checkpoint}", "--out", str(a_file / "o")], "is not a directory"),
        (["export", "--agent", f"ppo:{checkpoint}", "--out", str(a_file)], "exists and is not a directory"),
        (["export", "--agent", f"ppo:{checkpoint}", "--out", str(tmp_path / "full")], "is not empty"),
        (["export", "--agent", f"ppo:{checkpoint}", "--out", str(tmp_path / "o"), "--golden", "0"], "--golden"),
        (["eval", "--agents", f"onnx:{tmp_path}/nothing,random", "--deals", "1"], "not found"),
        (["eval", "--variant", "french3", "--agents", f"onnx:{bot},random", "--deals", "1"], "trained on mineo"),
    ]
    for argv, msg in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("error: ") and msg in err and err.count("\n") == 1, (argv, err)
    assert not (tmp_path / "o").exists() and (tmp_path / "full" / "notes.txt").read_text() == "mine"
    assert not list(tmp_path.glob(".*export-*"))  # no staging directory left behind


def test_reexport_replaces_a_previous_bot_and_errors_leave_it(bot, checkpoint, tmp_path):
    d = tmp_path / "again"
    shutil.copytree(bot, d)
    m = export_policy(checkpoint, d, eval_deals=0, golden=12, seed=1)
    assert m["evaluation"] is None and m["golden"]["positions"] == 12
    assert len((d / "golden.jsonl").read_text().splitlines()) == 12
    assert "Not evaluated" in (d / "README.md").read_text()
    with pytest.raises(ExportError):
        export_policy(checkpoint, d, eval_deals=-1)
    assert _manifest(d)["golden"]["positions"] == 12


def test_a_french_bot_covers_the_french_phases(tmp_path, make_ckpt):
    ck = make_ckpt(tmp_path / "f.pt", variant="french4", hidden=(32,))
    m = export_policy(ck, tmp_path / "bot", eval_deals=0, golden=256, seed=2)
    assert set(m["golden"]["phases"]) == {"bid", "discard", "chelem", "poignee", "play"}
    assert m["verification"]["max_abs_prob_diff"] <= 1e-5 and m["verification"]["greedy_agree"] == 256
    agent = OnnxAgent(tmp_path / "bot")
    r = run_arena("french4", [agent, "random"], deals=2, progress=False)
    assert r["games"] == 2 * 14


def test_the_onnx_agent_is_a_gymnasium_opponent(bot):
    gymnasium = pytest.importorskip("gymnasium")
    import tarocchi_rl.envs.gym  # noqa: F401  (registers the environments)

    env = gymnasium.make("tarocchi_rl/Mineo-v0", opponents=f"onnx:{bot}")
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        obs, reward, done, _, info = env.step(env.action_space.sample(mask=obs["action_mask"]))
    assert sum(info["payoffs"]) == 0 and reward == info["payoffs"][0]
