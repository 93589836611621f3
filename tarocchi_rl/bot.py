"""``tarocchi-rl bot``: one agent answering for one seat over the ``tarocchi-bot/1`` protocol (JSON lines).

The frontend owns the game; each ``act`` request carries only what the seat knows (its cards as dealt and its
view of every step, docs/bot-protocol.md); the bot rebuilds a position from that alone
(:func:`tarocchi_rl.search.seat_view.rebuild`) and answers with an action string, and on request the policy's
probabilities, its value and the search statistics. Every request gets exactly one line back; a bad one gets
an ``error`` line naming the problem and the bot keeps serving. A bot with a belief model (``has_beliefs``: a
policy trained with ``belief_loss > 0``) also answers ``want: ["beliefs"]``: where each card the seat cannot see
lies (:func:`_belief_answer`).
"""

import hashlib
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

import numpy as np

from . import __version__, bounded
from .game import Game, make
from .policies.belief import absolute_location_names, belief_shape, unseen_cards
from .search.seat_view import Budget, OverBudget, ViewCache, ViewError, rebuild
from .variants import VARIANTS, get_variant  # VARIANTS: the protocol speaks every registered variant
from .views import Views

PROTOCOL = "tarocchi-bot/1"
MAX_LINE = 1 << 20  # bytes of one request line (its newline counted): a longer line gets an error answer
_MAX_CACHES = 512  # rebuilt positions kept (one per deal and seat, least recent dropped): a deal's next request
# replays only its new steps, even with many clients interleaved
# request fields: name -> (required, accepted types, meaning)
FIELDS: dict[str, dict[str, tuple[bool, tuple[type, ...]]]] = {
    "hello": {"type": (True, (str,)), "id": (False, (int, str)), "protocol": (False, (str,))},
    "act": {"type": (True, (str,)), "id": (False, (int, str)), "variant": (True, (str,)),
            "options": (False, (dict,)), "seat": (True, (int,)), "hand": (True, (list,)),
            "history": (True, (list,)), "decision": (True, (str,)), "want": (False, (list,))},
    "quit": {"type": (True, (str,)), "id": (False, (int, str))},
}
WANTS = ("probabilities", "value", "search", "beliefs")
_BELIEF_DIGITS = 6  # decimals of a belief in an answer (at most 78 cards x 6 locations of them: about 10 kB)


def request_id(req: dict[str, Any]) -> int | str | None:
    """The request's ``id`` when it is one (an int, not a bool, or a string): copied into the answer, errors too."""
    rid = req.get("id")
    return rid if isinstance(rid, (int, str)) and not isinstance(rid, bool) else None


class _RequestError(ValueError):
    """A request the bot cannot answer; the message names the field."""


def _parse_request(line: str) -> Any:
    """The JSON value of one request line: a :class:`_RequestError` when the line is longer than :data:`MAX_LINE`
    bytes (UTF-8), not JSON, nested too deeply or holds an integer of too many digits."""
    if len(line) > MAX_LINE or len(line.encode("utf-8", "surrogatepass")) > MAX_LINE:
        raise _RequestError(f"line longer than {MAX_LINE} bytes")
    try:
        return bounded.loads(line)
    except bounded.BoundedInputError as e:
        raise _RequestError(str(e)) from None


def _check_fields(req: dict[str, Any]) -> str:
    kind = req.get("type")
    if kind not in FIELDS:
        raise _RequestError(f"type: expected one of {', '.join(FIELDS)}, got {kind!r}")
    spec = FIELDS[kind]
    for name in req:
        if name not in spec:
            raise _RequestError(f"unknown field {name!r} in a {kind} request (known: {', '.join(spec)})")
    for name, (required, types) in spec.items():
        if name not in req:
            if required:
                raise _RequestError(f"{name}: missing (a {kind} request needs it)")
            continue
        v = req[name]
        if isinstance(v, bool) or not isinstance(v, types):
            want = " or ".join(t.__name__ for t in types)
            raise _RequestError(f"{name}: expected {want}, got {type(v).__name__}")
    return str(kind)


