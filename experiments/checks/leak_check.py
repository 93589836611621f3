"""No slow leaks (issue 14 part 5): the duplicate arena and a training run, each for ``--minutes``, with the
memory of the processes doing the work sampled every ``--interval`` seconds.

    .venv/bin/python experiments/checks/leak_check.py --minutes 30 [--warmup-minutes 5] [--interval 10] [--parallel]
        [--variant mineo] [--phases arena,train] [--out leak.json] [--tracemalloc]

Phases (each its own subprocess, sampled from here with its whole process tree, read from ``/proc``):

* ``arena``: a worker process (this script, ``--arena-worker``) that saves a freshly initialised PPO checkpoint
  (default network) and then calls :func:`tarocchi_rl.arena.run_arena` over and over, a new seed each round, with
  the agents ``heuristic``, ``random``, ``ismcts:iterations=N`` and ``ppo:CHECKPOINT`` built from their specs
  each round (``agents.specs.make_agent``, as ``tarocchi-rl eval`` does); every other round also writes the
  outputs (``--out``: results.json, games.jsonl, ratings.png) to a scratch directory. Measured: the worker's RSS
  (plus any children: none with these agents).
* ``train``: ``tarocchi-rl train --config configs/ppo_VARIANT.yaml`` with ``max_minutes`` = ``--minutes`` and
  ``num_workers: 1`` (one Ray rollout actor: the realistic path), plus ``--train-set`` overrides (by default
  evaluations and checkpoints more often than the shipped config, so that the periodic paths run many times,
  and a shorter warm start, so that it ends inside the warm-up). Measured: the driver plus its Ray worker
  processes (``ray::...``: the rollout actor and idle workers); the Ray system processes (raylet with the
  object store, gcs_server, agents) are reported beside it.

Per phase: RSS at the end of the warm-up and at the end (the last sample within ``--minutes``), the maximum, the
growth after the warm-up ``(end - warmup) / warmup`` and the slope of a least-squares line through the
post-warm-up samples (MB per hour), pass/fail against ``--target`` (5 %). ``--out`` gets every sample (per
process: RSS and PSS). Run directories and scratch files live in a temporary directory, removed at the end.

``--tracemalloc`` traces the arena worker's Python allocations and prints the 15 source lines whose allocations
grew most between the end of the warm-up and the end (diagnosis; it slows the worker).
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
DEFAULT_TRAIN_SET = ["imitation.decisions=500000", "eval.every=10", "eval.deals=100", "eval.final_deals=100",
                     "checkpoint_every=20"]


# --- /proc ------------------------------------------------------------------------------------------------------

def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:  # the process ended, or is not ours
        return None


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = _read(f"/proc/{name}/stat")
            if stat:
                out[int(name)] = int(stat[stat.rfind(")") + 2 :].split()[1])
    return out


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants (by parent pid)."""
    children: dict[int, list[int]] = {}
    for pid, ppid in _parents().items():
        children.setdefault(ppid, []).append(pid)
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    return tree


def _kb(text: str | None, key: str) -> float | None:
    for line in (text or "").splitlines():
        if line.startswith(key):
            return float(line.split()[1])
    return None


def process_memory(pid: int) -> dict | None:
    """RSS and PSS (MB) and the command line of a process; None when it has ended."""
    rss = _kb(_read(f"/proc/{pid}/status"), "VmRSS:")
    if rss is None:
        return None
    cmd = (_read(f"/proc/{pid}/cmdline") or "").replace("\0", " ").strip()
    pss = _kb(_read(f"/proc/{pid}/smaps_rollup"), "Pss:")
    return {"pid": pid, "cmd": cmd[:160], "rss_mb": rss / 1024, "pss_mb": None if pss is None else pss / 1024}


def _kind(root: int, p: dict) -> str:
    if p["pid"] == root:
        return "main"
    return "ray_workers" if p["cmd"].startswith("ray::") else "other"


# --- the arena worker (a subprocess) ------------------------------------------------------------------------------

