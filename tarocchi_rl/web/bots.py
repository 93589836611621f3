"""The bots a server offers, by name: a client chooses among them and never passes an agent spec or a path.

Built in: ``random``, ``heuristic`` and ``ismcts`` (a search with a time budget, ``ismcts:time=0.2`` unless the
server says otherwise); ``--agents`` adds the operator's specs (``onnx:bots/mineo``, ``ppo:runs/x``, ...), each
named by its spec. At the tables, a bot of the cheap kinds (random, heuristic, the built-in search) is made
per table from the table's seed; an added agent, which may load files, is built once at startup and shared
under a lock. The baselines and the networks answer in about a millisecond and run on the event loop; a
search or an external program runs in the thread pool. For ``POST /v1/act`` each bot has
:class:`tarocchi_rl.bot.BotServer` instances made at startup (one for a bot on the event loop, ``pool_size``
for the built-in search): a request goes to the instance its deal and seat hash to, where the server keeps
that deal's rebuilt position for its next request.
"""

import hashlib
import json
import threading
from collections.abc import Sequence
from typing import Any

from ..bot import BotServer
from ..play import make_bot
from ..policies import BASELINES
from .table import SeatBot

DEFAULT_ISMCTS = "ismcts:time=0.2"
DEFAULT_BOT = "heuristic"
FAST_KINDS = ("onnx", "ppo")  # besides the baselines: bots that answer on the event loop


class BotPool:
    """``size`` BotServers answering for one bot (one lock each); :meth:`handle` routes a request by its deal."""

    def __init__(self, name: str, spec: str, size: int, shared: Any = None,
                 shared_lock: "threading.Lock | None" = None) -> None:
        self.name = name
        if shared is not None:  # one agent loaded from files: one server, under the agent's lock
            self.servers = [BotServer(spec, lambda _spec: shared, f"tarocchi-rl {name}")]
            self.locks = [shared_lock or threading.Lock()]
        else:
            self.servers = [BotServer(spec, lambda s: make_bot(s, 0, "bot"), f"tarocchi-rl {name}")
                            for _ in range(max(1, size))]
            self.locks = [threading.Lock() for _ in self.servers]

    def route(self, req: Any) -> int:
        """The server of a request: a hash of its variant, options, seat and hand (any order)."""
        if len(self.servers) == 1 or not isinstance(req, dict):
            return 0
        hand = req.get("hand")
        key = [req.get("variant"), req.get("options"), req.get("seat"),
               sorted(c for c in hand if isinstance(c, str)) if isinstance(hand, list) else None]
        try:
            text = json.dumps(key, sort_keys=True)
        except (TypeError, ValueError):
            return 0
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "little") % len(self.servers)

    def handle(self, line: str, req: Any) -> dict[str, Any]:
        """Answer one request line (``req``: the same, parsed, for the routing); never raises."""
        k = self.route(req)
        with self.locks[k]:
            return self.servers[k].handle(line, req if isinstance(req, dict) else None)


class Catalogue:
    """The server's bots by name (module docstring)."""

    def __init__(self, extra: Sequence[str] = (), ismcts: str = DEFAULT_ISMCTS, pool_size: int = 4) -> None:
        self.specs: dict[str, str] = {"random": "random", "heuristic": "heuristic", "ismcts": ismcts}
        self.shared: dict[str, tuple[Any, threading.Lock]] = {}
        for spec in extra:
            spec = spec.strip()
            if not spec or spec in self.specs or spec.lower() in self.specs:
                continue
            self.specs[spec] = spec
            self.shared[spec] = (make_bot(spec, 0, f"--agents {spec}"), threading.Lock())  # bad spec: ValueError
        # the fast bots answer on the event loop, one at a time: one server; a search runs in the thread pool
        self.pools = {name: BotPool(name, spec, 1 if name in self.shared or self.is_fast(name) else pool_size,
                                    *self.shared.get(name, (None, None)))
                      for name, spec in self.specs.items()}

    @property
    def names(self) -> list[str]:
        return list(self.specs)

    def is_fast(self, name: str) -> bool:
        """Answers in about a millisecond: the baselines and the networks (``onnx:``, ``ppo:``), which run on the
        event loop; a search (``ismcts:``) or an external program (``cmd:``) runs in the thread pool."""
        kind = self.specs[name].partition(":")[0].strip().lower()
        return kind in BASELINES or kind in FAST_KINDS

    def resolve(self, choice: Any, where: str = "bot") -> str:
        """A client's choice (a name of this server's bots, or its index) -> the name; ValueError otherwise."""
        names = self.names
        if isinstance(choice, int) and not isinstance(choice, bool):
            if 0 <= choice < len(names):
                return names[choice]
        elif isinstance(choice, str) and choice in self.specs:
            return choice
        raise ValueError(f"{where}: unknown bot {choice!r}: this server offers {', '.join(names)} "
                         f"(by name or index 0..{len(names) - 1})")

    def seat_bot(self, name: str, seed: int) -> SeatBot:
        """The bot of one seat of one table."""
        if name in self.shared:
            agent, lock = self.shared[name]
            return SeatBot(name, agent, lock, fast=self.is_fast(name))
        return SeatBot(name, make_bot(self.specs[name], seed, name), None, fast=self.is_fast(name))

    def info(self) -> list[dict[str, Any]]:
        return [{"index": k, "name": name, "spec": spec, "fast": self.is_fast(name),
                 "capabilities": self.pools[name].servers[0].capabilities()}
                for k, (name, spec) in enumerate(self.specs.items())]