class BotServer:
    """Answers protocol lines with one agent (``make_agent(spec)``); :meth:`handle` never raises."""

    def __init__(self, spec: str, make_agent: Callable[[str], Any], name: str | None = None) -> None:
        self.spec = spec
        self.agent = make_agent(spec)
        self.name = name or f"tarocchi-rl {spec}"
        self.games: dict[tuple[str, str], Game] = {}
        self.caches: dict[tuple[Any, ...], ViewCache] = {}  # per deal and seat: the last rebuild (LRU order)

    def capabilities(self) -> list[str]:
        caps = ["act"]
        caps += [w for w, attr in (("probabilities", "probabilities"), ("value", "value"), ("search", "search"))
                 if callable(getattr(self.agent, attr, None))]
        if getattr(self.agent, "has_beliefs", False) is True and callable(getattr(self.agent, "beliefs", None)):
            caps.append("beliefs")
        return caps

    def variants(self) -> list[str]:
        """The variants the agent plays: its ``variants`` (a list, or None for all), else its ``variant`` (one it
        was trained on), else all."""
        listed = getattr(self.agent, "variants", None)
        if isinstance(listed, (list, tuple)) and listed:
            return [v for v in VARIANTS if v in listed]
        one = getattr(self.agent, "variant", None)
        return [one] if isinstance(one, str) and one in VARIANTS else list(VARIANTS)

    def hello(self) -> dict[str, Any]:
        return {"type": "hello", "protocol": PROTOCOL, "name": self.name, "agent": self.spec,
                "version": __version__, "variants": self.variants(), "capabilities": self.capabilities()}

    # -- requests --------------------------------------------------------------------------------------
    def handle(self, line: str, parsed: Any = None, budget: Budget | None = None) -> dict[str, Any]:
        """One request line -> one response (``action``, ``hello``, ``bye`` or ``error``); ``parsed``: the line
        already decoded by the caller (the HTTP API), not decoded again. With a ``budget`` (the position's rebuild:
        :class:`~tarocchi_rl.search.seat_view.Budget`), :class:`~tarocchi_rl.search.seat_view.OverBudget` when the
        rebuild needs more: the one exception this raises."""
        rid: Any = None
        try:
            req = _parse_request(line) if parsed is None else parsed
            if not isinstance(req, dict):
                raise _RequestError("a request must be a JSON object")
            rid = request_id(req)
            kind = _check_fields(req)
            if kind == "hello":
                if req.get("protocol", PROTOCOL) != PROTOCOL:
                    raise _RequestError(f"protocol: this bot speaks {PROTOCOL}, not {req['protocol']!r}")
                out = self.hello()
            elif kind == "quit":
                out = {"type": "bye"}
            else:
                out = self.act(req, budget)
        except OverBudget:
            raise
        except (_RequestError, ViewError) as e:
            out = {"type": "error", "error": str(e)}
        except ValueError as e:  # the agent or the game refused the request
            out = {"type": "error", "error": str(e)}
        except Exception as e:  # a bug must not kill the session: say so and keep serving
            out = {"type": "error", "error": f"internal error: {type(e).__name__}: {e}"}
        if rid is not None:
            out["id"] = rid
        return out

    def game(self, variant: str, options: dict[str, Any]) -> Game:
        if variant not in VARIANTS:
            raise _RequestError(f"variant: unknown {variant!r} (known: {', '.join(VARIANTS)})")
        key = (variant, json.dumps(options, sort_keys=True))
        if key not in self.games:
            try:
                self.games[key] = make(variant, **options)
            except ValueError as e:
                raise _RequestError(f"options: {e}") from None
        return self.games[key]

    def act(self, req: dict[str, Any], budget: Budget | None = None) -> dict[str, Any]:
        plays = self.variants()
        if req["variant"] in VARIANTS and req["variant"] not in plays:  # an unknown one: self.game says so
            raise _RequestError(f"variant: this bot plays {', '.join(plays)}, not {req['variant']}")
        game = self.game(req["variant"], req.get("options", {}))
        want = req.get("want", [])
        for w in want:
            if w not in WANTS:
                raise _RequestError(f"want: unknown {w!r} (known: {', '.join(WANTS)})")
            if w not in self.capabilities():
                raise _RequestError(f"want: this bot ({self.spec}) cannot give {w!r} "
                                   f"(its capabilities: {', '.join(self.capabilities())})")
        seat = req["seat"]
        hand = tuple(sorted(str(c) for c in req["hand"]))  # one cache per deal and seat: clients interleave
        key = (req["variant"], json.dumps(req.get("options", {}), sort_keys=True), seat, hand)
        cache = self.caches.pop(key, None) or ViewCache()
        self.caches[key] = cache  # the most recent last
        if len(self.caches) > _MAX_CACHES:
            self.caches.pop(next(iter(self.caches)))
        views = rebuild(game, seat, req["hand"], req["history"], cache=cache, budget=budget)
        if views.is_terminal():
            raise _RequestError("history: the deal is over, there is no decision to make")
        state = views.state
        phase = state.phase
        if req["decision"] != phase:
            raise _RequestError(f"decision: the position is a {phase!r} decision, not {req['decision']!r}")
        if views.current_player() != seat:
            raise _RequestError(f"seat: it is seat {views.current_player()}'s turn, not seat {seat}'s")
        return self._answer(views, seat, want, req)

    def _seed(self, req: dict[str, Any]) -> int:
        """A seed from the request's content: the same request gets the same answer."""
        key = {k: req.get(k) for k in ("variant", "options", "seat", "hand", "history")}
        return int.from_bytes(hashlib.sha256(json.dumps(key, sort_keys=True).encode()).digest()[:7], "little")

    def _answer(self, views: Views, seat: int, want: list[str], req: dict[str, Any]) -> dict[str, Any]:
        state = views.state
        env = state._env
        idx = np.array([0], np.int64)
        mask = env.legal_mask()[:1]
        obs = env.observe(np.array([seat]))
        agent = self.agent
        if isinstance(getattr(agent, "rng", None), np.random.Generator):  # a search: seeded by the request
            agent.rng = np.random.default_rng(self._seed(req))
        out: dict[str, Any] = {"type": "action"}
        visits = None
        if "search" in want:
            actions, visits = agent.search(obs, env, idx, mask)
            a = int(actions[0])
        elif callable(getattr(agent, "act_views", None)):  # an external bot (cmd:): sent the seat's view as rebuilt
            a = int(agent.act_views(views))
        else:
            a = int(agent.act(obs, mask, env, idx)[0])
        if not mask[0, a]:
            raise RuntimeError(f"the agent chose an illegal action {a}")
        out["action"] = state.action_to_string(a)
        legal = np.flatnonzero(mask[0])
        if "probabilities" in want:
            p = np.asarray(agent.probabilities(obs, mask, env))[0]
            out["probabilities"] = {state.action_to_string(int(x)): round(float(p[x]), 6) for x in legal}
        if "value" in want:
            out["value"] = float(np.asarray(agent.value(obs, mask))[0])
        if visits is not None:
            v = visits[0]
            out["search"] = {"visits": {state.action_to_string(int(x)): int(v[x]) for x in legal},
                             "iterations": int(v[legal].sum())}
        if "beliefs" in want:
            out["beliefs"] = _belief_answer(agent, obs, req["variant"], seat)
        return out