def make_checkpoint(path: Path, variant: str) -> Path:
    """A freshly initialised network of the default config, saved in the trainer's checkpoint format."""
    import torch

    from tarocchi_rl.rl.checkpoint import save_checkpoint
    from tarocchi_rl.rl.config import load_config
    from tarocchi_rl.rl.network import build_network
    from tarocchi_rl.variants import get_variant

    cfg = load_config(None, [f"variant={variant}"])
    spec = get_variant(variant)
    torch.manual_seed(0)
    net = build_network(cfg, spec.obs_dim, spec.n_actions)
    save_checkpoint(path, {"config": cfg.to_dict(), "model": net.state_dict(), "update": 0, "samples": 0,
                           "decisions": 0, "minutes": 0.0,
                           "workers": [{"env_rng": np.arange(4, dtype=np.uint64) * np.uint64(2**61)}]})
    return path


def arena_worker(a: argparse.Namespace) -> int:
    """Rounds of the duplicate arena until ``a.arena_worker`` seconds have passed (at least one, however long the
    start took); one JSON line per round."""
    t0 = time.monotonic()
    if a.tracemalloc:
        import tracemalloc

        tracemalloc.start(4)
    import numba

    from tarocchi_rl.agents.specs import make_agent
    from tarocchi_rl.arena import run_arena

    numba.set_num_threads(1)  # as `tarocchi-rl eval --threads 1`
    work = Path(a.workdir)
    ckpt = make_checkpoint(work / "fresh.pt", a.variant)
    specs = ["heuristic", "random", f"ismcts:iterations={a.ismcts_iterations}", f"ppo:{ckpt}"]
    snap0, k = None, 0
    while k == 0 or time.monotonic() - t0 < a.arena_worker:
        if a.tracemalloc and snap0 is None and time.monotonic() - t0 >= a.warmup_minutes * 60:
            snap0 = tracemalloc.take_snapshot()
        t = time.monotonic()
        out = str(work / "eval") if k % 2 else None
        r = run_arena(a.variant, specs, deals=a.arena_deals, seed=1000 + k, out_dir=out, progress=False,
                      make_agent=make_agent)
        print(json.dumps({"round": k, "seed": 1000 + k, "games": r["games"], "out": bool(out),
                          "seconds": round(time.monotonic() - t, 2)}), flush=True)
        k += 1
    if a.tracemalloc and snap0 is not None:
        top = tracemalloc.take_snapshot().compare_to(snap0, "lineno")[:15]
        print("tracemalloc: the 15 lines whose allocations grew most after the warm-up", file=sys.stderr)
        for s in top:
            print(f"  {s}", file=sys.stderr)
    return 0


# --- phases ------------------------------------------------------------------------------------------------------

class Phase:
    """One measured subprocess: its command, its samples and its log."""

    def __init__(self, name: str, cmd: list[str], log: Path, measured: list[str], seconds: float,
                 env: dict | None = None):
        self.name, self.cmd, self.log, self.measured, self.seconds = name, cmd, log, measured, seconds
        self.env = env
        self.samples: list[dict] = []
        self.proc: subprocess.Popen | None = None
        self.seen: dict[int, str] = {}  # every pid of the tree, with its command line

    def start(self) -> None:
        self.t0 = time.monotonic()
        with open(self.log, "wb") as f:
            self.proc = subprocess.Popen(self.cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, env=self.env,
                                         start_new_session=True)
        self.started = datetime.datetime.now().isoformat(timespec="seconds")

    def sample(self) -> None:
        assert self.proc is not None
        root = self.proc.pid
        procs = [m for m in map(process_memory, process_tree(root)) if m is not None]
        by_kind: dict[str, float] = {"main": 0.0, "ray_workers": 0.0, "other": 0.0}
        for p in procs:
            by_kind[_kind(root, p)] += p["rss_mb"]
            self.seen[p["pid"]] = p["cmd"]
        self.samples.append({
            "t": round(time.monotonic() - self.t0, 2), "measured_mb": sum(by_kind[k] for k in self.measured),
            "total_mb": sum(by_kind.values()), **{f"{k}_mb": v for k, v in by_kind.items()},
            "procs": [{**p, "kind": _kind(root, p)} for p in procs],
        })

    def done(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None

    def stop(self) -> None:
        """SIGINT (the trainer saves and exits), then SIGTERM and SIGKILL to the process group."""
        if self.proc is None or self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGINT, 60), (signal.SIGTERM, 20), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(wait)
                return
            except subprocess.TimeoutExpired:
                pass

    def lingering(self) -> list[str]:
        """Processes of the tree that outlived the phase (same pid and command line still there)."""
        left = []
        for pid, cmd in self.seen.items():
            now = (_read(f"/proc/{pid}/cmdline") or "").replace("\0", " ").strip()[:160]
            if now and now == cmd:
                left.append(f"{pid} {cmd}")
        return left


