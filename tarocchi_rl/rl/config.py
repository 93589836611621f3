"""The typed training configuration: YAML file + ``--set key=value`` overrides -> :class:`TrainConfig`.

Every field is documented below; unknown keys, wrong types and out-of-range values are a
:class:`ConfigError` naming the key (dotted path) and the file. Every number is bounded: floats are finite (no
``.inf`` / ``.nan``), integers lie in a stated range (sizes and counts have an upper bound, so that a typo fails
here rather than as an allocation deep in a worker), ``seed`` in [0, 2^63). The resolved config is written to the run
directory (``config.yaml``) and logged to TensorBoard as text, with ``payoff_scale`` resolved to a number.

Two counts are never mixed: *samples* are the learner seats' decisions (what PPO trains on: ``total_samples``),
*decisions* are every seat's (learner, league snapshots, heuristic).

Example (``configs/ppo_mineo.yaml``)::

    variant: mineo
    seed: 0
    max_minutes: 55
    ppo: {lr: 0.0003, epochs: 3}
    league: {heuristic_share: 0.3}
"""

from __future__ import annotations

import dataclasses
import math
import os
import types
import typing
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

import yaml

from .. import bounded
from ..arena import MAX_DEALS
from ..bits import SEED_MAX
from ..bounded import shown
from ..core.obs_layout import build_privileged_layout, card_planes
from ..core.phases import DECISION_KINDS
from ..keyvalue import key_values
from ..policies.belief import belief_shape
from ..variants import VARIANTS, VariantSpec, get_variant


class ConfigError(ValueError):
    """A malformed config: says which key and why."""


def _need(cond: bool, key: str, msg: str) -> None:
    if not cond:
        raise ConfigError(f"{key}: {msg}")


def _at_most(value: float, hi: float, key: str) -> None:
    """The upper bound of a size or count (the lower bounds are checked beside it)."""
    _need(value <= hi, key, f"must be <= {hi:,}, got {value:,}")


DEVICES = ("auto", "cpu", "cuda")  # TrainConfig.device
CRITICS = ("seat", "perfect")  # TrainConfig.critic
MAX_BELIEF_LOSS = 1000.0  # TrainConfig.belief_loss: the auxiliary loss's weight
BIG = 10**12  # the upper bound of the counts with no natural limit (samples, updates, decisions, intervals)




MAX_CONFIG_BYTES = 1 << 16  # bytes of a config file, or of one value read as YAML (the shipped configs are 1 kB)
MAX_YAML_DEPTH = 16  # nesting of YAML mappings and lists (a config nests three deep)


class BoundedYamlLoader(yaml.SafeLoader):
    """PyYAML's safe loader without anchors and aliases (``&a``, ``*a``: a few lines of aliases to aliases expand
    to billions of nodes, the "billion laughs") and with nesting bounded by :data:`MAX_YAML_DEPTH` (deeper, the
    composer's recursion fails); a config needs neither. Both are ``yaml.YAMLError``s."""

    depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.composer.ComposerError(None, None, "anchors and aliases (&name, *name) are not allowed",
                                              event.start_mark)
        if self.depth >= MAX_YAML_DEPTH:
            raise yaml.composer.ComposerError(None, None, f"nested more than {MAX_YAML_DEPTH} levels deep",
                                              event.start_mark)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def load_yaml(text: str) -> Any:
    """The value of YAML ``text`` by :class:`BoundedYamlLoader`: a ``yaml.YAMLError`` when it is not YAML, holds
    an anchor or alias, nests too deeply or is longer than :data:`MAX_CONFIG_BYTES` characters."""
    if len(text) > MAX_CONFIG_BYTES:
        raise yaml.YAMLError(f"longer than {MAX_CONFIG_BYTES:,} characters")
    return yaml.load(text, Loader=BoundedYamlLoader)  # a safe loader: plain data only


