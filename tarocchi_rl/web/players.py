"""Who plays a duplicate challenge's deal, for ``tarocchi-rl games stats`` (docs/web.md, "Who is one person").

A person is a **player token** the server gave: 32 hex digits, an id (16) and its signature (16: HMAC-SHA256 with
the database's key, ``server_secrets``, shared by every process serving it). The page keeps it in the browser and
sends it as ``player``; the games are stored under ``t-`` + the id (the signature is never stored, so an export
does not let anyone play under another's token). ``games stats`` counts a token's first start of each deal
(finished, not practice); the server also marks as practice, when it starts, a deal that

- has no valid token and cannot get one: a client without a token gets a new one with its deal, at most
  :data:`NEW_PLAYERS_BURST` at once per address (an IPv6 client: its /:data:`IPV6_PREFIX`), then
  :data:`NEW_PLAYERS_PER_DAY` a day, and one per connection;
- was started before on the same connection, under any token (its first ``over`` showed every hand);
- was started before under the same token in this process (the stats see the other processes' and the earlier
  servers' starts: the token's first start counts, whatever came after);
- was started before from the same address (an IPv6 client: its /64) in this process in the last
  :data:`REPLAY_WINDOW` seconds, under another token: a second browser (or a cleared one) on the same machine, or
  another person behind the same router, who may have seen the hands; the address is kept in memory only, never
  stored.

What a hostile client cannot do: count a deal twice under one token, on one connection or from one address (within
the window, in one process), make new people faster than its addresses' budgets allow, or play under a token it was
not given. What nobody can stop without accounts: a client with many addresses (or much time) makes that many people,
and each can play a deal once knowing it from another's play or from the public deal files of the built-in
challenges. The cost of the address rule: two people behind one address (a household, a carrier's shared address)
count once per deal, the first to start it.
"""

import hashlib
import hmac
import ipaddress
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from .limits import TokenBucket

__all__ = ["Admission", "IPV6_PREFIX", "NEW_PLAYERS_BURST", "NEW_PLAYERS_PER_DAY", "PERSON_PREFIX", "PlayerTokens",
           "REPLAY_WINDOW", "address_group"]

_ID_DIGITS = 16  # hex digits of a token's id (64 random bits) ...
_SIGNATURE_DIGITS = 16  # ... then of its signature (the first 64 bits of the HMAC)
_TOKEN = re.compile(f"[0-9a-f]{{{_ID_DIGITS + _SIGNATURE_DIGITS}}}")  # a player token
PERSON_PREFIX = "t-"  # a stored person of a challenge: t- + the token's id
NEW_PLAYERS_BURST = 4  # new tokens one address gets at once (a household's browsers) ...
NEW_PLAYERS_PER_DAY = 4.0  # ... and then per day
IPV6_PREFIX = 64  # an IPv6 client's budget is its /64's (one subscriber's usual block)
REPLAY_WINDOW = 7 * 86400.0  # seconds an address's starts of a deal make another token's practice
_TRACKED = 10_000  # addresses, and tokens, a process remembers (the least recent forgotten)
_SIGNED = b"tarocchi-player-token:"  # what a token's signature signs, before its id
T = TypeVar("T")


def address_group(client: str) -> str:
    """The address whose budget of new tokens a client spends: itself, or its /64 for IPv6."""
    try:
        ip = ipaddress.ip_address(client)
    except ValueError:
        return client
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/{IPV6_PREFIX}", strict=False))
    return str(ip)


@dataclass(frozen=True)
class Admission:
    """How a challenge's deal is stored: ``person`` (``t-`` + the token's id; "": the connection's own id),
    ``token`` (the player token to send back; None: none), ``counted`` (False: practice) and ``why`` not; ``group``:
    the client's address group (:func:`address_group`)."""

    person: str
    token: str | None
    counted: bool
    why: str | None = None
    group: str = ""

    @property
    def token_id(self) -> str | None:
        return None if self.token is None else self.token[:_ID_DIGITS]


@dataclass
class _Connection:
    """What one connection has had: the token it was given (None: none) and the deals it started."""

    issued: str | None = None
    started: set[tuple[str, int]] = field(default_factory=set)