def summarize(samples: list[dict], key: str, warmup_s: float, end_s: float, target: float) -> dict:
    """The growth of ``key`` (MB) between the end of the warm-up and the end (last sample at or before end_s)."""
    inside = [s for s in samples if s["t"] <= end_s + 1e-9] or samples
    post = [s for s in inside if s["t"] >= warmup_s]
    if len(post) < 2:
        return {"error": f"{len(post)} samples after the warm-up: run longer or sample more often"}
    t = np.array([s["t"] for s in post]) / 3600
    y = np.array([s[key] for s in post])
    warm, end = y[0], y[-1]
    slope = float(np.polyfit(t, y, 1)[0])
    growth = (end - warm) / warm * 100
    hours = t[-1] - t[0]
    return {"warmup_t_s": post[0]["t"], "end_t_s": post[-1]["t"], "warmup_mb": float(warm), "end_mb": float(end),
            "max_mb": float(max(s[key] for s in samples)), "growth_pct": float(growth),
            "slope_mb_per_h": slope, "fit_growth_pct": float(slope * hours / warm * 100),
            "samples_after_warmup": len(post), "pass": bool(growth < target)}


def _row(name: str, s: dict) -> str:
    if "error" in s:
        return f"{name:<34} {s['error']}"
    return (f"{name:<34} {s['warmup_mb']:>9.1f} {s['end_mb']:>9.1f} {s['max_mb']:>9.1f} {s['growth_pct']:>+8.2f}% "
            f"{s['slope_mb_per_h']:>+10.1f} {'pass' if s['pass'] else 'FAIL':>5}")


def build_phases(a: argparse.Namespace, tmp: Path) -> list[Phase]:
    phases, seconds = [], a.minutes * 60
    names = [n.strip() for n in a.phases.split(",") if n.strip()]
    for n in names:
        if n not in ("arena", "train"):
            raise SystemExit(f"--phases: unknown phase {n!r} (arena, train)")
    if "arena" in names:
        work = tmp / "arena"
        work.mkdir()
        cmd = [sys.executable, str(Path(__file__).resolve()), "--arena-worker", str(seconds), "--workdir", str(work),
               "--variant", a.variant, "--arena-deals", str(a.arena_deals), "--ismcts-iterations",
               str(a.ismcts_iterations), "--warmup-minutes", str(a.warmup_minutes)]
        if a.tracemalloc:
            cmd.append("--tracemalloc")
        phases.append(Phase("arena", cmd, tmp / "arena.log", ["main", "ray_workers", "other"], seconds))
    if "train" in names:
        exe = Path(sys.executable).with_name("tarocchi-rl")
        cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "tarocchi_rl.cli"]
        cmd += ["train", "--config", str(ROOT / "configs" / f"ppo_{a.variant}.yaml"), "--out", str(tmp / "run"),
                "--no-progress", "--set", f"max_minutes={a.minutes}", "--set", f"num_workers={a.num_workers}"]
        for ov in DEFAULT_TRAIN_SET + (a.train_set or []):
            cmd += ["--set", ov]
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        phases.append(Phase("train", cmd, tmp / "train.log", ["main", "ray_workers"], seconds, env))
    return phases