def _yaml(text: str, key: str) -> Any:
    """A ``--set`` value read as YAML (a ConfigError naming the key when it is not YAML)."""
    try:
        return load_yaml(text)
    except yaml.YAMLError as e:
        why = " ".join(str(getattr(e, "problem", None) or e).split())
        raise ConfigError(f"{key}: not a valid YAML value ({why}): {shown(text)}") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as e:  # e.g. a date such as 2024-13-45
        raise ConfigError(f"{key}: not a valid YAML value ({type(e).__name__}): {shown(text)}") from None


MAX_NETWORK_PARAMETERS = 16_000_000  # parameters of the network (64 MB of float32; the default one has 0.3 to 0.5 M)


def network_parameters(obs_dim: int, n_actions: int, hidden: list[int], belief_outputs: int = 0,
                       cards: tuple[int, int, int] | None = None) -> int:
    """The number of parameters of the policy/value network (:class:`tarocchi_rl.rl.network.PolicyValueNet`) with
    these trunk widths: every layer's weights and biases, the policy head, the value head and the belief head
    (``belief_outputs`` = cards x locations; 0: no belief head); ``cards`` = (C, P, E): the card encoder of
    ``network.kind: cards`` (C cards, P card planes, width E), whose output (2E and the R = obs_dim - P * C other
    entries) the trunk reads."""
    extra, width = 0, obs_dim
    if cards is not None:
        c, p, e = cards
        extra = c * e + (p + 1) * e + (e + 1) * e  # the cards' embeddings, the two layers shared by the cards
        width = 2 * e + obs_dim - p * c
    widths = [width, *hidden]
    trunk = sum((a + 1) * b for a, b in zip(widths, widths[1:], strict=False))
    return extra + trunk + (widths[-1] + 1) * (n_actions + 1 + belief_outputs)


NETWORK_KINDS = ("mlp", "cards")


def card_encoder(spec: Any, network: NetworkConfig) -> tuple[int, int, int] | None:
    """(C cards, P card planes, width E) of the card encoder of ``network`` (``kind: cards``) on a variant (a
    VariantSpec), else None."""
    if network.kind != "cards":
        return None
    n_cards = spec.deck.n_cards
    return n_cards, card_planes(spec.obs_rows, n_cards)[0].size // n_cards, network.card_width


@dataclass
class NetworkConfig:
    hidden: list[int] = field(default_factory=lambda: [256, 256])  # MLP trunk widths (shared by policy and value)
    activation: str = "relu"  # relu | tanh
    # mlp: the trunk reads the flat observation | cards: a card encoder first (rl/network.py CardEncoder): each card's
    # planes (in hand, played by seat r, in the trick, ...) and a learned embedding of the card go through a small MLP
    # shared by the cards, pooled (mean and max); the trunk reads that and the observation's other entries
    kind: str = "mlp"
    card_width: int = 32  # the card encoder's width E (kind: cards)

    def validate(self) -> None:
        _need(len(self.hidden) >= 1 and all(h >= 1 for h in self.hidden), "network.hidden",
              "must be a non-empty list of positive widths")
        _need(len(self.hidden) <= 64 and all(h <= 65536 for h in self.hidden), "network.hidden",
              "must have at most 64 layers of at most 65536 units")
        _need(self.activation in ("relu", "tanh"), "network.activation", "must be relu or tanh")
        _need(self.kind in NETWORK_KINDS, "network.kind", f"must be one of {', '.join(NETWORK_KINDS)}")
        _need(1 <= self.card_width <= 4096, "network.card_width", "must be 1..4096")


