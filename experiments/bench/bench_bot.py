"""Latency of the bot protocol: card-play requests answered by ``tarocchi-rl bot`` through a pipe.

    python experiments/bench/bench_bot.py [--agent onnx:DIR] [--variant mineo] [--requests 10000] [--seed 0]

The requests are those a frontend sends during real deals: the referee (:class:`tarocchi_rl.bot.Referee`) deals
and the heuristic plays every seat; for each decision of seat 0 the seat's ``act`` request is kept (every deal in
order, as one bot answering one seat would get them). Then one ``tarocchi-rl bot`` process (started and greeted
before timing) answers them one at a time over its stdin / stdout; the time from writing a request to reading
its answer is measured by this client. Reported: median, p90, p99 and max over the card-play requests (and all
requests). Without ``--agent``, a freshly initialised network of the default shape (256x256) is exported to a
temporary bot directory and served as ``onnx:DIR`` (the latency does not depend on the weights).
Targets (issue 12): card-play median <= 3 ms, p99 <= 15 ms over 10,000 requests.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.bot import BotServer, Referee

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
from common import export_fresh  # noqa: E402


def collect_requests(variant: str, n_play: int, seed: int) -> list[dict]:
    """Seat 0's requests of whole deals until ``n_play`` card-play requests are gathered."""
    heuristic = BotServer("heuristic", make_agent)
    out: list[dict] = []
    plays = 0
    deal = seed
    while plays < n_play:
        ref = Referee()
        msg = ref.handle(json.dumps({"type": "new", "variant": variant, "seed": deal}))
        while msg["type"] == "turn":
            req = msg["request"]
            if msg["seat"] == 0:
                out.append(req)
                plays += req["decision"] == "play"
            ans = heuristic.handle(json.dumps(req))
            msg = ref.handle(json.dumps({"type": "apply", "action": ans["action"]}))
        deal += 1
    return out


def pct(x: np.ndarray, q: float) -> float:
    return float(np.percentile(x, q) * 1000)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--agent", default=None, help="the bot's agent spec (default: a fresh default-size onnx:DIR)")
    p.add_argument("--variant", default="mineo")
    p.add_argument("--requests", type=int, default=10_000, help="card-play requests to time")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        spec = a.agent or export_fresh(Path(tmp), a.variant)
        t = time.perf_counter()
        reqs = collect_requests(a.variant, a.requests, a.seed)
        print(f"{len(reqs)} requests of seat 0 ({a.requests} card plays) from real deals in "
              f"{time.perf_counter() - t:.0f} s", file=sys.stderr)
        cli = str(Path(sys.executable).parent / "tarocchi-rl")
        bot = subprocess.Popen([cli, "bot", "--agent", spec], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, bufsize=1)
        assert bot.stdin is not None and bot.stdout is not None

        def ask(line: str) -> dict:
            bot.stdin.write(line + "\n")
            bot.stdin.flush()
            return json.loads(bot.stdout.readline())

        hello = ask('{"type":"hello","id":0}')
        ask(json.dumps(reqs[0]))  # warm: compilation caches, onnxruntime session
        lat, kind = [], []
        for r in reqs:
            line = json.dumps(r)
            t0 = time.perf_counter()
            ans = ask(line)
            lat.append(time.perf_counter() - t0)
            kind.append(r["decision"])
            if ans.get("type") != "action":
                raise SystemExit(f"error: the bot answered {ans}")
        ask('{"type":"quit"}')
        bot.wait(timeout=10)
    lat_a = np.array(lat)
    play = lat_a[np.array(kind) == "play"]
    print(f"bot: {hello.get('name')}; {a.variant}; latency through a pipe, ms")
    print("| requests | n | median | p90 | p99 | max |\n|---|---|---|---|---|---|")
    for name, x in (("card play", play), ("all", lat_a)):
        print(f"| {name} | {len(x)} | {pct(x, 50):.2f} | {pct(x, 90):.2f} | {pct(x, 99):.2f} | "
              f"{x.max() * 1000:.2f} |")
    ok = pct(play, 50) <= 3.0 and pct(play, 99) <= 15.0
    print(f"targets (median <= 3 ms, p99 <= 15 ms): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
