"""The PPO learner: rollouts from the worker pool, clipped-PPO updates, logging, evaluations, checkpoints.

``Trainer.run``, top to bottom::

    the network: built from the config, its weights from ``init`` when set (a checkpoint, e.g. expert iteration's)
    warm start (imitation.decisions > 0 and no init): imitate imitation.teacher (the heuristic), or the decisions
        recorded in imitation.records (people's), evaluate (update 0)
    until a stopping rule (total_samples, max_minutes, max_updates):
        batches = workers.sample(weights, league)       one rollout per worker, GAE already computed
        (critic: perfect) advantages and targets recomputed with the perfect-information critic
        (belief_loss > 0) the belief targets of the rollout, and the calibration of the beliefs it was played with
        ppo_update (rl/update.py): for epoch in 1..ppo.epochs, for each shuffled minibatch: ppo_loss (+ the
            critic's value loss, + belief_loss x the belief head's cross-entropy) -> backward
            -> clip grads (the critic's apart) -> Adam step(s)
        every league.snapshot_every updates: the current weights join the league pool
        every log_every updates: TensorBoard scalars
        every eval.every updates: duplicate arena (greedy policy) vs heuristic and random
        every checkpoint_every updates (and at the stop): checkpoint
    final evaluation (eval.final_deals), final.pt

The workers (:mod:`tarocchi_rl.rl.workers`) are chosen once from the config: ``num_workers: 0`` plays the
rollouts in the learner's process (debugging, exact reproducibility tests); otherwise each worker is a Ray
actor holding its own batched core (``ray.init(num_cpus=2)`` here, or ``ray.init(address=...)`` with
``--ray-address`` on a cluster), and ``async_rollouts`` lets them play the next rollout while the learner
trains (the samples are then one update old; the PPO ratio uses the behaviour log-probabilities they were
sampled with).

**Critic** (``critic``): ``seat`` (default) bootstraps GAE with the policy network's own value head, which reads
the deciding seat's observation only; ``perfect`` adds a separate :class:`~tarocchi_rl.rl.network.CriticNet` that
also reads the hidden cards (the workers return each sample's privileged observation, ``hidden``): the learner
evaluates it on each rollout and recomputes the advantages and value targets along the chains with it, before the
epochs. The policy network's value head is still regressed on those targets (guided search and exported bots read
it). The critic has its own Adam optimizer and gradient clip; its weights and optimizer are in every checkpoint
(``critic``, ``critic_optimizer``: resume continues it) and never in an exported bot.

**Beliefs** (``belief_loss > 0``): the policy network has a belief head (:mod:`~tarocchi_rl.rl.network`); the
workers return each sample's privileged observation (``hidden``), from which, with the observation, the learner
derives each unseen card's true location (:func:`~tarocchi_rl.policies.belief.belief_targets`); the head's
cross-entropy on those cards, weighted by ``belief_loss``, joins the PPO loss (its gradient shapes the shared
trunk). Before the epochs, the beliefs of the network that played the rollout are measured on (at most
:data:`CALIBRATION_SAMPLES` of) its samples, which it has not been trained on yet.

**Device** (``device``, ``bf16``): the learner's network, critic and update run on
:func:`~tarocchi_rl.rl.network.resolve_device`'s device (``auto``: CUDA when torch sees a GPU); a rollout's arrays
go there through pinned memory. The workers always play on the CPU: the weights they are sent, the league
snapshots, the evaluations and the checkpoints are CPU copies. ``bf16`` (CUDA only) runs the forward passes under
bf16 autocast; the losses are computed in float32.

Two counts, never mixed: **learner samples** (``self.learner_samples``) are the learner seats' decisions,
the ones PPO trains on (the x axis of every curve, ``total_samples``, the lr schedule); **all decisions**
(``self.all_decisions``) are every seat's, learner, snapshots and heuristic. Checkpoints, ``eval.jsonl`` and
the result of :func:`train` keep their established keys: ``samples`` = learner samples, ``decisions`` = all
decisions (``timed_samples`` / ``timed_decisions``, ``samples_per_s`` / ``decisions_per_s`` likewise).

TensorBoard tags (step: learner samples): ``returns/{self_play,vs_heuristic,vs_snapshot}`` (learner seats'
mean payoff per deal, game units), ``returns_seat/S``, ``returns_role/{declarer,partner,defender,passed}``,
``bids/WORD`` (share of the learner's auction words),
``loss/{policy_loss,value_loss,entropy,approx_kl,clip_fraction,explained_variance,grad_norm}`` (``critic:
perfect``: also ``loss/{critic_loss,critic_grad_norm,critic_explained_variance}``; ``belief_loss > 0``: also
``loss/belief``, the cross-entropy, and ``belief/{ece,top1,nll}``: the calibration before the update,
:func:`~tarocchi_rl.policies.belief.reliability`),
``perf/{decisions_per_s,samples_per_s,rollout_s,learn_s}`` (decisions: every seat's, samples: the learner's),
``train/{lr,update,minutes}``, ``league/pool_size``, ``eval/vs_OPP/{mean,ci_low,ci_high,win_rate}`` (and
``eval_final/...``), ``imitation/*`` during the warm start, and the resolved config as text.

Faults:

* Nothing is written to disk before the config is validated and the workers are built and answer (a Ray
  actor whose constructor fails is an error before the run directory exists). A new run directory then
  appears whole, already holding ``config.yaml`` and ``checkpoints/latest.pt`` at update 0
  (:meth:`Trainer._create_run_dir`): with every later write atomic, a driver killed (SIGKILL) at any moment
  leaves either no run directory or one that ``--resume`` continues (``experiments/checks/kill_resume.py`` checks
  this). A resumed run trims ``eval.jsonl`` to the evaluations before its checkpoint.
* A rollout worker that dies (Ray actor lost) is replaced and the run goes on, losing that worker's rollout in
  flight (:class:`~tarocchi_rl.rl.workers.RayPool`). Any other error in the loop (too many worker deaths, a
  bug) first writes ``latest.pt`` of the last complete update, then propagates.
* A non-finite loss (checked before each backward pass) or weight (checked after each update and after the
  warm start) stops the run with :class:`NonFiniteError` (a ValueError: the CLI prints one line and exits 2),
  naming the update and the quantity, before any checkpoint of the poisoned weights is written.
* Ctrl-C (KeyboardInterrupt) anywhere in the loop writes ``latest.pt`` holding the state at the end of the last
  complete update (the learner's state is kept in memory after each update, so an update interrupted halfway
  is dropped whole; a second Ctrl-C during that save is ignored), prints one line on stderr (where it saved,
  how to resume) and returns the result with ``interrupted: true``: the CLI prints it and exits 0. SIGTERM (``kill``,
  a scheduler's preemption, ``docker stop``) does the same while the loop runs in the main thread: a run started
  in the background, where the shell leaves SIGINT ignored, is still stopped with its last update saved.
  ``--resume`` continues from it exactly with ``num_workers: 0``; with Ray workers their random streams
  continue from where the actors are (a valid, not bit-identical continuation).
* ``--resume`` falls back from a damaged ``latest.pt`` (:func:`~tarocchi_rl.rl.checkpoint.load_resume_checkpoint`).
"""

