"""Limits that hold against greedy clients of ``tarocchi-rl serve``, one or many (README: "Limits of a public
server"; docs/security.md).

A client is known by its address. Behind a reverse proxy on the same machine, uvicorn takes it from the proxy's
``X-Forwarded-For`` (it trusts 127.0.0.1 and ::1, ``FORWARDED_ALLOW_IPS``); behind a proxy elsewhere that is not
trusted, every client has the proxy's address: trust it, or raise the per-client limits. Each bound is a
:class:`~tarocchi_rl.web.app.ServerConfig` field whose default is the constant below (or a constant only):

| bound                           | default                       | beyond it                                    |
|---------------------------------|-------------------------------|----------------------------------------------|
| connections (HTTP and /ws)      | :data:`MAX_CONNECTIONS`       | uvicorn answers 503 (``limit_concurrency``): |
|                                 |                               | waiting connections (below) do not count     |
| connections open per client     | :data:`CONNECTIONS_PER_CLIENT`| a fixed 429 and a close, before any HTTP     |
| /ws and HTTP requests per client| :data:`CONNECTIONS_PER_CLIENT`| HTTP 429, /ws: an error frame, close 1013    |
| seconds to send a request head  | :data:`HEAD_SECONDS`          | closed, nothing answered (uvicorn has no such|
| (from the connection's opening, |                               | bound: a head that never ends held a         |
| or a later request's first byte)|                               | connection for ever)                         |
| connections waiting for a head  | :data:`MAX_WAITING`           | the oldest waiting one of the client holding |
| (or idle between requests)      |                               | the most is closed                           |
| ... per client                  | :data:`WAITING_PER_CLIENT`    | the client's oldest waiting one is closed    |
| connections left half-open (no  | :data:`HALF_OPEN_STRIKES`,    | past :data:`MAX_WAITING`, the client's new   |
| whole head) per client          | :data:`_HALF_OPEN_FORGIVEN`/s | ones are closed, not the others' evicted     |
| a client's share of the loop    | max-min fair over a part of   | its next request, or its WebSocket's input,  |
| (its requests, WebSocket input  | the loop (:data:`HEAVY_TOTAL`)| waits unread until it has some again         |
| and messages, its jobs' ends)   | that follows how busy it is   | (:class:`LoopShares`)                        |
| a WebSocket's input parsed at   | :data:`_INPUT_SLICE` bytes;   | the rest waits for the pump                  |
| once; the pump                  | :data:`_PUMP_STEP_SECONDS` a  | (:class:`_Pump`), its socket unread          |
|                                 | pass, :data:`_PUMP_SHARE`     |                                              |
| a WebSocket's input waiting     | :data:`_MAX_PENDING` bytes    | closed                                       |
| tables (deals held)             | ``max_tables``                | ``start`` refused (error frame)              |
| tables per client               | :data:`TABLES_PER_CLIENT`     | ``start`` refused (error frame)              |
| lobby tables per client         | 2 (:mod:`~.shared`)           | ``open`` with ``lobby`` refused; a table     |
|                                 |                               | whose people left is unlisted at once        |
| a /ws connection's life         | :data:`TABLE_LIFETIME`        | closed (code :data:`LIFETIME_CLOSE`)         |
| idle (no move; pings don't count)| ``idle_timeout``             | closed (code 4000)                           |
| /ws messages per second         | :data:`_MESSAGES_PER_SECOND`  | the next message is read later               |
| seconds to send a request body  | :data:`BODY_SECONDS`          | 408, the connection closed                   |
| wrong table codes / seat tokens | 10 at once, 6 a minute        | ``join`` refused (:mod:`~.shared`)           |
| a shared table's person away    | ``seat_grace`` (60 s)         | a bot plays the seat until they come back    |
| idle keep-alive connection      | :data:`KEEP_ALIVE_SECONDS`    | closed by uvicorn                            |
| work queued, per kind           | :data:`QUEUES`                | HTTP 503 + Retry-After; /ws: a busy error;   |
|                                 |                               | but a client holding two jobs fewer than     |
|                                 |                               | another takes that one's newest waiting job's|
|                                 |                               | place (that request: 503)                    |
| work queued per client and kind | :data:`QUEUES`                | HTTP 429 + Retry-After; /ws: a busy error    |
| a stop (SIGTERM)                | :data:`SHUTDOWN_GRACE_SECONDS`| requests in progress cancelled; external     |
|                                 | then :data:`SHUTDOWN_SECONDS` | programs killed, queued work cancelled, the  |
|                                 |                               | store's writes cut off: gone within ~8 s     |

Work that takes more than a millisecond runs off the event loop, in one :class:`WorkQueue` per kind
(:data:`QUEUES`): ``act`` (``POST /v1/act`` with a fast bot: the seat's position rebuilt from the request's
history, then the bot; a cheap one, within a budget and a share per client, is answered on the loop first:
:mod:`~tarocchi_rl.web.inline`) and ``replay`` (``POST /v1/replay``) in worker processes (Python that would hold
the event loop's GIL: :mod:`~tarocchi_rl.web.workers`), ``search`` (a search bot, at a table or for ``/v1/act``) and
``program`` (an external program's bot) in threads. Each kind has its own workers, so a flood of searches never
delays a cheap request; a queue starts first the waiting client whose jobs have used the least time, so one
client's backlog of expensive jobs delays another client's request by at most the job running (with two
workers or more, by none: a client runs jobs on all workers but one). Searches run on one thread (their
kernels in Numba's worker threads, at a lower OS priority: :data:`SEARCH_KERNEL_NICE`): Numba's ``workqueue``
threading layer (the package's choice) must not run two parallel kernels at once (two concurrent searches stop
every later search for good: "Concurrent access has been detected"). The moves of a table against fast bots
stay on the loop (measured: p50 0.5 ms, a deal's last move with its record 3.6 ms).
"""

import asyncio
import collections
import concurrent.futures
import contextlib
import functools
import ipaddress
import json
import logging
import math
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from uvicorn.protocols.http.h11_impl import H11Protocol

HttpToolsProtocol: Any
try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - httptools is a dependency; a platform without its wheel serves with h11
    HttpToolsProtocol = None
WebSocketsSansIOProtocol: Any
try:
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
except ImportError:  # pragma: no cover - uvicorn before 0.35: its default WebSocket protocol, unmetered
    WebSocketsSansIOProtocol = None

__all__ = ["BODY_SECONDS", "BodyDeadline", "Busy", "CAPPED_PROTOCOL", "ClientCappedH11Protocol", "ClientLimit",
           "ConnectionClock",
           "KEEP_ALIVE_SECONDS", "MAX_CONNECTIONS", "MessageRate", "Processes", "QUEUES", "QueueLimit", "TokenBucket",
           "TABLE_LIFETIME", "TABLES_PER_CLIENT", "TableCount", "WorkQueue", "check_exposure", "check_limits",
           "client_of", "is_loopback", "work_kind"]

