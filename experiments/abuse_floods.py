"""The crowd phases of ``experiments/abuse_web.py`` (issue 52): many loopback addresses against one polite client.

``calm`` measures the polite client alone (the baseline: the machine's own noise); each other phase runs a *crowd*
(in its own process at niceness 19, as ``abuse_web.py``'s greedy client: it stands for
other machines) and, meanwhile, a *polite client* from its own address, measured:

- ``halfopen``: ``--halfopen`` connections (default 1,200: 80 addresses x 15, under the per-address cap) that
  send the start of a request head and then a header line every :data:`DRIP_SECONDS` seconds, never its end (a
  slowloris); one closed by the server is opened again at once;
- ``lobby``: a few addresses (:data:`LOBBY_ADDRESSES`) open as many lobby tables as the server lets them, in a
  burst, and close and reopen them in turns; the polite client has opened one lobby table before and checks that
  ``GET /v1/tables`` lists it all along, and, once the crowd has left, that none of the crowd's tables is listed;
- ``pings``: :data:`PING_SOCKETS` WebSockets from :data:`PING_ADDRESSES` addresses, half sending ``ping``
  messages, half WebSocket ping frames, as fast as the server reads them (batches of frames written at once);
- ``acts``: :data:`ACT_CONNECTIONS` keep-alive connections from as many addresses, each sending ``POST /v1/act``
  (real requests of a deal, heuristic) back to back.

The polite client (:func:`polite`): ``GET /v1/health`` every :data:`PROBE_EVERY` seconds on a fresh connection
each time (a new connection has to get through what the crowd holds), and every second ``GET /`` (the page) and
``GET /v1/variants`` (the API); it reports the health latency (p50, p99), and how many page and API requests
answered 200 of how many were sent.
"""

import asyncio
import json
import re
import time
from typing import Any

import numpy as np

PROBE_EVERY = 0.05  # seconds between two health requests of the polite client
PAGE_EVERY = 1.0  # seconds between two page (and API) requests of the polite client
POLITE = "127.0.9.1"  # the polite client's address
DRIP_SECONDS = 2.0  # a half-open connection sends a header line this often (below any sane header timeout)
HALFOPEN_PER_ADDRESS = 15  # half-open connections per crowd address (under the per-address cap, 16)
PING_SOCKETS, PING_ADDRESSES = 160, 80
PING_BATCH = 64  # frames written at once by a flooding WebSocket
ACT_CONNECTIONS = 40
ACT_PIPELINE = 8  # requests a flooding connection writes at once
STATUS = re.compile(rb"HTTP/1\.1 (\d{3}) ")
LOBBY_ADDRESSES = 6  # a few addresses
LOBBY_TABLES = 8  # tables each crowd address tries to hold (the server's default per-address table cap)
LOBBY_SEATS = ["human", "human", "heuristic"]  # french3 with two people: a table that waits for someone
CROWD_WARMUP = 3.0  # seconds the crowd runs before the polite client is measured
HANDSHAKE = ("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


def crowd_address(block: int, k: int) -> str:
    """The k-th address of a crowd's block (127.0.BLOCK.x, then the next blocks): one per person of the crowd."""
    return f"127.0.{block + k // 250}.{1 + k % 250}"


def percentiles(ms: list[float]) -> dict[str, Any]:
    if not ms:
        return {"n": 0}
    x = np.array(ms)
    return {"n": len(x), "p50_ms": round(float(np.median(x)), 2), "p99_ms": round(float(np.percentile(x, 99)), 2),
            "max_ms": round(float(x.max()), 1)}


def client_frame(opcode: int, payload: bytes) -> bytes:
    """One masked client frame (a zero mask: the payload as is), payload under 126 bytes."""
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + b"\0\0\0\0" + payload


PING_MESSAGE = client_frame(0x1, b'{"type":"ping"}')
PING_FRAME = client_frame(0x9, b"p")


# -- plain HTTP ---------------------------------------------------------------------------------------------------
async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes, bool]:
    """(status, body, whether the server closes the connection) of one HTTP/1.1 response."""
    status = int((await reader.readline()).split()[1])
    length, close = 0, False
    while (line := await reader.readline()) not in (b"\r\n", b""):
        k, _, v = line.decode("latin-1").partition(":")
        if k.lower() == "content-length":
            length = int(v)
        close |= k.lower() == "connection" and v.strip().lower() == "close"
    return status, await reader.readexactly(length), close


