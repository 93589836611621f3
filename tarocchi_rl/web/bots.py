"""The bots a server offers, by display name: a client chooses among them and never sees or passes an agent spec,
a path or a command line.

Built in: ``random``, ``heuristic``, ``ismcts`` (a search with a time budget, ``ismcts:time=0.2`` unless the
server says otherwise) and the shipped trained bots, ``bot:VARIANT`` and ``strong:VARIANT`` (its network guiding a
search at 0.05 s a decision) for every variant with one (:func:`tarocchi_rl.shipped.shipped_bots`; each plays its
own variant, loaded once per process);
``--agents NAME=SPEC`` adds the operator's bots under the names the operator gives (``--agents
strong=onnx:bots/mineo``); a bare ``SPEC`` gets a neutral name, ``bot1``, ``bot2``, ... (never the spec).
``/v1/bots``, the ``hello`` of ``POST /v1/act``, the seat names and the errors a bot's answer carries show
the name only (:meth:`BotPool.handle` writes the name over the spec in an error's text).

At the tables, a bot of the cheap kinds (random, heuristic, the built-in search) is made per table from the
table's seed; an added agent, which may load files, is built once at startup and shared under a lock. The
baselines and the networks answer in about a millisecond and run on the event loop; a search or an external
program runs in its queue's thread (:mod:`~tarocchi_rl.web.limits`), and its forced moves are paced by its
:class:`~tarocchi_rl.web.table.DecisionClock` (one per bot, shared by its tables). For ``POST /v1/act`` each bot
has :class:`tarocchi_rl.bot.BotServer` instances made at startup (one for a fast bot, ``pool_size`` for the
built-in search), which answer in the queue of their kind, off the event loop (the position is rebuilt from the
request's history): a request goes to the instance its deal and seat hash to, where the server keeps that deal's
rebuilt position for its next request.
"""

import functools
import hashlib
import json
import re
import threading
from collections.abc import Sequence
from typing import Any

from ..agents.specs import split_agent_specs
from ..bot import BotServer
from ..play import make_bot
from ..policies import BASELINES
from ..search.seat_view import Budget
from ..shipped import shipped_bots
from .table import DecisionClock, SeatBot

DEFAULT_ISMCTS = "ismcts:time=0.2"
DEFAULT_BOT = "heuristic"
BUILT_IN = ("random", "heuristic", "ismcts")
_FAST_KINDS = ("onnx", "ppo", "bot")  # besides the baselines: bots that answer on the event loop (bot: is onnx)
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")  # a display name given with --agents NAME=SPEC
_AUTO_NAME = "bot{}"  # the display name of the k-th bare --agents SPEC


def named_entry(entry: str) -> tuple[str | None, str]:
    """``NAME=SPEC`` -> (NAME, SPEC); a bare ``SPEC`` -> (None, SPEC). A spec never starts with ``word=`` (its
    kind is followed by ``:`` or nothing), so the two cannot be confused."""
    head, eq, rest = entry.strip().partition("=")
    if eq and NAME.fullmatch(head.strip()) and rest.strip():
        return head.strip(), rest.strip()
    return None, entry.strip()


def agent_entries(values: Sequence[str]) -> list[str]:
    """The ``--agents`` options (repeatable) -> one entry per bot: a ``NAME=SPEC`` option is one bot, its spec
    whole (commas and all); any other option is a comma-separated list of bare specs."""
    out: list[str] = []
    for value in values:
        name, _ = named_entry(value)
        out += [value.strip()] if name else split_agent_specs(value)
    return out


def _redact(text: str, secrets: Sequence[str], name: str) -> str:
    """``text`` with every secret (a spec, a path, a command line) written as the bot's display name."""
    for secret in sorted({s for s in secrets if s and len(s) > 2}, key=len, reverse=True):
        text = text.replace(secret, name)
    return text


class BotPool:
    """``size`` BotServers answering for one bot (one lock each); :meth:`handle` routes a request by its deal.
    The servers know the bot by its display name only (their ``hello`` names no spec)."""

    def __init__(self, name: str, spec: str, size: int, shared: Any = None,
                 shared_lock: "threading.Lock | None" = None) -> None:
        self.name = name
        if shared is not None:  # one agent loaded from files: one server, under the agent's lock
            self.servers = [BotServer(name, lambda _name: shared, f"tarocchi-rl {name}")]
            self.locks = [shared_lock or threading.Lock()]
        else:
            self.servers = [BotServer(name, lambda _name: make_bot(spec, 0, "bot"), f"tarocchi-rl {name}")
                            for _ in range(max(1, size))]
            self.locks = [threading.Lock() for _ in self.servers]
        agent = self.servers[0].agent
        self.secrets = [spec, str(getattr(agent, "name", "") or ""), str(getattr(agent, "command", "") or ""),
                        *[t for t in re.split(r'[:,="\s]+', spec) if "/" in t]]

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

    def handle(self, line: str, req: Any, budget: Budget | None = None) -> dict[str, Any]:
        """Answer one request line (``req``: the same, parsed, for the routing); never raises, but
        :class:`~tarocchi_rl.search.seat_view.OverBudget` with a ``budget`` (:meth:`BotServer.handle`)."""
        k = self.route(req)
        with self.locks[k]:
            out = self.servers[k].handle(line, req if isinstance(req, dict) else None, budget)
        if isinstance(out.get("error"), str):
            out["error"] = _redact(out["error"], self.secrets, self.name)
        return out


