"""Load test of ``tarocchi-rl serve`` on loopback: many tables over WebSockets, then ``POST /v1/act`` from many clients.

    python experiments/checks/load_web.py [--tables 200] [--variants mineo,piedmont3,piedmont4,french3,french4]
                                   [--think 1.0] [--act-clients 16] [--act-seconds 20] [--agent onnx:DIR]
                                   [--workers 1]

The server is started as a subprocess on 127.0.0.1 (a free port, :func:`common.serve_process`), with ``--agents AGENT``
(default: a freshly initialised default-size network exported to a temporary ``onnx:`` bot directory; the figures do not
depend on the weights), and stopped at the end whatever happens. Each table and each API client connects from its own
loopback address (127.0.x.y): the server's limits are per client address, and these are 200 people, not one.

1. *Tables*: ``--tables`` WebSocket clients at once, each a table with one human seat (seat 0) played by this script
   (the first legal action) against heuristic bots in the other seats, the variants in turn; each plays one whole
   deal. A person takes time to move: the script waits ``--think`` seconds on average (uniform in [0.5, 1.5] x
   think) before each move, so 200 tables make about 200 moves per second; ``--think 0`` plays back to back, the
   server's saturation (then the latency is the queue of all tables' moves). Measured: the time from sending the
   human's move to receiving the server's answer (the bots' replies up to the human's next decision, or the end).
   Every deal must end with ``over``, no ``error``.
2. *API*: ``--act-clients`` concurrent clients, each on its own keep-alive connection, send ``POST /v1/act?agent=
   AGENT`` requests for ``--act-seconds``: the requests of real deals (the referee deals, the heuristic plays every
   seat; every request of every seat, in order, as frontends would send them), each client its own deals. Measured:
   requests/s over the whole window, latency percentiles, errors.

Targets (issue 13): tables: every deal completes, no error, p99 <= 50 ms; API: >= 500 requests/s, p99 <= 50 ms.
"""

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
from common import (  # noqa: E402
    WEB_VARIANTS,
    client_address,
    deal_requests,
    export_fresh,
    one_table,
    serve_process,
)


