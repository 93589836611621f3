"""A policy with a belief head exports ``belief.onnx`` (the seat's observation its only input; listed in the manifest;
its beliefs in the golden positions, checked at export); the ONNX runtime loads it and checks it; the bot protocol
answers ``want: ["beliefs"]`` with the unseen cards' locations by absolute seat."""

import json
import shutil

import numpy as np
import onnx
import pytest
import torch

from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.bot import BotServer
from tarocchi_rl.game import make
from tarocchi_rl.policies.belief import location_names, unseen_cards
from tarocchi_rl.policies.onnx_policy import BELIEF_FILE, ManifestMismatchError, OnnxAgent, OnnxPolicyError
from tarocchi_rl.rl.checkpoint import save_checkpoint
from tarocchi_rl.rl.config import load_config
from tarocchi_rl.rl.export import TOLERANCE, export_policy
from tarocchi_rl.rl.network import build_network, load_network
from tarocchi_rl.variants import get_variant
from tarocchi_rl.views import Views, seat_request

VARIANT = "french3"  # three seats: relative and absolute seat names differ for every seat but 0


def _belief_checkpoint(path):
    """A fresh network with a belief head (scaled up: beliefs far from uniform), saved as a checkpoint."""
    cfg = load_config(None, [f"variant={VARIANT}", "network.hidden=[32]", "belief_loss=1.0"])
    spec = get_variant(VARIANT)
    torch.manual_seed(0)
    net = build_network(cfg, spec.obs_dim, spec.n_actions)
    with torch.no_grad():
        net.belief.weight.mul_(300.0)
        net.belief.bias.copy_(4 * torch.randn(net.belief.bias.shape))
    save_checkpoint(path, {"config": cfg.to_dict(), "model": net.state_dict(), "update": 0, "samples": 0,
                           "decisions": 0, "minutes": 0.0, "workers": []})
    return path


@pytest.fixture(scope="module")
def belief_bot(tmp_path_factory):
    ckpt = _belief_checkpoint(tmp_path_factory.mktemp("ckpt") / "final.pt")
    out = tmp_path_factory.mktemp("bots") / "belief-bot"
    export_policy(ckpt, out, eval_deals=0, golden=40)
    return ckpt, out


def test_the_export_writes_and_lists_the_belief_model(belief_bot):
    ckpt, out = belief_bot
    spec = get_variant(VARIANT)
    c, n_loc = spec.deck.n_cards, spec.n_players + 2
    manifest = json.loads((out / "manifest.json").read_text())
    entry = manifest["belief"]
    assert entry["file"] == BELIEF_FILE and (out / BELIEF_FILE).is_file()
    assert entry["locations"] == list(location_names(spec.n_players)) == ["seat+0", "seat+1", "seat+2", "stock",
                                                                          "discard"]
    assert entry["outputs"][0]["shape"] == ["N", c, n_loc]
    check = manifest["verification"]["beliefs"]
    assert check["positions"] == 40 and check["max_abs_belief_diff"] <= TOLERANCE
    model = onnx.load(out / BELIEF_FILE)
    weights = {w.name for w in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in weights]
    assert inputs == ["obs"]  # the seat-view-only guarantee: no mask, no hidden card
    assert [o.name for o in model.graph.output] == ["beliefs"]
    golden = [json.loads(line) for line in (out / "golden.jsonl").read_text().splitlines()]
    assert all(len(g["beliefs"]) == c * n_loc for g in golden)
    assert "belief.onnx" in (out / "README.md").read_text()
    # the torch network's beliefs on the golden positions, far from uniform
    net = load_network(ckpt).net
    obs = np.array([g["obs"] for g in golden], np.float32)
    want = net.beliefs(torch.from_numpy(obs)).detach().numpy()
    np.testing.assert_allclose(np.array([g["beliefs"] for g in golden]).reshape(want.shape), want, atol=1e-6)
    assert want.max() > 0.8


def test_the_runtime_loads_the_belief_model(belief_bot):
    ckpt, out = belief_bot
    agent = OnnxAgent(out)
    assert agent.has_beliefs
    spec = get_variant(VARIANT)
    golden = [json.loads(line) for line in (out / "golden.jsonl").read_text().splitlines()]
    obs = np.array([g["obs"] for g in golden], np.float32)
    got = agent.beliefs(obs)
    assert got.shape == (len(obs), spec.deck.n_cards, spec.n_players + 2) and got.dtype == np.float32
    np.testing.assert_allclose(got.reshape(len(obs), -1), np.array([g["beliefs"] for g in golden]), atol=TOLERANCE)
    np.testing.assert_allclose(got.sum(-1), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="belief model expects"):
        agent.beliefs(obs[:, :10])


