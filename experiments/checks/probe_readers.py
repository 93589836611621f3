"""Every reader of untrusted files against inputs that never end, are huge, nest deeply or expand (issue 30, item 6):
each probe runs one ``tarocchi-rl`` command as a subprocess and must end within seconds, with exit status 2 and
one ``error: ...`` line on stderr (no traceback), in bounded memory.

    .venv/bin/python experiments/checks/probe_readers.py [--only NAME,...] [--keep DIR]

Prints a table: the probe, the exit status, the seconds it ran, its peak RSS (MB, ``os.wait4``: that child
only) and the error line; a row over the figures of issue 30 (:data:`FIGURE_S` seconds, :data:`FIGURE_MB` MB) is
marked FAIL. A start-up row comes first (a command that fails at once): a probe's own cost is its figures minus
those. No probe imports torch: a checkpoint is scanned before it (``tarocchi_rl/rl/checkpoint_file.py``), a
config read before it. The inputs are made in a temporary directory
(``--keep DIR``: there, kept): sparse files take no disk, the FIFOs are fed from a thread of this script.
``tests/security/test_readers.py`` imports :data:`PROBES` and :func:`run_probe` and checks every row.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "tarocchi-rl")
DEEP = 100_000  # nesting of the deep JSON probes
LIMIT_S = 60.0  # a probe still running after this is killed (and reported as such): far beyond any bound
FIGURE_S, FIGURE_MB = 2.0, 200.0  # issue 30: every probe ends within 2 s with one line and exit 2, under 200 MB


@dataclass
class Probe:
    """One hostile input: ``make(dir)`` writes it and returns the command's arguments; ``feed`` (optional) is
    started in a thread with the directory and a stop event (a FIFO writer); ``stdin``: bytes for the command."""

    make: Callable[[Path], list[str]]
    feed: Callable[[Path, threading.Event], None] | None = None
    stdin: Callable[[], bytes] | None = None
    expect_code: int = 2
    note: str = field(default="")


@dataclass
class Result:
    code: int
    seconds: float
    peak_mb: float
    stdout: str
    stderr: str


# Runs the command as its child and reports the child's peak RSS on the fd it is given. A launcher of its own,
# because Linux counts a process's peak RSS from the process it was forked from: a child of this (possibly large)
# process would report this process's size; a child of the small launcher reports its own.
LAUNCHER = """
import os, sys
report = int(sys.argv[1])
pid = os.fork()
if pid == 0:
    os.close(report)
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
os.write(report, str(usage.ru_maxrss).encode())
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def run_probe(args: list[str], stdin: bytes | None = None, limit_s: float = LIMIT_S) -> Result:
    """Run ``tarocchi-rl ARGS`` (in the repository root) and measure it: its exit status (128 + N when killed by
    signal N), wall seconds and peak RSS (of that process alone). Killed after ``limit_s`` seconds."""
    report_r, report_w = os.pipe()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        p = subprocess.Popen([sys.executable, "-S", "-c", LAUNCHER, str(report_w), CLI, *args], cwd=ROOT,
                             stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL, stdout=out,
                             stderr=err, pass_fds=(report_w,), start_new_session=True)
        os.close(report_w)
        timer = threading.Timer(limit_s, os.killpg, (p.pid, 9))
        timer.start()
        try:
            if stdin is not None:
                assert p.stdin is not None
                try:
                    p.stdin.write(stdin)
                    p.stdin.close()
                except BrokenPipeError:
                    pass
            code = p.wait()
        finally:
            timer.cancel()
        seconds = time.monotonic() - start
        with os.fdopen(report_r, "rb") as f:
            peak_kb = int(f.read() or 0)
        out.seek(0)
        err.seek(0)
        return Result(code, seconds, peak_kb / 1024, out.read().decode("utf-8", "replace"),
                      err.read().decode("utf-8", "replace"))


# -- the inputs -----------------------------------------------------------------------------------------------
def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)  # a hole: no disk used
    return path


def _fifo(d: Path) -> Path:
    path = d / "fifo"
    if not path.exists():
        os.mkfifo(path)
    return path


def trickle(path: Path, stop: threading.Event, every: float = 0.05) -> None:
    """Write one byte to the FIFO ``path`` every ``every`` seconds, forever: until ``stop``, to each reader in turn
    (a reader that leaves is waited for again). The open is retried without blocking until a reader is there, so
    a reader that never comes does not hang it."""
    while not stop.is_set():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            stop.wait(0.01)
            continue
        try:
            while not stop.wait(every):
                try:
                    os.write(fd, b"{")
                except BlockingIOError:
                    continue
                except OSError:  # EPIPE: the reader is gone
                    break
        finally:
            os.close(fd)


