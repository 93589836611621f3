"""Single-observer Information Set MCTS (Cowling, Powley & Whitehouse 2012) compiled on the core.

One search = one kernel call: ``search_row`` runs every iteration of one decision without returning to
Python, and ``search_batch`` runs the searches of many games in parallel (prange over games). An iteration:

1. **determinize**: copy the root game into a scratch row and redistribute the cards the searching player
   cannot locate, uniformly over the deals consistent with what he knows
   (:mod:`tarocchi_rl.search.determinize`), or, given a belief model's log probabilities for the root
   (``log_beliefs``), with the probability they give each of those deals (:mod:`tarocchi_rl.search.inference`:
   the weighted DP, or sampling-importance-resampling over ``belief_samples`` uniform deals; still exact on what
   he knows);
2. **select**: from the root, while every action legal in this determinization has a child, increment the
   availability count of each legal child and follow the child maximising
   ``W/N + c * sqrt(ln(avail) / N)`` (W: summed rewards of the seat that chose the action);
3. **expand**: add one child for a random legal action without one;
4. **roll out**: play the deal to its end on the scratch row: random legal actions (the fused random
   playout kernel) or the heuristic bot;
5. **back-propagate**: every node on the path gets ``N += 1`` and ``W += payoff[seat] / payoff_scale`` (the
   reward: the variant's ``payoff_scale`` makes it of order 1).

The tree (:class:`Tree`) lives in flat arrays of ``iterations + 1`` nodes (one expansion per iteration):

| array        | dtype / shape          | meaning                                                 |
|--------------|------------------------|---------------------------------------------------------|
| parent       | int32[M]               | parent node (-1 for the root)                           |
| action       | int32[M]               | the action leading to the node                          |
| seat         | int32[M]               | the seat that chose it                                  |
| first_child  | int32[M]               | first child (-1: none), children linked by next_sibling |
| next_sibling | int32[M]               | next child of the same parent (-1: last)                |
| visits       | float64[M]             | N                                                       |
| avail        | float64[M]             | availability count                                      |
| wsum         | float64[M]             | W                                                       |

The decision is the root's most visited action (ties: the higher mean). A root **prior** (a PPO policy's
probabilities, when given) adds ``c_prior * P(a) * sqrt(avail) / (1 + N)`` to the root's selection score
(PUCT-style), steering the search towards the network's moves without changing the rest of the tree.

A search can also be kept between compiled calls and continued (:class:`SearchTrees`): the agent cuts long
searches into short calls so that Ctrl-C stops them, and the root statistics (visits and mean reward of each root
action) can be read as the search goes on; the results are those of one ``search_batch`` call.

``search_row`` is the five steps above, one small kernel each (``_descend``: selection and expansion); the steps
that allocate nothing are compiled without reference counting (``_nrt=False``) so that LLVM inlines them at no
cost (see :mod:`tarocchi_rl.search.determinize`).
"""

from typing import Any, NamedTuple

import numpy as np
from numba import njit, prange
from numpy.typing import NDArray

from .. import engine
from ..bits import bounded, splitmix_next
from ..core.parallel import game_index
from ..core.phases import DONE, PLAY
from ..core.state import CUR, PAYOFF, PHASE, alloc_state
from ..core.tables import P_CARDS, P_N_SPECIAL, P_PLAYERS
from ..policies.heuristic import heuristic_row
from .determinize import I_NF, I_STATUS, NI, NM, build_plan, fill_tables
from .inference import (
    DEFAULT_BELIEF_SAMPLES,
    METHOD_UNIFORM,
    belief_plan,
    belief_samples_checked,
    method_code,
    n_locations,
    weighted_sample_row,
)

ROLLOUT_RANDOM, ROLLOUT_HEURISTIC = 0, 1


class Tree(NamedTuple):
    """The search tree: one entry per node (the module docstring's table)."""

    parent: np.ndarray
    action: np.ndarray
    seat: np.ndarray
    first_child: np.ndarray
    next_sibling: np.ndarray
    visits: np.ndarray
    avail: np.ndarray
    wsum: np.ndarray


@njit(cache=True, inline="always")
def _new_tree(m_nodes):
    """An empty tree of room ``m_nodes`` (node 0: the root)."""
    return Tree(np.full(m_nodes, -1, np.int32), np.full(m_nodes, -1, np.int32), np.full(m_nodes, -1, np.int32),
                np.full(m_nodes, -1, np.int32), np.full(m_nodes, -1, np.int32), np.zeros(m_nodes, np.float64),
                np.zeros(m_nodes, np.float64), np.zeros(m_nodes, np.float64))


