"""Beliefs: where is each card the seat cannot see? The interface between a belief model and its users (search).

**The one function.** A belief model is any callable (or an agent's ``beliefs`` method)::

    beliefs(obs: float32[B, obs_dim]) -> float32[B, C, L]

``obs`` are seat observations (the variant's layout, :mod:`tarocchi_rl.core.obs_layout`); ``out[b, c, l]`` is the
probability that card ``c`` (dense card id, :mod:`tarocchi_rl.cards`) lies in location ``l`` as seen by the seat of
row ``b``. Each row ``out[b, c, :]`` sums to 1. Only the cards the seat cannot locate (:func:`unseen_cards`) carry
meaning: for its own cards and the public ones the model's output is irrelevant, a user must not read it.

Implementations: :meth:`tarocchi_rl.rl.policy.PPOAgent.beliefs` (a checkpoint trained with ``belief_loss > 0``,
torch), :meth:`tarocchi_rl.policies.onnx_policy.OnnxAgent.beliefs` (a bot directory holding ``belief.onnx``, no
torch); both say whether they have one in ``has_beliefs``. :func:`uniform_beliefs` is the stand-in for tests and
for bots without a belief model.

**The locations** (L = N + 2), in the order of the privileged observation
(:func:`tarocchi_rl.core.obs_layout.build_privileged_layout`: its sections reshaped to [L, C] are the targets):

| l       | name (:func:`location_names`) | where the card is                                                      |
|---------|-------------------------------|------------------------------------------------------------------------|
| 0       | ``seat+0``                    | the seat's own hand (Mineo's early round: its share not handed out yet) |
| r < N   | ``seat+r``                    | the hand of relative seat r = (seat - viewer) mod N (r = 1: next seat) |
| N       | ``stock``                     | the monte / talon / chien as dealt (not shown, or not yet)             |
| N + 1   | ``discard``                   | the declarer's discard (another seat's face-down discard)              |

Played cards have no location (they are public: ``played`` in the observation). The bot protocol names the
locations by *absolute* seat (``seat0`` .. ``seat{N-1}``, ``stock``, ``discard``: :func:`absolute_location_names`).

Calibration (:func:`reliability`): predicted probabilities of (unseen card, location) pairs binned against how often
the card really was there, and the expected calibration error (ECE).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.obs_layout import build_privileged_layout
from ..variants import VariantSpec

Beliefs = Callable[[NDArray[np.float32]], NDArray[np.float32]]
"""obs float32[B, obs_dim] -> float32[B, C, L] (module docstring)."""

STOCK, DISCARD = "stock", "discard"
# the observation sections whose cards the seat can locate: its hand, the cards played (the current trick
# included), the stock once shown, its own discard, the discarded trumps shown to all and the cards shown by a seat
_SEEN_SECTIONS = ("hand", "played", "stock", "discard", "shown", "shown_by")
RELIABILITY_BINS = 10  # bins of predicted probability in a reliability table


def n_locations(n_players: int) -> int:
    """L: every seat's hand, the stock and the discard."""
    return n_players + 2


def location_names(n_players: int) -> tuple[str, ...]:
    """The locations in order, seats relative to the viewer (module docstring's table)."""
    return (*(f"seat+{r}" for r in range(n_players)), STOCK, DISCARD)


def absolute_location_names(n_players: int, viewer: int) -> tuple[str, ...]:
    """The locations in order named by absolute seat for ``viewer``: ``seat{(viewer + r) % N}``, stock, discard."""
    return (*(f"seat{(viewer + r) % n_players}" for r in range(n_players)), STOCK, DISCARD)


def belief_shape(spec: VariantSpec) -> tuple[int, int]:
    """(C, L): the cards of the variant's deck and the locations."""
    return spec.deck.n_cards, n_locations(spec.n_players)


def _obs(obs: Any, spec: VariantSpec) -> NDArray[np.float32]:
    o = np.asarray(obs, np.float32)
    if o.ndim != 2 or o.shape[1] != spec.obs_dim:
        raise ValueError(f"beliefs: observations must have shape [B, {spec.obs_dim}] for {spec.name}, got "
                         f"{list(o.shape)}")
    return o