def record_text(**changes: object) -> str:
    """A valid finished mineo record with ``changes`` to its top-level fields."""
    from tarocchi_rl.game import make

    state = make("mineo").new_state(1)
    while not state.is_terminal():
        state.apply(state.legal_actions()[0])
    return json.dumps({**state.to_record(), **changes})


def deep_record(d: Path) -> Path:
    (d / "deep.json").write_text('{"a":' * DEEP + "1" + "}" * DEEP)
    return d / "deep.json"


def long_integer_record(d: Path) -> Path:
    (d / "digits.json").write_text(record_text().replace('"payoffs": [', '"payoffs": [' + "9" * 5000 + ", "))
    return d / "digits.json"


def wide_checkpoint(d: Path, hidden: list[int], name: str = "wide.pt") -> Path:
    """A small checkpoint (a mineo network of one hidden layer of 32) whose config asks for ``hidden``."""
    from tarocchi_rl.rl.checkpoint import save_checkpoint
    from tarocchi_rl.rl.config import load_config
    from tarocchi_rl.rl.network import build_network
    from tarocchi_rl.variants import get_variant

    cfg = load_config(None, ["variant=mineo", "network.hidden=[32]"])
    spec = get_variant("mineo")
    net = build_network(cfg, spec.obs_dim, spec.n_actions)
    config = cfg.to_dict()
    config["network"]["hidden"] = hidden
    path = d / name
    save_checkpoint(path, {"config": config, "model": net.state_dict(), "update": 0, "samples": 0, "decisions": 0,
                           "minutes": 0.0, "workers": None})
    return path


def zip_bomb_checkpoint(d: Path, inflated: int = 256 << 20) -> Path:
    """A checkpoint whose tensor record, deflated, is a few hundred kB and inflates to ``inflated`` bytes."""
    import torch

    buf = io.BytesIO()
    torch.save({"format": "tarocchi-rl-ppo/1", "config": {}, "model": {"w": torch.zeros(4)}}, buf)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    path = d / "bomb.pt"
    with zipfile.ZipFile(path, "w") as z:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.endswith("/data/0"):
                data = bytes(inflated)
            z.writestr(info.filename, data, compress_type=zipfile.ZIP_DEFLATED)
    return path


def huge_compose(d: Path) -> Path:
    """A composed bot directory whose compose.json is 2 GB (sparse)."""
    bot = d / "composed"
    bot.mkdir(exist_ok=True)
    _sparse(bot / "compose.json", 2 << 30)
    return bot


def nested_manifest(d: Path) -> Path:
    """A bot directory whose manifest.json is a list nested :data:`DEEP` levels deep."""
    bot = d / "nested-bot"
    bot.mkdir(exist_ok=True)
    (bot / "manifest.json").write_text("[" * DEEP + "]" * DEEP)
    (bot / "policy.onnx").write_bytes(b"")
    return bot


def eval_against_random(spec: str) -> list[str]:
    return ["eval", "--agents", f"{spec},random", "--deals", "1"]


BILLION_LAUGHS = "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 9) if p else ', '.join(['lol'] * 9)}]\n"
                         for p, c in zip(" abcdefgh", "abcdefghi", strict=True))


def laughs_config(d: Path) -> Path:
    (d / "laughs.yaml").write_text(BILLION_LAUGHS)
    return d / "laughs.yaml"