@dataclass
class PPOConfig:
    lr: float = 3e-4  # Adam learning rate at the start
    lr_schedule: str = "linear"  # linear (to lr_end at total_samples) | constant
    lr_end: float = 1e-4  # learning rate reached at total_samples (linear schedule)
    gamma: float = 1.0  # discount between a seat's successive decisions (payoffs come at the end of a deal)
    gae_lambda: float = 0.95  # GAE lambda
    clip: float = 0.2  # PPO ratio clip epsilon
    value_coef: float = 0.5  # weight of the value loss (0.5 * squared error)
    entropy_coef: float = 0.01  # weight of the entropy bonus
    epochs: int = 3  # passes over each rollout batch
    minibatch_size: int = 2048  # samples per gradient step
    max_grad_norm: float = 0.5  # global gradient-norm clip
    normalize_advantages: bool = True  # per minibatch
    target_kl: float = 0.0  # stop the epochs of an update early when approx-KL exceeds this (0 = never)
    # updates at the start of a run where only the value head, the belief head and the critic learn, the trunk and
    # the policy fixed: a network started from ``init`` gets a critic that knows its play before the policy moves
    # (letting the value and belief losses move the shared trunk alone wrecked the policy: measured on french3)
    policy_warmup: int = 0

    def validate(self) -> None:
        _need(self.lr > 0, "ppo.lr", "must be > 0")
        _need(self.lr_schedule in ("linear", "constant"), "ppo.lr_schedule", "must be linear or constant")
        _need(0 <= self.lr_end, "ppo.lr_end", "must be >= 0")
        _need(0 <= self.gamma <= 1, "ppo.gamma", "must be in [0, 1]")
        _need(0 <= self.gae_lambda <= 1, "ppo.gae_lambda", "must be in [0, 1]")
        _need(0 < self.clip < 1, "ppo.clip", "must be in (0, 1)")
        _need(self.value_coef >= 0, "ppo.value_coef", "must be >= 0")
        _need(self.entropy_coef >= 0, "ppo.entropy_coef", "must be >= 0")
        _need(self.epochs >= 1, "ppo.epochs", "must be >= 1")
        _need(self.minibatch_size >= 1, "ppo.minibatch_size", "must be >= 1")
        _need(self.max_grad_norm > 0, "ppo.max_grad_norm", "must be > 0")
        _need(self.target_kl >= 0, "ppo.target_kl", "must be >= 0")
        _need(self.policy_warmup >= 0, "ppo.policy_warmup", "must be >= 0")
        _at_most(self.epochs, 10_000, "ppo.epochs")
        _at_most(self.minibatch_size, 2**24, "ppo.minibatch_size")


@dataclass
class LeagueConfig:
    self_play_share: float = 0.4  # deals where the current policy plays every seat
    heuristic_share: float = 0.3  # deals where the opponents are the fixed `opponent` (the heuristic bot)
    # the rest: the opponents are a past snapshot drawn uniformly from the pool (`opponent` while it is empty)
    snapshot_every: int = 20  # updates between snapshots added to the pool
    pool_size: int = 8  # snapshots kept (oldest dropped)
    opponent: str = "heuristic"  # the fixed opponent: any agent spec (tarocchi-rl exploit: the frozen target)
    learner_seats: str = "some"  # against opponents, the learner takes: some (1..P-1 random seats) | one seat

    def validate(self) -> None:
        _need(0 <= self.self_play_share <= 1, "league.self_play_share", "must be in [0, 1]")
        _need(0 <= self.heuristic_share <= 1, "league.heuristic_share", "must be in [0, 1]")
        _need(self.self_play_share + self.heuristic_share <= 1, "league",
              "self_play_share + heuristic_share must be <= 1")
        _need(self.snapshot_every >= 1, "league.snapshot_every", "must be >= 1")
        _need(self.pool_size >= 0, "league.pool_size", "must be >= 0")
        _at_most(self.snapshot_every, BIG, "league.snapshot_every")
        _at_most(self.pool_size, 10_000, "league.pool_size")
        _need(0 < len(self.opponent) <= 4096, "league.opponent", "must be an agent spec")
        _need(self.learner_seats in ("some", "one"), "league.learner_seats", "must be some or one")


RECORD_SEATS = ("people", "all")  # ImitationConfig.record_seats


