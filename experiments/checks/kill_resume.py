"""Kill the training driver with SIGKILL at random moments; every time, the run must resume (issue 14, part 1).

One run directory; each round starts ``tarocchi-rl train`` (or ``--resume`` once the directory exists), waits a
random time drawn uniformly from [0, --max-delay] seconds (start-up, imitation, rollouts, learning, evaluations,
checkpoint writes: every moment is a candidate) and kills the driver and its whole process tree with SIGKILL.
After each kill the directory is checked: either it does not exist (killed before the run began: the next
round trains afresh) or ``--resume`` can load it (:func:`load_resume_checkpoint`, no fallback needed). After the
last kill the run is resumed to its end, which must report every update of the config and a finite final
evaluation; no process of the killed trees may survive.

    .venv/bin/python experiments/checks/kill_resume.py --kills 20                # about 5 minutes, local workers
    .venv/bin/python experiments/checks/kill_resume.py --kills 20 --workers 1    # with a Ray rollout actor

Prints one line per kill (delay, what was on disk) and a summary; exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "tarocchi_rl.cli"]

SETTINGS = [  # a small run with every kind of moment: imitation, rollouts, periodic evaluations and checkpoints
    "num_envs=16", "rollout_steps=8", "async_rollouts=false", "torch_threads=1", "network.hidden=[32]",
    "ppo.minibatch_size=64", "ppo.epochs=2", "league.snapshot_every=2", "league.pool_size=2",
    "imitation.decisions=2000", "eval.every=25", "eval.deals=16", "eval.final_deals=16", "max_minutes=0",
    "checkpoint_every=5", "keep_checkpoints=2",
]


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (from /proc), nearest first."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(0), []):
            out.append(c)
            todo.append(c)
    return out


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_tree(proc: subprocess.Popen) -> list[int]:
    """SIGKILL the driver first (what a crash does), then anything it had started; returns the tree's pids."""
    tree = descendants(proc.pid)
    proc.kill()
    proc.wait()
    for pid in tree:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return tree


def train_command(run_dir: Path, updates: int, workers: int, seed: int) -> list[str]:
    if run_dir.exists():
        return [*CLI, "train", "--resume", str(run_dir), "--no-progress"]
    sets = [*SETTINGS, f"max_updates={updates}", f"num_workers={workers}", f"seed={seed}"]
    return [*CLI, "train", "--out", str(run_dir), "--no-progress", *[x for s in sets for x in ("--set", s)]]


def check_resumable(run_dir: Path) -> str:
    """'absent' or 'update N' when ``--resume`` can load the run without falling back; raises otherwise."""
    from tarocchi_rl.rl.checkpoint import load_checkpoint

    if not run_dir.exists():
        return "absent"
    data = load_checkpoint(run_dir / "checkpoints" / "latest.pt")  # the file --resume reads first: must be good
    if not (run_dir / "config.yaml").is_file():
        raise AssertionError(f"{run_dir} holds a checkpoint but no config.yaml")
    return f"update {data['update']}"


def run_kills(kills: int, max_delay: float, updates: int, workers: int, seed: int, work: Path,
              log=print) -> dict:
    """The experiment (module docstring); returns its summary (``ok`` False when a check failed)."""
    rng = np.random.default_rng(seed)
    run_dir = work / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rounds, failures, survivors = [], [], []
    for k in range(3 * kills):  # until `kills` kills (a round may end by itself: then it is not one)
        if sum(not r["finished"] for r in rounds) == kills:
            break
        cmd = train_command(run_dir, updates, workers, seed)
        delay = float(rng.uniform(0, max_delay))
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            proc.wait(timeout=delay)
            finished = True
        except subprocess.TimeoutExpired:
            finished = False
        tree = [] if finished else kill_tree(proc)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        time.sleep(0.2)
        survivors += [p for p in tree if alive(p)]
        try:
            state = check_resumable(run_dir)
        except Exception as e:
            failures.append(f"kill {k + 1}: {type(e).__name__}: {e}")
            state = "NOT RESUMABLE"
        if finished and proc.returncode != 0:
            failures.append(f"round {k + 1} ended by itself with exit {proc.returncode}: {err.strip()[-300:]}")
        what = "finished by itself" if finished else f"killed after {delay:5.2f} s"
        rounds.append({"round": k + 1, "delay_s": round(delay, 3), "finished": finished, "on_disk": state,
                       "resumed": "--resume" in cmd})
        log(f"round {k + 1:2d}: {'resume' if '--resume' in cmd else 'train '} {what}; on disk: {state}")
    proc = subprocess.run(train_command(run_dir, updates, workers, seed), cwd=work, env=env, capture_output=True,
                          text=True, timeout=900)
    final: dict = {}
    if proc.returncode != 0:
        failures.append(f"the final resume failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
    else:
        final = json.loads(proc.stdout.strip().splitlines()[-1])
        if final.get("updates") != updates:
            failures.append(f"the final run reports {final.get('updates')} updates, not {updates}")
        fe = (final.get("final_eval") or {}).get("vs", {})
        if not fe or not all(np.isfinite(v["mean"]) for v in fe.values()):
            failures.append(f"no finite final evaluation: {final.get('final_eval')}")
    if survivors:
        failures.append(f"{len(survivors)} processes of killed trees still alive: "
                        + "; ".join(command_line(p)[:80] for p in survivors[:5]))
    evals = (run_dir / "eval.jsonl").read_text().splitlines() if (run_dir / "eval.jsonl").exists() else []
    updates_logged = [json.loads(line)["update"] for line in evals]
    if updates_logged != sorted(set(updates_logged)):  # the resumed runs trimmed what they redid
        failures.append(f"eval.jsonl updates out of order or repeated: {updates_logged}")
    stale = [p.name for p in work.glob(".run.*")]
    return {"kills": sum(not r["finished"] for r in rounds), "rounds": rounds, "failures": failures,
            "ok": not failures, "final": {k: final.get(k) for k in ("updates", "samples", "minutes")},
            "eval_updates": updates_logged, "stale_temp_dirs": stale}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--max-delay", type=float, default=20.0, help="seconds; each kill waits U(0, this)")
    ap.add_argument("--updates", type=int, default=1000, help="the run's max_updates (more than the kills reach)")
    ap.add_argument("--workers", type=int, default=0, help="num_workers (0: in the driver; >= 1: Ray actors)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the summary as JSON here")
    args = ap.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kill_resume-") as tmp:
        summary = run_kills(args.kills, args.max_delay, args.updates, args.workers, args.seed, Path(tmp))
    summary["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"{summary['kills']} kills, final run: {summary['final']}, evaluations at updates "
          f"{summary['eval_updates']}, {summary['seconds']} s")
    for f in summary["failures"]:
        print("FAILED: " + f)
    print("every resume succeeded" if summary["ok"] else "FAILED")
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
