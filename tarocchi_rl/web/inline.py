"""``POST /v1/act`` with a fast bot, answered on the event loop when it is cheap (issue 30: the API's throughput
without handing the loop to one client).

A fast bot's answer is the seat's position rebuilt from the request's history (usually the previous request's
position, cached, and one more step), then a network's forward pass: about a millisecond, less than the trip to
a worker process and back. A crafted history can make the rebuild search for a deal (up to 0.2 s), which must not
run on the loop that serves every table. So a request is tried here first, within a :class:`Budget` of
:data:`INLINE_SECONDS` and without the determinizer's redraws, and goes to the ``act`` worker processes
(:mod:`~tarocchi_rl.web.workers`, queued fairly per client) when

- the rebuild runs out of its budget (:class:`OverBudget`); its deal is then remembered (:data:`HEAVY_DEALS`)
  and its next requests go to the processes at once, and so do all the client's requests for
  :data:`PENALTY_SECONDS` (an honest deal's request takes about a millisecond: measured, none of 15,000 requests
  of real deals under load went over; a crafted one runs over each time, and would stall the loop each time);
- the client has used its share of the loop: a token bucket of :data:`CLIENT_SHARE` seconds of loop time per
  second (at most :data:`CLIENT_BURST` at once), so that a client flooding the API gets at most that much of the
  loop and the rest of its requests wait in its queue;
- all clients together have used :data:`TOTAL_SHARE` seconds per second (the tables keep the rest).
"""

import collections
import json
import time
from typing import Any

from ..search.seat_view import Budget, OverBudget
from .bots import BotPool
from .limits import TokenBucket

__all__ = ["CLIENT_BURST", "CLIENT_SHARE", "HEAVY_DEALS", "INLINE_SECONDS", "InlineAct", "PENALTY_SECONDS",
           "TOTAL_SHARE"]

INLINE_SECONDS = 0.005  # the budget of one request's rebuild on the loop (a cached deal's next step: ~0.3 ms)
CLIENT_SHARE = 0.1  # seconds of loop time per second one client's inline requests may use ...
CLIENT_BURST = 0.1  # ... and at once
TOTAL_SHARE = 0.8  # seconds of loop time per second all clients' inline requests may use (at once: the same)
HEAVY_DEALS = 4096  # deals whose rebuild went over budget, remembered (the least recent forgotten)
PENALTY_SECONDS = 10.0  # a client whose request went over budget is answered by the processes only, this long
TRACKED_CLIENTS = 4096  # clients whose bucket is kept (a forgotten one starts full again)


class _Bucket(TokenBucket):
    """A client's (or all clients') share of the loop: a :class:`~tarocchi_rl.web.limits.TokenBucket` of seconds,
    spent after the fact, and none at all before ``banned_until``."""

    __slots__ = ("banned_until",)

    def __init__(self, rate: float, burst: float, now: float) -> None:
        super().__init__(rate, burst, now)
        self.banned_until = 0.0

    def available(self, now: float) -> bool:
        return self.level(now) > 0 and now >= self.banned_until


def deal_key(req: Any) -> str | None:
    """What identifies a request's deal for its bot (variant, options, seat, the hand in any order), or None."""
    if not isinstance(req, dict) or not isinstance(req.get("hand"), list):
        return None
    try:
        return json.dumps([req.get("variant"), req.get("options"), req.get("seat"),
                           sorted(c for c in req["hand"] if isinstance(c, str))], sort_keys=True)
    except (TypeError, ValueError):
        return None


class InlineAct:
    """The loop's share of fast-bot requests (module docstring). Used from the event loop only."""

    def __init__(self) -> None:
        self.clients: collections.OrderedDict[str, _Bucket] = collections.OrderedDict()
        self.total = _Bucket(TOTAL_SHARE, TOTAL_SHARE, time.monotonic())
        self.heavy: collections.OrderedDict[str, None] = collections.OrderedDict()
        self.answered = self.passed_on = 0  # requests answered here, and sent to the processes (for the tests)

    def _bucket(self, client: str, now: float) -> _Bucket:
        bucket = self.clients.pop(client, None) or _Bucket(CLIENT_SHARE, CLIENT_BURST, now)
        self.clients[client] = bucket  # the most recent last
        if len(self.clients) > TRACKED_CLIENTS:
            self.clients.popitem(last=False)
        return bucket

    def answer(self, client: str, pool: BotPool, text: str, req: Any) -> dict[str, Any] | None:
        """The bot's answer to the request, computed here; None when it must go to the worker processes."""
        now = time.monotonic()
        key = deal_key(req)
        bucket = self._bucket(client, now)
        if (key is not None and key in self.heavy) or not bucket.available(now) or not self.total.available(now):
            self.passed_on += 1
            return None
        start = time.perf_counter()
        try:
            out: dict[str, Any] | None = pool.handle(text, req, Budget(time.monotonic() + INLINE_SECONDS))
        except OverBudget:
            out = None
            bucket.banned_until = time.monotonic() + PENALTY_SECONDS
            if key is not None:
                self.heavy[key] = None
                if len(self.heavy) > HEAVY_DEALS:
                    self.heavy.popitem(last=False)
        used = time.perf_counter() - start
        bucket.spend(used)
        self.total.spend(used)
        if out is None:
            self.passed_on += 1
        else:
            self.answered += 1
        return out