def _belief_answer(agent: Any, obs: np.ndarray, variant: str, seat: int) -> dict[str, dict[str, float]]:
    """The ``beliefs`` of an answer: for each card the seat cannot see (by name), the probability of each location
    (``seat0`` .. ``seat{N-1}`` by absolute seat, ``stock``, ``discard``), from ``agent.beliefs`` of the seat's one
    observation ``obs`` float32[1, obs_dim]; rounded to :data:`_BELIEF_DIGITS` decimals."""
    spec = get_variant(variant)
    probs = np.asarray(agent.beliefs(obs), np.float64)
    if probs.shape != (1, *belief_shape(spec)):
        raise RuntimeError(f"the agent's beliefs have the shape {list(probs.shape)}, expected "
                           f"{[1, *belief_shape(spec)]}")
    names = absolute_location_names(spec.n_players, seat)
    return {spec.deck.names[c]: {loc: round(float(p), _BELIEF_DIGITS)
                                 for loc, p in zip(names, probs[0, c], strict=True)}
            for c in np.flatnonzero(unseen_cards(obs, spec)[0])}


class Referee:
    """A table for testing frontends and bots (``tarocchi-rl referee``): it owns one deal and, for the seat to
    act, writes the act request that seat's bot must get. Lines in: ``new`` (variant, options, seed),
    ``apply`` (action), ``quit``; lines out: ``turn`` (seat, request), ``over`` (payoffs, record) or
    ``error``."""

    FIELDS = {"new": {"type", "id", "variant", "options", "seed"}, "apply": {"type", "id", "action"},
              "quit": {"type", "id"}}

    def __init__(self) -> None:
        self.views: Views | None = None
        self.requests = 0

    def handle(self, line: str) -> dict[str, Any]:
        rid: Any = None
        try:
            req = _parse_request(line)
            if not isinstance(req, dict):
                raise _RequestError("a request must be a JSON object")
            rid = request_id(req)
            kind = req.get("type")
            if kind not in self.FIELDS:
                raise _RequestError(f"type: expected one of {', '.join(self.FIELDS)}, got {kind!r}")
            extra = sorted(set(req) - self.FIELDS[kind])
            if extra:
                raise _RequestError(f"unknown field {extra[0]!r} in a {kind} request")
            if kind == "quit":
                out: dict[str, Any] = {"type": "bye"}
            elif kind == "new":
                out = self.new(req)
            else:
                out = self.apply(req)
        except ValueError as e:
            out = {"type": "error", "error": str(e)}
        if rid is not None:
            out["id"] = rid
        return out

    def new(self, req: dict[str, Any]) -> dict[str, Any]:
        from .views import core_game

        variant, options, seed = req.get("variant"), req.get("options", {}), req.get("seed", 0)
        if variant not in VARIANTS:
            raise _RequestError(f"variant: unknown {variant!r} (known: {', '.join(VARIANTS)})")
        if not isinstance(options, dict):
            raise _RequestError("options: expected an object")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise _RequestError("seed: expected an integer >= 0")
        game = core_game(variant, options)
        self.views = Views(game, game.spec.dealable_deck(np.random.default_rng(seed)).tolist())
        return self._next()

    def apply(self, req: dict[str, Any]) -> dict[str, Any]:
        v = self.views
        if v is None or v.is_terminal():
            raise _RequestError("no deal in progress: send new first")
        action = req.get("action")
        if not isinstance(action, str):
            raise _RequestError("action: expected an action string such as 'play:KC'")
        a = v.state.string_to_action(action)
        v.apply(a)
        return self._next()

    def _next(self) -> dict[str, Any]:
        from .views import seat_request

        v = self.views
        assert v is not None
        if v.is_terminal():
            return {"type": "over", "payoffs": v.returns(), "record": v.state.to_record()}
        seat = v.current_player()
        self.requests += 1
        return {"type": "turn", "seat": seat, "request": {"type": "act", "id": self.requests,
                                                         **seat_request(v, seat)}}


