"""The tensors of the networks a :class:`TrainConfig` describes, by name and shape, without torch.

Read by :func:`tarocchi_rl.rl.network.check_state_shapes` (a loaded checkpoint) and by
:mod:`tarocchi_rl.rl.checkpoint_file` (a checkpoint scanned before torch is imported): a checkpoint whose
tensors are not exactly these is refused before any network is built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..core.obs_layout import build_privileged_layout
from ..policies.belief import belief_shape
from ..variants import VariantSpec
from .config import TrainConfig, card_encoder


class ShapeError(ValueError):
    """Tensors that do not fit the network of a config (the loaders re-raise it as their own error)."""


def state_shapes(obs_dim: int, n_actions: int, hidden: Sequence[int], beliefs: tuple[int, int] | None = None,
                 cards: tuple[int, int, int] | None = None) -> dict[str, tuple[int, ...]]:
    """The shape of every tensor of the ``state_dict`` of ``PolicyValueNet(obs_dim, n_actions, hidden, beliefs=...)``
    (``cards`` = (C, P, E): with the card encoder of ``network.kind: cards``), found without building it."""
    shapes: dict[str, tuple[int, ...]] = {}
    width = obs_dim
    if cards is not None:  # CardEncoder: the cards' embeddings, two layers shared by the cards
        c, p, e = cards
        shapes.update({"cards.embed": (c, e), "cards.first.weight": (e, p), "cards.first.bias": (e,),
                       "cards.second.weight": (e, e), "cards.second.bias": (e,)})
        width = 2 * e + obs_dim - p * c
    for k, h in enumerate(hidden):  # the trunk: Linear, activation, Linear, activation, ...
        shapes[f"trunk.{2 * k}.weight"], shapes[f"trunk.{2 * k}.bias"] = (h, width), (h,)
        width = h
    shapes.update({"policy.weight": (n_actions, width), "policy.bias": (n_actions,), "value.weight": (1, width),
                   "value.bias": (1,)})
    if beliefs is not None:
        outputs = beliefs[0] * beliefs[1]
        shapes.update({"belief.weight": (outputs, width), "belief.bias": (outputs,)})
    return shapes


def critic_state_shapes(obs_dim: int, privileged_dim: int, hidden: Sequence[int]) -> dict[str, tuple[int, ...]]:
    """The shape of every tensor of the ``state_dict`` of :class:`CriticNet`: a trunk on the joint input and a value
    head, named as the policy network's."""
    shapes = state_shapes(obs_dim + privileged_dim, 0, hidden)
    return {k: v for k, v in shapes.items() if not k.startswith("policy.")}


def privileged_dim(spec: VariantSpec) -> int:
    """The size of a variant's privileged observation (the critic's extra input)."""
    return int(build_privileged_layout(spec.n_players, spec.deck.n_cards)[1])


def network_beliefs(cfg: TrainConfig) -> tuple[int, int] | None:
    """The belief head's (C, L) of the network a TrainConfig describes (``belief_loss > 0``), else None."""
    return belief_shape(cfg.spec) if cfg.belief_loss > 0 else None


def expected_shapes(cfg: TrainConfig, critic: bool = False) -> dict[str, tuple[int, ...]]:
    """Every tensor of the policy network (``critic``: of the perfect-information critic) of ``cfg``."""
    spec = cfg.spec
    if critic:
        return critic_state_shapes(spec.obs_dim, privileged_dim(spec), cfg.network.hidden)
    return state_shapes(spec.obs_dim, spec.n_actions, cfg.network.hidden, network_beliefs(cfg),
                        card_encoder(spec, cfg.network))


def check_shapes(found: Mapping[str, tuple[int, ...] | None], cfg: TrainConfig, where: str,
                 critic: bool = False) -> None:
    """``found`` ({name: shape}, None for an entry that is not a tensor) is exactly the tensors of
    :func:`expected_shapes`: a :class:`ShapeError` naming ``where`` and the first key that differs otherwise."""
    shapes = expected_shapes(cfg, critic)
    kind = "" if cfg.network.kind == "mlp" else f"{cfg.network.kind} "
    unfit = f"{where}: the weights do not fit its {kind}network {cfg.network.hidden}"
    for key, shape in shapes.items():
        have = found.get(key)
        if have is None:
            raise ShapeError(f"{unfit}: {key} is missing")
        if tuple(have) != shape:
            raise ShapeError(f"{unfit}: {key} has the shape {list(have)}, the network needs {list(shape)}")
    extra = next((k for k in found if k not in shapes), None)
    if extra is not None:
        raise ShapeError(f"{unfit}: {str(extra)[:80]!r} is not one of its tensors")
