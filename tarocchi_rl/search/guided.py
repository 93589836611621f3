"""ISMCTS guided by a policy/value network (the step from MCTS to AlphaZero, for imperfect information).

The searches of k games advance together, one iteration step at a time, so that the network evaluations of all
k games are one forward pass per step::

    root priors = net(the true observation of each game's player to act)         one pass, before the loop
    repeat iterations times:
        _descend_batch  (compiled, prange over games) determinize (the same sampler as plain ISMCTS: uniform,
                        or weighted by a belief model, :mod:`tarocchi_rl.search.inference`), then
                        select by PUCT from the root down, playing the actions on the scratch row, until a
                        new node is added (one per iteration) or the deal ends
        evaluate        (Python) the leaves that are not finished: every seat's observation of the leaf in one
                        pass of the network: the acting seat's policy is the new node's prior, each seat's
                        value its value; optionally mixed with a rollout: (1 - mix) * value + mix * payoff
                        (mix = 1: rollouts alone, and only the acting seat's view is evaluated, for its prior;
                        lazy priors: a new node is only rolled out, its prior is evaluated on the search's
                        second visit to it, where the descent stops to evaluate it: most nodes of a tree are
                        visited once, so most network evaluations are saved)
        _backup_batch   (compiled) the new node keeps its prior; every node of the path gets a visit and
                        the value of the seat that chose its action

Selection at a node whose prior is ``p`` (stored when the node was evaluated) among the actions legal in this
determinization: a child with ``N`` visits, summed value ``W`` and availability ``avail`` (the times it was
legal when its parent was visited: single-observer ISMCTS) scores ``W/N + c_puct * p[a] * sqrt(avail) / (1 +
N)``; an action without a child scores ``fpu + c_puct * p[a] * sqrt(max(1, N_parent))``. Choosing an action
without a child adds it (expansion) and ends the descent: the leaf is that child's position.

Tree arrays (``GuidedTrees``, one row per game; M = iterations + 1 nodes): the stacked layout of plain ISMCTS
(``nodes`` int32[k, 5, M]: parent, action, seat, first_child, next_sibling; ``stats`` float64[k, 3, M]: visits,
avail, wsum; :mod:`tarocchi_rl.search.ismcts`), plus

| array        | dtype / shape        | meaning                                                             |
|--------------|----------------------|---------------------------------------------------------------------|
| prior        | float32[k, M, A]     | the node's policy prior (its acting seat's network probabilities)   |
| evaluated    | bool[k, M]           | prior set                                                           |

Values are payoffs / ``payoff_scale`` (the value head's scale). The decision is plain ISMCTS's (the root's most
visited action, ties: the higher mean); the visit counts are the policy targets of expert iteration.
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit, prange
from numpy.typing import NDArray

from .. import engine
from ..core.parallel import game_index
from ..core.phases import DONE
from ..core.state import CUR, PAYOFF, PHASE, BatchState, alloc_state
from .inference import DEFAULT_BELIEF_SAMPLES, belief_plan, weighted_sample_row
from .ismcts import (
    ACTION,
    AVAIL,
    FIRST_CHILD,
    NEXT_SIBLING,
    PARENT,
    ROLLOUT_HEURISTIC,
    ROLLOUT_RANDOM,
    SEAT,
    VISITS,
    WSUM,
    _rollout,
    _root_plan,
    beliefs_or_none,
    new_stacked_trees,
    root_decisions,
    stacked_root_statistics,
)

Evaluate = Callable[[NDArray[np.float32], NDArray[np.bool_]], tuple[NDArray[np.float32], NDArray[np.float32]]]
"""(obs float32[n, obs_dim], mask bool[n, A]) -> (probabilities float32[n, A], values float32[n])."""

#: a leaf to evaluate (a new node; lazy priors: a node's second visit) / a finished deal (its payoffs are the
#: values) / lazy priors: a new node, rolled out and not evaluated
_LEAF_NEW, _LEAF_DONE, _LEAF_ROLLOUT = 0, 1, 2


class GuidedTrees(NamedTuple):
    """The k search trees (module docstring)."""

    nodes: np.ndarray
    stats: np.ndarray
    prior: np.ndarray
    evaluated: np.ndarray


def _new_trees(k: int, m: int, n_actions: int) -> GuidedTrees:
    """k empty trees of room m (node 0: the root of each)."""
    nodes, stats = new_stacked_trees(k, m)
    return GuidedTrees(nodes, stats, np.zeros((k, m, n_actions), np.float32), np.zeros((k, m), np.bool_))


@njit(cache=True)
def _descend_row(root, i, tb, scratch, k, t, n_nodes, legal, path, c_puct, fpu, plan_i, plan_m, plan_f, observer,
                 lazy, b_ints, b_floats):
    """One determinization (with the root's belief plan ``b_ints``, ``b_floats``) and descent of tree k (module
    docstring); returns (depth, leaf kind, nodes)."""
    weighted_sample_row(root, i, observer, tb, plan_i, plan_m, plan_f, b_ints, b_floats, scratch, k)
    node, depth = 0, 0
    while True:
        if scratch.meta[k, PHASE] == DONE:
            return depth, _LEAF_DONE, n_nodes
        if lazy and not t.evaluated[k, node]:  # a node's second visit: its prior is evaluated here
            return depth, _LEAF_NEW, n_nodes
        engine.legal_mask_row(scratch, k, tb, legal)
        best_score, best_child, best_action = -1e300, -1, -1
        n_parent = max(1.0, t.stats[k, VISITS, node])
        have = np.zeros(legal.shape[0], np.int32) - 1
        ch = t.nodes[k, FIRST_CHILD, node]
        while ch >= 0:
            have[t.nodes[k, ACTION, ch]] = ch
            ch = t.nodes[k, NEXT_SIBLING, ch]
        for a in range(legal.shape[0]):
            if not legal[a]:
                continue
            p = t.prior[k, node, a]
            ch = have[a]
            if ch >= 0:
                t.stats[k, AVAIL, ch] += 1.0
                n = t.stats[k, VISITS, ch]
                q = t.stats[k, WSUM, ch] / n if n > 0 else fpu
                score = q + c_puct * p * np.sqrt(t.stats[k, AVAIL, ch]) / (1.0 + n)
            else:
                score = fpu + c_puct * p * np.sqrt(n_parent)
            if score > best_score:
                best_score, best_child, best_action = score, ch, a
        if best_child < 0:  # an action without a child: expand (when there is room) and stop
            if n_nodes >= t.nodes.shape[2]:
                return depth, _LEAF_DONE if scratch.meta[k, PHASE] == DONE else -1, n_nodes
            new = n_nodes
            n_nodes += 1
            t.nodes[k, PARENT, new] = node
            t.nodes[k, ACTION, new] = best_action
            t.nodes[k, SEAT, new] = scratch.meta[k, CUR]
            t.nodes[k, NEXT_SIBLING, new] = t.nodes[k, FIRST_CHILD, node]
            t.nodes[k, FIRST_CHILD, node] = new
            t.stats[k, AVAIL, new] = 1.0
            engine.step_row(scratch, k, best_action, tb)
            path[k, depth] = new
            depth += 1
            if scratch.meta[k, PHASE] == DONE:
                return depth, _LEAF_DONE, n_nodes
            return depth, _LEAF_ROLLOUT if lazy else _LEAF_NEW, n_nodes
        engine.step_row(scratch, k, best_action, tb)
        path[k, depth] = best_child
        depth += 1
        node = best_child


@njit(cache=True, parallel=True)
def _descend_batch(root, idx, tb, scratch, t, n_nodes, legal, path, depth, leaf_kind, c_puct, fpu, plans_i, plans_m,
                  plans_f, observers, lazy, b_ints, b_floats, b_offsets):
    """:func:`_descend_row` for every game idx[k] (scratch row k, tree k, belief plan b_ints[k] and
    b_floats[b_offsets[k]:b_offsets[k + 1]]): depth[k], leaf_kind[k] (-1: no room left to expand: the path is
    backed up with the rollout of the position)."""
    for k_ in prange(idx.shape[0]):
        k = game_index(k_)
        depth[k], leaf_kind[k], n_nodes[k] = _descend_row(
            root, idx[k], tb, scratch, k, t, n_nodes[k], legal[k], path, c_puct, fpu, plans_i[k], plans_m[k],
            plans_f[k], observers[k], lazy, b_ints[k], b_floats[b_offsets[k] : b_offsets[k + 1]])


@njit(cache=True)
def _legal_masks_of(scratch, rows, tb, out):
    """The legal actions of scratch rows ``rows`` (int64[n]) into ``out`` (bool[n, A]): one compiled call (a
    Python loop of ``legal_mask_row`` calls cost a quarter of a lazy search's time in argument typing)."""
    for r in range(rows.shape[0]):
        engine.legal_mask_row(scratch, rows[r], tb, out[r])


@njit(cache=True, parallel=True)
def _rollout_batch(scratch, tb, rows, kind):
    """Play scratch rows ``rows`` to their end (random or heuristic actions)."""
    for r_ in prange(rows.shape[0]):
        r = game_index(r_)
        _rollout(scratch, rows[r], tb, kind)


@njit(cache=True)
def _backup_row(t, k, path, d, values, new_prior, has_prior):
    """Tree k's path of ``d`` nodes: the leaf takes ``new_prior`` when ``has_prior``; every node a visit and the
    value of the seat that chose its action (a function of its own: written inline in the prange loop, Numba's
    parfors lost the writes through the tuple's arrays)."""
    if d == 0:
        return
    t.stats[k, VISITS, 0] += 1.0  # the root: its visits are N_parent of its children's exploration term
    leaf = path[k, d - 1]
    if has_prior:
        t.prior[k, leaf, :] = new_prior
        t.evaluated[k, leaf] = True
    for j in range(d):
        nd = path[k, j]
        t.stats[k, VISITS, nd] += 1.0
        t.stats[k, WSUM, nd] += values[t.nodes[k, SEAT, nd]]


@njit(cache=True, parallel=True)
def _backup_batch(t, path, depth, values, new_prior, has_prior):
    """:func:`_backup_row` of every tree k, with ``values[k]``, ``new_prior[k]``, ``has_prior[k]``."""
    for k_ in prange(path.shape[0]):
        k = game_index(k_)
        _backup_row(t, k, path, depth[k], values[k], new_prior[k], has_prior[k])


def _plans(root: BatchState, idx: NDArray[np.int64], tb) -> tuple[NDArray[np.int64], NDArray[np.uint64],
                                                                   NDArray[np.float64]]:
    """The sampler's plan of every game (the searching player: each game's player to act), stacked (the float
    tables padded to the longest)."""
    plans = [_root_plan(root, int(i), int(root.meta[i, CUR]), tb) for i in idx]
    n_f = max(len(pf) for _, _, pf in plans)
    plans_f = np.zeros((len(plans), n_f), np.float64)
    for r, (_, _, pf) in enumerate(plans):
        plans_f[r, : len(pf)] = pf
    return np.stack([pi for pi, _, _ in plans]), np.stack([pm for _, pm, _ in plans]), plans_f


def _belief_plans(plans_i: NDArray[np.int64], plans_m: NDArray[np.uint64], tb, log_b: NDArray[np.float64],
                  method: int, samples: int) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """Each game's belief plan (:func:`~tarocchi_rl.search.inference.belief_plan`) from its sampler's plan and its
    root's log beliefs: (ints stacked int64[k, NB], floats concatenated, game r's at offsets[r]:offsets[r + 1])."""
    plans = [belief_plan(plans_i[r], plans_m[r], tb, log_b[r], method, samples) for r in range(len(plans_i))]
    offsets = np.concatenate([[0], np.cumsum([len(bf) for _, bf in plans])]).astype(np.int64)
    return np.stack([bi for bi, _ in plans]), np.concatenate([bf for _, bf in plans]), offsets


def check_lazy(lazy: bool, mix: float, where: str) -> None:
    """Lazy priors need ``mix`` = 1: a node rolled out before its prior is evaluated has no network value to mix
    into its leaf value. ``where`` names the caller in the error."""
    if lazy and mix < 1:
        raise ValueError(f"{where}: lazy priors need mix = 1 (leaf values from rollouts alone), got mix {mix:g}")


def guided_search(state: BatchState, idx: NDArray[np.int64], tables, n_players: int, n_actions: int,
                  root_obs: NDArray[np.float32], root_mask: NDArray[np.bool_], evaluate: Evaluate, iterations: int,
                  c_puct: float, payoff_scale: float, seeds: NDArray[np.uint64], mix: float = 0.0,
                  rollout: str = "heuristic", fpu: float = 0.0, lazy: bool = False,
                  log_beliefs: NDArray[np.float64] | None = None, belief_method: str = "exact",
                  belief_samples: int = DEFAULT_BELIEF_SAMPLES,
                  root_means: NDArray[np.float64] | None = None) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Search games ``idx`` of ``state`` (module docstring); returns (actions int64[k], root visits float64[k, A]).
    ``root_means`` float64[k, A], when given, gets each root action's mean value (NaN: no child).

    root_obs float32[k, D], root_mask bool[k, A]: the true observation and legal actions of each game's player
    to act; ``evaluate`` the network; ``mix`` in [0, 1] the rollout's weight in a leaf's value; ``seeds``
    uint64[k] the searches' random streams; ``lazy`` (needs mix = 1): lazy priors (module docstring);
    ``log_beliefs`` float64[k, C, L], ``belief_method``, ``belief_samples``: determinizations weighted by a belief
    model (:class:`~tarocchi_rl.search.ismcts.SearchTrees`)."""
    check_lazy(lazy, mix, "guided search")
    idx = np.ascontiguousarray(idx, np.int64)
    k = len(idx)
    beliefs = beliefs_or_none(log_beliefs, k, tables, belief_method, belief_samples)  # checked before any work
    m = iterations + 1
    t = _new_trees(k, m, n_actions)
    probs, _ = evaluate(root_obs, root_mask)
    t.prior[:, 0, :] = probs
    t.evaluated[:, 0] = True
    plans_i, plans_m, plans_f = _plans(state, idx, tables)
    b_ints, b_floats, b_offsets = _belief_plans(plans_i, plans_m, tables, *beliefs)
    observers = state.meta[idx, CUR].astype(np.int64)
    scratch = alloc_state(k)
    scratch.rng[:] = seeds
    n_nodes = np.ones(k, np.int64)
    legal = np.zeros((k, n_actions), np.bool_)
    path = np.zeros((k, m), np.int32)
    depth = np.zeros(k, np.int64)
    leaf_kind = np.zeros(k, np.int64)
    values = np.zeros((k, n_players), np.float64)
    new_prior = np.zeros((k, n_actions), np.float32)
    viewers = np.full(k, -1, np.int64)
    obs_buf = np.zeros((n_players, k, root_obs.shape[1]), np.float32)
    kind = ROLLOUT_HEURISTIC if rollout == "heuristic" else ROLLOUT_RANDOM
    for _ in range(iterations):
        _descend_batch(state, idx, tables, scratch, t, n_nodes, legal, path, depth, leaf_kind, float(c_puct),
                      float(fpu), plans_i, plans_m, plans_f, observers, bool(lazy), b_ints, b_floats, b_offsets)
        new = np.flatnonzero(leaf_kind == _LEAF_NEW)
        has_prior = np.zeros(k, np.bool_)
        values[:] = 0.0
        if len(new):
            mask = np.zeros((len(new), n_actions), np.bool_)
            _legal_masks_of(scratch, new, tables, mask)
            acting = scratch.meta[new, CUR].astype(np.int64)
            if mix >= 1:  # values from rollouts alone: only the actor's view, for the prior
                viewers[:] = -1
                viewers[new] = acting
                engine.observe_batch(scratch, tables, viewers, obs_buf[0])
                new_prior[new], _ = evaluate(obs_buf[0, new], mask)
            else:
                for s in range(n_players):  # every seat's view of the leaf: its value; the actor's: the prior
                    viewers[:] = -1
                    viewers[new] = s
                    engine.observe_batch(scratch, tables, viewers, obs_buf[s])
                obs = obs_buf[:, new].reshape(n_players * len(new), -1)
                p, v = evaluate(obs, np.tile(mask, (n_players, 1)))
                p = p.reshape(n_players, len(new), n_actions)
                seat_values = np.asarray(v, np.float64).reshape(n_players, len(new))
                new_prior[new] = p[acting, np.arange(len(new))]
                values[new] = seat_values.T
            has_prior[new] = True
        ends = np.flatnonzero(leaf_kind != _LEAF_NEW) if mix <= 0 else np.arange(k)
        if mix > 0 or len(ends):
            _rollout_batch(scratch, tables, ends, kind)
            payoffs = scratch.meta[ends, PAYOFF : PAYOFF + n_players] / payoff_scale
            net_part = has_prior[ends]  # the leaves the network saw this step (has_prior marks ``new``)
            values[ends] = np.where(net_part[:, None], (1 - mix) * values[ends] + mix * payoffs, payoffs)
        _backup_batch(t, path, depth, values, new_prior, has_prior)
    visits = np.zeros((k, n_actions), np.float64)
    actions = np.zeros(k, np.int64)
    root_decisions(t.nodes, t.stats, visits, actions)
    if root_means is not None:
        root_means[:] = stacked_root_statistics(t.nodes, t.stats, n_actions)[1]
    return actions, visits