def shipped_specs() -> list[str]:
    """The specs of the shipped trained bots, built into every server's catalogue: every ``bot:VARIANT`` (the
    network alone, about a millisecond a decision), then every ``strong:VARIANT`` (the network guiding a search,
    :mod:`agents.strong`: a search's queue and pacing)."""
    names = shipped_bots()
    return [f"bot:{name}" for name in names] + [f"strong:{name}" for name in names]


@functools.cache
def _shipped_agent(spec: str) -> tuple[Any, threading.Lock]:
    """A shipped bot and its lock, loaded once per process (every catalogue of the process shares them)."""
    return make_bot(spec, 0, spec), threading.Lock()


class Catalogue:
    """The server's bots by display name (module docstring)."""

    def __init__(self, extra: Sequence[str] = (), ismcts: str = DEFAULT_ISMCTS, pool_size: int = 4) -> None:
        self.specs: dict[str, str] = {"random": "random", "heuristic": "heuristic", "ismcts": ismcts}
        self.shared: dict[str, tuple[Any, threading.Lock]] = {}
        self.by_spec: dict[str, str] = {}  # an operator's bare spec -> its name (for --seats)
        for shipped in shipped_specs():  # the trained bots, named by their spec (it names no path; shared:
            # a strong: bot too, its search one decision at a time under the lock, in the search queue)
            self.specs[shipped] = self.by_spec[shipped] = shipped
            self.shared[shipped] = _shipped_agent(shipped)
        for name, spec in self._names(extra):
            self.specs[name] = spec
            self.shared[name] = (make_bot(spec, 0, f"--agents {name}"), threading.Lock())  # bad spec: ValueError
        # a fast bot has one server (its queue runs one request at a time); the built-in search pool_size
        self.pools = {name: BotPool(name, spec, 1 if name in self.shared or self.is_fast(name) else pool_size,
                                    *self.shared.get(name, (None, None)))
                      for name, spec in self.specs.items()}
        self.clocks = {name: DecisionClock() for name in self.specs if not self.is_fast(name)}

    def _names(self, extra: Sequence[str]) -> list[tuple[str, str]]:
        """The ``--agents`` entries, in order -> (display name, spec); a name given twice or a built-in name is a
        ValueError. A bare spec that is a built-in bot, or given twice, is skipped."""
        entries = [named_entry(e) for e in extra if e.strip()]
        taken = {n.lower() for n in self.specs}
        for name, _ in entries:
            if name is not None and name.lower() in taken:
                raise ValueError(f"--agents {name}=...: the name {name!r} is taken (built in: "
                                 f"{', '.join(BUILT_IN)}; names are case-insensitive)")
            if name is not None:
                taken.add(name.lower())
        out: list[tuple[str, str]] = []
        k = 0
        for name, spec in entries:
            if name is None:
                if spec.lower() in BUILT_IN or spec in self.by_spec:
                    continue
                k += 1
                while _AUTO_NAME.format(k) in taken:
                    k += 1
                name = self.by_spec[spec] = _AUTO_NAME.format(k)
                taken.add(name)
            out.append((name, spec))
        return out

    @property
    def names(self) -> list[str]:
        return list(self.specs)

    def is_fast(self, name: str) -> bool:
        """Answers in about a millisecond: the baselines and the networks (``onnx:``, ``ppo:``, ``bot:``), which
        run on the event loop at the tables; a search (``ismcts:``) or an external program (``cmd:``) runs in its
        queue's thread (:func:`tarocchi_rl.web.limits.work_kind`)."""
        kind = self.specs[name].partition(":")[0].strip().lower()
        return kind in BASELINES or kind in _FAST_KINDS

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

    def resolve_operator(self, choice: str, where: str) -> str:
        """The operator's choice (``--seats``): a name, or the spec of a bare ``--agents`` entry -> the name."""
        if isinstance(choice, str):
            choice = self.by_spec.get(choice.strip(), choice.strip())
        return self.resolve(choice, where)

    def seat_bot(self, name: str, seed: int) -> SeatBot:
        """The bot of one seat of one table."""
        clock = self.clocks.get(name)
        if name in self.shared:
            agent, lock = self.shared[name]
            return SeatBot(name, agent, lock, fast=self.is_fast(name), clock=clock)
        return SeatBot(name, make_bot(self.specs[name], seed, name), None, fast=self.is_fast(name), clock=clock)

    def variants(self, name: str) -> list[str]:
        """The variants bot ``name`` plays (a network trained on one plays that one only)."""
        return self.pools[name].servers[0].variants()

    def check_plays(self, name: str, variant: str, where: str) -> None:
        """A ValueError naming ``where`` when bot ``name`` does not play ``variant``."""
        plays = self.variants(name)
        if variant not in plays:
            raise ValueError(f"{where}: {name} plays {', '.join(plays)}, not {variant}")

    def info(self) -> list[dict[str, Any]]:
        """What a client is told of each bot: index, name, whether it is fast, its capabilities, the variants it
        plays (never a spec)."""
        return [{"index": k, "name": name, "fast": self.is_fast(name),
                 "capabilities": self.pools[name].servers[0].capabilities(), "variants": self.variants(name)}
                for k, name in enumerate(self.specs)]
