"""An expert-iteration run: rounds of search targets, learning and a gate; stoppable anywhere, resumable elsewhere.

Two networks (AlphaGo Zero's arrangement): the **best** one labels (its policy guides the searches) and is the
gate's opponent; the **learner** trains on the replay buffer every round and replaces the best one when it wins
the gate. A round::

    shards = workers.label(best, deals_per_round, round)     search targets (tarocchi_rl.expert.labels)
    buffer.add(shards); learner.train(buffer)                 tarocchi_rl.expert.learn
    gate = learner vs best on the gate deals (+ vs plain search on some of them)   tarocchi_rl.expert.gate
    if gate kept: best = learner
    log.jsonl += the round; checkpoints/round_R.pt (the learner) and best.pt (PPO checkpoints)
    resume.pt (everything to continue but the buffer) every round; the carry directory every carry_every_minutes

Run directory (``--out runs/NAME``)::

    config.yaml            the resolved config
    log.jsonl              one line a round (samples, targets per second, losses, gate, minutes)
    resume.pt              the resumable state (a PPO checkpoint of the best network, plus the learner, its Adam
                           state, the round and the counters): ``tarocchi-rl expert --resume runs/NAME``
    checkpoints/best.pt    the best network (``ppo:runs/NAME/checkpoints/best.pt``, ``tarocchi-rl export``)
    checkpoints/round_R.pt the learner after round R
    shards/round_R_wK.npz  the samples of round R from worker K (the rounds the buffer holds)

A carry directory (``--carry runs-carry/NAME``, committed to git so that a run outlives its machine) holds
``resume.pt``, ``log.jsonl`` and ``config.yaml``, rewritten every ``carry_every_minutes`` and when the run stops;
``tarocchi-rl expert --resume runs-carry/NAME --out runs/NAME`` continues it on a new machine. The replay buffer is
not carried: a run resumed where it ran reloads it from its shard files, one resumed on a new machine refills it
with new rounds (with ``learn.min_buffer``, labelling only until it holds that many samples).
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from ..rl.checkpoint import CHECKPOINT_FORMAT, CheckpointError, load_checkpoint, save_checkpoint
from ..rl.network import build_network, resolve_device
from ..rl.trainer import load_initial_weights
from .config import ExpertConfig, expert_config_from_dict, with_resume_overrides
from .gate import gate_decks, gate_round
from .labels import merge_stats
from .learn import ReplayBuffer, train_round
from .shards import Shard, ShardError
from .workers import make_label_pool

EXPERT_FORMAT = "tarocchi-expert/1"  # the ``expert`` entry of resume.pt
RESUME_FILE, LOG_FILE, CONFIG_FILE = "resume.pt", "log.jsonl", "config.yaml"
MAX_LOG_BYTES = 1 << 24  # a carried log.jsonl (a line a round: hundreds of bytes)


def _cpu_copy(state: dict) -> dict:
    return {k: v.detach().to("cpu").clone() for k, v in state.items()}


def _compact_optimizer(state: dict) -> dict:
    """Adam's state with its moment estimates in bfloat16 (a carried run stays under 10 MB: two networks and two
    moments of french4's 0.67 M parameters would be 10.7 MB in float32); ``load_state_dict`` casts them back to the
    parameters' dtype. Their relative rounding (0.4 %) is far below what Adam's step is sensitive to."""
    compact = {k: {name: (t.detach().to("cpu", torch.bfloat16) if name in ("exp_avg", "exp_avg_sq") else t)
                   for name, t in v.items()} for k, v in state["state"].items()}
    return {"state": compact, "param_groups": state["param_groups"]}


class ExpertRun:
    """One run (module docstring). Build with :func:`start` or :func:`resume`; :meth:`run` loops the rounds."""

    def __init__(self, cfg: ExpertConfig, out: Path, carry: Path | None, ray_address: str | None,
                 progress: bool) -> None:
        self.cfg, self.out, self.carry, self.progress = cfg, out, carry, progress
        self.ray_address = ray_address
        self.device = resolve_device(cfg.device)
        torch.set_num_threads(cfg.torch_threads)
        tcfg = cfg.train_config()
        spec = cfg.spec
        self.obs_dim, self.n_actions = spec.obs_dim, spec.n_actions
        self.net = build_network(tcfg, spec.obs_dim, spec.n_actions).to(self.device)
        self.best = build_network(tcfg, spec.obs_dim, spec.n_actions).eval()
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.learn.lr, eps=1e-5)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.round, self.samples, self.minutes, self.kept = 0, 0, 0.0, 0
        self.buffer = ReplayBuffer(cfg.learn.buffer)
        self.last_carry = time.monotonic()

    # -- state ----------------------------------------------------------------------------------------------
    def init_weights(self) -> None:
        """The starting network (``cfg.init``) as both the learner and the best one."""
        tcfg = self.cfg.train_config()
        tcfg.init = self.cfg.init
        load_initial_weights(self.net, tcfg)
        self.best.load_state_dict(_cpu_copy(self.net.state_dict()))

    def state(self) -> dict:
        """resume.pt: a PPO checkpoint of the best network, plus what continuing needs (``expert``)."""
        return {"format": CHECKPOINT_FORMAT, "config": self.cfg.train_config().to_dict(),
                "model": _cpu_copy(self.best.state_dict()), "update": 0, "samples": self.samples, "decisions": 0,
                "minutes": self.minutes, "workers": [],
                "expert": {"format": EXPERT_FORMAT, "config": self.cfg.to_dict(), "round": self.round,
                           "kept": self.kept, "learner": _cpu_copy(self.net.state_dict()),
                           "optimizer": _compact_optimizer(self.opt.state_dict()),
                           "learner_rng": self.gen.get_state()}}

    def restore(self, data: dict) -> None:
        e = data["expert"]
        try:
            self.best.load_state_dict(data["model"])
            self.net.load_state_dict(e["learner"])
            self.opt.load_state_dict(e["optimizer"])
            for group in self.opt.param_groups:  # the config's rate (learn.lr may change on resume), not the saved one
                group["lr"] = self.cfg.learn.lr
            self.gen.set_state(e["learner_rng"])
            self.round, self.kept = int(e["round"]), int(e["kept"])
            self.samples, self.minutes = int(data["samples"]), float(data["minutes"])
        except (KeyError, RuntimeError, TypeError, ValueError) as err:
            raise CheckpointError(f"{data.get('path')} cannot be resumed: {type(err).__name__}: {err}") from None

    def reload_shards(self) -> int:
        """The replay buffer refilled from ``out/shards`` (a run resumed where it ran: the shard files of the
        rounds it completed, the newest that fit; a shard that cannot be read is skipped with a warning); the
        samples loaded. A new machine has none: the buffer refills from the next rounds (``learn.min_buffer``)."""
        files = sorted((self.out / "shards").glob("round_*.npz"))
        rounds = [(f, _shard_round(f)) for f in files]
        usable = [f for f, r in rounds if r is not None and r <= self.round]
        chosen: list[Shard] = []
        for f in reversed(usable):  # the newest first, until the buffer is full
            if sum(len(s) for s in chosen) >= self.buffer.capacity:
                break
            try:
                chosen.append(Shard.read(f, self.obs_dim, self.n_actions))
            except (ShardError, OSError) as e:
                print(f"warning: {f} skipped: {e}", file=sys.stderr)
        for shard in reversed(chosen):  # the oldest first, as the rounds added them
            self.buffer.add(shard)
        return len(self.buffer)

    # -- the loop -------------------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Rounds until ``max_rounds`` / ``max_minutes`` (or Ctrl-C / SIGTERM: the last complete round kept)."""
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / CONFIG_FILE).write_text(yaml.safe_dump(self.cfg.to_dict(), sort_keys=False))
        decks = gate_decks(self.cfg)
        pool = make_label_pool(self.cfg, self.ray_address)
        previous = signal.signal(signal.SIGTERM, _interrupt) if _main_thread() else None
        started, minutes0 = time.monotonic(), self.minutes
        try:
            while not self._should_stop(started, minutes0):
                entry = self._round(pool, decks, started, minutes0)
                self._say(entry)
        except KeyboardInterrupt:
            print(f"interrupted: round {self.round} is the last complete one (resume.pt)", file=sys.stderr)
        finally:
            pool.close()
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
            self._write_carry()
        return {"out": str(self.out), "variant": self.cfg.variant, "rounds": self.round, "kept": self.kept,
                "samples": self.samples, "minutes": round(self.minutes, 2),
                **({"carry": str(self.carry)} if self.carry else {})}

    def _should_stop(self, started: float, minutes0: float) -> bool:
        c = self.cfg
        if c.max_rounds and self.round >= c.max_rounds:
            return True
        return bool(c.max_minutes and minutes0 + (time.monotonic() - started) / 60 >= c.max_minutes)

    def _round(self, pool: Any, decks: np.ndarray, started: float, minutes0: float) -> dict[str, Any]:
        r = self.round + 1
        t0 = time.monotonic()
        results = pool.label(_cpu_copy(self.best.state_dict()), self.cfg.deals_per_round, r)
        t_label = time.monotonic() - t0
        stats = merge_stats([res["stats"] for res in results])
        for k, res in enumerate(results):
            shard = Shard.from_arrays(res["shard"], f"round {r} worker {k}", self.obs_dim, self.n_actions)
            self._save_shard(shard, r, k)
            self.buffer.add(shard)
        self._prune_shards()
        t1 = time.monotonic()
        filling = len(self.buffer) < self.cfg.learn.min_buffer  # labels only: too few samples to train on
        losses: dict[str, float] = {}
        if not filling:
            losses = train_round(self.net, self.opt, self.buffer.arrays(), self.cfg.learn, self.gen, self.device,
                                 self.cfg.belief_loss)
        t_train = time.monotonic() - t1
        t2 = time.monotonic()
        gate: dict[str, Any] = {"kept": False, "filling": True}
        if not filling:
            gate = gate_round(self.cfg, copy.deepcopy(self.net).to("cpu").eval(), self.best, decks, r)
        if gate["kept"]:
            self.best.load_state_dict(_cpu_copy(self.net.state_dict()))
            self.kept += 1
        self.round, self.samples = r, self.samples + stats["samples"]
        self.minutes = minutes0 + (time.monotonic() - started) / 60
        entry = {"round": r, "samples": stats["samples"], "total_samples": self.samples,
                 "trained_on": len(self.buffer), "deals": stats["deals"], "label_s": round(t_label, 1),
                 "targets_per_s": round(stats["samples"] / max(t_label, 1e-9), 1),
                 "iterations_per_s": round(stats["iterations"] / max(t_label, 1e-9)),
                 "train_s": round(t_train, 1),
                 "train_samples_per_s": 0.0 if filling else round(len(self.buffer) * self.cfg.learn.epochs
                                                                  / max(t_train, 1e-9), 1),
                 "gate_s": round(time.monotonic() - t2, 1), "minutes": round(self.minutes, 2),
                 "lr": self.cfg.learn.lr, "epochs": self.cfg.learn.epochs,
                 "by_kind": stats["by_kind"], **{k: round(v, 5) for k, v in losses.items()}, **gate}
        self._save_round(entry, r)
        return entry

    # -- files ----------------------------------------------------------------------------------------------
    def _save_shard(self, shard: Shard, r: int, k: int) -> None:
        d = self.out / "shards"
        d.mkdir(exist_ok=True)
        shard.write(d / f"round_{r:05d}_w{k}.npz")

    def _prune_shards(self) -> None:
        """Keep the shard files of the samples the buffer holds (as many files as it holds shards, the newest)."""
        files = sorted((self.out / "shards").glob("round_*.npz"))
        for old in files[: max(0, len(files) - len(self.buffer.shards))]:
            old.unlink()

    def _save_round(self, entry: dict[str, Any], r: int) -> None:
        with open(self.out / LOG_FILE, "a") as f:
            f.write(json.dumps(entry) + "\n")
        ck = self.out / "checkpoints"
        ck.mkdir(exist_ok=True)
        state = self.state()
        learner = {**state, "model": state["expert"]["learner"], "expert": {"round": r, "learner": True}}
        save_checkpoint(ck / f"round_{r:05d}.pt", learner)
        save_checkpoint(ck / "best.pt", {**state, "expert": {"round": r, "best": True}})
        save_checkpoint(self.out / RESUME_FILE, state)
        if self.carry is not None and (time.monotonic() - self.last_carry) / 60 >= self.cfg.carry_every_minutes:
            self._write_carry()

    def _write_carry(self) -> None:
        """The carry directory: resume.pt, log.jsonl, config.yaml (nothing before the first round)."""
        if self.carry is None or not (self.out / RESUME_FILE).is_file():
            return
        self.carry.mkdir(parents=True, exist_ok=True)
        for name in (RESUME_FILE, LOG_FILE, CONFIG_FILE):
            shutil.copyfile(self.out / name, self.carry / f".{name}.tmp")
            (self.carry / f".{name}.tmp").replace(self.carry / name)
        self.last_carry = time.monotonic()

    def _say(self, e: dict[str, Any]) -> None:
        if not self.progress:
            return
        line = f"round {e['round']}: {e['samples']} targets ({e['targets_per_s']:.0f}/s)"
        if e.get("filling"):
            line += f", the buffer filling ({e['trained_on']} of {self.cfg.learn.min_buffer}): no training"
        else:
            line += (f", kl {e.get('kl', 0):.3f}, value {e.get('value_loss', 0):.3f}, vs previous "
                     f"{e['vs_previous']['mean']:+.3f} {'kept' if e['kept'] else 'not kept'}")
        if "vs_search" in e:
            line += f", vs search {e['vs_search']['mean']:+.3f}"
        print(line + f" [{e['minutes']:.1f} min]", file=sys.stderr, flush=True)