MAX_CONNECTIONS = 1200  # HTTP connections and WebSockets of one process (uvicorn's limit_concurrency)
CONNECTIONS_PER_CLIENT = 16  # WebSockets and HTTP requests in progress from one address
TABLES_PER_CLIENT = 8  # deals one address holds at once
TABLE_LIFETIME = 4 * 3600.0  # seconds a /ws connection may stay open, however active
LIFETIME_CLOSE = 4001  # WebSocket close code of a connection past its lifetime
_MESSAGES_PER_SECOND = 5.0  # /ws messages a connection may send per second on average (a person: one a second or
_MESSAGE_BURST = 20  # two) ... and at once: a faster client is read more slowly (its messages wait in its socket; 160
# sockets at 20 a second took half the loop, and a polite client's share with it: issue 52)
BODY_SECONDS = 10.0  # a request body not complete this long after its headers: 408 and the connection closed
KEEP_ALIVE_SECONDS = 5.0  # an idle keep-alive HTTP connection is closed after this long (uvicorn)
HEAD_SECONDS = 5.0  # a request head not complete this long after the connection opened (or its first byte): closed
HALF_OPEN_STRIKES = 8  # connections an address may leave half-open (closed before a whole head) at once ...
_HALF_OPEN_FORGIVEN = 1.0  # ... and a second on average; beyond, past MAX_WAITING its new ones are closed at once
MAX_WAITING = 512  # connections waiting for a request head (or idle between requests), in all ...
WAITING_PER_CLIENT = 8  # ... and per address: beyond either, the oldest waiting one of the biggest holder is closed
RETRY_AFTER = 1  # seconds a refused client is told to wait (the Retry-After header)
SHUTDOWN_GRACE_SECONDS = 3.0  # at SIGTERM, what uvicorn waits for the requests in progress before cancelling them ...
SHUTDOWN_SECONDS = 4.0  # ... then the app's own shutdown at most (the store's queued writes), and then the process
# exits whatever its threads do (serve.py): gone within about 7.5 s whatever the bots do
BUSY_STATUS, CLIENT_BUSY_STATUS, BODY_TIMEOUT_STATUS = 503, 429, 408


class QueueLimit(NamedTuple):
    """One kind of work: threads running it, jobs running or waiting at most, and at most per client."""

    workers: int
    max_jobs: int
    per_client: int


QUEUES: dict[str, QueueLimit] = {
    "act": QueueLimit(1, 64, 8),  # rebuild + a fast bot: ~1 ms (a crafted history: up to 0.2 s); a process
    "search": QueueLimit(1, 8, 2),  # searches: one at a time (see the module docstring), 0.2 s each by default
    "program": QueueLimit(4, 16, 2),  # external programs: they run in their own processes
    "replay": QueueLimit(1, 16, 2),  # a record checked and scored: ~20 ms, ~1 s with every step
}
PREFETCH = 1  # jobs of a queue handed to its threads ahead: a thread that finishes one starts the next at once,
# without waiting for the event loop (worth 2x /v1/act throughput with a worker process) ...
CHEAP_JOB_SECONDS = 0.005  # ... but only a job of a client whose jobs take less than this on average: a client
# of expensive jobs (a crafted history) never makes another wait for two of them
TRACKED_CLIENTS = 4096  # clients whose mean job cost a queue remembers (the least recent forgotten)
GIL_SWITCH_SECONDS = 0.001  # sys.setswitchinterval of a serving process: the event loop waits at most about this
# long for the GIL that a worker's Python holds (Python's default, 5 ms, would add up to 5 ms per wait)
_SEARCH_KINDS = ("search",)  # kinds whose work runs Numba's parallel kernels: one thread each, never more
#: the OS priority (niceness, Linux) of a kind's threads or processes: the ``act`` processes' work (what the loop
#: passed on: a crafted history, a client over its share: :mod:`~tarocchi_rl.web.inline`) yields the CPU to the
#: event loop. A thread of the server's own process stays at 0 whatever it runs: it holds the GIL between its
#: kernels (a slow bot's table: its moves, its report), and at a lower priority it is descheduled holding it while
#: the loop waits (measured: SCHED_IDLE took the honest p50 from 2.5 to 15 ms under the abuse run). The search's
#: compute runs in Numba's worker threads, which get :data:`SEARCH_KERNEL_NICE`: they hold no GIL.
QUEUE_NICE = {"act": 10}
SHARES_STATE = "tarocchi_loop_shares"  # the app's LoopShares, in the lifespan's state: the protocols charge it
SEARCH_KERNEL_NICE = 10  # Numba's worker threads (started by :meth:`~tarocchi_rl.web.app.Server.warm_search`)
#: (Not SCHED_IDLE for the search thread: measured, it is descheduled while it holds the GIL between kernels, and
#: the loop waits for it: the abuse run's honest p50 went from 2.5 to 15 ms.)
_PROGRAM_KINDS = ("cmd",)  # agent spec kinds that run an external program
T = TypeVar("T")
log = logging.getLogger("tarocchi_rl.web")


_POSITIVE_LIMITS = ("idle_timeout", "max_tables", "max_connections", "max_connections_per_client",
                   "max_tables_per_client", "table_lifetime", "body_timeout", "keep_alive_timeout", "seat_grace",
                   "head_timeout", "max_waiting", "max_waiting_per_client")


def check_limits(config: Any) -> None:
    """A ValueError naming the first limit of a ServerConfig that is not a positive finite number."""
    for name in _POSITIVE_LIMITS:
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
            raise ValueError(f"{name.replace('_', '-')} must be a positive number, got {value!r}")


def client_of(scope: MutableMapping[str, Any]) -> str:
    """The client's address of an ASGI scope (``"unknown"`` when the server does not say)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def work_kind(spec: str, fast: bool) -> str:
    """The queue of a bot's work: ``act`` for a fast bot, ``program`` for an external program, else ``search``."""
    if fast:
        return "act"
    return "program" if spec.partition(":")[0].strip().lower() in _PROGRAM_KINDS else "search"


# -- queues of work ------------------------------------------------------------------------------------------
class Busy(Exception):
    """A queue refused a job: full (``per_client`` False: HTTP 503) or this client's share full (429)."""

    def __init__(self, kind: str, per_client: bool, retry_after: int = RETRY_AFTER) -> None:
        self.kind, self.per_client, self.retry_after = kind, per_client, retry_after
        whose = "your requests of this kind are" if per_client else "the server is"
        super().__init__(f"busy: {whose} at the limit of queued {kind} work; try again in {retry_after} s")

    @property
    def status(self) -> int:
        return CLIENT_BUSY_STATUS if self.per_client else BUSY_STATUS


@dataclass
class _Job:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    client: str
    done: "asyncio.Future[Any]"
    started: bool = False
    forgotten: bool = False  # left the queue without running
    executor: concurrent.futures.Executor | None = None  # the one it was handed to


@dataclass(frozen=True)
class Processes:
    """A queue whose work runs in worker processes (spawned), each started with ``initializer(*initargs)``: CPU-
    bound Python that would otherwise hold the GIL the event loop needs. Jobs and results are pickled: plain
    functions of plain data (:mod:`~tarocchi_rl.web.workers`). A process that dies is replaced; its jobs are
    answered :class:`Busy`."""

    initializer: Callable[..., None] | None = None
    initargs: tuple[Any, ...] = ()
    nice: int = 0  # the processes' niceness (Linux)

    def executor(self, workers: int) -> concurrent.futures.Executor:
        return concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                                      initializer=_start_process,
                                                      initargs=(self.nice, self.initializer, self.initargs))