@dataclass
class ImitationConfig:
    # decisions imitated before PPO (warm start, rl/imitation.py): the teacher's, or at most this many of the
    # records' (imitation.records); 0 = pure RL
    decisions: int = 0
    teacher: str = "heuristic"  # the agent spec imitated (tarocchi-rl exploit: the target, so it starts as a clone)
    # JSON-lines files of tarocchi-record/1 games (e.g. `tarocchi-rl games export`), one path or a list: when set, the
    # warm start imitates the decisions recorded there instead of the teacher (rl/record_imitation.py)
    records: list[str] = field(default_factory=list)
    # whose decisions of the records are imitated: people (the seats whose stored.seats[i].kind is person; every
    # seat of a record without `stored`) | all
    record_seats: str = "people"
    lr: float = 1e-3  # Adam learning rate of the imitation phase
    minibatch_size: int = 2048  # samples per gradient step
    epochs: int = 1  # passes over each chunk of decisions (a teacher's are new every chunk; records are few)
    value_coef: float = 0.5  # weight of the value regression on the deals' payoffs (the teacher's or the records')

    def validate(self) -> None:
        _need(self.decisions >= 0, "imitation.decisions", "must be >= 0")
        _need(0 < len(self.teacher) <= 4096, "imitation.teacher", "must be an agent spec")
        _need(all(0 < len(p) <= 4096 for p in self.records), "imitation.records",
              "must be a path or a list of paths of JSON-lines files of records")
        _need(not self.records or self.decisions > 0, "imitation.records",
              "needs imitation.decisions > 0: the most recorded decisions imitated")
        _need(self.record_seats in RECORD_SEATS, "imitation.record_seats",
              f"must be one of {', '.join(RECORD_SEATS)}, got {shown(self.record_seats)}")
        _need(self.lr > 0, "imitation.lr", "must be > 0")
        _need(self.minibatch_size >= 1, "imitation.minibatch_size", "must be >= 1")
        _need(self.epochs >= 1, "imitation.epochs", "must be >= 1")
        _need(self.value_coef >= 0, "imitation.value_coef", "must be >= 0")
        _at_most(self.decisions, BIG, "imitation.decisions")
        _at_most(self.minibatch_size, 2**24, "imitation.minibatch_size")
        _at_most(self.epochs, 10_000, "imitation.epochs")


@dataclass
class EvalConfig:
    every: int = 50  # updates between duplicate-arena evaluations (0 = only at the end)
    deals: int = 200  # duplicate deals per evaluation, against each of `opponents`
    opponents: list[str] = field(default_factory=lambda: ["heuristic", "random"])
    final_deals: int = 500  # deals of the evaluation at the end of the run (0 = none)

    def validate(self) -> None:
        _need(self.every >= 0, "eval.every", "must be >= 0")
        _need(self.deals >= 1, "eval.deals", "must be >= 1")
        _need(self.final_deals >= 0, "eval.final_deals", "must be >= 0")
        _need(all(o in ("heuristic", "random") for o in self.opponents), "eval.opponents",
              "entries must be heuristic or random")
        _at_most(self.every, BIG, "eval.every")
        _at_most(self.deals, MAX_DEALS, "eval.deals")
        _at_most(self.final_deals, MAX_DEALS, "eval.final_deals")


class ResolvedVariant:
    """The base of a config that names a variant (``variant``): :attr:`spec`, the variant resolved once, here at the
    config (its ``validate`` reads it), which the layers below read instead of looking the name up again. Not a
    dataclass field: it is in neither ``to_dict()``, the saved YAML nor ``==``; a pickled or copied config carries it
    by name (a VariantSpec pickles so)."""

    variant: str  # the subclass's field (a plain base's annotation is no dataclass field)

    @property
    def spec(self) -> VariantSpec:
        """The VariantSpec of ``variant`` (looked up again only when ``variant`` changed since)."""
        spec: VariantSpec | None = self.__dict__.get("_spec")
        if spec is None or spec.name != self.variant:
            spec = self.__dict__["_spec"] = get_variant(self.variant)
        return spec


