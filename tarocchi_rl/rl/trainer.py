"""The PPO learner: rollouts from Ray workers (or in-process), clipped-PPO updates, logging, checkpoints.

One update, top to bottom (``Trainer.run``)::

    batches = collect from every worker (weights and, when it changed, the league pool sent along)
    data    = concatenate their samples (advantages already computed along each seat's chain)
    for epoch in 1..ppo.epochs: for each shuffled minibatch: ppo_loss -> backward -> clip grads -> Adam step
    every league.snapshot_every updates: the current weights join the pool
    every eval.every updates: duplicate arena (greedy policy) vs heuristic and random -> TensorBoard
    every checkpoint_every updates: checkpoint

With ``num_workers = 0`` the rollouts run in the learner's process (debugging, exact reproducibility tests);
otherwise each worker is a Ray actor holding its own batched core (``ray.init(num_cpus=2)`` here, or
``ray.init(address=...)`` with ``--ray-address`` on a cluster). ``async_rollouts`` lets the workers play the
next rollout while the learner trains (the samples are then one update old; the PPO ratio uses the
behaviour log-probabilities they were sampled with).

TensorBoard tags: ``returns/{self_play,vs_heuristic,vs_snapshot}`` (learner seats' mean payoff per deal, game
units), ``returns_seat/S``, ``returns_role/{declarer,partner,defender,passed}``, ``bids/WORD`` (share of the
learner's auction words), ``loss/{policy,value,entropy,approx_kl,clip_fraction,explained_variance,grad_norm}``,
``perf/{decisions_per_s,samples_per_s,rollout_s,learn_s}`` (decisions: every seat's, samples: the learner's),
``train/{lr,samples,minutes}``, ``league/pool_size``, ``eval/vs_OPP/{mean,ci_low,ci_high,win_rate}``, and the
resolved config as text.
"""

import copy
import json
import time
from pathlib import Path

import numpy as np
import torch

from ..arena import run_arena
from ..variants import get_variant
from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .config import RESUMABLE_KEYS, TrainConfig, config_from_dict, dump_config
from .imitation import imitate
from .losses import explained_variance, ppo_loss
from .network import build_network
from .policy import PPOAgent
from .rollout import RolloutWorker, merge_stats

EVAL_SEED = 20261129  # the arena deals of the periodic evaluations: the same every time, comparable over a run


def _cpu_state(net) -> dict:
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