async def get_once(port: int, path: str, local: str = POLITE, timeout: float = 10.0) -> tuple[int, bytes]:
    """``GET path`` on a new connection: (status, body); (0, the error) when it failed."""
    writer = None
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(local, 0))
            writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            status, body, _ = await read_response(reader)
            return status, body
    except (OSError, ValueError, IndexError, asyncio.IncompleteReadError, TimeoutError) as e:
        return 0, repr(e).encode()
    finally:
        if writer is not None:
            writer.close()


# -- the polite client ---------------------------------------------------------------------------------------------
async def polite(port: int, seconds: float) -> dict[str, Any]:
    """The polite client for ``seconds`` (module docstring)."""
    lat: list[float] = []
    failed: dict[str, int] = {}
    pages = {"page": [0, 0], "api": [0, 0]}  # [answered 200, sent]
    stop = time.perf_counter() + seconds

    async def health() -> None:
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            status, _ = await get_once(port, "/v1/health")
            if status == 200:
                lat.append((time.perf_counter() - t0) * 1000)
            else:
                failed[str(status)] = failed.get(str(status), 0) + 1
            await asyncio.sleep(PROBE_EVERY)

    async def page() -> None:
        while time.perf_counter() < stop:
            for name, path in (("page", "/"), ("api", "/v1/variants")):
                status, _ = await get_once(port, path)
                pages[name][0] += status == 200
                pages[name][1] += 1
            await asyncio.sleep(PAGE_EVERY)

    await asyncio.gather(health(), page())
    return {"health": {**percentiles(lat), "failed": failed},
            **{name: {"ok": ok, "of": sent} for name, (ok, sent) in pages.items()}}


# -- the crowds (in their own process) -------------------------------------------------------------------------------
async def halfopen_one(port: int, local: str, stats: dict[str, Any]) -> None:
    """One half-open connection after the other from ``local``: the head never ends; how long each lived."""
    while True:
        t0 = time.perf_counter()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(local, 0))
        except OSError:
            stats["connect_failed"] += 1
            await asyncio.sleep(0.5)
            continue
        stats["open"] += 1
        stats["max_open"] = max(stats["max_open"], stats["open"])
        try:
            writer.write(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            k = 0
            while True:
                try:  # (asyncio.timeout: Python 3.11's wait_for may swallow a cancellation, and the crowd never stops)
                    async with asyncio.timeout(DRIP_SECONDS):
                        data = await reader.read(4096)
                except TimeoutError:
                    writer.write(b"X-Drip-%d: x\r\n" % k)  # one more header line, never the blank line
                    k += 1
                    continue
                if not data:
                    break
                stats["answered"] += 1  # the server said something (a 408, a 429) before closing
        except OSError:
            pass
        finally:
            stats["open"] -= 1
            writer.close()
        stats["closed_by_server"] += 1
        stats["lifetimes"].append(time.perf_counter() - t0)
        await asyncio.sleep(0.05)


async def drain_reads(reader: asyncio.StreamReader, stats: dict[str, Any]) -> None:
    while data := await reader.read(65536):
        stats["bytes_back"] += len(data)


async def ping_socket(port: int, local: str, frame: bytes, stats: dict[str, Any]) -> None:
    """A WebSocket that writes ``frame`` in batches as fast as the server reads, and reads what comes back."""
    while True:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(local, 0))
            writer.write(HANDSHAKE.format(port=port).encode())
            head = await reader.readuntil(b"\r\n\r\n")
            if b" 101 " not in head.split(b"\r\n")[0]:
                stats["refused"] += 1
                writer.close()
                await asyncio.sleep(1.0)
                continue
            stats["connected"] += 1

            reads = asyncio.create_task(drain_reads(reader, stats))
            batch = frame * PING_BATCH
            try:
                while not reads.done():
                    writer.write(batch)
                    await writer.drain()
                    stats["frames_sent"] += PING_BATCH
            finally:
                reads.cancel()
                writer.close()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        stats["closed"] += 1
        await asyncio.sleep(0.5)