@dataclass
class TrainConfig(ResolvedVariant):
    variant: str = "mineo"  # a name of tarocchi_rl.variants.VARIANTS
    options: dict = field(default_factory=dict)  # variant options (see `tarocchi-rl play --help`)
    seed: int = 0  # seeds deals, action sampling, league draws and the network initialisation
    # learner samples to train on (the learner seats' decisions, not every seat's); also the lr schedule's horizon
    total_samples: int = 40_000_000
    max_minutes: float = 55.0  # wall-clock stop in minutes (0 = none); the run then ends with a checkpoint
    max_updates: int = 0  # stop after this many updates (0 = none)
    num_envs: int = 512  # games per rollout worker (a batched core each)
    rollout_steps: int = 48  # decisions per game per rollout; deals in flight are then played to their end
    num_workers: int = 1  # Ray rollout actors (0 = one worker in the learner's process, for debugging)
    async_rollouts: bool = True  # Ray workers collect the next rollout while the learner trains (1 update stale)
    torch_threads: int = 1  # PyTorch threads of the learner (workers use 1)
    # where the learner's network and PPO update run: auto (CUDA when torch sees a GPU, else cpu) | cpu | cuda;
    # the rollout workers always play on the CPU (the weights are sent to them as CPU tensors)
    device: str = "auto"
    bf16: bool = False  # CUDA only: the learner's forward and backward under bf16 autocast (losses in float32)
    # the value estimates of GAE and the value targets: seat (the policy network's own value head, which reads only
    # the seat's observation) | perfect (a separate critic that also reads every hand, the stock and the discard:
    # rl/network.py CriticNet; training only, never exported; the policy's value head is still trained)
    critic: str = "seat"
    # the weight of the belief head's auxiliary loss: > 0 adds to the policy network a head that predicts where each
    # card the seat cannot see lies (every hand, the stock, the discard: tarocchi_rl/policies/belief.py), trained by
    # cross-entropy on the learner's own deals (the rollouts then return the hidden cards); exported as belief.onnx
    belief_loss: float = 0.0
    # rewards = deal payoff / payoff_scale; None (default) = the variant's payoff_scale (10 for mineo and
    # piedmont, 100 for french: rewards of order 1), resolved when the config is validated
    payoff_scale: float | None = None
    network: NetworkConfig = field(default_factory=NetworkConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    league: LeagueConfig = field(default_factory=LeagueConfig)
    imitation: ImitationConfig = field(default_factory=ImitationConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    # the kinds of decision the learner trains on (bid: auction and commitments, discard, play; core/phases.py);
    # its seats' other decisions are played by `others` (any agent spec) and are not trained on
    learn: list[str] = field(default_factory=lambda: list(DECISION_KINDS))
    others: str = "heuristic"
    # a checkpoint (file or run directory) whose weights start the network instead of the imitation warm start,
    # e.g. the output of `tarocchi-rl expert` (expert iteration), or an exported bot, onnx:DIR or bot:VARIANT (its
    # policy and value weights, read from policy.onnx); same variant and network shape
    init: str | None = None
    checkpoint_every: int = 100  # updates between checkpoints (latest.pt; the last one is always written)
    keep_checkpoints: int = 3  # periodic update_*.pt files kept (older ones deleted; 0 = keep none)
    log_every: int = 1  # updates between TensorBoard scalar writes

    def validate(self) -> TrainConfig:
        """Check every field (a :class:`ConfigError` naming the first bad key) and resolve ``payoff_scale``."""
        _need(self.variant in VARIANTS, "variant", f"unknown variant {self.variant!r} (known: {', '.join(VARIANTS)})")
        spec = self.spec
        try:
            spec.resolve_options(dict(self.options))
        except (ValueError, TypeError) as e:
            raise ConfigError(f"options: {e}") from None
        if self.payoff_scale is None:
            self.payoff_scale = spec.payoff_scale
        _need(self.payoff_scale > 0, "payoff_scale", "must be > 0")
        _need(self.total_samples > 0, "total_samples", "must be > 0")
        _need(self.max_minutes >= 0, "max_minutes", "must be >= 0")
        _need(self.max_updates >= 0, "max_updates", "must be >= 0")
        _need(self.num_envs >= 1, "num_envs", "must be >= 1")
        _need(self.rollout_steps >= 1, "rollout_steps", "must be >= 1")
        _need(self.num_workers >= 0, "num_workers", "must be >= 0")
        _need(self.torch_threads >= 1, "torch_threads", "must be >= 1")
        _need(self.device in DEVICES, "device", f"must be one of {', '.join(DEVICES)}, got {shown(self.device)}")
        _need(self.critic in CRITICS, "critic", f"must be one of {', '.join(CRITICS)}, got {shown(self.critic)}")
        _need(0 <= self.belief_loss <= MAX_BELIEF_LOSS, "belief_loss", f"must be in [0, {MAX_BELIEF_LOSS:g}]")
        _need(self.checkpoint_every >= 1, "checkpoint_every", "must be >= 1")
        _need(self.keep_checkpoints >= 0, "keep_checkpoints", "must be >= 0")
        _need(self.log_every >= 1, "log_every", "must be >= 1")
        _need(0 <= self.seed <= SEED_MAX, "seed", f"must be in [0, 2^63 - 1], got {self.seed}")
        _at_most(self.payoff_scale, 1e9, "payoff_scale")
        _at_most(self.total_samples, 10**15, "total_samples")
        _at_most(self.max_minutes, 10**7, "max_minutes")
        _at_most(self.max_updates, BIG, "max_updates")
        _at_most(self.num_envs, 2**20, "num_envs")
        _at_most(self.rollout_steps, 10**6, "rollout_steps")
        _at_most(self.num_workers, 4096, "num_workers")
        _at_most(self.torch_threads, 4096, "torch_threads")
        _at_most(self.checkpoint_every, BIG, "checkpoint_every")
        _at_most(self.keep_checkpoints, 10**6, "keep_checkpoints")
        _at_most(self.log_every, BIG, "log_every")
        _need(bool(self.learn) and len(set(self.learn)) == len(self.learn) and set(self.learn) <= set(DECISION_KINDS),
              "learn", f"must be a non-empty list of distinct kinds of {', '.join(DECISION_KINDS)}")
        _need(0 < len(self.others) <= 4096, "others", "must be an agent spec")
        _need(self.init is None or 0 < len(self.init) <= 4096, "init", "must be a checkpoint path")
        for section in (self.network, self.ppo, self.league, self.imitation, self.eval):
            section.validate()
        belief_outputs = math.prod(belief_shape(spec)) if self.belief_loss > 0 else 0  # cards x locations
        n = network_parameters(spec.obs_dim, spec.n_actions, self.network.hidden, belief_outputs,
                               card_encoder(spec, self.network))
        _need(n <= MAX_NETWORK_PARAMETERS, "network.hidden", f"a network of {n:,} parameters for {self.variant}, more "
              f"than the {MAX_NETWORK_PARAMETERS:,} allowed")
        if self.critic == "perfect":  # the critic: the same widths on the observation and the hidden cards, no policy
            hidden_cards = build_privileged_layout(spec.n_players, spec.deck.n_cards)[1]
            n = network_parameters(spec.obs_dim + hidden_cards, 0, self.network.hidden)
            _need(n <= MAX_NETWORK_PARAMETERS, "network.hidden", f"a critic (critic: perfect) of {n:,} parameters for "
                  f"{self.variant}, more than the {MAX_NETWORK_PARAMETERS:,} allowed")
        return self

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _coerce(value: Any, typ: Any, key: str) -> Any:
    """Check/convert one leaf value to the field's type (YAML and --set strings both arrive here)."""
    origin = typing.get_origin(typ)
    if origin in (typing.Union, types.UnionType):  # ``X | None``: null / none / ~ give None, else an X
        (inner,) = (t for t in typing.get_args(typ) if t is not type(None))
        if value is None or (isinstance(value, str) and value.strip().lower() in ("null", "none", "~", "")):
            return None
        return _coerce(value, inner, key)
    if origin is list:
        (item,) = typing.get_args(typ)
        if isinstance(value, str):
            value = _yaml(value, key)
        if not isinstance(value, list):
            raise ConfigError(f"{key}: expected a list, got {shown(value)}")
        if len(value) > MAX_LIST:
            raise ConfigError(f"{key}: at most {MAX_LIST} entries, got {len(value)}")
        return [_coerce(v, item, f"{key}[{k}]") for k, v in enumerate(value)]
    if typ is dict or origin is dict:
        if isinstance(value, str):
            value = _yaml(value, key)
        if not isinstance(value, dict):
            raise ConfigError(f"{key}: expected a mapping, got {shown(value)}")
        return dict(value)
    return _coerce_scalar(value, typ, key)


MAX_LIST = 1000  # entries of a list field (network.hidden, eval.opponents): more is a mistake


def _coerce_scalar(value: Any, typ: Any, key: str) -> Any:
    """A bool, int, float or str leaf (strings from --set parsed as YAML; numbers parsed here). Floats must be
    finite; integers fit in 64 bits (each field's own range is checked by ``validate``)."""
    if isinstance(value, str) and typ in (int, float):  # YAML reads 1e-4 as a string: parse numbers here
        text = value.strip().replace("_", "")
        try:
            value = int(text) if typ is int and "." not in text and "e" not in text.lower() else float(text)
        except ValueError:
            parsed = _yaml(value, key)  # .inf, .nan and other YAML spellings of numbers
            if isinstance(parsed, bool) or not isinstance(parsed, (int, float)):
                what = "an integer" if typ is int else "a number"
                raise ConfigError(f"{key}: expected {what}, got {shown(value)}") from None
            value = parsed
    elif isinstance(value, str) and typ is not str:
        value = _yaml(value, key)
    if typ is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key}: expected true or false, got {shown(value)}")
        return value
    if typ is int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key}: expected an integer, got {shown(value)}")
        if not -(2**63) <= value < 2**63:
            raise ConfigError(f"{key}: an integer must fit in 64 bits, got {shown(value)}")
        return value
    if typ is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}: expected a number, got {shown(value)}")
        try:
            number = float(value)
        except OverflowError:  # an int too large for a float
            number = math.inf
        if not math.isfinite(number):
            raise ConfigError(f"{key}: must be a finite number, got {shown(value)}")
        return number
    if typ is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key}: expected a string, got {shown(value)}")
        return value
    raise ConfigError(f"{key}: unsupported field type {typ}")  # pragma: no cover


