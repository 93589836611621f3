"""What several scripts of ``experiments/`` share: the one module they import besides the library (no script
imports another). A script in a folder of ``experiments/`` puts this folder on its path and imports from here:

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
    from common import today_utc  # noqa: E402

Heavy imports (torch, websockets, the library) are made inside the functions that need them.
"""

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]  # the repository


# -- result files and command lines ---------------------------------------------------------------------------------
def today_utc() -> str:
    """The day a result file is written (YYYY-MM-DD, UTC): the results pages compare it with the shipped bots'
    export days."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def bounded_int(name: str, lo: int, hi: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer in [lo, hi], else a one-line error naming the option ``name``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{name} must be in [{lo}, {hi}], got {value}")
        return value

    return parse


# -- agents and networks ----------------------------------------------------------------------------------------------
class Timed:
    """An agent that forwards to ``inner`` and counts its decisions and the seconds they took."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)
        self.needs_obs = getattr(inner, "needs_obs", True)
        self.needs_mask = getattr(inner, "needs_mask", True)
        self.legal_by_construction = getattr(inner, "legal_by_construction", False)
        self.seconds, self.decisions = 0.0, 0

    def act(self, obs, mask, env, idx=None):
        t = time.perf_counter()
        out = self.inner.act(obs, mask, env, idx)
        self.seconds += time.perf_counter() - t
        self.decisions += len(out)
        return out


def fresh_checkpoint(path: Path, variant: str, seed: int = 0) -> Path:
    """A freshly initialised network of the default shape (256x256, relu) saved at ``path`` in the checkpoint
    format (for timings that do not depend on the weights)."""
    import torch

    from tarocchi_rl.rl.checkpoint import save_checkpoint
    from tarocchi_rl.rl.config import load_config
    from tarocchi_rl.rl.network import build_network
    from tarocchi_rl.variants import get_variant

    cfg = load_config(None, [f"variant={variant}", f"seed={seed}"])  # the default network: 256x256 relu
    spec = get_variant(variant)
    torch.manual_seed(seed)
    net = build_network(cfg, spec.obs_dim, spec.n_actions)
    save_checkpoint(path, {"config": cfg.to_dict(), "model": net.state_dict(), "update": 0, "samples": 0,
                           "decisions": 0, "minutes": 0.0})
    return path


def export_fresh(tmp: Path, variant: str) -> str:
    """:func:`fresh_checkpoint` exported to ``tmp/bot`` (no evaluation): its ``onnx:DIR`` spec."""
    from tarocchi_rl.rl.export import export_policy

    export_policy(fresh_checkpoint(tmp / "final.pt", variant), tmp / "bot", eval_deals=0)
    return f"onnx:{tmp / 'bot'}"


# -- an old commit beside this tree ---------------------------------------------------------------------------------
OLD_TREES = "TAROCCHI_OLD_TREES"  # the environment variable naming the cache of old trees (tests: a temporary one)
KEEP_OLD_TREES = 4  # old trees kept in the cache, the most recently used


def old_trees_dir() -> Path:
    """Where :func:`old_commit_tree` keeps old commits' files: ``$TAROCCHI_OLD_TREES``, else
    ``~/.cache/tarocchi-rl/old-trees`` (``$XDG_CACHE_HOME`` if set)."""
    if os.environ.get(OLD_TREES):
        return Path(os.environ[OLD_TREES])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tarocchi-rl" / "old-trees"


def old_commit_tree(ref: str) -> Path:
    """The files of the commit ``ref`` (any git revision: ``HEAD``, ``4b332bb^``), materialised once under
    :func:`old_trees_dir` as ``FULL_SHA/`` (``git archive``: no worktree to remove, none left behind by a killed
    run) and reused by every later comparison with that commit, with the Numba cache its runs wrote there (a fresh
    tree compiles the core for minutes). Written to a temporary folder first and renamed: a half-written tree is
    never used. The trees beyond the :data:`KEEP_OLD_TREES` most recently used are removed. A ref that names no
    commit: SystemExit with git's word."""
    found = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
                           capture_output=True, text=True)
    if found.returncode != 0:
        raise SystemExit(f"error: {ref!r} names no commit of {ROOT} {found.stderr.strip()}".rstrip())
    sha = found.stdout.strip()
    cache = old_trees_dir()
    cache.mkdir(parents=True, exist_ok=True)
    tree = cache / sha
    if not tree.is_dir():
        tmp = Path(tempfile.mkdtemp(prefix=f".{sha[:12]}-", dir=cache))
        try:
            archive = subprocess.Popen(["git", "-C", str(ROOT), "archive", "--format=tar", sha],
                                       stdout=subprocess.PIPE)
            assert archive.stdout is not None
            with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
                tar.extractall(tmp, filter="data")
            if archive.wait() != 0:
                raise SystemExit(f"error: git archive {sha} failed with status {archive.returncode}")
            try:
                tmp.rename(tree)
            except OSError:  # another run materialised it first: theirs is used
                if not tree.is_dir():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    os.utime(tree)  # the most recently used
    prune_old_trees(cache, keep=tree)
    return tree