class PlayerTokens:
    """The tokens of one server process (module docstring). Used on the event loop only."""

    def __init__(self, key: bytes | None = None) -> None:
        self.key = key or secrets.token_bytes(32)  # without a database: tokens of this process only
        self._budgets: OrderedDict[str, TokenBucket] = OrderedDict()
        self._started: OrderedDict[str, set[tuple[str, int]]] = OrderedDict()  # token id -> deals
        self._by_address: OrderedDict[str, dict[tuple[str, int], float]] = OrderedDict()  # group -> deal -> when
        self._connections: WeakKeyDictionary[Any, _Connection] = WeakKeyDictionary()

    def _sign(self, token_id: str) -> str:
        return hmac.new(self.key, _SIGNED + token_id.encode(), hashlib.sha256).hexdigest()[:_SIGNATURE_DIGITS]

    def issue(self) -> str:
        """A new token."""
        token_id = secrets.token_hex(_ID_DIGITS // 2)
        return token_id + self._sign(token_id)

    def verify(self, token: Any) -> str | None:
        """The id of a token this server signed; None for anything else."""
        if not isinstance(token, str) or not _TOKEN.fullmatch(token):
            return None
        token_id, signature = token[:_ID_DIGITS], token[_ID_DIGITS:]
        return token_id if hmac.compare_digest(signature, self._sign(token_id)) else None

    def _new_player(self, group: str) -> bool:
        """Whether the address group ``group`` may have one more new token (spent if so)."""
        bucket = _recent(self._budgets, group, lambda: TokenBucket(NEW_PLAYERS_PER_DAY / 86400.0, NEW_PLAYERS_BURST))
        if bucket.level() < 1.0:
            return False
        bucket.spend(1.0)
        return True

    def _why_not(self, seen: "_Connection", token: str, group: str, deal: tuple[str, int]) -> str | None:
        """Why a deal started with ``token`` is practice (None: it counts)."""
        if deal in seen.started:
            return "you started this deal before on this connection: practice"
        if deal in self._started.get(token[:_ID_DIGITS], ()):
            return "you started this deal before: practice"
        when = self._by_address.get(group, {}).get(deal)
        if when is not None and time.monotonic() - when < REPLAY_WINDOW:
            return "this deal was started from your address before (another browser?): practice"
        return None

    def admit(self, player: Any, client: str, conn: Any, deal: tuple[str, int]) -> Admission:
        """How the deal ``deal`` (challenge key, index) that a connection (``conn``, from ``client``) starts with
        ``player`` (the message's; anything) is stored: module docstring. Nothing is remembered as started yet
        (:meth:`started`, once the deal is shown)."""
        seen = self._connections.get(conn) if conn is not None else None
        if seen is None:
            seen = _Connection()
            if conn is not None:
                self._connections[conn] = seen
        group = address_group(client)
        token = player if self.verify(player) is not None else seen.issued
        if token is None and self._new_player(group):
            token = seen.issued = self.issue()
        if token is None:
            return Admission("", None, False, "no player token, and your address has had its new ones for today: "
                                              "practice", group)
        why = self._why_not(seen, token, group, deal)
        return Admission(PERSON_PREFIX + token[:_ID_DIGITS], token, why is None, why, group)

    def started(self, admission: Admission, conn: Any, deal: tuple[str, int]) -> None:
        """The deal was shown to the connection (its first answer): later starts of it there, under the same token
        or from the same address are practice."""
        seen = self._connections.get(conn) if conn is not None else None
        if seen is not None:
            seen.started.add(deal)
        _recent(self._by_address, admission.group, dict)[deal] = time.monotonic()
        if admission.token_id is not None:
            _recent(self._started, admission.token_id, set).add(deal)


def _recent(table: "OrderedDict[str, T]", key: str, new: Callable[[], T]) -> T:
    """``table[key]`` (made by ``new`` when missing), now the most recent; the least recent dropped beyond
    :data:`_TRACKED`."""
    value = table.pop(key, None)
    table[key] = value = new() if value is None else value
    if len(table) > _TRACKED:
        table.popitem(last=False)
    return value
