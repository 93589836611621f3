"""A crowd of many loopback addresses against ``tarocchi-rl serve`` (issue 52), until stopped.

    python experiments/checks/abuse_floods.py --crowd halfopen|lobby|pings|acts --port PORT [--halfopen 1200]

The crowd phases of ``abuse_web.py`` run this script in its own process at niceness 19 (it stands for other
machines) beside their polite client, which ``abuse_web.py`` measures. It prints ``ready`` once the crowd is
started and, when stopped (SIGTERM or Ctrl-C), what the crowd got (one JSON line). The crowds:

- ``halfopen``: ``--halfopen`` connections (default 1,200: 80 addresses x 15, under the per-address cap) that
  send the start of a request head and then a header line every :data:`DRIP_SECONDS` seconds, never its end (a
  slowloris); one closed by the server is opened again at once;
- ``lobby``: a few addresses (:data:`LOBBY_ADDRESSES`) open as many lobby tables as the server lets them, in a
  burst, and close and reopen them in turns;
- ``pings``: :data:`PING_SOCKETS` WebSockets from :data:`PING_ADDRESSES` addresses, half sending ``ping``
  messages, half WebSocket ping frames, as fast as the server reads them (batches of frames written at once);
- ``acts``: :data:`ACT_CONNECTIONS` keep-alive connections from as many addresses, each sending ``POST /v1/act``
  (real requests of a deal, heuristic) back to back.
"""

import argparse
import asyncio
import json
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
from common import LOBBY_SEATS, deal_requests, raise_open_files  # noqa: E402

CROWDS = ("halfopen", "lobby", "pings", "acts")
DRIP_SECONDS = 2.0  # a half-open connection sends a header line this often (below any sane header timeout)
HALFOPEN_PER_ADDRESS = 15  # half-open connections per crowd address (under the per-address cap, 16)
PING_SOCKETS, PING_ADDRESSES = 160, 80
PING_BATCH = 64  # frames written at once by a flooding WebSocket
ACT_CONNECTIONS = 40
ACT_PIPELINE = 8  # requests a flooding connection writes at once
STATUS = re.compile(rb"HTTP/1\.1 (\d{3}) ")
LOBBY_ADDRESSES = 6  # a few addresses
LOBBY_TABLES = 8  # tables each crowd address tries to hold (the server's default per-address table cap)
HANDSHAKE = ("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


def crowd_address(block: int, k: int) -> str:
    """The k-th address of a crowd's block (127.0.BLOCK.x, then the next blocks): one per person of the crowd."""
    return f"127.0.{block + k // 250}.{1 + k % 250}"


def client_frame(opcode: int, payload: bytes) -> bytes:
    """One masked client frame (a zero mask: the payload as is), payload under 126 bytes."""
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + b"\0\0\0\0" + payload


PING_MESSAGE = client_frame(0x1, b'{"type":"ping"}')
PING_FRAME = client_frame(0x9, b"p")


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
    """The crowd: runs until SIGTERM (or SIGINT), then prints what it got (JSON) on stdout."""
    stats: dict[str, Any] = {}
    bodies = [r for reqs in deal_requests(["mineo", "french4"], 4, 41) for r in reqs] if mode == "acts" else []
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    tasks = [asyncio.create_task(c) for c in crowd_tasks(mode, port, stats, halfopen, bodies)]
    print("ready", flush=True)
    await stop.wait()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps(crowd_report(mode, stats)), flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--crowd", required=True, choices=CROWDS)
    p.add_argument("--port", type=int, required=True, help="the server's port on 127.0.0.1")
    p.add_argument("--halfopen", type=int, default=1200, help="the half-open connections of the halfopen crowd "
                   "(15 per address)")
    a = p.parse_args()
    if not 1 <= a.halfopen <= 4000:
        p.error("--halfopen must be 1..4000")
    raise_open_files()
    asyncio.run(crowd_main(a.crowd, a.port, a.halfopen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