def prune_old_trees(cache: Path, keep: Path) -> None:
    """The cache's trees beyond the :data:`KEEP_OLD_TREES` most recently used removed (never ``keep``), and the
    temporary folders of materialisations killed over an hour ago."""
    trees = sorted((p for p in cache.iterdir() if p.is_dir() and len(p.name) == 40 and p != keep),
                   key=lambda p: p.stat().st_mtime, reverse=True)
    stale = [p for p in cache.iterdir() if p.name.startswith(".") and time.time() - p.stat().st_mtime > 3600]
    for p in trees[KEEP_OLD_TREES - 1:] + stale:
        shutil.rmtree(p, ignore_errors=True)


def run_json(tree: Path, args: list[str], own_path: bool = True) -> dict:
    """``python ARGS`` run in ``tree`` (its working directory) with ``PYTHONPATH`` set to it, so that ``import
    tarocchi_rl`` loads that tree's code (``own_path=False``: this environment's installed package): the last line
    of its stdout, a JSON object. A run that fails: SystemExit with the end of its stderr."""
    env = dict(os.environ, PYTHONPATH=str(tree)) if own_path else dict(os.environ)
    done = subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{Path(sys.argv[0]).stem}: a run in {tree} failed (exit {done.returncode}): "
                         f"{done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def old_and_new(ref: str, keys: list[str], measure: Callable[[Path, str, bool], dict], rounds: int,
                warm: bool = True, progress: bool = True) -> dict[tuple[str, str], list[dict]]:
    """The commit ``ref`` (``"old"``, :func:`old_commit_tree`) and this tree (``"new"``, :data:`ROOT`) measured
    side by side: ``measure(tree, key, short)`` for each key (a variant) returns a dict of figures. First, with
    ``warm``, one unrecorded short run (``short=True``) per key and tree fills each tree's Numba cache; then
    ``rounds`` rounds, each measuring every key in both trees, old and new alternating their order round by round so
    that the machine's noise falls on both (``progress``: a line on stderr after each round). ``runs[key, "old"]``
    and ``runs[key, "new"]``: the figures of the recorded runs, in round order (:func:`median_of`)."""
    trees = {"old": old_commit_tree(ref), "new": ROOT}
    for key in keys if warm else ():
        for tree in trees.values():
            measure(tree, key, True)
    runs: dict[tuple[str, str], list[dict]] = {(key, k): [] for key in keys for k in trees}
    for r in range(rounds):
        for key in keys:
            for k in ("old", "new") if r % 2 == 0 else ("new", "old"):
                runs[key, k].append(measure(trees[k], key, False))
        if progress:
            print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    return runs


def median_of(runs: list[dict], figure: str) -> float:
    """The median of ``figure`` over the runs of :func:`old_and_new` (one key, one tree)."""
    return statistics.median(x[figure] for x in runs)


# -- tarocchi-rl serve on loopback, and its clients -------------------------------------------------------------------
WEB_VARIANTS = "mineo,piedmont3,piedmont4,french3,french4"  # the tables' variants, in turn
STAGGER = 2.0  # seconds over which the tables of a load start (people arrive over a few seconds)
LOBBY_SEATS = ["human", "human", "heuristic"]  # french3 with two people: a lobby table that waits for someone