async def act_flood(port: int, local: str, bodies: list[bytes], stats: dict[str, Any]) -> None:
    """``POST /v1/act`` on one keep-alive connection, :data:`ACT_PIPELINE` requests written at once (pipelined: the
    crowd spends little CPU per request), the answers counted by status; opened again when the server closes it."""
    k = 0
    while True:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(local, 0))
        except OSError:
            await asyncio.sleep(0.1)
            continue
        try:
            while True:
                batch = []
                for _ in range(ACT_PIPELINE):
                    body = bodies[k % len(bodies)]
                    k += 1
                    batch.append(b"POST /v1/act?agent=heuristic HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                                 b"application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                writer.write(b"".join(batch))
                answered, data = 0, b""
                while answered < ACT_PIPELINE:
                    chunk = await reader.read(1 << 16)
                    if not chunk:
                        raise ConnectionResetError
                    data += chunk
                    end = 0
                    for match in STATUS.finditer(data):
                        status = match.group(1).decode()
                        stats["status"][status] = stats["status"].get(status, 0) + 1
                        answered, end = answered + 1, match.end()
                    data = data[end:][-16:]  # (a status line split between two reads is seen whole next time)
        except (OSError, asyncio.IncompleteReadError):
            stats["status"]["closed"] = stats["status"].get("closed", 0) + 1
        finally:
            writer.close()


async def lobby_table(port: int, local: str, stats: dict[str, Any], hold: float) -> None:
    """Open a lobby table from ``local``, hold it ``hold`` seconds (then leave), again and again."""
    import websockets

    while True:
        try:
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws", local_addr=(local, 0)) as ws:
                await ws.send(json.dumps({"type": "open", "variant": "french3", "seats": LOBBY_SEATS,
                                          "lobby": True}))
                msg = json.loads(await ws.recv())
                if msg["type"] == "joined":
                    stats["opened"] += 1
                    stats["codes"].append(msg["code"])
                    await asyncio.sleep(hold)
                else:
                    stats["refused"][msg.get("error", "?")[:60]] = stats["refused"].get(msg.get("error", "?")[:60],
                                                                                       0) + 1
                    await asyncio.sleep(1.0)
        except Exception as e:  # refused or closed by the server
            stats["closed"][type(e).__name__] = stats["closed"].get(type(e).__name__, 0) + 1
            await asyncio.sleep(0.5)


def crowd_tasks(mode: str, port: int, stats: dict[str, Any], halfopen: int, act_bodies: list[bytes]) -> list[Any]:
    """The coroutines of one crowd."""
    if mode == "halfopen":
        stats.update(open=0, max_open=0, connect_failed=0, closed_by_server=0, answered=0, lifetimes=[])
        return [halfopen_one(port, crowd_address(10, k // HALFOPEN_PER_ADDRESS), stats) for k in range(halfopen)]
    if mode == "pings":
        stats.update(connected=0, refused=0, closed=0, frames_sent=0, bytes_back=0)
        return [ping_socket(port, crowd_address(20, k % PING_ADDRESSES), (PING_MESSAGE, PING_FRAME)[k % 2], stats)
                for k in range(PING_SOCKETS)]
    if mode == "acts":
        stats.update(status={})
        return [act_flood(port, crowd_address(30, k), act_bodies, stats) for k in range(ACT_CONNECTIONS)]
    if mode == "lobby":
        stats.update(opened=0, refused={}, closed={}, codes=[])
        return [lobby_table(port, crowd_address(40, k % LOBBY_ADDRESSES), stats, 3.0 + (k % 5))
                for k in range(LOBBY_ADDRESSES * LOBBY_TABLES)]
    raise ValueError(f"unknown crowd {mode!r}")


def crowd_report(mode: str, stats: dict[str, Any]) -> dict[str, Any]:
    if mode == "halfopen":
        life = sorted(stats.pop("lifetimes"))
        stats["lifetime_s"] = {"median": round(life[len(life) // 2], 1), "max": round(life[-1], 1)} if life else None
    if mode == "lobby":
        stats["codes"] = stats["codes"][-500:]
    return stats


async def crowd_main(mode: str, port: int, halfopen: int) -> None:
    """The crowd's process: runs until SIGTERM, then prints what it got (JSON) on stdout."""
    import signal

    from load_web import deal_requests

    stats: dict[str, Any] = {}
    bodies = [r for reqs in deal_requests(["mineo", "french4"], 4, 41) for r in reqs] if mode == "acts" else []
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    tasks = [asyncio.create_task(c) for c in crowd_tasks(mode, port, stats, halfopen, bodies)]
    print("ready", flush=True)
    await stop.wait()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps(crowd_report(mode, stats)), flush=True)


# -- a phase ----------------------------------------------------------------------------------------------------------
async def lobby_watch(port: int, seconds: float, out: dict[str, Any]) -> None:
    """The polite client's own lobby table, held while ``GET /v1/tables`` is read every 0.2 s: how often it was
    listed (it must be every time)."""
    import websockets

    async with websockets.connect(f"ws://127.0.0.1:{port}/ws", local_addr=(POLITE, 0)) as ws:
        await ws.send(json.dumps({"type": "open", "variant": "french3", "seats": LOBBY_SEATS, "lobby": True}))
        joined = json.loads(await ws.recv())
        code = joined.get("code")
        out["opened"] = joined["type"] == "joined"
        listed = polls = 0
        others = 0
        stop = time.perf_counter() + seconds
        while time.perf_counter() < stop:
            status, body = await get_once(port, "/v1/tables")
            if status == 200:
                tables = json.loads(body)["tables"]
                polls += 1
                listed += any(t["code"] == code for t in tables)
                others = max(others, sum(t["code"] != code for t in tables))
            await asyncio.sleep(0.2)
        out.update(listed=listed, polls=polls, most_crowd_tables_listed=others)


async def crowd_phase(port: int, mode: str, seconds: float, halfopen: int, script: str) -> dict[str, Any]:
    """One crowd phase: the crowd's process started (niceness 19), ``seconds`` of the polite client (and, for the
    lobby, its table), the crowd stopped; what each saw."""
    import subprocess
    import sys

    out: dict[str, Any] = {}
    if mode == "calm":  # the polite client alone: the machine's own noise, the baseline of the others
        out["polite"] = await polite(port, seconds)
        return out
    proc = subprocess.Popen(["nice", "-n", "19", sys.executable, script, "--crowd", mode, "--abuser-port",
                             str(port), "--halfopen", str(halfopen)], stdout=subprocess.PIPE, text=True)
    watch: dict[str, Any] = {}
    try:
        assert proc.stdout is not None
        if mode == "lobby":  # the genuine table is there first; the burst comes after
            watcher = asyncio.create_task(lobby_watch(port, seconds + CROWD_WARMUP, watch))
            await asyncio.sleep(0.5)
        ready = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 300)
        if ready.strip() != "ready":
            raise SystemExit(f"error: the {mode} crowd did not start: {ready!r}")
        await asyncio.sleep(CROWD_WARMUP)  # the crowd at full strength
        out["polite"] = await polite(port, seconds)
        if mode == "lobby":
            await watcher
    finally:
        proc.terminate()
        try:
            text, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            text = ""
    out["crowd"] = json.loads(text) if text.strip() else {"error": "no report"}
    if mode == "lobby":
        await asyncio.sleep(1.0)  # the crowd's connections closed: their tables must be gone from the list
        status, body = await get_once(port, "/v1/tables")
        watch["tables_listed_after_all_left"] = len(json.loads(body)["tables"]) if status == 200 else None
        out["lobby"] = watch
    return out