def test_a_bot_without_a_head_has_no_belief_model(bot):
    manifest = json.loads((bot / "manifest.json").read_text())
    assert manifest["belief"] is None and not (bot / BELIEF_FILE).exists()
    agent = OnnxAgent(bot)
    assert not agent.has_beliefs
    with pytest.raises(ValueError, match="no belief model"):
        agent.beliefs(np.zeros((1, agent.obs_dim), np.float32))
    assert "beliefs" not in BotServer(f"onnx:{bot}", make_agent).capabilities()


def test_a_damaged_belief_model_is_refused(belief_bot, tmp_path):
    _, out = belief_bot
    d = tmp_path / "bad"
    shutil.copytree(out, d)
    shutil.copy(d / "policy.onnx", d / BELIEF_FILE)  # a model that reads the mask too
    with pytest.raises(OnnxPolicyError, match=r"belief.onnx: inputs \['obs', 'mask'\], expected exactly \['obs'\]"):
        OnnxAgent(d)
    (d / BELIEF_FILE).unlink()
    with pytest.raises(OnnxPolicyError, match="belief.onnx not found"):
        OnnxAgent(d)
    shutil.copy(out / BELIEF_FILE, d / BELIEF_FILE)
    manifest = json.loads((out / "manifest.json").read_text())
    for entry, error in (({**manifest["belief"], "file": "../policy.onnx"}, "field belief must be null or"),
                         ({**manifest["belief"], "locations": ["a", "b"]}, "field belief.locations"),
                         ("belief.onnx", "field belief must be null or")):
        (d / "manifest.json").write_text(json.dumps({**manifest, "belief": entry}))
        with pytest.raises((OnnxPolicyError, ManifestMismatchError), match=error):
            OnnxAgent(d)


def test_re_export_replaces_a_belief_bot(belief_bot, tmp_path, checkpoint):
    ckpt, out = belief_bot
    d = tmp_path / "again"
    export_policy(ckpt, d, eval_deals=0, golden=4)
    export_policy(ckpt, d, eval_deals=0, golden=4)  # a previous export with belief.onnx is replaced
    assert (d / BELIEF_FILE).is_file()


def test_the_protocol_answers_beliefs_for_the_unseen_cards(belief_bot):
    _, out = belief_bot
    server = BotServer(f"onnx:{out}", make_agent)
    assert "beliefs" in server.handle('{"type": "hello"}')["capabilities"]
    agent = OnnxAgent(out)
    spec = get_variant(VARIANT)
    g = make(VARIANT)
    v = Views(g, np.random.default_rng(5).permutation(g.deck.n_cards).tolist())
    asked = 0
    while not v.is_terminal():
        seat = v.current_player()
        env = v.state._env
        obs = env.observe(np.array([seat]))
        if asked < 12 and v.state.phase in ("bid", "discard", "play"):
            req = {"type": "act", "id": asked, **seat_request(v, seat), "want": ["beliefs"]}
            ans = server.handle(json.dumps(req))
            assert ans["type"] == "action", ans
            beliefs = ans["beliefs"]
            unseen = unseen_cards(obs, spec)[0]
            assert set(beliefs) == {spec.deck.names[c] for c in np.flatnonzero(unseen)}
            assert not set(beliefs) & set(req["hand"])  # never the seat's own cards
            want = agent.beliefs(obs)[0]
            for name, locs in beliefs.items():
                c = spec.deck.names.index(name)
                assert set(locs) == {"seat0", "seat1", "seat2", "stock", "discard"}
                assert abs(sum(locs.values()) - 1) < 1e-4
                for r in range(spec.n_players):  # relative seat r of the model is absolute seat (seat + r) % N
                    assert abs(locs[f"seat{(seat + r) % spec.n_players}"] - want[c, r]) < 1e-5
                assert abs(locs["stock"] - want[c, spec.n_players]) < 1e-5
            assert len(json.dumps(ans)) < 20_000  # bounded: C x L numbers at most
            asked += 1
        v.apply(int(make_agent("heuristic").act(obs, env.legal_mask()[:1], env, np.array([0]))[0]))
    assert asked == 12


def test_the_protocol_refuses_beliefs_from_a_bot_without_them(bot):
    g = make("mineo")
    v = Views(g, np.random.default_rng(1).permutation(g.deck.n_cards).tolist())
    req = {"type": "act", **seat_request(v, v.current_player()), "want": ["beliefs"]}
    ans = BotServer(f"onnx:{bot}", make_agent).handle(json.dumps(req))
    assert ans["type"] == "error" and "beliefs" in ans["error"] and "capabilities" in ans["error"]
