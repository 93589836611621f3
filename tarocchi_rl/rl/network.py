"""The policy/value network shared by every seat: an MLP trunk, a policy head and a value head; and the
perfect-information critic of training.

Inputs are the core's observations (float32[B, obs_dim], the variant's table in ``docs/observations.md``);
they already carry the seat, the roles (declarer, partner, contract) and the phase, so one network serves
every seat and every decision (bids, discards, commitments, card play).

``critic: perfect`` adds a :class:`CriticNet` ("perfect-training, imperfect-execution", as DouZero and
PerfectDou): an MLP on the observation and the privileged observation (every seat's hand, the stock, the
discard: :mod:`tarocchi_rl.core.obs_layout`) whose values drive GAE and the value targets. It lives only in the
trainer and its checkpoints; the policy network, which the workers, the agents, guided search and the exported
bot use, never reads the hidden cards (its own value head is still trained, on the critic's returns).

``network.kind: cards`` puts a :class:`CardEncoder` before the trunk (issue 31's network shaped for cards): each
card read by the same small layers, pooled; ``mlp`` (the default) feeds the flat observation to the trunk.

The learner's device (:func:`resolve_device`): ``device: auto`` is CUDA when torch sees a GPU, else the CPU.

``belief_loss > 0`` adds a **belief head**: a linear layer on the trunk's features giving logits float32[B, C, L] of
where each card lies (every seat's hand, relative seats, the stock, the discard: the location table of
:mod:`tarocchi_rl.policies.belief`), softmaxed over L; trained by the trainer's auxiliary cross-entropy on the
cards the seat cannot see, and exported alone as ``belief.onnx``. It reads the seat's observation only.

Illegal actions get the logit ``MASKED_LOGIT`` (a large finite negative: ``-inf`` makes NaNs in the entropy
and in gradients when a whole row is masked).
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import torch
from torch import nn

from .. import bounded
from ..core.obs_layout import card_planes
from .checkpoint import CheckpointError, load_checkpoint
from .config import ConfigError, TrainConfig, config_from_dict
from .shapes import (  # noqa: F401 (state_shapes, critic_state_shapes: re-exported for the tests and experiments)
    ShapeError,
    check_shapes,
    critic_state_shapes,
    network_beliefs,
    privileged_dim,
    state_shapes,
)

MASKED_LOGIT = -1e9


class CardEncoder(nn.Module):
    """``network.kind: cards``: obs float32[B, obs_dim] -> float32[B, 2E + R]. Each of the C cards is read as its
    P card planes (:func:`tarocchi_rl.core.obs_layout.card_planes`: in the hand, played by relative seat r, in the
    trick, ...) by two layers of width E shared by the cards; the first adds the card's own learned embedding
    ``embed`` float32[C, E] (the same as the card's one-hot through a linear layer). The cards are pooled by mean
    and by max (2E), then the R other observation entries follow. The same weights see every card: what a flat MLP
    learns card by card (a card in the trick that beats mine) is learned once here, and the embedding says which
    card it is. The layers run on [B * C, .] (an ONNX Gemm each: export keeps their weights by name)."""

    def __init__(self, plane_index: Any, rest_index: Any, n_cards: int, width: int, activation: str) -> None:
        super().__init__()
        plane_index, rest_index = torch.as_tensor(plane_index), torch.as_tensor(rest_index)
        self.n_cards, self.n_planes, self.width = n_cards, plane_index.numel() // n_cards, width
        self.register_buffer("plane_index", plane_index.long(), persistent=False)  # not weights: from the layout
        self.register_buffer("rest_index", rest_index.long(), persistent=False)
        self.embed = nn.Parameter(torch.randn(n_cards, width) * 0.1)
        self.first, self.second = nn.Linear(self.n_planes, width), nn.Linear(width, width)
        self.act = {"relu": nn.ReLU, "tanh": nn.Tanh}[activation]()
        for m in (self.first, self.second):
            nn.init.orthogonal_(m.weight, 2**0.5)
            nn.init.zeros_(m.bias)
        self.out_dim = 2 * width + rest_index.numel()

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        b, c, p, e = obs.shape[0], self.n_cards, self.n_planes, self.width
        planes = obs.index_select(1, self.plane_index).view(b, p, c).transpose(1, 2).reshape(b * c, p)
        h = self.act(self.first(planes).view(b, c, e) + self.embed)  # [B, C, E]
        h = self.act(self.second(h.reshape(b * c, e))).view(b, c, e)
        pooled = torch.cat([h.mean(dim=1), h.amax(dim=1)], dim=1)  # [B, 2E]
        return torch.cat([pooled, obs.index_select(1, self.rest_index)], dim=1)


class PolicyValueNet(nn.Module):
    """obs float32[B, obs_dim] -> (logits float32[B, n_actions], value float32[B]); with ``beliefs`` = (C, L), also a
    belief head (:meth:`belief_logits`, :meth:`beliefs`: module docstring); with ``cards`` (a :class:`CardEncoder`),
    the trunk reads the encoder's output instead of the flat observation."""

    def __init__(self, obs_dim: int, n_actions: int, hidden: Sequence[int] = (256, 256),
                 activation: str = "relu", beliefs: tuple[int, int] | None = None,
                 cards: CardEncoder | None = None) -> None:
        super().__init__()
        act = {"relu": nn.ReLU, "tanh": nn.Tanh}[activation]
        layers: list[Any] = []
        self.cards = cards
        width = obs_dim if cards is None else cards.out_dim
        for h in hidden:
            layers += [nn.Linear(width, h), act()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, n_actions)
        self.value = nn.Linear(width, 1)
        # CleanRL's initialisation: orthogonal, small policy head (near-uniform start), unit value head
        for m in self.trunk:
            if isinstance(m, nn.Linear):
                nn.init.orthogonal_(m.weight, 2**0.5)
                nn.init.zeros_(m.bias)
        nn.init.orthogonal_(self.policy.weight, 0.01)
        nn.init.zeros_(self.policy.bias)
        nn.init.orthogonal_(self.value.weight, 1.0)
        nn.init.zeros_(self.value.bias)
        self.obs_dim, self.n_actions = obs_dim, n_actions
        self.belief_shape = None if beliefs is None else (int(beliefs[0]), int(beliefs[1]))
        if self.belief_shape is not None:  # small like the policy head: near-uniform beliefs at the start
            self.belief = nn.Linear(width, self.belief_shape[0] * self.belief_shape[1])
            nn.init.orthogonal_(self.belief.weight, 0.01)
            nn.init.zeros_(self.belief.bias)

    @property
    def has_beliefs(self) -> bool:
        return self.belief_shape is not None

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """obs float32[B, obs_dim], mask bool[B, n_actions] -> masked logits [B, n_actions], value [B]."""
        logits, value, _ = self.forward_all(obs, mask, with_beliefs=False)
        return logits, value

    def forward_all(self, obs: torch.Tensor, mask: torch.Tensor, with_beliefs: bool = True,
                    heads_only: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """One trunk pass: masked logits [B, n_actions], value [B] and the belief logits [B, C, L] (None without a
        belief head or with ``with_beliefs`` false); ``heads_only``: no gradient reaches the trunk (or the card
        encoder) through them."""
        z = self.features(obs)
        if heads_only:
            z = z.detach()
        logits = torch.where(mask, self.policy(z), torch.tensor(MASKED_LOGIT, dtype=obs.dtype))
        belief = self._belief_logits(z) if with_beliefs and self.belief_shape is not None else None
        return logits, self.value(z).squeeze(-1), belief

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        """obs float32[B, obs_dim] -> the trunk's output float32[B, hidden[-1]] (through the card encoder if any)."""
        return self.trunk(obs if self.cards is None else self.cards(obs))

    def _belief_logits(self, z: torch.Tensor) -> torch.Tensor:
        assert self.belief_shape is not None
        return self.belief(z).view(z.shape[0], *self.belief_shape)

    def belief_logits(self, obs: torch.Tensor) -> torch.Tensor:
        """obs float32[B, obs_dim] -> belief logits float32[B, C, L] (a ValueError without a belief head)."""
        if self.belief_shape is None:
            raise ValueError("this network has no belief head (trained with belief_loss: 0)")
        return self._belief_logits(self.features(obs))

    def beliefs(self, obs: torch.Tensor) -> torch.Tensor:
        """obs float32[B, obs_dim] -> float32[B, C, L]: each card's probability of lying in each location."""
        return torch.softmax(self.belief_logits(obs), dim=-1)


def check_state_shapes(state: Any, cfg: TrainConfig, where: str, critic: bool = False) -> None:
    """``state`` (a checkpoint's ``model``, or a league snapshot; ``critic``: a checkpoint's ``critic``) holds exactly
    the tensors of the network (the critic) ``cfg`` describes, in their shapes: a :class:`CheckpointError` naming
    ``where`` and the first key that differs otherwise. Checked before a network is built from ``cfg`` (whose size
    :class:`TrainConfig` bounds: a small file cannot make a large network be allocated)."""
    if not isinstance(state, dict):
        raise CheckpointError(f"{where}: the weights must be a mapping of names to tensors, got {type(state).__name__}")
    found = {str(k): tuple(v.shape) if isinstance(v, torch.Tensor) else None for k, v in state.items()}
    try:
        check_shapes(found, cfg, where, critic)
    except ShapeError as e:
        raise CheckpointError(str(e)) from None


def build_network(cfg: TrainConfig, obs_dim: int, n_actions: int) -> PolicyValueNet:
    """The network a TrainConfig describes (with a belief head when ``belief_loss > 0``)."""
    cards = None
    if cfg.network.kind == "cards":
        spec = cfg.spec
        plane_index, rest_index = card_planes(spec.obs_rows, spec.deck.n_cards)
        cards = CardEncoder(plane_index, rest_index, spec.deck.n_cards, cfg.network.card_width, cfg.network.activation)
    return PolicyValueNet(obs_dim, n_actions, tuple(cfg.network.hidden), cfg.network.activation,
                          beliefs=network_beliefs(cfg), cards=cards)


def _mlp(width: int, hidden: Sequence[int], activation: str) -> tuple[nn.Sequential, int]:
    """Linear + activation layers of the given widths (CleanRL's orthogonal initialisation); the output width."""
    act = {"relu": nn.ReLU, "tanh": nn.Tanh}[activation]
    layers: list[Any] = []
    for h in hidden:
        layers += [nn.Linear(width, h), act()]
        width = h
    for m in layers:
        if isinstance(m, nn.Linear):
            nn.init.orthogonal_(m.weight, 2**0.5)
            nn.init.zeros_(m.bias)
    return nn.Sequential(*layers), width


class CriticNet(nn.Module):
    """The perfect-information critic (module docstring): (obs float32[B, obs_dim], hidden float32[B,
    privileged_dim]) -> value float32[B]. Training only: never played, never exported."""

    def __init__(self, obs_dim: int, privileged_dim: int, hidden: Sequence[int] = (256, 256),
                 activation: str = "relu") -> None:
        super().__init__()
        self.trunk, width = _mlp(obs_dim + privileged_dim, hidden, activation)
        self.value = nn.Linear(width, 1)
        nn.init.orthogonal_(self.value.weight, 1.0)
        nn.init.zeros_(self.value.bias)
        self.obs_dim, self.privileged_dim = obs_dim, privileged_dim

    def forward(self, obs: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        return self.value(self.trunk(torch.cat([obs, hidden], dim=1))).squeeze(-1)


def build_critic(cfg: TrainConfig) -> CriticNet | None:
    """The perfect-information critic a TrainConfig describes (``critic: perfect``; None for ``critic: seat``):
    the widths and activation of ``network``."""
    if cfg.critic != "perfect":
        return None
    spec = cfg.spec
    return CriticNet(spec.obs_dim, privileged_dim(spec), tuple(cfg.network.hidden), cfg.network.activation)


def resolve_device(name: str) -> torch.device:
    """The learner's device of ``device: auto | cpu | cuda`` (auto: CUDA when torch sees a GPU); a
    :class:`ConfigError` (one line) when ``cuda`` is asked for and there is none."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device: cuda asked for, but torch {torch.__version__} sees no CUDA GPU here "
                          "(use device: auto or cpu)")
    if name not in ("cpu", "cuda"):
        raise ConfigError(f"device: must be auto, cpu or cuda, got {name!r}")
    return torch.device(name)


class LoadedNetwork(NamedTuple):
    """A checkpoint's network (in eval mode), its validated config and the checkpoint's data (``load_checkpoint``)."""
    net: PolicyValueNet
    cfg: TrainConfig
    data: dict[str, Any]


ONNX_PREFIX = "net."  # export.py's wrapper names the policy network ``net``: its initializers are net.<parameter>


def onnx_initial_weights(spec: str, cfg: TrainConfig, net: nn.Module) -> dict[str, torch.Tensor]:
    """The weights of an exported bot (``spec`` = ``onnx:DIR`` or ``bot:VARIANT``, a shipped one) as a state dict of
    ``net``'s trunk, policy and value head: its manifest is checked against the engine of ``cfg.variant`` and its
    network against ``cfg.network`` before policy.onnx (at most ``MAX_MODEL_BYTES``) is parsed; every initializer's
    shape is checked against ``net``'s. No pickle: ONNX initializers are raw tensors. A :class:`CheckpointError`
    (one line) for any mismatch. The belief head (not in policy.onnx) is left as ``net`` has it."""
    import onnx
    from onnx import numpy_helper

    from ..policies.onnx_policy import (
        MAX_MODEL_BYTES,
        MODEL_FILE,
        OnnxPolicyError,
        check_manifest,
        engine_facts,
        read_manifest,
    )
    from ..shipped import bot_directory

    try:  # bot:NAME: a shipped bot by variant name (models/ in a checkout, package data in a wheel)
        directory = bot_directory(spec)
    except ValueError as e:
        raise CheckpointError(f"init: {e}") from None
    assert directory is not None  # the caller passes bot: and onnx: specs only
    try:
        manifest = read_manifest(directory)
        check_manifest(manifest, str(directory / "manifest.json"))
        facts = engine_facts(cfg.variant, cfg.options)
    except (OnnxPolicyError, ValueError) as e:
        raise CheckpointError(f"init: {e}") from None
    for key in ("variant", "options", "obs_dim", "num_actions"):
        if manifest.get(key) != facts.get(key):
            raise CheckpointError(f"init: {directory}: {key} is {manifest.get(key)!r}, the config's engine has "
                                  f"{facts.get(key)!r}")
    network = manifest.get("network") or {}
    mine = {"type": cfg.network.kind, "hidden": list(cfg.network.hidden), "activation": cfg.network.activation,
            **({"card_width": cfg.network.card_width} if cfg.network.kind == "cards" else {})}
    theirs = {k: network.get(k) for k in mine}
    if theirs != mine:
        raise CheckpointError(f"init: {directory} has the network {theirs}, the config {mine}: set network.* to "
                              f"match")
    path = directory / MODEL_FILE
    if not path.is_file() or path.stat().st_size > MAX_MODEL_BYTES:
        raise CheckpointError(f"init: {path} is missing or over {MAX_MODEL_BYTES:,} bytes")
    try:
        model = onnx.load_model_from_string(bounded.read_bytes(path, MAX_MODEL_BYTES))
    except Exception as e:  # a damaged protobuf: one line
        raise CheckpointError(f"init: {path} is not a readable ONNX model ({' '.join(str(e).split())[:120]})") from None
    state = net.state_dict()
    weights: dict[str, torch.Tensor] = {}
    for init in model.graph.initializer:
        if not init.name.startswith(ONNX_PREFIX) or init.name[len(ONNX_PREFIX):] not in state:
            continue
        name = init.name[len(ONNX_PREFIX):]
        if tuple(init.dims) != tuple(state[name].shape):
            raise CheckpointError(f"init: {path}: {name} has shape {list(init.dims)}, the network "
                                  f"{list(state[name].shape)}")
        weights[name] = torch.from_numpy(numpy_helper.to_array(init).astype("float32", copy=True))
    wanted = [k for k in state if not k.startswith("belief.")]
    missing = [k for k in wanted if k not in weights]
    if missing:
        raise CheckpointError(f"init: {path} lacks the weights {', '.join(missing[:4])}")
    return weights


def load_network(checkpoint: str | Path | dict[str, Any], variant: str | None = None) -> LoadedNetwork:
    """The network of ``checkpoint`` (a file, a run directory or already loaded data) as its config describes it.

    A :class:`CheckpointError` (one line) when the file is missing or damaged, its config invalid, it was trained on
    another variant than ``variant`` (when given), or its weights do not fit the network of its config (found
    before the network is built: :func:`check_state_shapes`)."""
    data = checkpoint if isinstance(checkpoint, dict) else load_checkpoint(checkpoint)
    try:
        cfg = config_from_dict(data["config"])
    except ConfigError as e:
        raise CheckpointError(f"checkpoint {data['path']}: its config is invalid: {e}") from None
    if variant is not None and cfg.variant != variant:
        raise CheckpointError(f"checkpoint {data['path']} was trained on {cfg.variant}, not {variant}")
    check_state_shapes(data.get("model"), cfg, f"checkpoint {data['path']}")
    spec = cfg.spec
    net = build_network(cfg, spec.obs_dim, spec.n_actions)
    try:
        net.load_state_dict(data["model"])
    except (RuntimeError, KeyError, TypeError) as e:
        raise CheckpointError(f"checkpoint {data['path']}: the weights do not fit its network {cfg.network.hidden} "
                              f"({' '.join(str(e).split())[:200]})") from None
    return LoadedNetwork(net.eval(), cfg, data)