import copy
import dataclasses
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .. import bounded
from ..arena import check_plays, run_arena
from ..core.phases import DECISION_KINDS
from ..policies import make_baseline
from ..policies.belief import belief_targets, reliability
from ..policies.compose import ComposeAgent
from ..provenance import git_state
from .checkpoint import (
    CheckpointError,
    fsync_dir,
    load_resume_checkpoint,
    save_checkpoint,
    write_atomic,
)
from .config import RESUMABLE_KEYS, TrainConfig, config_from_dict, dump_config
from .imitation import imitate, teacher_source
from .losses import explained_variance, gae
from .network import (
    build_critic,
    build_network,
    check_state_shapes,
    load_network,
    onnx_initial_weights,
    resolve_device,
)
from .policy import PPOAgent
from .record_imitation import check_records, record_chunks
from .rollout import AgentFactory, merge_stats
from .update import BELIEF_TARGET, TRAIN_KEYS, Learner, NonFiniteError, ppo_update
from .workers import LocalPool, make_worker_pool

MAX_EVAL_LOG_BYTES = 1 << 26  # bytes of eval.jsonl read back on --resume (an evaluation's line is about 300)
MAX_EVAL_LINE = 1 << 16  # bytes of one of its lines: a longer one is not an evaluation and is dropped
EVAL_SEED = 20261129  # the arena deals of the periodic evaluations: the same every time, comparable over a run
# the rollout arrays PPO uses (hidden: the privileged observation, width 0 unless critic: perfect)
CALIBRATION_SAMPLES = 4096  # samples of a rollout whose beliefs are measured before each update (belief_loss > 0)


def _cpu_state(net: torch.nn.Module) -> dict:
    """A copy of the module's weights on the CPU (what workers, snapshots and checkpoints hold)."""
    return {k: v.detach().to("cpu", copy=True) for k, v in net.state_dict().items()}


def _cpu_tree(obj: Any) -> Any:
    """``obj`` (an optimizer's state dict: dicts, lists, tensors, numbers) with every tensor copied to the CPU."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().to("cpu", copy=True)
    if isinstance(obj, dict):
        return {k: _cpu_tree(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_cpu_tree(v) for v in obj)
    return copy.deepcopy(obj)


@dataclass
class _Clock:
    """Training minutes: those of earlier sessions (a resumed run) plus this session's wall time."""

    minutes_before: float
    start: float

    def minutes(self, now: float | None = None) -> float:
        return self.minutes_before + ((time.perf_counter() if now is None else now) - self.start) / 60


@dataclass
class _Throughput:
    """Counts at the end of this session's first update: throughput is measured from there (Ray start-up and
    JIT cache loads excluded)."""

    start: float
    all_decisions: int
    learner_samples: int

    def report(self, end: float, all_decisions: int, learner_samples: int) -> dict:
        """The result keys ``timed_*`` and ``*_per_s`` (empty when nothing was timed)."""
        seconds, decisions = end - self.start, all_decisions - self.all_decisions
        if seconds <= 0 or decisions <= 0:
            return {}
        samples = learner_samples - self.learner_samples
        return {"timed_seconds": seconds, "timed_decisions": decisions, "timed_samples": samples,
                "decisions_per_s": decisions / seconds, "samples_per_s": samples / seconds}