ONE_OR_MANY = ("imitation.records",)  # list fields that also take one string (not starting with "[") as one entry


def _build(cls: Any, data: dict, prefix: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix or 'config'}: expected a mapping, got {shown(data)}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in fields(cls)}
    kwargs = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if k not in known:
            raise ConfigError(f"{key}: unknown key (known here: {', '.join(sorted(known))})")
        typ = hints[k]
        if key in ONE_OR_MANY and isinstance(v, str) and not v.lstrip().startswith("["):
            v = [v]  # one path, taken as written (not read as YAML)
        if dataclasses.is_dataclass(typ):
            kwargs[k] = _build(typ, v, key + ".")
        else:
            kwargs[k] = _coerce(v, typ, key)
    return cls(**kwargs)


def _set(data: dict, dotted: str, value: Any) -> None:
    """Apply one ``key=value`` override (dotted keys reach the nested sections)."""
    parts = dotted.split(".")
    node = data
    for p in parts[:-1]:
        node = node.setdefault(p, {})
        if not isinstance(node, dict):
            raise ConfigError(f"--set {dotted}: {p} is not a section")
    node[parts[-1]] = value


def parse_overrides(overrides: Iterable[str]) -> dict[str, str]:
    """``--set KEY=VALUE`` arguments -> {KEY: VALUE} (a ConfigError for one that is not ``KEY=VALUE``)."""
    try:
        return key_values(overrides, "--set")
    except ValueError as e:
        raise ConfigError(str(e)) from None