# -- a minimal HTTP/1.1 keep-alive client (asyncio streams): the load generator must cost little CPU -----------------
class Http:
    def __init__(self, port: int, local: str | None = None) -> None:
        self.port, self.local = port, local
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> tuple[int, bytes]:
        return await self.request(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path.encode())

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        return await self.request(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                  b"Content-Length: %d\r\n\r\n%s" % (path.encode(), len(body), body))

    async def request(self, message: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(
                "127.0.0.1", self.port, local_addr=(self.local, 0) if self.local else None)
        assert self.reader is not None
        self.writer.write(message)
        status = int((await self.reader.readline()).split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            k, _, v = line.decode().partition(":")
            if k.lower() == "content-length":
                length = int(v)
        return status, await self.reader.readexactly(length)


async def extra_bot_name(port: int, agent: str) -> str:
    """The name the server shows for the --agents bot (the last of GET /v1/bots; a shipped bot, bot:VARIANT, is
    built in under its spec): clients name it, not its spec."""
    status, body = await Http(port).get("/v1/bots")
    if status != 200:
        raise SystemExit(f"error: GET /v1/bots answered {status}")
    names = [str(b["name"]) for b in json.loads(body)["bots"]]
    return agent if agent in names else names[-1]


# -- 1. tables ---------------------------------------------------------------------------------------------------
async def tables(port: int, n: int, variants: list[str], think: float) -> dict:
    lat: list[float] = []
    errors: list[str] = []
    t = time.perf_counter()
    done = await asyncio.gather(*(one_table(port, variants[k % len(variants)], 1000 + k, lat, errors, think)
                                  for k in range(n)), return_exceptions=True)
    wall = time.perf_counter() - t
    exc = [repr(d) for d in done if isinstance(d, BaseException)]
    x = np.array(lat) * 1000
    return {"tables": n, "think_s": think, "moves_per_s": len(lat) / wall,
            "completed": sum(d is True for d in done), "errors": errors[:5] + exc[:5],
            "n_errors": len(errors) + len(exc), "moves": len(x), "seconds": wall,
            "median_ms": float(np.median(x)), "p90_ms": float(np.percentile(x, 90)),
            "p99_ms": float(np.percentile(x, 99)), "max_ms": float(x.max())}


# -- 2. the API ----------------------------------------------------------------------------------------------------
def agent_variants(spec: str) -> list[str]:
    """The variants the bot ``spec`` plays, as its hello says (the bot protocol)."""
    from tarocchi_rl.agents.specs import make_agent
    from tarocchi_rl.bot import BotServer

    try:
        return list(BotServer(spec, make_agent).hello()["variants"])
    except ValueError as e:
        raise SystemExit(f"error: --agent {spec}: {e}") from None


async def api(port: int, agent: str, clients: int, seconds: float, deals: list[list[bytes]]) -> dict:
    from urllib.parse import quote

    path = f"/v1/act?agent={quote(agent, safe='')}"
    lat: list[float] = []
    errors: list[str] = []
    stop = time.perf_counter() + seconds

    async def client(k: int) -> None:
        http = Http(port, client_address(k))
        d = k
        while time.perf_counter() < stop:
            for body in deals[d % len(deals)]:
                t0 = time.perf_counter()
                status, resp = await http.post(path, body)
                lat.append(time.perf_counter() - t0)
                if status != 200:
                    errors.append(f"{status}: {resp[:200]!r}")
                if time.perf_counter() >= stop:
                    return
            d += clients

    t = time.perf_counter()
    await asyncio.gather(*(client(k) for k in range(clients)))
    wall = time.perf_counter() - t
    x = np.array(lat) * 1000
    return {"clients": clients, "requests": len(x), "seconds": wall, "requests_per_s": len(x) / wall,
            "errors": errors[:5], "n_errors": len(errors), "median_ms": float(np.median(x)),
            "p90_ms": float(np.percentile(x, 90)), "p99_ms": float(np.percentile(x, 99)), "max_ms": float(x.max())}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tables", type=int, default=200)
    p.add_argument("--variants", default=WEB_VARIANTS)
    p.add_argument("--think", type=float, default=1.0, help="mean seconds a human takes per move (0: none)")
    p.add_argument("--act-clients", type=int, default=16)
    p.add_argument("--act-seconds", type=float, default=20.0)
    p.add_argument("--act-deals", type=int, default=64, help="distinct deals whose requests the clients send")
    p.add_argument("--agent", default=None, help="the API's bot (default: a fresh default-size onnx:DIR)")
    p.add_argument("--workers", type=int, default=1, help="server processes (serve --workers; on 2 cores one: the "
                   "load generator needs the other)")
    p.add_argument("--skip", choices=("tables", "api"), default=None)
    a = p.parse_args()
    variants = [v for v in a.variants.split(",") if v]
    with tempfile.TemporaryDirectory() as tmp:
        agent = a.agent or export_fresh(Path(tmp), "mineo")
        plays = agent_variants(agent)  # the API's requests: the variants the bot plays (a network: its own)
        api_variants = [v for v in variants if v in plays]
        if not api_variants and a.skip != "api":
            print(f"error: --agent {agent} plays {', '.join(plays)}; --variants asks for {', '.join(variants)}",
                  file=sys.stderr)
            return 2
        deals = deal_requests(api_variants, a.act_deals, 7) if a.skip != "api" else []
        with serve_process(["--agents", agent, "--workers", str(a.workers),
                            "--db", f"sqlite:///{tmp}/games.db"]) as server:  # every game stored, as a server does
            port = server.port
            out = {"server": {"workers": a.workers, "agent": agent}}
            if a.skip != "tables":
                out["tables"] = asyncio.run(tables(port, a.tables, variants, a.think))
            if a.skip != "api":
                name = asyncio.run(extra_bot_name(port, agent))
                out["api"] = asyncio.run(api(port, name, a.act_clients, a.act_seconds, deals))
    print(json.dumps(out, indent=1))
    ok = True
    if "tables" in out:
        tb = out["tables"]
        ok &= tb["completed"] == tb["tables"] and tb["n_errors"] == 0 and tb["p99_ms"] <= 50
        print(f"tables: {tb['completed']}/{tb['tables']} deals completed, {tb['n_errors']} errors, {tb['moves']} "
              f"human moves ({tb['moves_per_s']:.0f}/s, think {tb['think_s']:g} s), reply latency median "
              f"{tb['median_ms']:.1f} ms, p99 {tb['p99_ms']:.1f} ms")
    if "api" in out:
        ap = out["api"]
        ok &= ap["requests_per_s"] >= 500 and ap["p99_ms"] <= 50 and ap["n_errors"] == 0
        print(f"api: {ap['requests_per_s']:.0f} requests/s from {ap['clients']} clients over {ap['seconds']:.0f} s, "
              f"{ap['n_errors']} errors, median {ap['median_ms']:.1f} ms, p99 {ap['p99_ms']:.1f} ms")
    print("targets:", "met" if ok else "NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