@njit(cache=True, inline="always")
def _root_plan(root, i, observer, tb):
    """The observer's knowledge and the sampler's tables, once per search: (ints, masks, floats)."""
    plan_i = np.empty(NI, np.int64)
    plan_m = np.empty(NM, np.uint64)
    build_plan(root, i, observer, tb, plan_i, plan_m)
    plan_f = np.empty(max(plan_i[I_NF], 1), np.float64)
    fill_tables(plan_i, plan_f)
    if plan_i[I_STATUS] != 1:  # no consistent deal: impossible for a real position
        raise ValueError("ismcts: no card assignment is consistent with the searching player's knowledge")
    return plan_i, plan_m, plan_f


@njit(cache=True, _nrt=False)
def _select(tree, node, legal, stamp, tick, c_explore, prior, has_prior, c_prior):
    """Selection at ``node``: every child stamped with ``tick`` (stamp[a] == tick: action a has a child), the
    children legal in this determinization get an availability; returns the legal child maximising the UCB
    score (with the prior's term at the root), -1 when none."""
    best, best_score = -1, -1e300
    ch = tree.first_child[node]
    while ch >= 0:
        a = tree.action[ch]
        stamp[a] = tick
        if legal[a]:
            tree.avail[ch] += 1.0
            score = tree.wsum[ch] / tree.visits[ch] + c_explore * np.sqrt(np.log(tree.avail[ch]) / tree.visits[ch])
            if node == 0 and has_prior:
                score += c_prior * prior[a] * np.sqrt(tree.avail[ch]) / (1.0 + tree.visits[ch])
            if score > best_score:
                best_score, best = score, ch
        ch = tree.next_sibling[ch]
    return best


@njit(cache=True, _nrt=False)
def _n_untried(legal, stamp, tick):
    """The legal actions without a child at the node just stamped."""
    n = 0
    for a in range(legal.shape[0]):
        if legal[a] and stamp[a] != tick:
            n += 1
    return n


@njit(cache=True, _nrt=False)
def _expand(tree, node, new, legal, stamp, tick, n_untried, scratch, j):
    """Expansion: node ``new``, child of ``node``, for an untried legal action drawn with scratch.rng[j] (the
    seat to act in scratch game j chose it). Returns the action."""
    r, z = splitmix_next(scratch.rng[j])
    scratch.rng[j] = r
    k = bounded(z, n_untried)
    pick = -1
    for a in range(legal.shape[0]):
        if legal[a] and stamp[a] != tick:
            if k == 0:
                pick = a
                break
            k -= 1
    tree.parent[new] = node
    tree.action[new] = pick
    tree.seat[new] = scratch.meta[j, CUR]
    tree.next_sibling[new] = tree.first_child[node]
    tree.first_child[node] = new
    tree.avail[new] = 1.0
    return pick


@njit(cache=True, _nrt=False)
def _descend(tree, n_nodes, tick, scratch, j, tb, legal, stamp, path, c_explore, prior, has_prior, c_prior):
    """Selection then expansion, playing the chosen actions on scratch game j: ``path[:depth]`` the nodes
    followed. Returns (depth, nodes in the tree, tick)."""
    node = 0
    depth = 0
    while scratch.meta[j, PHASE] != DONE:
        engine.legal_mask_row(scratch, j, tb, legal)
        tick += 1
        best = _select(tree, node, legal, stamp, tick, c_explore, prior, has_prior, c_prior)
        n_untried = _n_untried(legal, stamp, tick)
        if n_untried > 0 and n_nodes < tree.parent.shape[0]:
            pick = _expand(tree, node, n_nodes, legal, stamp, tick, n_untried, scratch, j)
            engine.step_row(scratch, j, pick, tb)
            path[depth] = n_nodes
            depth += 1
            n_nodes += 1
            break
        if best < 0:  # no legal child and no room to expand: roll out from here
            break
        engine.step_row(scratch, j, tree.action[best], tb)
        path[depth] = best
        depth += 1
        node = best
    return depth, n_nodes, tick


@njit(cache=True)
def _rollout(st, j, tb, kind):
    """Play scratch game ``j`` to its end (random or heuristic actions)."""
    while st.meta[j, PHASE] != DONE:
        if kind == ROLLOUT_RANDOM:
            if st.meta[j, PHASE] == PLAY:
                engine.random_playout_row(st, j, tb)
                continue
            a = engine.random_action(st, j, tb)
        else:
            a = heuristic_row(st, j, tb)
        engine.step_row(st, j, a, tb)