def run(a: argparse.Namespace) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="leak_check-"))
    phases = build_phases(a, tmp)
    result: dict = {"date": datetime.date.today().isoformat(), "host": platform.node(), "cpus": os.cpu_count(),
                    "args": {k: v for k, v in vars(a).items() if k not in ("arena_worker", "workdir")},
                    "phases": {}}
    try:
        groups = [phases] if a.parallel else [[p] for p in phases]
        for group in groups:
            for p in group:
                p.start()
                print(f"[{p.name}] started pid {p.proc.pid}: {' '.join(p.cmd)}", file=sys.stderr, flush=True)
            next_t = time.monotonic()
            last_note = 0.0
            while not all(p.done() for p in group):
                for p in group:
                    if not p.done():
                        p.sample()
                        if time.monotonic() - p.t0 > p.seconds + a.grace_minutes * 60:
                            print(f"[{p.name}] still running {a.grace_minutes} min after the end: stopping it",
                                  file=sys.stderr, flush=True)
                            p.stop()
                if time.monotonic() - last_note >= 60:
                    last_note = time.monotonic()
                    notes = [f"{p.name} t={p.samples[-1]['t'] / 60:.1f}min {p.samples[-1]['measured_mb']:.0f}MB"
                             for p in group if p.samples]
                    print("  " + ", ".join(notes), file=sys.stderr, flush=True)
                next_t += a.interval
                time.sleep(max(0.0, next_t - time.monotonic()))
            time.sleep(2)  # Ray's processes stop after the driver
            for p in group:
                log = p.log.read_text(errors="replace")
                rounds = [json.loads(x) for x in log.splitlines() if x.startswith('{"round"')]
                res = {"command": p.cmd, "started": p.started, "exit_code": p.proc.returncode,
                       "measured": "+".join(p.measured), "lingering": p.lingering(), "log_tail": log[-3000:],
                       "summary": summarize(p.samples, "measured_mb", a.warmup_minutes * 60, p.seconds, a.target),
                       "summary_total": summarize(p.samples, "total_mb", a.warmup_minutes * 60, p.seconds,
                                                  a.target),
                       "samples": p.samples}
                if p.name == "arena":
                    res["arena_rounds"] = len(rounds)
                    res["arena_games"] = sum(r["games"] for r in rounds)
                result["phases"][p.name] = res
                if p.proc.returncode != 0 or "tracemalloc:" in log:
                    print(f"[{p.name}] exit {p.proc.returncode}; log tail:\n{log[-3000:]}", file=sys.stderr)
    finally:
        for p in phases:
            p.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return result


def report(result: dict) -> str:
    a = result["args"]
    lines = [f"leak check {result['date']} on {result['host']} ({result['cpus']} CPUs): {a['minutes']} min per "
             f"phase{' (in parallel)' if a['parallel'] else ''}, warm-up {a['warmup_minutes']} min, a sample every "
             f"{a['interval']} s, target growth < {a['target']}%",
             f"{'phase (processes measured)':<34} {'warmup MB':>9} {'end MB':>9} {'max MB':>9} {'growth':>9} "
             f"{'MB/hour':>10} {'':>5}"]
    for name, ph in result["phases"].items():
        lines.append(_row(f"{name} ({ph['measured']})", ph["summary"]))
        if name == "train":
            lines.append(_row("train (all, with Ray system)", ph["summary_total"]))
    for name, ph in result["phases"].items():
        extra = f", {ph['arena_rounds']} arena rounds, {ph['arena_games']} games" if "arena_rounds" in ph else ""
        lines.append(f"{name}: exit {ph['exit_code']}{extra}")
        if ph["lingering"]:
            lines.append(f"{name}: processes still running after the phase: {ph['lingering']}")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=30.0, help="length of each phase")
    p.add_argument("--warmup-minutes", type=float, default=5.0, help="growth is measured after this")
    p.add_argument("--interval", type=float, default=10.0, help="seconds between samples")
    p.add_argument("--variant", default="mineo")
    p.add_argument("--phases", default="arena,train", help="comma-separated: arena, train")
    p.add_argument("--parallel", action="store_true", help="run the phases at the same time")
    p.add_argument("--out", default=None, help="JSON file for the samples and the summary")
    p.add_argument("--target", type=float, default=5.0, help="growth after the warm-up that passes (percent)")
    p.add_argument("--arena-deals", type=int, default=24, help="deals per arena round")
    p.add_argument("--ismcts-iterations", type=int, default=20, help="the arena's ismcts agent")
    p.add_argument("--num-workers", type=int, default=1, help="train: Ray rollout actors (0: none, one process)")
    p.add_argument("--train-set", action="append", metavar="KEY=VALUE",
                   help=f"more train overrides (after the defaults: {' '.join(DEFAULT_TRAIN_SET)})")
    p.add_argument("--grace-minutes", type=float, default=10.0, help="how long a phase may overrun before it is "
                   "stopped (the trainer's final evaluation and checkpoint)")
    p.add_argument("--tracemalloc", action="store_true", help="arena: print the lines whose allocations grew")
    p.add_argument("--arena-worker", type=float, default=None, help=argparse.SUPPRESS)
    p.add_argument("--workdir", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.arena_worker is not None:
        return arena_worker(a)
    if a.minutes <= a.warmup_minutes:
        p.error("--minutes must exceed --warmup-minutes")
    result = run(a)
    print(report(result))
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=None)
        print(f"wrote {a.out}", file=sys.stderr)
    return 0 if all(ph["summary"].get("pass") for ph in result["phases"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