def client_address(k: int) -> str:
    """The k-th client's own loopback address (Linux routes all of 127.0.0.0/8 to the loopback): the server limits
    tables and connections per client address, and 200 people have 200 addresses."""
    return f"127.0.{1 + k // 250}.{1 + k % 250}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def raise_open_files() -> None:
    """This process's open-file limit raised to its hard limit (a crowd holds over a thousand sockets)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def wait_ready(port: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Until the server started as ``proc`` answers ``GET /v1/health`` (SystemExit if it exits or never does)."""
    t = time.monotonic()
    while time.monotonic() - t < timeout:
        if proc.poll() is not None:
            raise SystemExit(f"error: the server exited with status {proc.returncode}")
        try:
            r, w = await asyncio.open_connection("127.0.0.1", port)
            w.write(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            line = await r.readline()
            w.close()
            if b" 200 " in line:
                return
        except OSError:
            pass
        await asyncio.sleep(0.3)
    raise SystemExit("error: the server did not come up")


def stop_process(proc: subprocess.Popen, timeout: float) -> str:
    """``proc`` stopped: SIGTERM (a clean stop: a server's writer applies what is queued, a reporter prints its
    report), SIGKILL if it still runs ``timeout`` seconds later. What it printed to a piped stdout ("" if killed or
    not piped)."""
    proc.terminate()
    try:
        text, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return ""
    return text or ""


@dataclass
class Served:
    """A running ``tarocchi-rl serve`` of :func:`serve_process`."""

    port: int  # on 127.0.0.1
    proc: subprocess.Popen
    log: Path  # the server's stderr


@contextmanager
def serve_process(args: list[str], log: Path | None = None, stop_timeout: float = 20,
                  ready_timeout: float = 120) -> Iterator[Served]:
    """``tarocchi-rl serve --port PORT ARGS`` (this environment's command) on a free loopback port, its stderr
    written to the file ``log`` (a temporary one if None; a file, not a pipe: a pipe nobody reads would stop the
    server once full), yielded once it answers ``GET /v1/health`` (:func:`wait_ready`; if it exits first or does
    not answer within ``ready_timeout`` seconds, the end of its log goes to stderr and SystemExit says which).
    Stopped at the end whatever happens (:func:`stop_process`, SIGKILL after ``stop_timeout`` seconds)."""
    port = free_port()
    cli = str(Path(sys.executable).parent / "tarocchi-rl")
    with tempfile.TemporaryDirectory(prefix="serve-") as tmp:
        path = log or Path(tmp) / "serve.log"
        with open(path, "w") as err:
            proc = subprocess.Popen([cli, "serve", "--port", str(port), *args], stdout=subprocess.DEVNULL,
                                    stderr=err, text=True)
            try:
                try:
                    asyncio.run(wait_ready(port, proc, ready_timeout))
                except SystemExit:
                    proc.kill()
                    proc.wait()
                    print(path.read_text()[-3000:], file=sys.stderr)  # what the server said
                    raise
                yield Served(port, proc, path)
            finally:
                stop_process(proc, stop_timeout)


async def one_table(port: int, variant: str, seed: int, lat: list[float], errors: list[str],
                    think: float = 0.0) -> bool:
    """One deal over a WebSocket from the ``seed``-th client address: a human seat (seat 0, the first legal action
    after ``think`` seconds on average) against heuristic bots; each move-to-answer time appended to ``lat``
    (seconds). Whether the deal ended with ``over``."""
    import websockets

    rng = np.random.default_rng(seed)

    n = {"mineo": 4, "piedmont3": 3, "piedmont4": 4, "french3": 3, "french4": 4}[variant]
    async with websockets.connect(f"ws://127.0.0.1:{port}/ws", max_size=None,
                                  local_addr=(client_address(seed), 0)) as ws:
        await ws.send(json.dumps({"type": "start", "variant": variant, "seed": seed,
                                  "seats": ["human"] + ["heuristic"] * (n - 1)}))
        msg = json.loads(await ws.recv())
        while True:
            if msg.get("type") == "error":
                errors.append(f"{variant} seed {seed}: {msg.get('error')}")
                return False
            if msg.get("type") == "over":
                return True
            table = msg["table"]
            if not table.get("your_turn"):
                errors.append(f"{variant} seed {seed}: a state that is not the human's turn: {table.get('phase')}")
                return False
            if think > 0:
                await asyncio.sleep(think * rng.uniform(0.5, 1.5))
            t0 = time.perf_counter()
            await ws.send(json.dumps({"type": "act", "action": table["legal"][0]["action"]}))
            msg = json.loads(await ws.recv())
            lat.append(time.perf_counter() - t0)


def deal_requests(variants: list[str], deals: int, seed: int) -> list[list[bytes]]:
    """Per deal, every act request of every seat in order (heuristic play)."""
    from tarocchi_rl.agents.specs import make_agent
    from tarocchi_rl.bot import BotServer, Referee

    heuristic = BotServer("heuristic", make_agent)
    out = []
    for k in range(deals):
        ref = Referee()
        msg = ref.handle(json.dumps({"type": "new", "variant": variants[k % len(variants)], "seed": seed + k}))
        reqs = []
        while msg["type"] == "turn":
            reqs.append(json.dumps(msg["request"]).encode())
            ans = heuristic.handle(json.dumps(msg["request"]))
            msg = ref.handle(json.dumps({"type": "apply", "action": ans["action"]}))
        out.append(reqs)
    return out


def percentiles(ms: list[float], with_max: bool = False) -> dict[str, Any]:
    """Latencies (milliseconds): their count, p50 and p99 (and the largest, ``with_max``)."""
    if not ms:
        return {"n": 0}
    x = np.array(ms)
    out: dict[str, Any] = {"n": len(x), "p50_ms": round(float(np.median(x)), 2),
                           "p99_ms": round(float(np.percentile(x, 99)), 2)}
    if with_max:
        out["max_ms"] = round(float(x.max()), 1)
    return out