def unseen_cards(obs: Any, spec: VariantSpec) -> NDArray[np.bool_]:
    """bool[B, C]: the cards each observation's seat cannot locate (none of :data:`_SEEN_SECTIONS` holds them)."""
    o = _obs(obs, spec)
    c = spec.deck.n_cards
    seen = np.zeros((len(o), c), bool)
    for offset, size, name in spec.obs_rows:
        if name in _SEEN_SECTIONS:
            seen |= o[:, offset:offset + size].reshape(len(o), size // c, c).any(axis=1)
    return ~seen


def uniform_beliefs(spec: VariantSpec) -> Beliefs:
    """The stand-in belief model: every card equally likely in each of the L locations."""
    c, n_loc = belief_shape(spec)

    def beliefs(obs: NDArray[np.float32]) -> NDArray[np.float32]:
        return np.full((len(_obs(obs, spec)), c, n_loc), 1.0 / n_loc, np.float32)

    return beliefs


def locations_of(hidden: Any, n_players: int, n_cards: int) -> NDArray[np.int64]:
    """int64[B, C]: the location of every card from privileged observations float32[B, (N + 2) * C] (their sections
    reshaped to [L, C]); -1 for a card in none (played)."""
    h = np.asarray(hidden, np.float32)
    dim = build_privileged_layout(n_players, n_cards)[1]
    if h.ndim != 2 or h.shape[1] != dim:
        raise ValueError(f"privileged observations must have shape [B, {dim}], got {list(h.shape)}")
    planes = h.reshape(len(h), n_locations(n_players), n_cards)
    return np.where(planes.any(axis=1), planes.argmax(axis=1), -1).astype(np.int64)


def belief_targets(obs: Any, hidden: Any, spec: VariantSpec) -> NDArray[np.int64]:
    """int64[B, C]: the location index of each card the seat cannot see (the training target of a belief model),
    -1 for the cards it can see or that have no location (left out of the loss)."""
    where = locations_of(hidden, spec.n_players, spec.deck.n_cards)
    return np.where(unseen_cards(obs, spec), where, -1)


def reliability_sums(probs: Any, targets: Any, bins: int = RELIABILITY_BINS) -> dict[str, NDArray[np.float64]]:
    """The additive sums of a reliability table (:func:`reliability_table`; sums of several batches add up key by
    key): beliefs ``probs`` float[B, C, L] against ``targets`` int[B, C] (-1: left out). Every (card, location) pair
    of a target card is one prediction, binned by its probability into ``bins`` equal bins of [0, 1]."""
    p = np.asarray(probs, np.float64)
    t = np.asarray(targets, np.int64)
    if p.ndim != 3 or t.shape != p.shape[:2]:
        raise ValueError(f"reliability: beliefs [B, C, L] and targets [B, C] expected, got {list(p.shape)} and "
                         f"{list(t.shape)}")
    keep = t >= 0
    rows, truth_loc = p[keep], t[keep]  # [cards, L], [cards]
    truth = np.zeros_like(rows)
    truth[np.arange(len(rows)), truth_loc] = 1.0
    flat_p, flat_y = rows.ravel(), truth.ravel()
    which = np.minimum((flat_p * bins).astype(np.int64), bins - 1)
    true_p = rows[np.arange(len(rows)), truth_loc]
    return {
        "count": np.bincount(which, minlength=bins).astype(np.float64),
        "sum_predicted": np.bincount(which, flat_p, minlength=bins),
        "sum_observed": np.bincount(which, flat_y, minlength=bins),
        "totals": np.array([len(rows), float((rows.argmax(axis=1) == truth_loc).sum()),
                            float(-np.log(np.maximum(true_p, 1e-12)).sum())]),  # cards, top-1 hits, sum of -log p
    }


def reliability_table(sums: dict[str, NDArray[np.float64]]) -> dict[str, Any]:
    """The reliability table of :func:`reliability_sums`: ``bins`` (a list of {lo, hi, count, mean_predicted,
    observed}), ``ece`` (the count-weighted mean |observed - mean_predicted|), ``top1`` (the share of target cards
    whose most probable location is theirs), ``nll`` (their mean -log p of the true location), ``cards`` and
    ``predictions`` (None where there is nothing to measure)."""
    count, bins = sums["count"], len(sums["count"])
    cards, hits, nll = sums["totals"]
    table, ece = [], 0.0
    for k in range(bins):
        n = int(count[k])
        mean_p = float(sums["sum_predicted"][k] / n) if n else None
        observed = float(sums["sum_observed"][k] / n) if n else None
        if mean_p is not None and observed is not None:
            ece += n * abs(observed - mean_p)
        table.append({"lo": k / bins, "hi": (k + 1) / bins, "count": n, "mean_predicted": mean_p,
                      "observed": observed})
    total = int(count.sum())
    return {"bins": table, "ece": ece / total if total else None, "predictions": total, "cards": int(cards),
            "top1": hits / cards if cards else None, "nll": nll / cards if cards else None}


def reliability(probs: Any, targets: Any, bins: int = RELIABILITY_BINS) -> dict[str, Any]:
    """The reliability table (:func:`reliability_table`) of beliefs ``probs`` float[B, C, L] against ``targets``
    int[B, C] (-1: left out)."""
    return reliability_table(reliability_sums(probs, targets, bins))