def load_initial_weights(net: torch.nn.Module, cfg: TrainConfig) -> None:
    """``cfg.init``'s weights into ``net`` (a :class:`CheckpointError` when it is missing, damaged, of another
    variant or of another network shape than ``cfg``'s). The belief head is the one part that may differ: a
    checkpoint without one starts ``net``'s fresh, one with a head that ``net`` lacks has it left out."""
    assert cfg.init is not None
    if cfg.init.startswith(("onnx:", "bot:")):  # an exported bot: its policy and value weights, a fresh belief head
        net.load_state_dict(onnx_initial_weights(cfg.init, cfg, net), strict=False)
        return
    try:
        theirs = load_network(cfg.init, variant=cfg.variant)
    except CheckpointError as e:
        raise CheckpointError(f"init: {e}") from None
    if theirs.cfg.network != cfg.network:
        raise CheckpointError(f"init: {theirs.data['path']} has the network {dataclasses.asdict(theirs.cfg.network)}, "
                              f"which does not fit the network of this config {dataclasses.asdict(cfg.network)}: "
                              "set network.* to match")
    mine = net.state_dict()
    weights = {k: v for k, v in theirs.net.state_dict().items() if not k.startswith("belief.") or k in mine}
    net.load_state_dict(weights, strict=not (net.has_beliefs and not theirs.net.has_beliefs))