class Trainer:
    """A training run in ``run_dir`` (see :mod:`tarocchi_rl.rl.checkpoint` for the directory layout)."""

    def __init__(self, cfg: TrainConfig, run_dir, ray_address=None, progress=True, resume_from=None):
        self.cfg, self.run_dir, self.progress = cfg, Path(run_dir), progress
        spec = get_variant(cfg.variant)
        torch.manual_seed(cfg.seed)
        torch.set_num_threads(cfg.torch_threads)
        self.net = build_network(cfg, spec.obs_dim, spec.n_actions)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.ppo.lr, eps=1e-5)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.update = self.samples = self.decisions = 0
        self.minutes = 0.0
        self.pool, self.next_snapshot_id, self.pool_version = [], 0, 0
        self.eval_history = []
        self.imitated, self.imitation_stats = False, None
        self.remote = cfg.num_workers > 0
        self._start_workers(ray_address)
        if resume_from is not None:
            self._restore(resume_from)

    # -- workers ------------------------------------------------------------------------------------------
    def _start_workers(self, ray_address):
        cfg_dict = self.cfg.to_dict()
        if not self.remote:
            self.workers = [RolloutWorker(cfg_dict, 0, threads=self.cfg.torch_threads)]
            return
        import ray

        if not ray.is_initialized():
            if ray_address:
                ray.init(address=ray_address, log_to_driver=False)
            else:
                ray.init(num_cpus=max(2, self.cfg.num_workers), log_to_driver=False, include_dashboard=False)
        actor = ray.remote(num_cpus=1)(RolloutWorker)
        self.workers = [actor.remote(cfg_dict, k, 1) for k in range(self.cfg.num_workers)]

    def _all(self, method, *args):
        """Call ``method`` on every worker; returns the results."""
        if not self.remote:
            return [getattr(w, method)(*args) for w in self.workers]
        import ray

        return ray.get([getattr(w, method).remote(*args) for w in self.workers])

    def _submit_collect(self, send_pool):
        weights = _cpu_state(self.net)
        pool = list(self.pool) if send_pool else None
        if not self.remote:
            return [w.collect(weights, pool) for w in self.workers]
        import ray

        wref = ray.put(weights)
        pref = ray.put(pool)
        return [w.collect.remote(wref, pref) for w in self.workers]

    def _gather(self, handles):
        if not self.remote:
            return handles
        import ray

        return ray.get(handles)

    # -- the loop -----------------------------------------------------------------------------------------
    def run(self) -> dict:
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        cfg = self.cfg
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.yaml").write_text(dump_config(cfg))
        writer = SummaryWriter(str(self.run_dir))
        if self.update == 0:
            writer.add_text("config", "```\n" + dump_config(cfg) + "\n```", 0)
        bar = tqdm(total=cfg.total_decisions, initial=min(self.samples, cfg.total_decisions), unit="dec",
                   unit_scale=True, disable=not self.progress, desc=f"train {cfg.variant}", dynamic_ncols=True)
        t_start = time.perf_counter()
        minutes0 = self.minutes
        if self.update == 0 and cfg.imitation.decisions > 0 and not self.imitated:
            self._imitate(writer)
            if cfg.eval.every:
                self._evaluate(writer, cfg.eval.deals, final=False)  # the warm start's level: update 0
        pool_sent = -1
        pending = None
        stop = self._should_stop(minutes0)
        warm = None
        while not stop:
            t0 = time.perf_counter()
            if pending is None:
                pending = self._submit_collect(pool_sent != self.pool_version)
                pool_sent = self.pool_version
            batches = self._gather(pending)
            pending = None
            t1 = time.perf_counter()
            if cfg.async_rollouts and self.remote:  # the next rollout starts now, with these weights
                pending = self._submit_collect(pool_sent != self.pool_version)
                pool_sent = self.pool_version
            learn_stats = self._learn(batches)
            t2 = time.perf_counter()
            self.update += 1
            rstats = merge_stats([b["stats"] for b in batches])
            self.samples += rstats["samples"]
            self.decisions += rstats["decisions"]
            self.minutes = minutes0 + (time.perf_counter() - t_start) / 60
            if warm is None:  # throughput is measured after the first update (Ray start, JIT cache loads)
                warm = (time.perf_counter(), self.decisions, self.samples)
            if self.update % cfg.league.snapshot_every == 0 and cfg.league.pool_size > 0:
                self.pool.append((self.next_snapshot_id, _cpu_state(self.net)))
                self.next_snapshot_id += 1
                self.pool = self.pool[-cfg.league.pool_size :]
                self.pool_version += 1
            if self.update % cfg.log_every == 0:
                self._log(writer, rstats, learn_stats, t1 - t0, t2 - t1, t2 - t0)
            bar.update(min(self.samples, cfg.total_decisions) - bar.n)
            vh = rstats["sums"].get("payoff/vs_heuristic")
            bar.set_postfix(upd=self.update, dps=f"{rstats['decisions'] / (t2 - t0):.0f}",
                            vs_heur=f"{vh[0] / vh[1]:+.2f}" if vh else "-")
            stop = self._should_stop(self.minutes)
            if cfg.eval.every and self.update % cfg.eval.every == 0 and not stop:
                self._evaluate(writer, cfg.eval.deals, final=False)
            if self.update % cfg.checkpoint_every == 0 or stop:
                self._checkpoint(f"update_{self.update:06d}.pt" if not stop else None)
        bar.close()
        t_end = time.perf_counter()
        self.minutes = minutes0 + (t_end - t_start) / 60
        result = {"run_dir": str(self.run_dir), "updates": self.update, "samples": self.samples,
                  "decisions": self.decisions, "minutes": self.minutes}
        if self.imitation_stats:
            result["imitation"] = self.imitation_stats
        if warm is not None and t_end > warm[0] and self.decisions > warm[1]:
            result["timed_seconds"] = t_end - warm[0]  # after the first update
            result["timed_decisions"] = self.decisions - warm[1]
            result["timed_samples"] = self.samples - warm[2]
            result["decisions_per_s"] = result["timed_decisions"] / result["timed_seconds"]
            result["samples_per_s"] = result["timed_samples"] / result["timed_seconds"]
        if cfg.eval.final_deals:
            result["final_eval"] = self._evaluate(writer, cfg.eval.final_deals, final=True)
        self._checkpoint("final.pt")
        writer.close()
        return result

    def _imitate(self, writer) -> None:
        """The warm start of :mod:`tarocchi_rl.rl.imitation` (before the first update)."""
        def log(seen, st):
            for k, v in st.items():
                if k != "decisions":
                    writer.add_scalar(f"imitation/{k}", v, seen)

        t = time.perf_counter()
        st = imitate(self.net, self.cfg, self.gen, log=log)
        self.imitated = True
        self.imitation_stats = {**st, "seconds": time.perf_counter() - t}
        if self.progress:
            print(f"imitation: {st['decisions']} heuristic decisions, accuracy {st['accuracy']:.3f}, "
                  f"{self.imitation_stats['seconds']:.0f} s")

    def _should_stop(self, minutes) -> bool:
        c = self.cfg
        return (self.samples >= c.total_decisions or (c.max_minutes > 0 and minutes >= c.max_minutes)
                or (c.max_updates > 0 and self.update >= c.max_updates))

    def _lr(self) -> float:
        p = self.cfg.ppo
        if p.lr_schedule == "constant":
            return p.lr
        frac = min(1.0, self.samples / self.cfg.total_decisions)
        return p.lr + (p.lr_end - p.lr) * frac

    def _learn(self, batches) -> dict:
        """One PPO update on the concatenated rollouts; returns averaged loss statistics."""
        p = self.cfg.ppo
        cat = {k: np.concatenate([b[k] for b in batches]) for k in ("obs", "mask", "action", "logp", "value",
                                                                    "advantage", "ret")}
        n = len(cat["action"])
        if n == 0:
            return {}
        obs, mask = torch.from_numpy(cat["obs"]), torch.from_numpy(cat["mask"])
        act, old_logp = torch.from_numpy(cat["action"]), torch.from_numpy(cat["logp"])
        adv, ret = torch.from_numpy(cat["advantage"]), torch.from_numpy(cat["ret"])
        lr = self._lr()
        for g in self.opt.param_groups:
            g["lr"] = lr
        sums, count = {}, 0
        for _ in range(p.epochs):
            perm = torch.randperm(n, generator=self.gen)
            kls = []
            for start in range(0, n, p.minibatch_size):
                idx = perm[start : start + p.minibatch_size]
                logits, values = self.net(obs[idx], mask[idx])
                loss, st = ppo_loss(logits, values, act[idx], old_logp[idx], adv[idx], ret[idx], p.clip,
                                    p.value_coef, p.entropy_coef, p.normalize_advantages)
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                st["grad_norm"] = float(torch.nn.utils.clip_grad_norm_(self.net.parameters(), p.max_grad_norm))
                self.opt.step()
                for k, v in st.items():
                    sums[k] = sums.get(k, 0.0) + v
                count += 1
                kls.append(st["approx_kl"])
            if p.target_kl and np.mean(kls) > p.target_kl:
                break
        out = {k: v / count for k, v in sums.items()}
        out["explained_variance"] = explained_variance(cat["value"], cat["ret"])
        out["lr"] = lr
        return out

    # -- logging, evaluation, checkpoints ---------------------------------------------------------------
    def _log(self, writer, rstats, learn, rollout_s, learn_s, total_s):
        u = self.samples
        for key, (tot, cnt) in rstats["sums"].items():
            if key == "deals":
                continue
            group, _, name = key.partition("/")
            tag = {"payoff": "returns", "payoff_seat": "returns_seat", "payoff_role": "returns_role"}[group]
            writer.add_scalar(f"{tag}/{name}", tot / cnt, u)
        words = getattr(get_variant(self.cfg.variant).rules, "BID_WORDS", None)
        total_bids = sum(rstats["bids"].values())
        if words and total_bids:
            for w, name in enumerate(words):
                writer.add_scalar(f"bids/{name.replace(' ', '_')}", rstats["bids"].get(w, 0) / total_bids, u)
        for k, v in learn.items():
            if k == "lr":
                writer.add_scalar("train/lr", v, u)
            else:
                writer.add_scalar(f"loss/{k}", v, u)
        writer.add_scalar("perf/decisions_per_s", rstats["decisions"] / total_s, u)
        writer.add_scalar("perf/samples_per_s", rstats["samples"] / total_s, u)
        writer.add_scalar("perf/rollout_s", rollout_s, u)
        writer.add_scalar("perf/learn_s", learn_s, u)
        writer.add_scalar("train/update", self.update, u)
        writer.add_scalar("train/minutes", self.minutes, u)
        writer.add_scalar("league/pool_size", len(self.pool), u)

    def _evaluate(self, writer, deals, final) -> dict:
        agent = PPOAgent(net=copy.deepcopy(self.net).eval(), variant=self.cfg.variant, label="ppo")
        out = {}
        for opp in self.cfg.eval.opponents:
            r = run_arena(self.cfg.variant, [agent, opp], deals=deals, seed=EVAL_SEED, options=self.cfg.options,
                          progress=False)
            row = r["table"][0]
            out[opp] = {"mean": row["mean_payoff_per_deal"], "ci95": row["ci95"], "win_rate": row["win_rate"]}
            tag = f"eval_final/vs_{opp}" if final else f"eval/vs_{opp}"
            writer.add_scalar(f"{tag}/mean", row["mean_payoff_per_deal"], self.samples)
            writer.add_scalar(f"{tag}/ci_low", row["ci95"][0], self.samples)
            writer.add_scalar(f"{tag}/ci_high", row["ci95"][1], self.samples)
            writer.add_scalar(f"{tag}/win_rate", row["win_rate"], self.samples)
        entry = {"update": self.update, "samples": self.samples, "decisions": self.decisions,
                 "minutes": round(self.minutes, 3), "deals": deals, "final": final, "vs": out}
        self.eval_history.append(entry)
        with open(self.run_dir / "eval.jsonl", "a") as f:
            f.write(json.dumps(entry) + "\n")
        writer.flush()
        return entry

    def _checkpoint(self, name=None) -> None:
        data = {
            "config": self.cfg.to_dict(), "model": self.net.state_dict(), "optimizer": self.opt.state_dict(),
            "update": self.update, "samples": self.samples, "decisions": self.decisions, "minutes": self.minutes,
            "pool": self.pool, "next_snapshot_id": self.next_snapshot_id, "pool_version": self.pool_version,
            "learner_rng": self.gen.get_state(), "workers": self._all("get_state"), "imitated": self.imitated,
        }
        ck = self.run_dir / "checkpoints"
        save_checkpoint(ck / "latest.pt", data)
        if name and name.startswith("update_"):
            if self.cfg.keep_checkpoints:
                save_checkpoint(ck / name, data)
            for old in sorted(ck.glob("update_*.pt"))[: -self.cfg.keep_checkpoints or None]:
                old.unlink()
        elif name:
            save_checkpoint(ck / name, data)

    def _restore(self, data) -> None:
        try:
            self.net.load_state_dict(data["model"])
            self.opt.load_state_dict(data["optimizer"])
            self.gen.set_state(data["learner_rng"])
            self.update, self.samples, self.decisions = data["update"], data["samples"], data["decisions"]
            self.minutes = data["minutes"]
            self.pool, self.next_snapshot_id = data["pool"], data["next_snapshot_id"]
            self.pool_version = data["pool_version"]
            self.imitated = data.get("imitated", False)
            states = data["workers"]
        except (KeyError, RuntimeError, TypeError, ValueError) as e:
            raise CheckpointError(f"checkpoint {data.get('path')} cannot be resumed: {type(e).__name__}: {e}") from None
        if len(states) != len(self.workers):
            raise CheckpointError(f"checkpoint has {len(states)} worker states, the config {len(self.workers)}")
        if self.remote:
            import ray

            ray.get([w.set_state.remote(s) for w, s in zip(self.workers, states, strict=True)])
        else:
            for w, s in zip(self.workers, states, strict=True):
                w.set_state(s)


def train(cfg: TrainConfig, run_dir, ray_address=None, progress=True) -> dict:
    """Train a new run in ``run_dir`` (which must not hold a run yet)."""
    run_dir = Path(run_dir)
    if (run_dir / "checkpoints").exists():
        raise ValueError(f"{run_dir} already holds a run: use --resume {run_dir} or another --out")
    return Trainer(cfg, run_dir, ray_address, progress).run()


def resume(run_dir, overrides: dict | None = None, ray_address=None, progress=True) -> dict:
    """Continue the run in ``run_dir`` from its latest checkpoint with its own config; only the stopping
    rules (``RESUMABLE_KEYS``) may be overridden."""
    data = load_checkpoint(run_dir, latest=True)
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
    return Trainer(cfg, run_dir, ray_address, progress, resume_from=data).run()