@njit(cache=True, _nrt=False)
def _backpropagate(tree, path, depth, st, j, payoff_scale):
    """Every node of the path: one visit more, and the reward (payoff / payoff_scale) of the seat that chose
    its action in the finished scratch game j."""
    for d in range(depth):
        nd = path[d]
        tree.visits[nd] += 1.0
        tree.wsum[nd] += st.meta[j, PAYOFF + tree.seat[nd]] / payoff_scale


@njit(cache=True, _nrt=False)
def _decision(tree, visits_out):
    """The root's most visited action (ties: the higher mean); visits_out[a] = the root visits of action a."""
    visits_out[:] = 0.0
    best, best_n, best_mean = -1, -1.0, -1e300
    ch = tree.first_child[0]
    while ch >= 0:
        a = tree.action[ch]
        n = tree.visits[ch]
        visits_out[a] = n
        mean = tree.wsum[ch] / n if n > 0 else -1e300
        if n > best_n or (n == best_n and mean > best_mean):
            best, best_n, best_mean = a, n, mean
        ch = tree.next_sibling[ch]
    return best


@njit(cache=True)
def _iterate(tree, n_nodes, tick, n_iter, root, i, observer, tb, scratch, j, legal, stamp, path, c_explore,
             payoff_scale, rollout_kind, prior, has_prior, c_prior, logb, belief_method, belief_samples):
    """``n_iter`` iterations (the module docstring's five steps) of the search of game ``i`` on ``tree``, which
    holds ``n_nodes`` nodes, stamps counted up to ``tick``; returns (n_nodes, tick) after them. ``logb``
    float64[C, L]: the root's log beliefs (unread with ``belief_method`` METHOD_UNIFORM)."""
    plan_i, plan_m, plan_f = _root_plan(root, i, observer, tb)
    b_ints, b_floats = belief_plan(plan_i, plan_m, tb, logb, belief_method, belief_samples)
    for _ in range(n_iter):
        weighted_sample_row(root, i, observer, tb, plan_i, plan_m, plan_f, b_ints, b_floats, scratch, j)
        depth, n_nodes, tick = _descend(tree, n_nodes, tick, scratch, j, tb, legal, stamp, path, c_explore, prior,
                                        has_prior, c_prior)
        _rollout(scratch, j, tb, rollout_kind)
        _backpropagate(tree, path, depth, scratch, j, payoff_scale)
    return n_nodes, tick


@njit(cache=True)
def search_row(root, i, tb, scratch, j, iterations, c_explore, payoff_scale, rollout_kind, prior, c_prior,
               visits_out):
    """ISMCTS for the player to act in game ``i`` of ``root``; scratch row ``j`` of ``scratch`` is the
    working copy (its ``rng[j]`` seeds the search). Rewards are payoffs / ``payoff_scale``; prior
    float32[n_actions] (all zero: none).

    Writes the root's visit count per action into visits_out (float64[n_actions]); returns the decision.
    """
    n_act = 2 * tb.params[P_CARDS] + tb.params[P_N_SPECIAL]
    observer = root.meta[i, CUR]
    tree = _new_tree(iterations + 1)
    legal = np.zeros(n_act, np.bool_)
    stamp = np.zeros(n_act, np.int64)  # stamp[a] == tick: action a has a child at the current node
    path = np.zeros(iterations + 1, np.int32)
    has_prior = prior.sum() > 0
    _iterate(tree, 1, 0, iterations, root, i, observer, tb, scratch, j, legal, stamp, path, c_explore,
             payoff_scale, rollout_kind, prior, has_prior, c_prior, np.zeros((1, 1), np.float64), METHOD_UNIFORM, 1)
    return _decision(tree, visits_out)


@njit(cache=True, parallel=True)
def search_batch(root, idx, tb, scratch, iterations, c_explore, payoff_scale, rollout_kind, priors, c_prior,
                 visits_out, actions_out):
    """search_row for every game idx[k] (scratch row k, priors[k], visits_out[k]) -> actions_out[k]."""
    for k_ in prange(idx.shape[0]):
        k = game_index(k_)
        actions_out[k] = search_row(root, idx[k], tb, scratch, k, iterations, c_explore, payoff_scale,
                                    rollout_kind, priors[k], c_prior, visits_out[k])


