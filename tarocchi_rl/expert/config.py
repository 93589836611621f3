"""The typed configuration of an expert-iteration run: YAML (``configs/expert_VARIANT.yaml``) + ``--set key=value``.

The same machinery as PPO's :class:`~tarocchi_rl.rl.config.TrainConfig` (unknown keys, wrong types and
out-of-range values are a :class:`~tarocchi_rl.rl.config.ConfigError` naming the dotted key and the file; every
number bounded). The network is described as PPO's (``network``, ``belief_loss``), so that a round's checkpoint is
a PPO checkpoint (``ppo:CK``, ``tarocchi-rl export``, ``tarocchi-rl train --set init=CK``).

Example (``configs/expert_french3.yaml``)::

    variant: french3
    init: bot:french3
    search: {leaf: heuristic, budget: {bid: 200, discard: 200, play: 400}}
    learn: {lr: 0.0001, buffer: 400000}
    gate: {deals: 400, search_deals: 100}
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..arena import MAX_DEALS
from ..bits import SEED_MAX
from ..core.phases import DECISION_KINDS
from ..rl.config import (
    BIG,
    DEVICES,
    MAX_BELIEF_LOSS,
    ConfigError,
    NetworkConfig,
    ResolvedVariant,
    TrainConfig,
    load_typed_config,
    typed_config_from_dict,
)
from ..variants import VARIANTS

LEAVES = ("heuristic", "net")  # SearchConfig.leaf
TARGETS = ("visits", "q")  # SearchConfig.target
MAX_ITERATIONS = 100_000  # search iterations of one decision (a tree of one node per iteration)
#: the expert run's keys that a resumed run may change: the stopping rules, the carry cadence, where labelling and
#: learning run (these do not change what is learned), and the learning rate and passes from the next round on (each
#: round's log line records them)
RESUMABLE_KEYS = ("max_rounds", "max_minutes", "carry_every_minutes", "num_workers", "device", "torch_threads",
                  "learn.min_buffer", "learn.lr", "learn.epochs")


def _need(cond: bool, key: str, msg: str) -> None:
    if not cond:
        raise ConfigError(f"{key}: {msg}")


def _in(value: float, lo: float, hi: float, key: str) -> None:
    _need(lo <= value <= hi, key, f"must be in [{lo:g}, {hi:g}], got {value!r}")


@dataclass
class BudgetConfig:
    """Search iterations per decision by kind of decision (:data:`~tarocchi_rl.core.phases.DECISION_KINDS`: the
    auction and every commitment are ``bid``, monte / chien exchanges ``discard``, cards to tricks ``play``); 0: the
    network decides alone (not a sample)."""

    bid: int = 200
    discard: int = 200
    play: int = 400

    def validate(self) -> None:
        for kind in DECISION_KINDS:
            _in(getattr(self, kind), 0, MAX_ITERATIONS, f"search.budget.{kind}")
        _need(any(getattr(self, k) > 0 for k in DECISION_KINDS), "search.budget", "searches no kind of decision")

    def of_kind(self) -> tuple[int, ...]:
        """The iterations of each kind, in :data:`DECISION_KINDS` order."""
        return tuple(int(getattr(self, k)) for k in DECISION_KINDS)


@dataclass
class SearchConfig:
    # heuristic: plain ISMCTS (heuristic rollouts), the network's policy a PUCT prior at the root (c_prior) | net: the
    # search guided by the network at every node, its value head at the leaves (tarocchi_rl.search.guided)
    leaf: str = "heuristic"
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    c: float = 0.7  # plain ISMCTS's UCB constant (rewards: payoffs / payoff_scale)
    c_prior: float = 2.0  # plain ISMCTS: the root prior's weight (0: no prior, the search alone)
    c_puct: float = 1.5  # leaf net: the PUCT constant
    temperature: float = 1.0  # the move played: drawn from visits^(1/T) (0: the most visited)
    # a decision of a kind with a budget of 0 is a sample whose target is the network's own policy (an anchor)
    anchor: bool = True
    games: int = 64  # deals a worker plays at once (one batched core; searched together)
    # the policy target: visits (the root's visit distribution) | q (the network's policy reweighted by the root
    # actions' values: prior * exp(q_weight * (q - v)), each q shrunk toward the root value v by q_shrink visits)
    target: str = "visits"
    q_weight: float = 20.0  # target q: logits per payoff_scale of value (20: 10 points at scale 100 = 2 logits)
    q_shrink: float = 10.0  # target q: pseudo-visits at the root value added to each action's mean

    def validate(self) -> None:
        _need(self.leaf in LEAVES, "search.leaf", f"must be one of {', '.join(LEAVES)}, got {self.leaf!r}")
        _need(self.target in TARGETS, "search.target", f"must be one of {', '.join(TARGETS)}, got {self.target!r}")
        _in(self.q_weight, 0.0, 1000.0, "search.q_weight")
        _in(self.q_shrink, 0.0, 1e6, "search.q_shrink")
        self.budget.validate()
        _in(self.c, 0.0, 100.0, "search.c")
        _in(self.c_prior, 0.0, 1000.0, "search.c_prior")
        _in(self.c_puct, 0.0, 100.0, "search.c_puct")
        _in(self.temperature, 0.0, 10.0, "search.temperature")
        _in(self.games, 1, 4096, "search.games")


@dataclass
class LearnConfig:
    lr: float = 1e-4  # Adam learning rate
    epochs: int = 1  # passes over the replay buffer per round
    minibatch_size: int = 1024  # samples per gradient step
    value_coef: float = 1.0  # weight of the value loss (0.5 * squared error)
    # the value target: (1 - w) * the deal's outcome + w * the search's root value (both payoff / payoff_scale)
    search_value_weight: float = 0.5
    # the policy target: the visit distribution sharpened, visits^(1/tau) normalised (1: the visits as they are; 0:
    # the most visited move alone). The network plays its most probable move: sharper targets teach that move
    target_temperature: float = 0.5
    ppo_coef: float = 0.0  # weight of a clipped policy-gradient term on the played moves (0: none)
    ppo_clip: float = 0.2  # its ratio clip (the behaviour policy: the distribution the move was drawn from)
    max_grad_norm: float = 1.0  # global gradient-norm clip
    buffer: int = 400_000  # samples kept across rounds (the newest; regenerated, never saved)
    # a round whose buffer holds fewer samples labels only (no training, no gate): a resumed run on a new machine
    # starts with an empty buffer, and a learner trained on one round's samples fell behind (french3: -5.7, -3.5
    # [-6.3, -0.8] against the network it would replace, where the same learner had been level on 208k samples)
    min_buffer: int = 0

    def validate(self) -> None:
        _in(self.lr, 1e-8, 1.0, "learn.lr")
        _in(self.epochs, 1, 1000, "learn.epochs")
        _in(self.minibatch_size, 1, 2**20, "learn.minibatch_size")
        _in(self.value_coef, 0.0, 1000.0, "learn.value_coef")
        _in(self.search_value_weight, 0.0, 1.0, "learn.search_value_weight")
        _in(self.target_temperature, 0.0, 10.0, "learn.target_temperature")
        _in(self.ppo_coef, 0.0, 1000.0, "learn.ppo_coef")
        _in(self.ppo_clip, 1e-3, 0.999, "learn.ppo_clip")
        _in(self.max_grad_norm, 1e-6, 1e6, "learn.max_grad_norm")
        _in(self.buffer, 1, 10**8, "learn.buffer")
        _in(self.min_buffer, 0, self.buffer, "learn.min_buffer")


@dataclass
class GateConfig:
    """Each round's network against the network it would replace, head to head on ``deals`` fixed gate deals
    (dealt from ``seed``: never the frozen benchmark deals of ``benchmarks/deals/``); kept when its mean is above
    ``margin``. And, for the curve, against ``search`` on the first ``search_deals`` of them (0: not played)."""

    deals: int = 400
    seed: int = 20261207
    margin: float = 0.0
    search: str = "ismcts:iterations=300,rollout=heuristic"
    search_deals: int = 100

    def validate(self) -> None:
        _in(self.deals, 1, MAX_DEALS, "gate.deals")
        _in(self.seed, 0, SEED_MAX, "gate.seed")
        _in(self.margin, -1e6, 1e6, "gate.margin")
        _need(0 < len(self.search) <= 4096, "gate.search", "must be an agent spec")
        _in(self.search_deals, 0, self.deals, "gate.search_deals")


@dataclass
class ExpertConfig(ResolvedVariant):
    variant: str = "french3"  # a name of tarocchi_rl.variants.VARIANTS
    options: dict = field(default_factory=dict)  # variant options
    seed: int = 0  # seeds the self-play deals, the searches, the moves drawn and the minibatches
    # the starting network: bot:VARIANT / onnx:DIR (an exported bot's policy and value weights) or a PPO / expert
    # checkpoint (its weights; its network must be this config's)
    init: str = ""
    payoff_scale: float | None = None  # values are payoffs / this (None: the variant's)
    network: NetworkConfig = field(default_factory=NetworkConfig)
    belief_loss: float = 0.0  # > 0: a belief head trained on the true location of each unseen card, weighted so
    deals_per_round: int = 2000  # self-play deals labelled per round (split over the workers)
    num_workers: int = 2  # labelling workers (Ray actors, 1 CPU each; 0: in the learner's process)
    torch_threads: int = 2  # the learner's PyTorch threads (between rounds the workers are idle)
    device: str = "auto"  # the learner's device (auto: CUDA when torch sees one); the workers use the CPU
    max_rounds: int = 0  # stop after this many rounds (0: none)
    max_minutes: float = 0.0  # stop at the end of the round that passes this wall time (0: none)
    carry_every_minutes: float = 180.0  # with --carry: the resumable checkpoint written there this often
    search: SearchConfig = field(default_factory=SearchConfig)
    learn: LearnConfig = field(default_factory=LearnConfig)
    gate: GateConfig = field(default_factory=GateConfig)

    def validate(self) -> ExpertConfig:
        _need(self.variant in VARIANTS, "variant", f"must be one of {', '.join(VARIANTS)}, got {self.variant!r}")
        spec = self.spec
        try:
            self.options = spec.resolve_options(self.options)
        except ValueError as e:
            raise ConfigError(f"options: {e}") from None
        if self.payoff_scale is None:
            self.payoff_scale = spec.payoff_scale
        _in(self.payoff_scale, 1e-9, 1e9, "payoff_scale")
        _in(self.seed, 0, SEED_MAX, "seed")
        _need(0 < len(self.init) <= 4096, "init", "must name the starting network (bot:VARIANT, onnx:DIR or a "
              "checkpoint)")
        _in(self.belief_loss, 0.0, MAX_BELIEF_LOSS, "belief_loss")
        _in(self.deals_per_round, 1, 10**7, "deals_per_round")
        _in(self.num_workers, 0, 4096, "num_workers")
        _in(self.torch_threads, 1, 4096, "torch_threads")
        _need(self.device in DEVICES, "device", f"must be one of {', '.join(DEVICES)}, got {self.device!r}")
        _in(self.max_rounds, 0, BIG, "max_rounds")
        _in(self.max_minutes, 0.0, 10**7, "max_minutes")
        _in(self.carry_every_minutes, 0.0, 10**7, "carry_every_minutes")
        for section in (self.network, self.search, self.learn, self.gate):
            section.validate()
        self.train_config()  # the network's own bounds (its parameter count), as PPO checks them
        return self

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def train_config(self) -> TrainConfig:
        """The PPO config that describes this run's network (a round's checkpoint carries it: ``ppo:CK``,
        ``export`` and ``train --set init=CK`` read it); no imitation, no init (the weights are the checkpoint's)."""
        from ..rl.config import config_from_dict

        return config_from_dict({"variant": self.variant, "options": dict(self.options), "seed": self.seed,
                                 "payoff_scale": self.payoff_scale, "network": dataclasses.asdict(self.network),
                                 "belief_loss": self.belief_loss, "device": self.device,
                                 "torch_threads": self.torch_threads, "imitation": {"decisions": 0}})


def load_expert_config(path: str | os.PathLike[str] | None, overrides: Iterable[str] = ()) -> ExpertConfig:
    """The validated config of a YAML file (optional), then ``--set`` overrides."""
    return load_typed_config(ExpertConfig, path, overrides)


def expert_config_from_dict(d: dict) -> ExpertConfig:
    """The validated config of a mapping (a carried checkpoint's ``expert_config``)."""
    return typed_config_from_dict(ExpertConfig, d)


def with_resume_overrides(d: dict, overrides: dict[str, Any]) -> ExpertConfig:
    """A resumed run's config: its own, with only :data:`RESUMABLE_KEYS` changed."""
    for k in overrides:
        if k not in RESUMABLE_KEYS:
            raise ConfigError(f"a resumed run keeps its config; only {', '.join(RESUMABLE_KEYS)} may be changed "
                              f"(got {k})")
    return load_typed_config(ExpertConfig, None, [f"{k}={v}" for k, v in overrides.items()], base=d)