def gzip_bomb_deals(d: Path, megabytes: int = 256, line: bytes = b"\n") -> Path:
    """A gzipped deals file of ``megabytes`` MB of ``line`` (blank lines by default; 256 MB is about 250 kB)."""
    block = line * ((1 << 20) // len(line))
    with gzip.open(d / "bomb.jsonl.gz", "wb", compresslevel=1) as f:
        for _ in range(megabytes):
            f.write(block)
    return d / "bomb.jsonl.gz"


def long_bot_line() -> bytes:
    return b"x" * (3 << 20) + b'\n{"type": "hello", "id": 1}\n{"type": "quit"}\n'


STARTUP = {  # a command that fails at once: what start-up costs
    "start-up (replay, missing file)": Probe(lambda d: ["replay", str(d / "missing.json")]),
}
PROBES = {
    "checkpoint missing (eval ppo:)": Probe(
        lambda d: ["eval", "--agents", f"ppo:{d / 'missing.pt'},random", "--deals", "1"]),
    "replay /dev/zero": Probe(lambda d: ["replay", "/dev/zero"]),
    "replay FIFO, no writer": Probe(lambda d: ["replay", str(_fifo(d))]),
    "replay FIFO, 1 byte / 50 ms forever": Probe(lambda d: ["replay", str(_fifo(d))],
                                                feed=lambda d, stop: trickle(_fifo(d), stop)),
    "replay 20 GB sparse file": Probe(lambda d: ["replay", str(_sparse(d / "huge.json", 20 << 30))]),
    "replay record nested 100,000 deep": Probe(lambda d: ["replay", str(deep_record(d))]),
    "replay record, 5,000-digit integer": Probe(lambda d: ["replay", str(long_integer_record(d))]),
    "checkpoint config hidden=[4096]*3": Probe(
        lambda d: eval_against_random(f"ppo:{wide_checkpoint(d, [4096] * 3)}")),
    "checkpoint config 64 x 65,536": Probe(
        lambda d: eval_against_random(f"ppo:{wide_checkpoint(d, [65536] * 64)}")),
    "checkpoint config [512, 512], tensors [32]": Probe(
        lambda d: eval_against_random(f"ppo:{wide_checkpoint(d, [512, 512])}")),
    "checkpoint zip bomb (256 MB inflated)": Probe(
        lambda d: eval_against_random(f"ppo:{zip_bomb_checkpoint(d)}")),
    "compose.json 2 GB sparse": Probe(lambda d: eval_against_random(f"onnx:{huge_compose(d)}")),
    "manifest.json nested 100,000 deep": Probe(lambda d: eval_against_random(f"onnx:{nested_manifest(d)}")),
    "config YAML billion laughs": Probe(lambda d: ["train", "--config", str(laughs_config(d)), "--out",
                                                   str(d / "runs")]),
    "deals file /dev/zero": Probe(lambda d: ["eval", "--agents", "random,heuristic", "--deals-file", "/dev/zero"]),
    "deals file gzip bomb (256 MB of newlines)": Probe(
        lambda d: ["eval", "--agents", "random,heuristic", "--deals-file", str(gzip_bomb_deals(d))]),
    "bot: a 3 MB request line, then hello": Probe(lambda d: ["bot", "--agent", "random"], stdin=long_bot_line,
                                                 expect_code=0, note="answers an error line and serves on"),
}


def run_named(name: str, probe: Probe, d: Path) -> Result:
    """Make the probe's input in ``d``, feed it if it has a feeder, and run its command."""
    args = probe.make(d)
    stop = threading.Event()
    feeder = threading.Thread(target=probe.feed, args=(d, stop), daemon=True) if probe.feed else None
    if feeder:
        feeder.start()
    try:
        return run_probe(args, probe.stdin() if probe.stdin else None)
    finally:
        stop.set()
        if feeder:
            feeder.join(5)


def error_line(r: Result) -> str:
    lines = r.stderr.strip().splitlines()
    if not lines:
        return r.stdout.strip().splitlines()[0][:100] if r.stdout.strip() else ""
    return lines[-1] if len(lines) == 1 else f"({len(lines)} lines) {lines[-1]}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=None, help="comma-separated probe names (substrings)")
    ap.add_argument("--keep", default=None, metavar="DIR", help="make the inputs in DIR and keep them")
    args = ap.parse_args()
    chosen = {**STARTUP, **PROBES}
    if args.only:
        keys = [k.strip() for k in args.only.split(",")]
        chosen = {n: p for n, p in chosen.items() if any(k in n for k in keys)}
    with tempfile.TemporaryDirectory(prefix="probe-readers-") as tmp:
        base = Path(args.keep or tmp)
        base.mkdir(parents=True, exist_ok=True)
        print(f"{'probe':45} {'exit':>4} {'seconds':>7} {'peak MB':>7}  error line")
        failed = 0
        for k, (name, probe) in enumerate(chosen.items()):
            d = base / f"p{k:02d}"
            d.mkdir(exist_ok=True)
            r = run_named(name, probe, d)
            line = error_line(r)
            ok = name in STARTUP or (r.code == probe.expect_code and "Traceback" not in r.stderr
                                     and (probe.expect_code != 2 or r.stderr.count("\n") == 1)
                                     and r.seconds < FIGURE_S and r.peak_mb < FIGURE_MB)
            failed += not ok
            print(f"{name:45} {r.code:>4} {r.seconds:7.2f} {r.peak_mb:7.0f}  {'' if ok else 'FAIL '}{line[:150]}",
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
