"""``network.kind: cards`` (issue 31, a network shaped for cards): a card encoder reads each card's planes and a
learned embedding with one small MLP shared by the cards, pooled, before the MLP trunk. Its tensors are the ones the
torch-free shape check expects, its parameter count the config's bound, it trains, and it exports to ONNX
(onnxruntime plays what torch computes) and starts a new run (``init: onnx:DIR``)."""

import numpy as np
import pytest
import torch

from tarocchi_rl.batch import BatchEnv
from tarocchi_rl.core.obs_layout import CARD_SECTIONS, card_planes
from tarocchi_rl.policies.onnx_policy import OnnxAgent
from tarocchi_rl.rl.checkpoint_file import scan_checkpoint
from tarocchi_rl.rl.config import card_encoder, load_config, network_parameters
from tarocchi_rl.rl.network import build_network, load_network
from tarocchi_rl.rl.shapes import expected_shapes, network_beliefs
from tarocchi_rl.variants import VARIANTS, get_variant
from tests.support.checkpoints import TINY_RUN

CARDS = [*TINY_RUN, "network.kind=cards", "network.card_width=8"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_card_planes_and_the_rest_split_the_observation(variant):
    spec = get_variant(variant)
    planes, rest = card_planes(spec.obs_rows, spec.deck.n_cards)
    assert sorted(np.concatenate([planes, rest]).tolist()) == list(range(spec.obs_dim))
    card_entries = sum(size for _, size, name in spec.obs_rows if name in CARD_SECTIONS)
    assert planes.size == card_entries and card_entries % spec.deck.n_cards == 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_network_has_the_tensors_and_parameters_the_config_expects(variant):
    cfg = load_config(None, [*CARDS, f"variant={variant}", "belief_loss=1.0"])
    spec = get_variant(variant)
    net = build_network(cfg, spec.obs_dim, spec.n_actions)
    assert {k: tuple(v.shape) for k, v in net.state_dict().items()} == expected_shapes(cfg)
    beliefs = int(np.prod(network_beliefs(cfg)))
    assert sum(p.numel() for p in net.parameters()) == network_parameters(
        spec.obs_dim, spec.n_actions, cfg.network.hidden, beliefs, card_encoder(spec, cfg.network))


def test_a_card_is_read_through_its_planes_and_its_embedding():
    cfg = load_config(None, [*CARDS, "variant=french3"])
    spec = get_variant("french3")
    torch.manual_seed(0)
    net = build_network(cfg, spec.obs_dim, spec.n_actions).eval()
    obs = torch.from_numpy(BatchEnv("french3", 4, seed=1).observe())
    planes, _ = card_planes(spec.obs_rows, spec.deck.n_cards)
    hand = planes[: spec.deck.n_cards]  # the first plane: the own hand
    held = [c for c in range(spec.deck.n_cards) if obs[0, hand[c]] == 1.0]
    swapped = obs.clone()  # the same hand but one card exchanged for one not held: the encoding changes
    out = next(c for c in range(spec.deck.n_cards) if c not in held)
    swapped[0, hand[held[0]]], swapped[0, hand[out]] = 0.0, 1.0
    with torch.no_grad():
        a, b = net.cards(obs), net.cards(swapped)
    assert not torch.allclose(a[0], b[0]) and torch.equal(a[1:], b[1:])


def test_it_trains_exports_and_starts_a_run(tmp_path):
    from tarocchi_rl.rl.export import export_policy
    from tarocchi_rl.rl.trainer import load_initial_weights, train

    cfg = load_config(None, [*CARDS, "variant=french3", "max_updates=2", "belief_loss=1.0", "critic=perfect"])
    train(cfg, tmp_path / "run", progress=False)
    final = tmp_path / "run" / "checkpoints" / "final.pt"
    scan = scan_checkpoint(final)
    assert scan is not None and "cards.embed" in scan.model
    loaded = load_network(final)
    export_policy(final, tmp_path / "bot", eval_deals=0, golden=8)
    env = BatchEnv("french3", 16, seed=5)
    obs, mask = env.observe(), env.legal_mask()
    with torch.no_grad():
        want = torch.softmax(loaded.net(torch.from_numpy(obs), torch.from_numpy(mask))[0], -1).numpy()
    np.testing.assert_allclose(OnnxAgent(str(tmp_path / "bot")).probabilities(obs, mask), want,
                               atol=1e-5)  # float32 kernels differ in the last bits
    again = load_config(None, [*CARDS, "variant=french3", f"init=onnx:{tmp_path / 'bot'}"])
    spec = get_variant("french3")
    net = build_network(again, spec.obs_dim, spec.n_actions)
    load_initial_weights(net, again)
    for k, v in loaded.net.state_dict().items():
        if not k.startswith("belief."):
            assert torch.equal(net.state_dict()[k], v), k