def _start_process(nice: int, initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    """A worker process's start: its niceness (its main thread's, which the threads it starts inherit), then the
    queue's own initializer."""
    _lower_priority(nice)
    if initializer is not None:
        initializer(*initargs)


class WorkQueue:
    """One kind of work run in its own threads (or ``processes``): at most ``max_jobs`` jobs running or waiting,
    ``per_client`` of them from one client, the waiting client that has used the least time first. Used from the
    event loop only."""

    def __init__(self, kind: str, limit: QueueLimit, processes: Processes | None = None,
                 meter: "Callable[[str, float], None] | None" = None) -> None:
        workers, max_jobs, per_client = (int(x) for x in limit)
        self.meter = meter  # the loop's time this queue spends on a client's job charged (LoopShares.charge)
        if kind in _SEARCH_KINDS and workers != 1:
            raise ValueError(f"queues: {kind} work runs on 1 thread (Numba's workqueue layer), got {workers}")
        if not 1 <= workers <= max_jobs or per_client < 1:
            raise ValueError(f"queues: {kind}: expected 1 <= workers <= max_jobs and per_client >= 1, got {limit}")
        self.kind, self.limit, self.processes = kind, QueueLimit(workers, max_jobs, per_client), processes
        self.executor = self._new_executor()
        self.waiting: dict[str, collections.deque[_Job]] = {}
        self.per_client: collections.Counter[str] = collections.Counter()  # jobs running or waiting
        self.running = 0
        self.running_by: collections.Counter[str] = collections.Counter()  # jobs handed to the workers, per client
        # per client: with two workers or more, one is always left to the others
        self.most_running = workers - 1 if workers > 1 else workers + PREFETCH
        self.used: dict[str, float] = {}  # client (with jobs) -> seconds its jobs ran since it had none
        self.cost: collections.OrderedDict[str, float] = collections.OrderedDict()  # client -> mean job seconds

    def _new_executor(self) -> concurrent.futures.Executor:
        if self.processes is not None:
            return self.processes.executor(self.limit.workers)
        return concurrent.futures.ThreadPoolExecutor(self.limit.workers, thread_name_prefix=f"tarocchi-{self.kind}",
                                                     initializer=_lower_priority,
                                                     initargs=(QUEUE_NICE.get(self.kind, 0),))

    @property
    def jobs(self) -> int:
        return sum(self.per_client.values())

    def check(self, client: str) -> None:
        """Raise :class:`Busy` unless a job of ``client`` would be taken now."""
        if self.jobs >= self.limit.max_jobs and self._displaced(client) is None:
            raise Busy(self.kind, per_client=False)
        if self.per_client[client] >= self.limit.per_client:
            raise Busy(self.kind, per_client=True)

    def _displaced(self, client: str) -> "_Job | None":
        """When the queue is full: the job a job of ``client`` would take the place of, the newest waiting job of
        the client holding the most jobs, if that is at least two more than ``client`` holds (so that many clients
        filling the queue together cannot keep one more out: the one with the most yields its last place)."""
        if not self.waiting:
            return None
        holder = max(self.waiting, key=self.per_client.__getitem__)
        if self.per_client[holder] < self.per_client[client] + 2:
            return None
        return self.waiting[holder][-1]

    async def run(self, client: str, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in this queue's threads, its result or its exception; :class:`Busy` when full (or when
        its place is taken by a client holding fewer jobs)."""
        self.check(client)
        if self.jobs >= self.limit.max_jobs:
            displaced = self._displaced(client)
            assert displaced is not None  # (check)
            self._forget(displaced)
            displaced.done.set_exception(Busy(self.kind, per_client=False))
        job = _Job(fn, args, client, asyncio.get_running_loop().create_future())
        self.per_client[client] += 1
        self.waiting.setdefault(client, collections.deque()).append(job)
        self._start_next()
        try:
            result: T = await job.done
            return result
        finally:
            if not job.started:  # cancelled while waiting: it never runs
                self._forget(job)

    def _forget(self, job: _Job) -> None:
        """A job that will not run (cancelled, or its place taken) leaves the queue (once)."""
        if job.forgotten:
            return
        job.forgotten = True
        jobs = self.waiting.get(job.client)
        if jobs is not None and job in jobs:
            jobs.remove(job)
            if not jobs:
                del self.waiting[job.client]
        self._release(job.client)

    def _start_next(self) -> None:
        loop = asyncio.get_running_loop()
        while self.running < self.limit.workers + PREFETCH and self.waiting:
            # the client whose jobs have used the least time (a new one first): clients share the time in turns
            ahead = self.running >= self.limit.workers  # every worker busy: a job handed ahead must be cheap
            free = [c for c in self.waiting if self.running_by[c] < self.most_running
                    and not (ahead and self.cost.get(c, 0.0) >= CHEAP_JOB_SECONDS)]
            if not free:
                return
            client = min(free, key=lambda c: self.used.get(c, 0.0))
            self.running_by[client] += 1
            jobs = self.waiting[client]
            job = jobs.popleft()
            if not jobs:
                del self.waiting[client]
            job.started, job.executor = True, self.executor
            self.running += 1
            future = self.executor.submit(_timed, job.fn, *job.args)
            future.add_done_callback(functools.partial(self._notify, loop, job))

    def _notify(self, loop: asyncio.AbstractEventLoop, job: _Job, future: "concurrent.futures.Future[Any]") -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server is stopping
            loop.call_soon_threadsafe(self._finished, job, future)

    def _finished(self, job: _Job, future: "concurrent.futures.Future[Any]") -> None:
        """A job's end, on the loop: its result handed over and the next job started (the loop's time this takes,
        a worker process's result unpickled, the next job sent, charged to the job's client: ``meter``)."""
        start = time.perf_counter()
        self._end(job, future)
        if self.meter is not None:
            self.meter(job.client, time.perf_counter() - start)

    def _end(self, job: _Job, future: "concurrent.futures.Future[Any]") -> None:
        self.running -= 1
        _decrement(self.running_by, job.client)
        self._release(job.client)
        if job.done.done():  # its client went away
            pass
        elif future.cancelled():  # the queue was closed
            job.done.cancel()
        elif isinstance(exc := future.exception(), concurrent.futures.BrokenExecutor):
            self._replace_broken(job)
            job.done.set_exception(Busy(self.kind, per_client=False))
        elif exc is not None:
            job.done.set_exception(exc)
        else:
            result, seconds = future.result()
            self._note_cost(job.client, seconds)
            job.done.set_result(result)
        self._start_next()

    def _note_cost(self, client: str, seconds: float) -> None:
        if client in self.per_client:
            self.used[client] = self.used.get(client, 0.0) + seconds
        mean = self.cost.pop(client, seconds)
        self.cost[client] = 0.7 * mean + 0.3 * seconds  # a moving mean, the most recent client last
        if len(self.cost) > TRACKED_CLIENTS:
            self.cost.popitem(last=False)

    def _replace_broken(self, job: _Job) -> None:
        """A worker process died (its jobs fail at once): a new executor, once, for the jobs that follow."""
        if job.executor is self.executor:
            log.error("a %s worker process stopped; starting another", self.kind)
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.executor = self._new_executor()

    def _release(self, client: str) -> None:
        self.per_client[client] -= 1
        if self.per_client[client] <= 0:
            del self.per_client[client]
            self.used.pop(client, None)

    def close(self) -> None:
        """At shutdown: the jobs not started are cancelled (their requests end now), those handed to the workers
        but not started too; a thread's job running is left to end (an external program's is killed: app.py), a
        worker process is ended now: stopped by SIGTERM, uvicorn ends this process with the signal at once, and
        the executor's own shutdown would never reach the workers (they outlived every server, holding memory)."""
        for jobs in list(self.waiting.values()):
            for job in jobs:
                job.done.cancel()
        # (ProcessPoolExecutor ends its workers only from its manager thread, and forgets them at its shutdown:
        # taken before it; Python 3.14 has terminate_workers)
        processes: dict[int, Any] = getattr(self.executor, "_processes", None) or {}
        workers = list(processes.values())
        self.executor.shutdown(wait=False, cancel_futures=True)
        for process in workers:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                process.terminate()


def _timed(fn: Callable[..., T], *args: Any) -> tuple[T, float]:
    """``fn(*args)`` and the seconds it took (in the worker: a queue weighs its clients by the time they use)."""
    t0 = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - t0


def run_at_priority(nice: int, fn: Callable[[], T]) -> T:
    """``fn()`` in a new thread of niceness ``nice`` (joined): threads it starts inherit it (Linux)."""
    box: dict[str, Any] = {}

    def target() -> None:
        _lower_priority(nice)
        try:
            box["result"] = fn()
        except BaseException as e:  # noqa: BLE001 (handed to the caller)
            box["error"] = e

    thread = threading.Thread(target=target, name="tarocchi-warm-search")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    result: T = box["result"]
    return result