def load_config(path: str | os.PathLike[str] | None = None, overrides: Iterable[str] = (),
                base: dict | None = None) -> TrainConfig:
    """The validated config from a YAML file (optional), then ``overrides`` (``["ppo.lr=1e-4", ...]``)."""
    return load_typed_config(TrainConfig, path, overrides, base)


Config = TypeVar("Config")


def load_typed_config(schema: type[Config], path: str | os.PathLike[str] | None = None,
                      overrides: Iterable[str] = (), base: dict | None = None) -> Config:
    """:func:`load_config` for another schema: a dataclass of this module's field types (nested dataclasses,
    lists, ``X | None``, scalars) whose ``validate()`` returns itself (e.g. expert iteration's config)."""
    data = dict(base or {})
    where = ""
    if path is not None:
        where = f"{path}: "
        if not os.path.lexists(path):
            raise ConfigError(f"config file {path} not found")
        try:  # a directory, no permission, over MAX_CONFIG_BYTES, a pipe that does not end, not UTF-8
            text = bounded.read_text(path, MAX_CONFIG_BYTES, what=f"config file {path}")
        except bounded.BoundedInputError as e:
            raise ConfigError(str(e)) from None
        try:
            loaded = load_yaml(text)
        except yaml.YAMLError as e:
            raise ConfigError(f"{path}: not valid YAML: {' '.join(str(e).split())}") from None
        except (ValueError, TypeError, OverflowError, RecursionError) as e:  # YAML that PyYAML cannot build
            raise ConfigError(f"{path}: not a valid YAML config ({type(e).__name__}: {shown(str(e), 200)})") from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: the config must be a mapping of keys to values")
        data.update(loaded)
    for k, v in parse_overrides(overrides).items():
        value: Any = v
        if k.startswith("options."):  # a variant option has no declared type here: read it as YAML
            value = _yaml(value, k)  # (options.early_solo=false is the boolean, accuso_points=3 the integer)
        _set(data, k, value)
    try:
        config: Config = _build(schema, data, "").validate()
    except ConfigError as e:
        raise ConfigError(f"{where}{e}") from None
    return config


# the only keys a resumed run may change: the stopping rules and the learner's device (a run may move to a machine
# with or without a GPU); they do not change what is learned
RESUMABLE_KEYS = ("max_minutes", "max_updates", "device")


def check_run_dir(path: str | os.PathLike[str]) -> str:
    """``--resume``: the run directory to continue (a ConfigError, before any work, for anything else)."""
    if not os.path.exists(path):
        raise ConfigError(f"--resume {path}: run directory not found")
    if not os.path.isdir(path):
        raise ConfigError(f"--resume {path}: not a run directory (--resume takes the run directory, e.g. "
                          f"runs/mineo-XXXX, not a checkpoint file)")
    return os.fspath(path)


def config_from_dict(d: dict) -> TrainConfig:
    """The validated config of a mapping (a checkpoint's ``config``, ``TrainConfig.to_dict()``)."""
    return typed_config_from_dict(TrainConfig, d)


def typed_config_from_dict(schema: type[Config], d: dict) -> Config:
    """:func:`config_from_dict` for another schema (:func:`load_typed_config`)."""
    config: Config = _build(schema, d, "").validate()
    return config


def dump_config(cfg: TrainConfig) -> str:
    return yaml.safe_dump(cfg.to_dict(), sort_keys=False)