def _shard_round(path: Path) -> int | None:
    """R of a shard file ``round_R_wK.npz`` (None for another name)."""
    m = re.fullmatch(r"round_(\d+)_w\d+\.npz", path.name)
    return int(m.group(1)) if m else None


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def start(cfg: ExpertConfig, out: str | Path, carry: str | Path | None = None, ray_address: str | None = None,
          progress: bool = True) -> dict[str, Any]:
    """A new run in ``out`` (a new or empty directory)."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"expert: --out {out} exists and is not an empty directory (--resume {out} continues it)")
    run = ExpertRun(cfg, out, None if carry is None else Path(carry), ray_address, progress)
    run.init_weights()
    return run.run()


def load_resumable(path: str | Path) -> dict:
    """The resume.pt of a run or carry directory (checksum, format and the ``expert`` entry checked)."""
    p = Path(path)
    f = p / RESUME_FILE if p.is_dir() else p
    if not f.is_file():
        raise CheckpointError(f"--resume {path}: no {RESUME_FILE} there (a run or carry directory of tarocchi-rl "
                              "expert)")
    data = load_checkpoint(f)
    e = data.get("expert")
    if not isinstance(e, dict) or e.get("format") != EXPERT_FORMAT:
        raise CheckpointError(f"{f} is not a resumable expert-iteration state ({EXPERT_FORMAT})")
    return data


def resume(path: str | Path, out: str | Path | None = None, carry: str | Path | None = None,
           overrides: dict[str, Any] | None = None, ray_address: str | None = None,
           progress: bool = True) -> dict[str, Any]:
    """Continue the run whose state is in ``path`` (a run directory or a carry directory) into ``out`` (default:
    ``path`` itself when it is a run directory). Only :data:`~.config.RESUMABLE_KEYS` may be overridden."""
    data = load_resumable(path)
    cfg = with_resume_overrides(data["expert"]["config"], overrides or {})
    src = Path(path) if Path(path).is_dir() else Path(path).parent
    out = Path(out) if out is not None else src
    run = ExpertRun(cfg, out, None if carry is None else Path(carry), ray_address, progress)
    run.restore(data)
    run.reload_shards()
    if out.resolve() != src.resolve():
        out.mkdir(parents=True, exist_ok=True)
        if (src / LOG_FILE).is_file() and not (out / LOG_FILE).exists():
            shutil.copyfile(src / LOG_FILE, out / LOG_FILE)
    return run.run()


__all__ = ["ExpertRun", "expert_config_from_dict", "load_resumable", "resume", "start"]