def _lower_priority(nice: int) -> None:
    """The calling thread's niceness (Linux: per thread); elsewhere, or when refused, nothing changes."""
    if nice and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)


# -- tables and /ws connections ------------------------------------------------------------------------------
@dataclass
class TableCount:
    """The tables (deals held by /ws connections) in all and per client, against their bounds. A deal being
    dealt (its bots may wait in a queue) counts from :meth:`opening` on: two connections of one client starting
    at once cannot both take the last place."""

    max_tables: int
    per_client: int
    held: collections.Counter[str] = field(default_factory=collections.Counter)
    starting: collections.Counter[str] = field(default_factory=collections.Counter)

    @property
    def total(self) -> int:
        return sum(self.held.values())

    def refusal(self, client: str) -> str | None:
        """Why ``client`` may not open one more table now (None: it may)."""
        if self.total + sum(self.starting.values()) >= self.max_tables:
            return "the server is full: try again later"
        if self.held[client] + self.starting[client] >= self.per_client:
            return f"your address already holds {self.per_client} tables (the most per client): close one first"
        return None

    @contextlib.contextmanager
    def opening(self, client: str) -> Iterator[None]:
        """A place for a deal of ``client`` while it is dealt (ValueError when there is none); the caller then
        notes the outcome with :meth:`change`, with no await in between."""
        refusal = self.refusal(client)
        if refusal is not None:
            raise ValueError(refusal)
        self.starting[client] += 1
        try:
            yield
        finally:
            _decrement(self.starting, client)

    def change(self, client: str, before: bool, after: bool) -> None:
        """A connection of ``client`` held a table ``before`` a message and holds one ``after`` it."""
        self.held[client] += int(after) - int(before)
        if self.held[client] <= 0:
            del self.held[client]


def _decrement(counter: collections.Counter[str], key: str) -> None:
    counter[key] -= 1
    if counter[key] <= 0:
        del counter[key]