class Trainer:
    """A training run in ``run_dir`` (see :mod:`tarocchi_rl.rl.checkpoint` for the directory layout)."""

    def __init__(self, cfg: TrainConfig, run_dir: str | Path, ray_address: str | None = None,
                 progress: bool = True, resume_from: dict | None = None,
                 agent_factory: AgentFactory | None = None) -> None:
        self.cfg, self.run_dir, self.progress = cfg.validate(), Path(run_dir), progress
        spec = self.cfg.spec
        torch.manual_seed(cfg.seed)
        torch.set_num_threads(cfg.torch_threads)
        self.device = resolve_device(cfg.device)  # the learner's; the workers play on the CPU
        self.bf16 = cfg.bf16 and self.device.type == "cuda"
        self.net = build_network(cfg, spec.obs_dim, spec.n_actions)
        if cfg.init is not None and resume_from is None:
            load_initial_weights(self.net, cfg)
        self.net.to(self.device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.ppo.lr, eps=1e-5)
        # critic: perfect: the perfect-information critic and its own optimizer (rl/network.py), else None
        self.critic = build_critic(cfg)
        self.critic_opt = None
        if self.critic is not None:
            self.critic.to(self.device)
            self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=cfg.ppo.lr, eps=1e-5)
        self.gen = torch.Generator().manual_seed(cfg.seed)  # the minibatch shuffles
        self.learner = Learner(self.net, self.critic, [self.opt] if self.critic_opt is None else
                               [self.opt, self.critic_opt], self.device, self.bf16, self.gen)
        self.update = 0
        self.learner_samples = 0  # the learner seats' decisions trained on so far
        self.all_decisions = 0  # every seat's decisions played so far (learner, snapshots, heuristic)
        self.minutes = 0.0
        self.league: list[tuple[int, dict]] = []  # [(snapshot id, weights)]
        self.league_version, self.next_snapshot_id = 0, 0
        self.eval_history: list[dict] = []
        self.imitated = False
        self.imitation_stats: dict | None = None
        self.agent_factory = agent_factory or make_baseline
        # the warm start's teacher when one is still to come, built now so that a bad spec fails before any file
        # is written (None: no warm start in this session, or one on records); with imitation.records, the records
        # read and checked now, for the same reason (self.records: what they hold)
        warm_start_due = (cfg.imitation.decisions > 0 and cfg.init is None
                          and not (resume_from or {}).get("imitated", False))
        on_records = warm_start_due and bool(cfg.imitation.records)
        self.records = check_records(cfg) if on_records else None
        self.teacher = (self.agent_factory(cfg.imitation.teacher, cfg.seed) if warm_start_due and not on_records
                        else None)
        self._check_fixed_agents(self.teacher is not None)
        try:
            self.workers = make_worker_pool(cfg, ray_address, agent_factory=agent_factory)
        except Exception as e:
            raise ValueError(f"the rollout workers failed to start: {type(e).__name__}: "
                             f"{' '.join(str(e).split())[:300]}") from None
        try:
            # a ping: Ray builds actors lazily, so a constructor error surfaces here, before any file is written
            self.workers.state_dicts()
        except Exception as e:
            self.workers.close()
            raise ValueError(f"the rollout workers failed to start: {type(e).__name__}: "
                             f"{' '.join(str(e).split())[:300]}") from None
        if resume_from is not None:
            try:
                self._restore(resume_from)
            except CheckpointError:
                self.workers.close()
                raise
        # where the code of each start / resume of this run came from (provenance of the bots exported from it)
        earlier = (resume_from or {}).get("sources")
        self.sources = [*(earlier if isinstance(earlier, list) else []), {"from_update": self.update, **git_state()}]
        self._committed: dict | None = None  # the state at the end of the last complete update (Ctrl-C)

    # -- the loop -----------------------------------------------------------------------------------------
    def run(self) -> dict:
        """Train until a stopping rule; returns the result (counts, minutes, throughput, final evaluation)."""
        cfg = self.cfg
        try:
            writer, bar = self._open_run_dir()
        except BaseException:
            self.workers.close()
            raise
        clock = _Clock(self.minutes, time.perf_counter())
        throughput = None
        previous_term = signal.signal(signal.SIGTERM, _interrupt) if _main_thread() else None
        try:
            self._commit()
            self._warm_start(writer)
            self._commit()
            stop = self._should_stop()
            while not stop:
                t0 = time.perf_counter()
                batches = self.workers.sample(self._weights(), self.league, self.league_version)
                t1 = time.perf_counter()
                learn_stats = self._learn(batches)
                self._check_weights(f"update {self.update + 1}")
                t2 = time.perf_counter()
                rollout = self._count(batches, clock)
                if throughput is None:  # measured from the end of the first update
                    throughput = _Throughput(time.perf_counter(), self.all_decisions, self.learner_samples)
                self._snapshot_if_due()
                self._commit()
                if self.update % cfg.log_every == 0:
                    self._log(writer, rollout, learn_stats, t1 - t0, t2 - t1, t2 - t0)
                self._show_progress(bar, rollout, t2 - t0)
                stop = self._should_stop()
                if cfg.eval.every and self.update % cfg.eval.every == 0 and not stop:
                    self._evaluate(writer, cfg.eval.deals, final=False)
                if self.update % cfg.checkpoint_every == 0 or stop:
                    self._checkpoint(None if stop else f"update_{self.update:06d}.pt")
            bar.close()
            return self._finish(writer, clock, throughput)
        except KeyboardInterrupt:
            bar.close()
            return self._interrupted()
        except NonFiniteError:
            raise  # nothing saved: the committed state is the last checkpointed one or newer, but the run is sick
        except Exception as e:  # a worker failure (WorkerError) or a bug: keep the last complete update first
            bar.close()
            self._save_committed(f"stopped by {type(e).__name__}")
            raise
        finally:
            if previous_term is not None:
                signal.signal(signal.SIGTERM, previous_term)
            writer.close()
            self.workers.close()

    def _open_run_dir(self) -> tuple[Any, Any]:
        """Create the run directory (a new run) or refresh it (a resumed one); returns the TensorBoard writer
        and the progress bar (learner samples)."""
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        cfg = self.cfg
        if self.update == 0 and not (self.run_dir / "checkpoints" / "latest.pt").exists():
            self._create_run_dir()
        else:
            write_atomic(self.run_dir / "config.yaml", dump_config(cfg).encode())
            self._trim_eval_log()
        writer = SummaryWriter(str(self.run_dir))
        if self.update == 0:
            writer.add_text("config", "```\n" + dump_config(cfg) + "\n```", 0)
        bar = tqdm(total=cfg.total_samples, initial=min(self.learner_samples, cfg.total_samples), unit="sample",
                   unit_scale=True, disable=not self.progress, desc=f"train {cfg.variant}", dynamic_ncols=True)
        return writer, bar

    def _create_run_dir(self) -> None:
        """The first write of a new run (module docstring: Faults): the directory appears whole, holding
        ``config.yaml`` and ``checkpoints/latest.pt`` at update 0, built in a hidden sibling ``.NAME.*`` and
        renamed into place, so a run directory always holds a checkpoint that ``--resume`` continues. An
        existing non-empty directory (made by the user) is written in place, the checkpoint first."""
        run, config = self.run_dir, dump_config(self.cfg).encode()
        if run.is_dir() and any(run.iterdir()):
            save_checkpoint(run / "checkpoints" / "latest.pt", self._state())
            write_atomic(run / "config.yaml", config)
            return
        run.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{run.name}.", dir=run.parent))
        try:
            save_checkpoint(tmp / "checkpoints" / "latest.pt", self._state())
            write_atomic(tmp / "config.yaml", config)
            if run.is_dir():
                run.rmdir()  # empty
            os.rename(tmp, run)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        fsync_dir(run.parent)

    def _trim_eval_log(self) -> None:
        """A resumed run: ``eval.jsonl`` keeps the complete lines of the updates before the checkpoint's and its
        periodic evaluation (a killed driver can leave half a line, or evaluations newer than the checkpoint,
        which the resumed run makes again)."""
        path = self.run_dir / "eval.jsonl"
        if not path.is_file():
            return
        keep = []
        chunks = bounded.iter_chunks(path, MAX_EVAL_LOG_BYTES, what=f"the run's evaluation log {path}")
        for line in (raw.decode("utf-8", "replace") for raw in bounded.iter_lines(chunks, MAX_EVAL_LINE)):
            try:
                entry = bounded.loads(line) if line.endswith("\n") else None  # a cut line has no newline
            except ValueError:
                entry = None
            if not (isinstance(entry, dict) and isinstance(entry.get("update"), int)):
                continue
            done_here = self.update > 0 or self.imitated  # update 0's evaluation follows the warm start
            if entry["update"] < self.update or (entry["update"] == self.update and done_here
                                                 and not entry.get("final")):
                keep.append(line)
        write_atomic(path, "".join(keep).encode())

    def _warm_start(self, writer: Any) -> None:
        """A new run with ``imitation.decisions > 0``: imitate the teacher or the records, then evaluate (update 0)."""
        if (self.teacher is not None or self.records is not None) and self.update == 0 and not self.imitated:
            self._imitate(writer)
            self._check_weights("the imitation warm start")
            if self.cfg.eval.every:
                self._evaluate(writer, self.cfg.eval.deals, final=False)

    def _count(self, batches: list[dict], clock: _Clock) -> dict:
        """One update done: add the rollouts' counts to the run's; returns their merged statistics."""
        self.update += 1
        rollout = merge_stats([b["stats"] for b in batches])
        self.learner_samples += rollout["learner_samples"]
        self.all_decisions += rollout["all_decisions"]
        self.minutes = clock.minutes()
        return rollout

    def _snapshot_if_due(self) -> None:
        """Every ``league.snapshot_every`` updates the current weights join the league (the oldest leaves)."""
        lg = self.cfg.league
        if self.update % lg.snapshot_every == 0 and lg.pool_size > 0:
            self.league.append((self.next_snapshot_id, _cpu_state(self.net)))
            self.next_snapshot_id += 1
            self.league = self.league[-lg.pool_size :]
            self.league_version += 1

    def _should_stop(self) -> bool:
        c = self.cfg
        return (self.learner_samples >= c.total_samples or (c.max_minutes > 0 and self.minutes >= c.max_minutes)
                or (c.max_updates > 0 and self.update >= c.max_updates))

    def _finish(self, writer: Any, clock: _Clock, throughput: _Throughput | None) -> dict:
        """The result dict, after the final evaluation and ``final.pt``."""
        end = time.perf_counter()
        self.minutes = clock.minutes(end)
        result = {"run_dir": str(self.run_dir), "updates": self.update, "samples": self.learner_samples,
                  "decisions": self.all_decisions, "minutes": self.minutes}
        if self.imitation_stats:
            result["imitation"] = self.imitation_stats
        if throughput is not None:
            result.update(throughput.report(end, self.all_decisions, self.learner_samples))
        if self.cfg.eval.final_deals:
            result["final_eval"] = self._evaluate(writer, self.cfg.eval.final_deals, final=True)
        self._checkpoint("final.pt")
        return result

    def _check_fixed_agents(self, warm_start_due: bool) -> None:
        """Each agent the config names (fresh copies) takes one decision of the variant before any worker starts
        or file is written: a bot of another variant is a one-line error naming the key, not a failed worker."""
        cfg = self.cfg
        named = [("league.opponent", cfg.league.opponent)]
        if warm_start_due:
            named.append(("imitation.teacher", cfg.imitation.teacher))
        if set(cfg.learn) != set(DECISION_KINDS):
            named.append(("others", cfg.others))
        for key, agent_spec in named:
            try:
                check_plays(self.agent_factory(agent_spec, cfg.seed), cfg.variant, cfg.options)
            except ValueError as e:
                raise ValueError(f"{key}={agent_spec}: {e}") from None

    def _imitate(self, writer: Any) -> None:
        """The warm start of :mod:`tarocchi_rl.rl.imitation` (before the first update): the teacher's decisions,
        or those of the records (:mod:`tarocchi_rl.rl.record_imitation`)."""
        def log(seen: int, st: dict) -> None:
            for k, v in st.items():
                if k != "decisions":
                    writer.add_scalar(f"imitation/{k}", v, seen)

        t = time.perf_counter()
        privileged = self.critic is not None
        im = self.cfg.imitation
        if self.records is not None:
            chunks = record_chunks(self.cfg, privileged=privileged)
            source = {"records": list(im.records), "record_seats": im.record_seats,
                      "records_read": self.records["records"]}
            whose = f"{'people' if im.record_seats == 'people' else 'every seat'} in {', '.join(im.records)}"
        else:
            assert self.teacher is not None  # _warm_start: a teacher or records
            chunks = teacher_source(self.cfg, self.teacher, privileged=privileged)
            source, whose = {"teacher": im.teacher}, im.teacher
        st = imitate(self.net, self.cfg, chunks, self.gen, log=log, critic=self.critic)
        self.imitated = True
        self.imitation_stats = stats = {**st, **source, "seconds": time.perf_counter() - t}
        if self.progress:
            print(f"imitation: {st['decisions']} decisions of {whose}, "
                  f"accuracy {st['accuracy']:.3f}, {stats['seconds']:.0f} s")

    # -- the PPO update -----------------------------------------------------------------------------------
    def _lr(self) -> float:
        p = self.cfg.ppo
        if p.lr_schedule == "constant":
            return p.lr
        frac = min(1.0, self.learner_samples / self.cfg.total_samples)
        return p.lr + (p.lr_end - p.lr) * frac

    def _learn(self, batches: list[dict]) -> dict:
        """One PPO update (:func:`~tarocchi_rl.rl.update.ppo_update`) on the concatenated rollouts (N samples);
        returns the averaged loss statistics, ``explained_variance`` and ``lr`` (empty when N = 0). With ``critic:
        perfect`` the advantages and value targets are first recomputed with the critic (:meth:`_critic_targets`);
        with a belief head, the belief targets are derived and the beliefs' calibration measured first."""
        data = {k: np.concatenate([b[k] for b in batches]) for k in TRAIN_KEYS}
        if len(data["action"]) == 0:
            return {}
        critic_values = None
        if self.critic is not None:
            data["advantage"], data["ret"], critic_values = self._critic_targets(batches)
        calibration = {}
        if self.net.has_beliefs:
            data[BELIEF_TARGET] = belief_targets(data["obs"], data["hidden"], self.cfg.spec)
            calibration = self._belief_calibration(data["obs"], data[BELIEF_TARGET])
        lr = self._lr()
        out: dict[str, Any] = ppo_update(self.learner, data, self.cfg.ppo, lr, self.cfg.belief_loss,
                                         warmup=self.update < self.cfg.ppo.policy_warmup, update=self.update)
        out["explained_variance"] = explained_variance(data["value"], data["ret"])
        if critic_values is not None:
            out["critic_explained_variance"] = explained_variance(critic_values, data["ret"])
        out.update(calibration)
        out["lr"] = lr
        return out

    @torch.no_grad()
    def _belief_calibration(self, obs: np.ndarray, targets: np.ndarray) -> dict[str, float]:
        """``belief/{ece,top1,nll}`` of the current network's beliefs on the first :data:`CALIBRATION_SAMPLES`
        samples of a rollout (module docstring); empty when none of them has an unseen card."""
        obs, targets = obs[:CALIBRATION_SAMPLES], targets[:CALIBRATION_SAMPLES]
        if not (targets >= 0).any():
            return {}
        with self.learner.autocast():
            probs = self.net.beliefs(torch.from_numpy(obs).to(self.device)).float().cpu().numpy()
        r = reliability(probs, targets)
        return {f"belief/{k}": float(r[k]) for k in ("ece", "top1", "nll")}

    @torch.no_grad()
    def _critic_targets(self, batches: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(advantages, value targets, critic values), float32[N] each: GAE along each rollout's chains
        (``reward``, ``done``, ``next_idx``: :mod:`~tarocchi_rl.rl.rollout`) with the perfect-information critic's
        values of (obs, hidden), evaluated in minibatches in float32."""
        assert self.critic is not None
        p = self.cfg.ppo
        advs, rets, values = [], [], []
        for b in batches:
            obs, hidden = torch.from_numpy(b["obs"]), torch.from_numpy(b["hidden"])
            v = np.concatenate([
                self.critic(o.to(self.device), h.to(self.device)).float().cpu().numpy()
                for o, h in zip(obs.split(p.minibatch_size), hidden.split(p.minibatch_size), strict=True)
            ]) if len(obs) else np.zeros(0, np.float32)
            adv = gae(b["reward"], b["done"], v, b["next_idx"], p.gamma, p.gae_lambda)
            advs.append(adv)
            rets.append(adv + v)
            values.append(v)
        return np.concatenate(advs), np.concatenate(rets), np.concatenate(values)

    # -- logging, evaluation, checkpoints ---------------------------------------------------------------
    def _log(self, writer: Any, rollout: dict, learn: dict, rollout_s: float, learn_s: float, total_s: float) -> None:
        """TensorBoard scalars of one update (module docstring), at step = learner samples."""
        step = self.learner_samples
        for key, (tot, cnt) in rollout["sums"].items():
            if key == "deals":
                continue
            group, _, name = key.partition("/")
            tag = {"payoff": "returns", "payoff_seat": "returns_seat", "payoff_role": "returns_role"}[group]
            writer.add_scalar(f"{tag}/{name}", tot / cnt, step)
        words = getattr(self.cfg.spec.rules, "BID_WORDS", None)
        total_bids = sum(rollout["bids"].values())
        if words and total_bids:
            for w, name in enumerate(words):
                writer.add_scalar(f"bids/{name.replace(' ', '_')}", rollout["bids"].get(w, 0) / total_bids, step)
        for k, v in learn.items():  # the loss statistics; lr; belief/* (the calibration) under their own names
            writer.add_scalar("train/lr" if k == "lr" else k if "/" in k else f"loss/{k}", v, step)
        writer.add_scalar("perf/decisions_per_s", rollout["all_decisions"] / total_s, step)
        writer.add_scalar("perf/samples_per_s", rollout["learner_samples"] / total_s, step)
        writer.add_scalar("perf/rollout_s", rollout_s, step)
        writer.add_scalar("perf/learn_s", learn_s, step)
        writer.add_scalar("train/update", self.update, step)
        writer.add_scalar("train/minutes", self.minutes, step)
        writer.add_scalar("league/pool_size", len(self.league), step)

    def _show_progress(self, bar: Any, rollout: dict, seconds: float) -> None:
        bar.update(min(self.learner_samples, self.cfg.total_samples) - bar.n)
        vh = rollout["sums"].get("payoff/vs_heuristic")
        bar.set_postfix(upd=self.update, dec_s=f"{rollout['all_decisions'] / seconds:.0f}",
                        vs_heur=f"{vh[0] / vh[1]:+.2f}" if vh else "-")

    def _evaluate(self, writer: Any, deals: int, final: bool) -> dict:
        """Duplicate arena of the greedy policy against each of ``eval.opponents``; appended to eval.jsonl."""
        agent: Any = PPOAgent(net=copy.deepcopy(self.net).to("cpu").eval(), variant=self.cfg.variant, label="ppo")
        if len(self.cfg.learn) < len(DECISION_KINDS):  # what the learner plays, as in its rollouts
            others = self.agent_factory(self.cfg.others, 0)
            agent = ComposeAgent({k: agent if k in self.cfg.learn else others for k in DECISION_KINDS}, name="ppo")
        out: dict[str, dict] = {}
        for opp in self.cfg.eval.opponents:
            r = run_arena(self.cfg.variant, [agent, opp], deals=deals, seed=EVAL_SEED, options=self.cfg.options,
                          progress=False)
            row = r["table"][0]
            out[opp] = {"mean": row["mean_payoff_per_deal"], "ci95": row["ci95"], "win_rate": row["win_rate"]}
            tag = f"eval_final/vs_{opp}" if final else f"eval/vs_{opp}"
            for name, value in (("mean", row["mean_payoff_per_deal"]), ("ci_low", row["ci95"][0]),
                                ("ci_high", row["ci95"][1]), ("win_rate", row["win_rate"])):
                writer.add_scalar(f"{tag}/{name}", value, self.learner_samples)
        entry = {"update": self.update, "samples": self.learner_samples, "decisions": self.all_decisions,
                 "minutes": round(self.minutes, 3), "deals": deals, "final": final, "vs": out}
        self.eval_history.append(entry)
        with open(self.run_dir / "eval.jsonl", "a") as f:
            f.write(json.dumps(entry) + "\n")
        writer.flush()
        return entry

    def _check_weights(self, when: str) -> None:
        """:class:`NonFiniteError` when a weight is NaN or infinite (named: tensor, count), the critic's too."""
        critic = {} if self.critic is None else {f"critic.{k}": v for k, v in self.critic.state_dict().items()}
        for name, t in {**self.net.state_dict(), **critic}.items():
            if t.is_floating_point() and not bool(torch.isfinite(t).all()):
                bad = int((~torch.isfinite(t)).sum())
                raise NonFiniteError(f"non-finite weights after {when}: {name} has {bad} of {t.numel()} values "
                                     f"NaN or infinite (ppo.lr={self._lr():.4g}); stopped before writing a "
                                     "checkpoint of these weights")

    def _state(self, copy_all: bool = False) -> dict:
        """The checkpoint dict of the current state (``copy_all``: every tensor copied, nothing shared with
        the live network or optimizer; the workers' states only for a local pool, where they are cheap)."""
        on_cpu = self.device.type == "cpu" and not copy_all  # else CPU copies: checkpoints hold CPU tensors
        model = self.net.state_dict() if on_cpu else _cpu_state(self.net)
        opt = self.opt.state_dict() if on_cpu else _cpu_tree(self.opt.state_dict())
        workers = (self.workers.state_dicts() if not copy_all or isinstance(self.workers, LocalPool) else None)
        state = {
            "config": self.cfg.to_dict(), "model": model, "optimizer": opt,
            "update": self.update, "samples": self.learner_samples, "decisions": self.all_decisions,
            "minutes": self.minutes, "pool": list(self.league), "next_snapshot_id": self.next_snapshot_id,
            "pool_version": self.league_version, "learner_rng": self.gen.get_state(),
            "workers": workers, "imitated": self.imitated, "sources": self.sources,
            "imitation": self.imitation_stats,
        }
        if self.critic is not None and self.critic_opt is not None:  # critic: perfect (never exported)
            state["critic"] = self.critic.state_dict() if on_cpu else _cpu_state(self.critic)
            critic_opt = self.critic_opt.state_dict()
            state["critic_optimizer"] = critic_opt if on_cpu else _cpu_tree(critic_opt)
        return state

    def _weights(self) -> dict:
        """The current weights as CPU copies (those kept by :meth:`_commit`, made after the last update)."""
        return self._committed["model"] if self._committed is not None else _cpu_state(self.net)

    def _commit(self) -> None:
        """Keep the state of the last complete update in memory (what Ctrl-C saves)."""
        self._committed = self._state(copy_all=True)

    def _interrupted(self) -> dict:
        """Ctrl-C: save the last complete update as ``latest.pt``, say so on one line, return the result."""
        if self._committed is None:
            raise KeyboardInterrupt
        saved = self._save_committed("interrupted")
        data = self._committed
        out = {"run_dir": str(self.run_dir), "updates": data["update"], "samples": data["samples"],
               "decisions": data["decisions"], "minutes": data["minutes"], "interrupted": True}
        if saved is not None:
            out["checkpoint"] = str(saved)
        return out

    def _save_committed(self, why: str) -> Path | None:
        """Write the last complete update (:meth:`_commit`) to ``latest.pt`` with Ctrl-C and SIGTERM held off (a
        second one cannot leave it half done); one line on stderr says what was saved. None when nothing could be."""
        data = self._committed
        if data is None or not self.run_dir.is_dir():
            return None
        previous = ((signal.signal(signal.SIGINT, signal.SIG_IGN), signal.signal(signal.SIGTERM, signal.SIG_IGN))
                    if _main_thread() else None)
        try:
            if data["workers"] is None:  # Ray actors: their states now (after any rollout they were playing)
                try:
                    data["workers"] = self.workers.state_dicts()
                except Exception as e:  # resumable all the same: fresh worker streams (module docstring)
                    print(f"{why}: the workers' states could not be read ({type(e).__name__}); the resumed "
                          "workers will start new random streams", file=sys.stderr)
            path = self.run_dir / "checkpoints" / "latest.pt"
            try:
                save_checkpoint(path, data)
            except Exception as e:
                print(f"{why} at update {data['update']}: latest.pt could not be written ({type(e).__name__}: "
                      f"{e}); the last checkpoint stays", file=sys.stderr)
                return None
            print(f"{why}: saved update {data['update']} to {path}; continue with: "
                  f"tarocchi-rl train --resume {self.run_dir}", file=sys.stderr)
            return path
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous[0])
                signal.signal(signal.SIGTERM, previous[1])

    def _checkpoint(self, name: str | None = None) -> None:
        """Write ``latest.pt`` and, when named, ``update_*.pt`` (keeping ``keep_checkpoints``) or ``final.pt``."""
        data = self._state()
        ck = self.run_dir / "checkpoints"
        save_checkpoint(ck / "latest.pt", data)
        if name and name.startswith("update_"):
            if self.cfg.keep_checkpoints:
                save_checkpoint(ck / name, data)
            for old in sorted(ck.glob("update_*.pt"))[: -self.cfg.keep_checkpoints or None]:
                old.unlink()
        elif name:
            save_checkpoint(ck / name, data)

    def _restore(self, data: dict) -> None:
        """Continue from a checkpoint: model, optimizer, counters, league and every random state."""
        try:
            self.net.load_state_dict(data["model"])
            self.opt.load_state_dict(data["optimizer"])
            self.gen.set_state(data["learner_rng"])
            self.update, self.learner_samples, self.all_decisions = data["update"], data["samples"], data["decisions"]
            self.minutes = data["minutes"]
            self.league, self.next_snapshot_id = data["pool"], data["next_snapshot_id"]
            self.league_version = data["pool_version"]
            self.imitated = data.get("imitated", False)
            self.imitation_stats = data.get("imitation")
            states = data["workers"]
            if self.critic is not None and self.critic_opt is not None:
                if "critic" not in data:
                    raise ValueError("it holds no critic weights (its config has critic: perfect)")
                self.critic.load_state_dict(data["critic"])
                self.critic_opt.load_state_dict(data["critic_optimizer"])
        except (KeyError, RuntimeError, TypeError, ValueError) as e:
            raise CheckpointError(f"checkpoint {data.get('path')} cannot be resumed: {type(e).__name__}: {e}") from None
        if states is None:  # saved when the workers could not answer: they keep their fresh streams
            return
        if len(states) != len(self.workers):
            raise CheckpointError(f"checkpoint has {len(states)} worker states, the config {len(self.workers)}")
        self.workers.load_state_dicts(states)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _interrupt(signum: int, frame: Any) -> None:
    """SIGTERM's handler while the loop runs: stop as Ctrl-C does (the last complete update saved)."""
    raise KeyboardInterrupt