# ---- searches kept between calls -------------------------------------------------------------------------------
#: k trees stacked (:class:`SearchTrees`, and the guided search's): the fields of :class:`Tree` (the module
#: docstring's table) as ``nodes`` int32[k, 5, M] (_NODE_FIELDS, indexed by PARENT ... NEXT_SIBLING) and ``stats``
#: float64[k, 3, M] (_STAT_FIELDS, indexed by VISITS, AVAIL, WSUM)
_NODE_FIELDS = ("parent", "action", "seat", "first_child", "next_sibling")
_STAT_FIELDS = ("visits", "avail", "wsum")
PARENT, ACTION, SEAT, FIRST_CHILD, NEXT_SIBLING = range(len(_NODE_FIELDS))
VISITS, AVAIL, WSUM = range(len(_STAT_FIELDS))


def beliefs_or_none(log_beliefs: NDArray[np.float64] | None, k: int, tb: Any, belief_method: str = "exact",
                    belief_samples: int = DEFAULT_BELIEF_SAMPLES) -> tuple[NDArray[np.float64], int, int]:
    """The kernels' (log beliefs float64[k, C, L], METHOD_*, SIR candidates) of k searches: (zeros[k, 1, 1],
    METHOD_UNIFORM, 1) without beliefs. A ValueError when they are not one [C, L] per search, or a bad method or
    count."""
    code, samples = method_code(belief_method), belief_samples_checked(belief_samples)
    if log_beliefs is None:
        return np.zeros((k, 1, 1), np.float64), METHOD_UNIFORM, 1
    arr = np.ascontiguousarray(log_beliefs, np.float64)
    want = (k, int(tb.params[P_CARDS]), n_locations(int(tb.params[P_PLAYERS])))
    if arr.shape != want:
        raise ValueError(f"search: log beliefs must be float64{list(want)} (card x location per search), got "
                         f"{list(arr.shape)}")
    return arr, code, samples


def new_stacked_trees(k: int, m: int) -> tuple[NDArray[np.int32], NDArray[np.float64]]:
    """(nodes int32[k, 5, M] all -1, stats float64[k, 3, M] all 0): k empty trees of room m (node 0: the root)."""
    return np.full((k, len(_NODE_FIELDS), m), -1, np.int32), np.zeros((k, len(_STAT_FIELDS), m), np.float64)


@njit(cache=True)
def _continue_row(root, i, tb, scratch, j, n_iter, c_explore, payoff_scale, rollout_kind, prior, c_prior, nodes,
                  stats, legal, stamp, path, counters, logb, belief_method, belief_samples):
    """``n_iter`` more iterations of the search of game ``i`` (scratch row ``j``) on the tree held in ``nodes`` and
    ``stats`` (one game's rows of :class:`SearchTrees`), with ``counters`` int64[2] (nodes in the tree, tick):
    :func:`search_row`'s :func:`_iterate` cut into pieces, so that its results are identical to one call."""
    tree = Tree(nodes[0], nodes[1], nodes[2], nodes[3], nodes[4], stats[0], stats[1], stats[2])
    counters[0], counters[1] = _iterate(tree, counters[0], counters[1], n_iter, root, i, root.meta[i, CUR], tb,
                                        scratch, j, legal, stamp, path, c_explore, payoff_scale, rollout_kind,
                                        prior, prior.sum() > 0, c_prior, logb, belief_method, belief_samples)


@njit(cache=True, parallel=True)
def _continue_batch(root, idx, tb, scratch, n_iter, c_explore, payoff_scale, rollout_kind, priors, c_prior, nodes,
                    stats, legal, stamp, path, counters, logbs, belief_method, belief_samples):
    """:func:`_continue_row` for every game ``idx[k]`` (scratch row k, the k-th tree, buffers and log beliefs)."""
    for k_ in prange(idx.shape[0]):
        k = game_index(k_)
        _continue_row(root, idx[k], tb, scratch, k, n_iter, c_explore, payoff_scale, rollout_kind, priors[k],
                      c_prior, nodes[k], stats[k], legal[k], stamp[k], path[k], counters[k], logbs[k],
                      belief_method, belief_samples)


@njit(cache=True)
def root_decisions(nodes, stats, visits, actions):
    """The decision (the root's most visited action, ties: the higher mean) of each of k stacked trees ->
    actions int64[k], and their root visits -> visits float64[k, A]."""
    for k in range(nodes.shape[0]):
        tree = Tree(nodes[k, 0], nodes[k, 1], nodes[k, 2], nodes[k, 3], nodes[k, 4], stats[k, 0], stats[k, 1],
                    stats[k, 2])
        actions[k] = _decision(tree, visits[k])