class ConnectionClock:
    """The two clocks of a /ws connection: idle since its last move (a ``start`` or ``act`` that changed the
    game; pings and errors are not activity) and its whole life (never reset)."""

    def __init__(self, idle: float, lifetime: float) -> None:
        self.idle, self.lifetime = idle, lifetime
        self.opened = self.active = time.monotonic()

    def moved(self) -> None:
        self.active = time.monotonic()

    def next_deadline(self) -> tuple[float, str]:
        """Seconds until the connection must close, and why (``idle`` or ``lifetime``)."""
        now = time.monotonic()
        idle_left = self.active + self.idle - now
        life_left = self.opened + self.lifetime - now
        return (idle_left, "idle") if idle_left <= life_left else (life_left, "lifetime")


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` held (full at the start); :meth:`spend` may go below zero, a debt
    that time pays back. The /ws message rate (:class:`MessageRate`) and the loop's share per client of inline
    requests (:mod:`~tarocchi_rl.web.inline`, tokens in seconds of loop time) are ones."""

    __slots__ = ("at", "burst", "rate", "tokens")

    def __init__(self, rate: float, burst: float, now: float | None = None) -> None:
        self.rate, self.burst, self.tokens = float(rate), float(burst), float(burst)
        self.at = time.monotonic() if now is None else now

    def level(self, now: float | None = None) -> float:
        """The tokens held at ``now`` (default: the monotonic clock's now), refilled since the last call."""
        now = time.monotonic() if now is None else now
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        return self.tokens

    def spend(self, amount: float) -> None:
        self.tokens -= amount


class MessageRate(TokenBucket):
    """The /ws message rate: :meth:`delay` is how long to wait before reading a connection's next message."""

    def __init__(self, per_second: float = _MESSAGES_PER_SECOND, burst: int = _MESSAGE_BURST) -> None:
        super().__init__(per_second, burst)

    def delay(self) -> float:
        self.level()
        self.spend(1.0)
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate


# -- ASGI middleware -----------------------------------------------------------------------------------------
ASGIApp = Callable[[MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
                   Awaitable[None]]


def _json_body(status: int, message: str) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    body = json.dumps({"error": message}).encode()
    return body, [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]


async def _send_error(send: Callable[[Any], Awaitable[None]], status: int, message: str, close: bool = False,
                      retry_after: int | None = None) -> None:
    body, headers = _json_body(status, message)
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class ClientLimit:
    """At most ``per_client`` HTTP requests in progress and /ws connections from one address; beyond, a request
    gets 429 with Retry-After and its connection closed (its body unread), a WebSocket an error frame and close
    code 1013 (try again later)."""

    def __init__(self, app: ASGIApp, per_client: int = CONNECTIONS_PER_CLIENT) -> None:
        self.app, self.per_client = app, per_client
        self.open: collections.Counter[str] = collections.Counter()

    async def __call__(self, scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        client = client_of(scope)
        if self.open[client] >= self.per_client:
            await self._refuse(scope, receive, send)
            return
        self.open[client] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open[client] -= 1
            if self.open[client] <= 0:
                del self.open[client]

    async def _refuse(self, scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                      send: Callable[[Any], Awaitable[None]]) -> None:
        message = (f"too many connections from your address (at most {self.per_client} requests and tables "
                   f"at once): try again in {RETRY_AFTER} s")
        if scope["type"] == "http":
            await _send_error(send, CLIENT_BUSY_STATUS, message, close=True, retry_after=RETRY_AFTER)
            return
        if (await receive())["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": json.dumps({"type": "error", "fatal": True, "error": message,
                                                                  "retry_after": RETRY_AFTER})})
        await send({"type": "websocket.close", "code": 1013})


class _BodyTimeout(Exception):
    pass


class BodyDeadline:
    """A request body must be complete ``seconds`` after the request reached the app: a slower one is answered
    408 and its connection closed (``Connection: close``). Requests whose body is not read are not timed."""

    def __init__(self, app: ASGIApp, seconds: float = BODY_SECONDS) -> None:
        self.app, self.seconds = app, seconds

    async def __call__(self, scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.seconds
        state = {"complete": False, "started": False}

        async def receive_in_time() -> Any:
            if state["complete"]:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                raise _BodyTimeout from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                state["complete"] = True
            return message

        async def send_noting_start(message: Any) -> None:
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        try:
            await self.app(scope, receive_in_time, send_noting_start)
        except _BodyTimeout:
            if not state["started"]:
                await _send_error(send, BODY_TIMEOUT_STATUS, f"the request body did not arrive within "
                                  f"{self.seconds:g} s", close=True)


# -- connections, before any HTTP is parsed (uvicorn) ---------------------------------------------------------
CONNECTIONS_ENV = "TAROCCHI_WEB_CONNECTIONS_PER_CLIENT"  # the per-address cap of _Guard (set by serve)
WAITING_ENV = "TAROCCHI_WEB_WAITING"  # Waiting.env(): the bounds of _Guard on waiting connections (set by serve)
_REFUSED = json.dumps({"error": f"too many connections from your address: try again in {RETRY_AFTER} s"}).encode()
_REFUSED_RESPONSE = (b"HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after: %d\r\n"
                    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (RETRY_AFTER, len(_REFUSED), _REFUSED))


@dataclass(frozen=True)
class Waiting:
    """The bounds on *waiting* connections, those with no request in progress (just opened, sending a request
    head, or idle between two requests): the seconds a request head may take (from the connection's opening, or
    from the first byte of a later request; uvicorn's keep-alive timeout bounds the idle time before it), and how
    many may wait in all and per address."""

    head_seconds: float = HEAD_SECONDS
    total: int = MAX_WAITING
    per_client: int = WAITING_PER_CLIENT

    def env(self) -> str:
        return f"{self.head_seconds!r},{self.total},{self.per_client}"

    @classmethod
    def from_env(cls) -> "Waiting":
        text = os.environ.get(WAITING_ENV)
        if not text:
            return cls()
        seconds, total, per_client = text.split(",")
        return cls(float(seconds), int(total), int(per_client))


class _Registry:
    """One server's connections by address (kept on uvicorn's ``server_state``): how many each has open (HTTP
    and WebSocket), and its waiting ones, oldest first. Used from the event loop only."""

    def __init__(self) -> None:
        self.open: collections.Counter[str] = collections.Counter()
        self.waiting: dict[str, dict[Any, None]] = {}
        self.total = 0  # waiting connections, all addresses
        self.shares = LoopShares()  # the loop's time used by each address
        self._settings: tuple[int, Waiting, list[Any] | None] | None = None
        self.strikes: collections.OrderedDict[str, TokenBucket] = collections.OrderedDict()  # half-open ends
        self.pump: Any = None  # the WebSockets' input parsed later (_Pump), made by the first WebSocket

    def wait(self, conn: "_Guard", host: str, bounds: Waiting) -> bool:
        """``conn`` waits (True), or is closed (False): beyond its address's share, that address's oldest waiting
        connection is closed; beyond the total, the oldest of the address that has the most (never an address
        with fewer), unless ``conn``'s address leaves connections half-open (:meth:`half_open`: a crowd opening
        them in a loop), and then ``conn`` itself."""
        own = self.waiting.get(host, {})
        if len(own) >= bounds.per_client:
            next(iter(own)).drop("evicted: the address's waiting connections are at their cap")
        elif self.total >= bounds.total:
            if self.half_opener(host):
                conn.waiting = False
                conn.drop("refused: the server's waiting connections are at their cap, its address leaves them "
                          "half-open")
                return False
            most = max(self.waiting.values(), key=len)
            next(iter(most)).drop("evicted: the server's waiting connections are at their cap")
        self.waiting.setdefault(host, {})[conn] = None
        self.total += 1
        return True

    def half_open(self, host: str) -> None:
        """A connection of ``host`` ended without ever sending a whole request head (evicted, late, or gone)."""
        strikes = self.strikes.pop(host, None) or TokenBucket(_HALF_OPEN_FORGIVEN, HALF_OPEN_STRIKES)
        self.strikes[host] = strikes
        if len(self.strikes) > TRACKED_CLIENTS:
            self.strikes.popitem(last=False)
        strikes.level()
        strikes.spend(1.0)

    def half_opener(self, host: str) -> bool:
        """Whether ``host`` left more than :data:`HALF_OPEN_STRIKES` connections half-open lately."""
        strikes = self.strikes.get(host)
        return strikes is not None and strikes.level() < 0

    def settings(self, config: Any) -> tuple[int, Waiting, list[Any] | None]:
        """The protocol's bounds (from the environment ``serve`` set) and the proxies it trusts, read once."""
        if self._settings is None:
            self._settings = (int(os.environ.get(CONNECTIONS_ENV, CONNECTIONS_PER_CLIENT)), Waiting.from_env(),
                              _trusted_networks(config))
        return self._settings

    def done_waiting(self, conn: "_Guard", host: str) -> None:
        own = self.waiting.get(host)
        if own is not None and conn in own:
            del own[conn]
            self.total -= 1
            if not own:
                del self.waiting[host]

    def release(self, host: str) -> None:
        _decrement(self.open, host)


def _shares_of(registry: _Registry, app_state: Any) -> "LoopShares":
    """The LoopShares the app gave in its lifespan's state (:data:`SHARES_STATE`: its queues charge it too), or the
    server's own (an app that gives none)."""
    shares = app_state.get(SHARES_STATE) if isinstance(app_state, dict) else None
    return shares if isinstance(shares, LoopShares) else registry.shares


def _registry_of(server_state: Any) -> _Registry:
    registry = getattr(server_state, "tarocchi_registry", None)
    if registry is None:
        registry = server_state.tarocchi_registry = _Registry()
    return registry


class _Guard:
    """uvicorn's HTTP protocol (a base class after this one) with the bounds uvicorn lacks, applied before a
    byte is parsed:

    - an address with ``$CONNECTIONS_ENV`` connections open (HTTP or WebSocket, idle ones included) is refused
      a new one with a fixed 429 and a close: a client reconnecting in a loop costs an accept and a close, and
      one address cannot hold the server's connections;
    - a connection must send a complete request head within :attr:`Waiting.head_seconds` of its opening (or of
      the first byte of a later request) or it is closed: uvicorn itself waits forever for a head (slowloris);
    - waiting connections (:class:`Waiting`) are bounded per address and in all: a new one beyond a bound
      closes the oldest waiting connection of its own address, or of the address holding the most, so a crowd
      of half-open connections, from one address or many, cannot keep a new client out;
    - uvicorn's ``limit_concurrency`` (its 503) counts the connections with a request in progress, idle ones and
      WebSockets, not the waiting ones (they are bounded above): half-open connections cannot take it.

    Addresses uvicorn trusts as proxies (``forwarded_allow_ips``) are exempt from the per-address bounds (behind
    a proxy, :class:`ClientLimit` counts the forwarded addresses); their request heads are timed all the same."""

    connections: set[Any]
    config: Any
    server_state: Any
    transport: Any
    cycle: Any
    app: Any
    loop: asyncio.AbstractEventLoop

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.registry = _registry_of(self.server_state)
        self.per_client, self.bounds, self.trusted = self.registry.settings(self.config)
        self.shares: LoopShares = _shares_of(self.registry, getattr(self, "app_state", None))
        self.host: str | None = None  # the address, when the per-address bounds apply to it
        self.key = ""  # whose share of the loop its requests use (LoopShares)
        self.waiting = self.upgraded = self.served = False  # served: a whole request head came
        self.head_timer: asyncio.TimerHandle | None = None
        self.hold: asyncio.TimerHandle | None = None  # its reading paused: its address is beyond its share ...
        self.held = bytearray()  # ... and what it had sent
        self.cycles: list[Any] = []  # its request cycles not complete (_ConnectionApp)

    @property
    def limit_concurrency(self) -> int | None:
        """uvicorn's ``limit_concurrency`` as its check reads it (``len(connections) >= limit``, this connection
        counted): raised by the waiting connections other than this one, so that they do not count."""
        if self._limit is None:
            return None
        return self._limit + self.registry.total - int(self.waiting and self.host is not None)

    @limit_concurrency.setter
    def limit_concurrency(self, value: int | None) -> None:
        self._limit = value

    def connection_made(self, transport: Any) -> None:
        start = time.perf_counter()
        super().connection_made(transport)  # type: ignore[misc]
        host = _host_of(self)
        if host is None or self.trusted is None or _in_networks(host, self.trusted):
            self.key = f"{host}#{id(self)}"  # a trusted proxy's (or an unknown) connection: its own share
        else:
            self.key = self.host = host
            self.registry.open[host] += 1
            if self.registry.open[host] > self.per_client:  # this one counted too
                transport.write(_REFUSED_RESPONSE)
                transport.close()
                self.shares.charge(self.key, time.perf_counter() - start)
                return
        # each request's work charged to the address, and its cycle noted: when the connection is lost each is
        # told, not only uvicorn's latest (a request running while the next, pipelined, was read would write to a
        # closed transport: an error and a traceback in the log each)
        self.app = _ConnectionApp(self.app, self.shares, self.key, self.cycles)
        self._note_state(timed=True)
        self.shares.charge(self.key, time.perf_counter() - start)  # (a client opening connections in a loop)

    def data_received(self, data: bytes) -> None:
        if self.hold is not None:  # held (read before the pause took): kept for the release
            self.held += data
            self.transport.pause_reading()
            return
        if self.waiting and self._hold_if_beyond_share(data):
            return
        if self.waiting and self.head_timer is None:  # the first byte of a request after an idle wait
            self.head_timer = self.loop.call_later(self.bounds.head_seconds, self._head_late)
        super().data_received(data)  # type: ignore[misc]
        self._note_state()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        self._note_state()  # idle now (uvicorn's keep-alive timeout), or the next pipelined request runs

    def _hold_if_beyond_share(self, data: bytes) -> bool:
        """A new request from an address beyond its share of the loop (:class:`LoopShares`) waits, its bytes
        kept and its socket not read, until the address has some again: a flood costs its sender, the others'
        requests go first. Whether it is held."""
        wait = self.shares.wait(self.key)
        if wait <= 0:
            return False
        self.transport.pause_reading()
        if self.head_timer is not None:  # the head's clock starts again when the connection is read again
            self.head_timer.cancel()
            self.head_timer = None
        self.held = bytearray(data)
        self.hold = self.loop.call_later(wait, self._release)
        return True

    def _release(self) -> None:
        self.hold = None
        held, self.held = bytes(self.held), bytearray()
        if not self.transport.is_closing():
            self.transport.resume_reading()
            self.data_received(held)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)  # type: ignore[misc]
        for cycle in self.cycles:
            if not cycle.response_complete:
                cycle.disconnected = True
                cycle.message_event.set()
        self._stop_waiting()
        if self.hold is not None:
            self.hold.cancel()
            self.hold = None
        if self.host is not None and not self.upgraded:
            self.registry.release(self.host)
            if not self.served:
                self.registry.half_open(self.host)

    def _note_state(self, timed: bool = False) -> None:
        """After each event: a WebSocket now, a request in progress, or waiting (``timed``: its head's clock
        starts now, else at the first byte that comes)."""
        if self.upgraded or self.transport is None or self.transport.is_closing():
            return
        if self.transport.get_protocol() is not self:
            self._stop_waiting()
            self._upgraded()
        elif self.cycle is not None and not self.cycle.response_complete:
            self.served = True
            self._stop_waiting()
        elif not self.waiting:
            self.waiting = True
            if self.host is not None and not self.registry.wait(self, self.host, self.bounds):
                return
            if timed:
                self.head_timer = self.loop.call_later(self.bounds.head_seconds, self._head_late)

    def _stop_waiting(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None
        if self.waiting:
            self.waiting = False
            if self.host is not None:
                self.registry.done_waiting(self, self.host)

    def _head_late(self) -> None:
        self.head_timer = None
        if self.waiting:
            self.drop(f"no complete request head within {self.bounds.head_seconds:g} s")

    def drop(self, why: str) -> None:
        """Close a waiting connection (it has no request in progress: nothing is answered)."""
        log.debug("connection from %s closed: %s", self.host, why)
        self._stop_waiting()
        self.transport.close()

    def _upgraded(self) -> None:
        """The connection is a WebSocket now (another protocol object): it stays counted until it closes."""
        self.upgraded = True
        if self.host is None:
            return
        ws, registry, host = self.transport.get_protocol(), self.registry, self.host
        lost = ws.connection_lost

        def connection_lost(exc: Exception | None) -> None:
            registry.release(host)
            lost(exc)

        ws.connection_lost = connection_lost


# -- the event loop's time, shared between addresses ----------------------------------------------------------
_LOOP_BURST = 0.02  # seconds of the loop an address may take at once; then its share (LoopShares)
_HEAVY_SECONDS = 1.0  # an address that went beyond its share counts among the heavy ones this long
_USAGE_SECONDS = 1.0  # an address's usage of the loop measured over about this long ...
LEVEL_SECONDS = 0.1  # ... and the addresses' share (max-min) computed from them this often
_MIN_SHARE = 0.001  # an address's share is never less than this (seconds of the loop per second)
HEAVY_TOTAL = (0.4, 0.7, 0.9)  # the part of the loop for the clients' work: at least, at first, at most ...
_BUSY_SHARES = (0.5, 0.75)  # ... raised while the loop's thread is busy less than the first share of a window,
BUSY_WINDOW = 0.25  # lowered when more than the second (windows of this many seconds, while any address is heavy)
_INPUT_SLICE = 512  # bytes of a WebSocket's input parsed at once (a slice of ping frames: ~1 ms of the loop) ...
_INPUT_PIECE = 64  # ... in pieces of this many, stopping at a message (it waits for the app to read it)
_INPUT_TOTAL_SHARE = 0.1  # a WebSocket's input is parsed as it arrives within this share of the loop, all
_INPUT_TOTAL_BURST = 0.005  # addresses together, and this much at once; the rest waits for the pump ...
_PUMP_STEP_SECONDS = 0.002  # ... which parses at most this long per pass of the loop ...
_PUMP_SHARE = 0.15  # ... and this share of the loop's time
_MAX_PENDING = 1 << 20  # bytes of a WebSocket's input waiting to be parsed; beyond, the connection is closed


class _Share(TokenBucket):
    """An address's bucket of loop seconds, and what it used over the last :data:`_USAGE_SECONDS` (two windows,
    the older one fading out)."""

    __slots__ = ("before", "spent", "window")

    def __init__(self, rate: float, now: float) -> None:
        super().__init__(rate, _LOOP_BURST, now)
        self.window, self.spent, self.before = now, 0.0, 0.0

    def usage(self, now: float) -> float:
        """Seconds of the loop per second lately."""
        if now - self.window >= _USAGE_SECONDS:
            self.before = self.spent if now - self.window < 2 * _USAGE_SECONDS else 0.0
            self.window, self.spent = now, 0.0
        return (self.spent + self.before * (1 - (now - self.window) / _USAGE_SECONDS)) / _USAGE_SECONDS


class LoopShares:
    """The event loop's time used by each address (a :class:`_Share` of seconds each, spent after the fact): an
    address beyond its share waits (its sockets are not read) until it has some again. The share is max-min fair:
    the part of the loop for the clients' work (:attr:`total`) is filled like water, each address up to what it
    uses lately, the same level for all those that want more (recomputed every :data:`LEVEL_SECONDS`): an address
    using less than the others' level (a person at a table, a polite client) never waits, however many want more.
    :attr:`total` follows how busy the loop is while any address is beyond its share (the *heavy* ones, within
    :data:`_HEAVY_SECONDS`): raised while the loop's thread is busy less than the first of :data:`_BUSY_SHARES` of a
    :data:`BUSY_WINDOW`, lowered when more than the second (within :data:`HEAVY_TOTAL`; CPU time, so that a busy
    machine's other processes do not count). The loop's spare time goes to the greedy (a load test from a few
    addresses keeps its throughput), never the others' turns.
    Used from the event loop only."""

    def __init__(self) -> None:
        self.buckets: collections.OrderedDict[str, _Share] = collections.OrderedDict()
        self.heavy: collections.OrderedDict[str, float] = collections.OrderedDict()  # key -> last time beyond
        self.total = HEAVY_TOTAL[1]  # the part of the loop for the clients' work, shared max-min fairly
        self.water, self.water_at = self.total, -math.inf  # each address's share, and when it was computed
        self.loop: asyncio.AbstractEventLoop | None = None  # the loop of the windows (while there are heavy ones)
        self.cpu_clock: Callable[[], float] = time.thread_time  # the loop thread's CPU time
        self.window_start = self.cpu_start = 0.0

    def rate(self, now: float) -> float:
        """Each address's share of the loop now (seconds per second): the water level of :attr:`total` over the
        addresses' usage (the heavy ones whose time is past forgotten)."""
        while self.heavy and next(iter(self.heavy.values())) < now - _HEAVY_SECONDS:
            self.heavy.popitem(last=False)
        if now - self.water_at >= LEVEL_SECONDS:
            self.water, self.water_at = water_level(self.total, [b.usage(now) for b in self.buckets.values()]), now
        return self.water

    def bucket(self, key: str, now: float) -> _Share:
        bucket = self.buckets.pop(key, None) or _Share(self.water, now)
        self.buckets[key] = bucket  # the most recent last
        if len(self.buckets) > TRACKED_CLIENTS:
            self.buckets.popitem(last=False)
        bucket.rate = self.rate(now)
        return bucket

    def level(self, key: str) -> float:
        """The seconds of the loop ``key`` has left now (negative: its debt)."""
        now = time.monotonic()
        return self.bucket(key, now).level(now)

    def wait(self, key: str) -> float:
        """How long ``key`` must wait before its next piece of work (0: none)."""
        now = time.monotonic()
        bucket = self.bucket(key, now)
        level = bucket.level(now)
        return 0.0 if level > 0 else -level / bucket.rate + 0.001

    def charge(self, key: str, seconds: float) -> None:
        now = time.monotonic()
        bucket = self.bucket(key, now)
        bucket.usage(now)
        bucket.spent += seconds
        bucket.spend(seconds)
        if bucket.tokens < 0:
            self.heavy.pop(key, None)
            self.heavy[key] = now
            self._tick_soon()

    def _tick_soon(self) -> None:
        """The windows start (on the running loop) when an address becomes heavy; they stop when none is."""
        if self.loop is not None:
            return
        try:
            self.loop = asyncio.get_running_loop()
        except RuntimeError:  # (no loop: a test of the shares alone)
            return
        self.window_start, self.cpu_start = self.loop.time(), self.cpu_clock()
        self.loop.call_later(BUSY_WINDOW, self._window)

    def _window(self) -> None:
        """The end of a window: how busy the loop's thread was (its CPU time over the wall time: time the system
        gave to other processes is not the loop's load) moves :attr:`total` (:data:`_BUSY_SHARES`)."""
        assert self.loop is not None
        now, cpu = self.loop.time(), self.cpu_clock()
        busy = (cpu - self.cpu_start) / max(now - self.window_start, 1e-9)
        low, high = _BUSY_SHARES
        least, _, most = HEAVY_TOTAL
        if busy > high:
            self.total = max(least, self.total * 0.8)
        elif busy < low:
            self.total = min(most, self.total * 1.1)
        self.rate(time.monotonic())  # (the heavy ones whose time is past forgotten)
        if not self.heavy:
            self.loop = None  # nobody heavy: no windows
            return
        self.window_start, self.cpu_start = now, cpu
        self.loop.call_later(BUSY_WINDOW, self._window)


def water_level(total: float, usages: list[float]) -> float:
    """The level that ``total`` fills over ``usages`` (each filled up to its usage): all of ``total`` when the
    usages fit in it; at least :data:`_MIN_SHARE`."""
    remaining, left = total, len(usages)
    for usage in sorted(usages):
        if usage * left > remaining:
            return max(_MIN_SHARE, remaining / left)
        remaining -= usage
        left -= 1
    return total


class _Metered:
    """A coroutine whose every step is timed and charged to ``key`` (a request's or a WebSocket's ASGI app)."""

    __slots__ = ("coro", "key", "shares")

    def __init__(self, coro: Any, shares: LoopShares, key: str) -> None:
        self.coro, self.shares, self.key = coro, shares, key

    def __await__(self) -> "_Metered":
        return self

    def __iter__(self) -> "_Metered":
        return self

    def __next__(self) -> Any:
        return self.send(None)

    def send(self, value: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.coro.send(value)
        finally:
            self.shares.charge(self.key, time.perf_counter() - start)

    def throw(self, *exc: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.coro.throw(*exc)
        finally:
            self.shares.charge(self.key, time.perf_counter() - start)

    def close(self) -> None:
        self.coro.close()


class _ConnectionApp:
    """The app as one connection runs it: its work charged to ``key`` in ``shares``; with ``cycles``, the request
    cycles it runs noted there (their ``send`` is the cycle's: :meth:`_Guard.connection_lost`). A class, not a
    closure: one is made per connection, and a crowd opening connections in a loop makes many."""

    __slots__ = ("app", "cycles", "key", "shares")

    def __init__(self, app: Any, shares: LoopShares, key: str, cycles: list[Any] | None = None) -> None:
        self.app, self.shares, self.key, self.cycles = app, shares, key, cycles

    def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        if self.cycles is not None:
            cycle = getattr(send, "__self__", None)
            if cycle is not None:
                self.cycles[:] = [c for c in self.cycles if not c.response_complete] + [cycle]
        return _Metered(self.app(scope, receive, send), self.shares, self.key)


def _metered(app: Any, shares: LoopShares, key: str) -> Any:
    """``app`` whose work on the loop is charged to ``key`` in ``shares``."""
    return _ConnectionApp(app, shares, key)


class _Pump:
    """The WebSocket input of one server parsed later (:class:`_FairWebSocketProtocol`): at most
    :data:`_PUMP_STEP_SECONDS` per pass of the event loop and :data:`_PUMP_SHARE` of its time, a slice at a time,
    always for the waiting address that has the most of its share left (:class:`LoopShares`), never for one
    beyond its share. Floods of frames (WebSocket pings, messages) so wait in their own sockets and cost their
    senders, not the other clients' turns. Used from the event loop only."""

    def __init__(self, loop: asyncio.AbstractEventLoop, shares: LoopShares) -> None:
        self.loop, self.shares = loop, shares
        self.arriving = TokenBucket(_INPUT_TOTAL_SHARE, _INPUT_TOTAL_BURST)  # input parsed as it arrives, in all
        self.waiting: dict[str, collections.deque[Any]] = {}  # address -> its connections with input waiting
        self.handle: asyncio.Handle | asyncio.TimerHandle | None = None
        self.running = False

    def now_or_later(self, key: str) -> bool:
        """Whether input of ``key`` arriving now is parsed at once (within its share and the total's, and no
        input of its waiting already)."""
        return key not in self.waiting and self.shares.level(key) > 0 and self.arriving.level() > 0

    def add(self, conn: Any) -> None:
        conns = self.waiting.setdefault(conn.key, collections.deque())
        if conn not in conns:
            conns.append(conn)
        if self.handle is None and not self.running:
            self.handle = self.loop.call_soon(self.run)

    def discard(self, conn: Any) -> None:
        conns = self.waiting.get(conn.key)
        if conns is not None and conn in conns:
            conns.remove(conn)
            if not conns:
                del self.waiting[conn.key]

    def run(self) -> None:
        self.handle, self.running = None, True
        start = time.perf_counter()
        wait = 0.0
        try:
            levels = {key: self.shares.level(key) for key in self.waiting}
            while levels and time.perf_counter() - start < _PUMP_STEP_SECONDS:
                key = max(levels, key=levels.__getitem__)
                if levels[key] <= 0:  # every waiting address is beyond its share: until the first has some again
                    wait = min(self.shares.wait(key) for key in self.waiting)
                    break
                conns = self.waiting[key]
                conn = conns[0]
                conns.rotate(-1)  # its connections in turn
                before = time.perf_counter()
                conn.parse_slice(arriving=False)
                levels[key] -= time.perf_counter() - before
                if key not in self.waiting:
                    del levels[key]
        finally:
            self.running = False
        used = time.perf_counter() - start
        if self.waiting:
            self.handle = self.loop.call_later(max(wait, used * (1 / _PUMP_SHARE - 1)), self.run)


if WebSocketsSansIOProtocol is not None:
    class _FairWebSocketProtocol(WebSocketsSansIOProtocol):
        """uvicorn's WebSocket protocol (websockets' sans-I/O parser, in Python) whose app's work is charged to
        its address (:class:`LoopShares`) and whose input is parsed a slice (:data:`_INPUT_SLICE`) at a time,
        charged likewise: input from an address within its share is parsed as it arrives (within
        :data:`_INPUT_TOTAL_SHARE`); any other waits, its socket not read meanwhile, for the server's
        :class:`_Pump`. uvicorn alone parses and answers every frame of a read at once (about 40,000 pings in
        one 256 kB read: a second of the loop)."""

        app: Any

        def __init__(self, config: Any, server_state: Any, *args: Any, **kw: Any) -> None:
            super().__init__(config, server_state, *args, **kw)
            registry = _registry_of(server_state)
            if registry.pump is None:
                registry.pump = _Pump(self.loop, _shares_of(registry, getattr(self, "app_state", None)))
            self.pump: _Pump = registry.pump
            self.trusted = _trusted_networks(self.config)
            self.key = ""
            self.pending = bytearray()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self.key = _key_of(self, self.trusted)
            self.app = _metered(self.app, self.pump.shares, self.key)

        def data_received(self, data: bytes) -> None:
            if not self.handshake_initiated:  # the upgrade request (its head bounded already): parsed at once
                super().data_received(data)
                return
            self.pending += data
            if len(self.pending) > _MAX_PENDING:
                log.info("a WebSocket from %s sent more than %d bytes beyond its share: closed", self.key,
                         _MAX_PENDING)
                self.transport.close()
                return
            if len(self.pending) == len(data) and not self.read_paused and self.pump.now_or_later(self.key):
                self.parse_slice(arriving=True)
            else:
                self._later()

        def parse_slice(self, arriving: bool) -> None:
            """Parse the input waiting, :data:`_INPUT_PIECE` bytes at a time, until a message waits for the app
            (then the rest waits for :meth:`receive`) or :data:`_INPUT_SLICE` bytes are parsed (then the rest
            waits for the pump); the pongs of the pings parsed are written at once, in one write."""
            start = time.perf_counter()
            done = 0
            while self.pending and done < _INPUT_SLICE and not self.read_paused and not self.transport.is_closing():
                piece = bytes(self.pending[:_INPUT_PIECE])
                del self.pending[:_INPUT_PIECE]
                done += len(piece)
                super().data_received(piece)
            self._flush()
            used = time.perf_counter() - start
            self.pump.shares.charge(self.key, used)
            if arriving:
                self.pump.arriving.spend(used)
            if self.transport.is_closing():
                self.pump.discard(self)
                self.pending.clear()
            elif self.read_paused:  # a message waits for the app: the rest when it has read it (receive)
                self.pump.discard(self)
                self.transport.pause_reading()
            elif self.pending:
                self._later()
            else:
                self.pump.discard(self)
                self.transport.resume_reading()

        def handle_ping(self) -> None:
            """(The pong is written with the others of the slice: :meth:`_flush`.)"""

        def _flush(self) -> None:
            output = self.conn.data_to_send()
            if output and not self.transport.is_closing():
                self.transport.write(b"".join(output))

        async def receive(self) -> Any:
            """The app's next message, once its address is within its share of the loop again (the work of its
            messages is charged to it: :func:`_metered`); the input waiting behind it is parsed in its turn."""
            wait = self.pump.shares.wait(self.key)
            if wait > 0 and not self.disconnected:
                await asyncio.sleep(wait)
            message = await super().receive()
            if self.pending and not self.read_paused:
                self.transport.pause_reading()
                self.pump.add(self)
            return message

        def _later(self) -> None:
            self.transport.pause_reading()
            if not self.read_paused:
                self.pump.add(self)

        def connection_lost(self, exc: Exception | None) -> None:
            self.pump.discard(self)
            self.pending.clear()
            super().connection_lost(exc)


def _key_of(connection: Any, trusted: list[Any] | None) -> str:
    """Whose share a connection's work is charged to: its address; a trusted proxy's connections (behind which
    are many clients) and an unknown address each their own."""
    host = _host_of(connection)
    if host is None or trusted is None or _in_networks(host, trusted):
        return f"{host}#{id(connection)}"
    return host


#: the WebSocket protocol ``serve`` runs (uvicorn's default where this uvicorn has no sans-I/O one)
FAIR_WS_PROTOCOL: type | None = None if WebSocketsSansIOProtocol is None else _FairWebSocketProtocol


class ClientCappedH11Protocol(_Guard, H11Protocol):
    """:class:`_Guard` on uvicorn's pure-Python HTTP/1.1 protocol (h11)."""


if HttpToolsProtocol is not None:
    class ClientCappedHttpToolsProtocol(_Guard, HttpToolsProtocol):
        """:class:`_Guard` on uvicorn's httptools protocol (a C parser)."""

#: the protocol ``serve`` runs: httptools (a dependency; parsing in C: measured, it and uvloop halved the event
#: loop's time per refused connection under the abuse run) or, where its wheel is missing, h11
CAPPED_PROTOCOL: type = ClientCappedH11Protocol if HttpToolsProtocol is None else ClientCappedHttpToolsProtocol


def _host_of(connection: Any) -> str | None:
    client = getattr(connection, "client", None)
    return str(client[0]) if client else None


def _trusted_networks(config: Any) -> list[Any] | None:
    """The networks uvicorn takes X-Forwarded-For from ([] when none; None: every address is trusted)."""
    if not getattr(config, "proxy_headers", False):
        return []
    allowed = config.forwarded_allow_ips
    entries = [e.strip() for e in (allowed.split(",") if isinstance(allowed, str) else allowed)]
    if "*" in entries:
        return None
    networks = []
    for entry in entries:
        with contextlib.suppress(ValueError):
            networks.append(ipaddress.ip_network(entry, strict=False))
    return networks


def _in_networks(host: str, networks: list[Any]) -> bool:
    if not networks:  # (no proxy trusted, the usual case: no address parsed per connection)
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in n for n in networks)


# -- exposure ------------------------------------------------------------------------------------------------
def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address or name) reaches this machine only: ``localhost``, 127.0.0.0/8, ::1."""
    host = host.strip().strip("[]").lower()
    if host == "localhost":
        return True
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host).is_loopback
    return False


def check_exposure(host: str, public: bool) -> None:
    """A ValueError (one line) when ``host`` is not loopback and ``--public`` was not given."""
    if not public and not is_loopback(host):
        raise ValueError(f"--host {host} serves other machines: add --public to do so on purpose (the limits "
                         f"it prints apply), or bind 127.0.0.1")


def _seconds_text(x: float) -> str:
    return f"{x:g} s" if x < 120 else f"{x / 60:g} min" if x < 7200 else f"{x / 3600:g} h"


def describe(config: Any, routes: list[str], bots: list[str], queues: dict[str, QueueLimit]) -> list[str]:
    """What a ``--public`` server exposes: its routes, bots and limits, a line each (printed at startup)."""
    lines = [f"routes: {', '.join(routes)}", f"bots: {', '.join(bots)}",
             f"limits: {config.max_connections} connections, {config.max_tables} tables "
             f"({config.max_tables_per_client} per client), {config.max_connections_per_client} requests and "
             f"tables at once per client, {config.max_body:,} bytes a body within {config.body_timeout:g} s, "
             f"idle tables closed after {_seconds_text(config.idle_timeout)}, any after "
             f"{_seconds_text(config.table_lifetime)}, a request head within {config.head_timeout:g} s, "
             f"{config.max_waiting} connections waiting for one ({config.max_waiting_per_client} per client)"]
    lines.append("queues (threads, jobs, per client): " + ", ".join(
        f"{kind} {q.workers}/{q.max_jobs}/{q.per_client}" for kind, q in queues.items()))
    return lines