def train(cfg: TrainConfig, run_dir: str | Path, ray_address: str | None = None, progress: bool = True,
          agent_factory: AgentFactory | None = None) -> dict:
    """Train a new run in ``run_dir`` (which must not hold a run yet); returns :meth:`Trainer.run`'s result.
    ``agent_factory`` builds the agents named by ``league.opponent`` and ``others`` (default: the baselines)."""
    run_dir = Path(run_dir)
    if (run_dir / "checkpoints").exists():
        raise ValueError(f"{run_dir} already holds a run: use --resume {run_dir} or another --out")
    return Trainer(cfg, run_dir, ray_address, progress, agent_factory=agent_factory).run()


def _check_checkpoint_shapes(data: dict, cfg: TrainConfig) -> None:
    """The checkpoint's network and its league snapshots have the shapes of ``cfg``'s network, found before any
    network is built (a :class:`CheckpointError` naming the first tensor that differs)."""
    where = f"checkpoint {data['path']}"
    check_state_shapes(data.get("model"), cfg, where)
    if cfg.critic == "perfect":  # the perfect-information critic's weights too
        check_state_shapes(data.get("critic"), cfg, f"{where}: critic", critic=True)
    pool = data.get("pool") or []
    for k, entry in enumerate(pool if isinstance(pool, list) else []):
        weights = entry[1] if isinstance(entry, (list, tuple)) and len(entry) == 2 else None
        check_state_shapes(weights, cfg, f"{where}: pool[{k}]")


def resume(run_dir: str | Path, overrides: dict | None = None, ray_address: str | None = None,
           progress: bool = True, agent_factory: AgentFactory | None = None) -> dict:
    """Continue the run in ``run_dir`` from its latest checkpoint with its own config; only the stopping
    rules (``RESUMABLE_KEYS``) may be overridden."""
    data = load_resume_checkpoint(run_dir)
    cfg_dict = dict(data["config"])
    for k, v in (overrides or {}).items():
        if k not in RESUMABLE_KEYS:
            raise ValueError(f"a resumed run keeps its config; only {', '.join(RESUMABLE_KEYS)} may be changed "
                             f"(got {k})")
        cfg_dict[k] = v
    try:
        cfg = config_from_dict(cfg_dict)
    except ValueError as e:
        raise CheckpointError(f"checkpoint {data['path']} holds an invalid config: {e}") from None
    _check_checkpoint_shapes(data, cfg)
    return Trainer(cfg, run_dir, ray_address, progress, resume_from=data, agent_factory=agent_factory).run()