class SearchTrees:
    """The searches of games ``idx`` of ``root`` for the players to act, kept between compiled calls.

    ``run(n)`` adds n iterations to every search (at most ``iterations`` in all: the trees' room);
    ``decisions()`` and ``root_statistics()`` read them at any point. ``seeds`` uint64[k] seed the searches (the
    rng of their scratch rows); with the same seeds and parameters, ``run`` in any pieces gives the trees, visits
    and decisions of one ``search_batch`` call. ``priors`` float32[k, n_actions] (zeros: none).
    ``log_beliefs`` float64[k, C, L] (:func:`~tarocchi_rl.search.inference.log_beliefs` of a belief model's output
    for each root): determinizations weighted by it (:mod:`tarocchi_rl.search.inference`), ``belief_method``
    ``exact`` (the weighted DP; SIR where its tables are too large) or ``sir`` (over ``belief_samples`` uniform
    candidates; 1: the uniform sampler itself); None: the uniform sampler.
    """

    def __init__(self, root: Any, idx: NDArray[np.int64], tb: Any, iterations: int, c_explore: float,
                 payoff_scale: float, rollout_kind: int, priors: NDArray[np.float32], c_prior: float,
                 seeds: NDArray[np.uint64], scratch: Any = None, log_beliefs: NDArray[np.float64] | None = None,
                 belief_method: str = "exact", belief_samples: int = DEFAULT_BELIEF_SAMPLES) -> None:
        self.root, self.tb = root, tb
        self.idx = np.ascontiguousarray(idx, np.int64)
        k, n_act, m = len(self.idx), priors.shape[1], int(iterations) + 1
        self.capacity = int(iterations)
        self.params = (float(c_explore), float(payoff_scale), int(rollout_kind))
        self.priors, self.c_prior = np.ascontiguousarray(priors, np.float32), float(c_prior)
        self.scratch = alloc_state(k) if scratch is None else scratch
        self.scratch.rng[:k] = seeds
        self.nodes, self.stats = new_stacked_trees(k, m)
        self._legal = np.zeros((k, n_act), np.bool_)
        self._stamp = np.zeros((k, n_act), np.int64)
        self._path = np.zeros((k, m), np.int32)
        self._counters = np.zeros((k, 2), np.int64)
        self._counters[:, 0] = 1  # the root
        self.done = 0  # iterations run per search
        self.beliefs = beliefs_or_none(log_beliefs, k, tb, belief_method, belief_samples)

    def run(self, n: int) -> None:
        """``n`` more iterations of every search (a ValueError beyond the capacity)."""
        if n < 0 or self.done + n > self.capacity:
            raise ValueError(f"SearchTrees.run: {n} more iterations after {self.done} exceed the room of "
                             f"{self.capacity}")
        c, scale, rollout = self.params
        _continue_batch(self.root, self.idx, self.tb, self.scratch, int(n), c, scale, rollout, self.priors,
                        self.c_prior, self.nodes, self.stats, self._legal, self._stamp, self._path, self._counters,
                        *self.beliefs)
        self.done += n

    def decisions(self) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """(actions int64[k]: each root's most visited action, ties to the higher mean; visits float64[k, A])."""
        visits = np.zeros(self._legal.shape, np.float64)
        actions = np.zeros(len(self.idx), np.int64)
        root_decisions(self.nodes, self.stats, visits, actions)
        return actions, visits

    def root_statistics(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(visits float64[k, A], mean reward float64[k, A]) of each root action: N and W/N (payoff /
        payoff_scale, from the searching seat's side); NaN for the actions without a child."""
        return stacked_root_statistics(self.nodes, self.stats, self._legal.shape[1])


def stacked_root_statistics(nodes: NDArray[np.int32], stats: NDArray[np.float64],
                            n_actions: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(visits float64[k, A], mean reward float64[k, A]) of each root action of stacked trees (``nodes``
    int32[k, 5, M], ``stats`` float64[k, 3, M]; plain or guided): N and W/N, NaN for actions without a child."""
    k = nodes.shape[0]
    visits = np.zeros((k, n_actions), np.float64)
    means = np.full((k, n_actions), np.nan)
    for g in range(k):
        kids = np.flatnonzero(nodes[g, PARENT] == 0)  # the root's children
        acts = nodes[g, ACTION, kids]
        n = stats[g, VISITS, kids]
        visits[g, acts] = n
        means[g, acts] = np.where(n > 0, stats[g, WSUM, kids] / np.maximum(n, 1), np.nan)
    return visits, means