def play_deal(bot: BotServer, variant: str, seed: int, requests: list[str] | None = None) -> dict[str, Any]:
    """One deal of ``variant`` (``seed``) between a :class:`Referee` and ``bot``, every seat asked, both called in
    this process through their JSON lines: the referee's ``over`` message (its ``payoffs``), or the first answer of
    the bot that is not an action (an error). ``requests``, when given, collects every request line sent."""
    referee = Referee()
    msg = referee.handle(json.dumps({"type": "new", "variant": variant, "seed": seed}))
    while msg["type"] == "turn":
        line = json.dumps(msg["request"])
        if requests is not None:
            requests.append(line)
        answer = bot.handle(line)
        if answer["type"] != "action":
            return answer
        msg = referee.handle(json.dumps({"type": "apply", "action": answer["action"]}))
    return msg


def read_lines(stream: IO[bytes]) -> Iterator[str]:
    """The lines of a byte stream (stdin), read in chunks of at most :data:`tarocchi_rl.bounded.CHUNK` bytes, in
    memory bounded by :data:`MAX_LINE`: a longer line comes cut to ``MAX_LINE + 1`` bytes (its rest is read and
    dropped), for :func:`_parse_request` to refuse; bytes that are not UTF-8 become U+FFFD."""
    read = getattr(stream, "read1", stream.read)  # read1: what is there, up to a chunk, without waiting for more
    chunks = iter(lambda: read(bounded.CHUNK), b"")
    for line in bounded.iter_lines(chunks, MAX_LINE):
        yield line.decode("utf-8", "replace")


def _serve_lines(handle: Callable[[str], dict[str, Any]], lines: Iterable[str], out: IO[str]) -> int:
    """Answer every non-empty line with ``handle`` until it says ``bye`` or the input ends; returns 0."""
    for line in lines:
        if not line.strip():
            continue
        resp = handle(line)
        out.write(json.dumps(resp, separators=(",", ":")) + "\n")
        out.flush()
        if resp.get("type") == "bye":
            break
    return 0


def run_referee() -> int:
    """``tarocchi-rl referee``: serve stdin / stdout."""
    return _serve_lines(Referee().handle, read_lines(sys.stdin.buffer), sys.stdout)


def run_bot(spec: str, make_agent: Callable[[str], Any], name: str | None = None) -> int:
    """``tarocchi-rl bot``: serve stdin / stdout."""
    return _serve_lines(BotServer(spec, make_agent, name).handle, read_lines(sys.stdin.buffer), sys.stdout)
