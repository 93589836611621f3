"""A deal of one person against bots (``start``, ``challenge``) outlives its connection for the seat grace, as a
shared table's seat does (:mod:`~tarocchi_rl.web.shared`): a page that reloads, or a connection that drops, takes it
back with ``{"type": "resume", "code", "token"}``.

The first answer of a deal carries ``resume: {code, token}`` (a code of :data:`~tarocchi_rl.web.shared.CODE_ALPHABET`
and a secret token of the deal alone; the page keeps them in its tab's sessionStorage). When the connection closes
before the deal ends, the deal is *parked*: it still counts among its address's tables, and after
:attr:`~tarocchi_rl.web.app.ServerConfig.seat_grace` seconds (``serve --seat-grace``) nobody came back, it is
abandoned (stored so) and its place given back. ``resume`` with the code and the token takes it back from any
connection (the answer: a ``state`` with every move of the deal so far, as at a shared table's seat taken back); a
connection still playing it is closed with :data:`TAKEN_CLOSE` and told why (another tab of the same browser took
it). A wrong code or token costs the address one of its tries, as at the shared tables. The deal's stored person
(its anonymous id) stays the one of the connection that dealt it.
"""

import asyncio
import contextlib
import hmac
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .shared import CODE_ALPHABET, CODE_LENGTH, MAX_TOKEN_TEXT, TOKEN_BYTES, Conn, new_code, normalize_code
from .table import Table

if TYPE_CHECKING:  # pragma: no cover
    from .shared import SharedTables

__all__ = ["OwnTable", "OwnTables", "TAKEN_CLOSE", "TAKEN_TEXT"]

TAKEN_CLOSE = 4002  # close code of a connection whose deal another connection took back with its token
TAKEN_TEXT = "your deal was taken back by another connection (a reload, or another tab): it goes on there"


@dataclass(eq=False)
class OwnTable:
    """A deal of one person: its code and token, the table, the address whose table it counts as, the connection
    playing it (None: parked, waiting for its person) and the timer that abandons a parked deal."""

    code: str
    token: str
    table: Table
    client: str
    conn: Conn | None
    timer: asyncio.TimerHandle | None = None


class OwnTables:
    """The deals of one person that can be taken back, by code (module docstring). Used from the event loop only;
    ``shared`` lends its clocks, its guesses' buckets and its server."""

    def __init__(self, shared: "SharedTables") -> None:
        self.shared = shared
        self.by_code: dict[str, OwnTable] = {}
        self.by_table: dict[int, OwnTable] = {}  # id(table) -> its entry

    def add(self, table: Table, conn: Conn, client: str) -> dict[str, str]:
        """A new deal of ``conn``: its ``resume`` object (code and token)."""
        code = new_code()
        while code in self.by_code:
            code = new_code()
        entry = OwnTable(code, secrets.token_urlsafe(TOKEN_BYTES), table, client, conn)
        self.by_code[code] = self.by_table[id(table)] = entry
        if not getattr(table, "person_id", ""):  # stored under the person who dealt it, whoever takes it back
            table.person_id = conn.person  # type: ignore[attr-defined]
        return {"code": entry.code, "token": entry.token}

    def end(self, table: Table | None) -> None:
        """The deal ended (over, replaced by another, a bot failed): it can no longer be taken back."""
        entry = self.by_table.pop(id(table), None) if table is not None else None
        if entry is not None:
            self.by_code.pop(entry.code, None)
            if entry.timer is not None:
                entry.timer.cancel()

    def holds(self, table: Table, conn: Conn | None) -> bool:
        """Whether ``conn`` plays ``table`` (False once another connection took it back)."""
        entry = self.by_table.get(id(table))
        return entry is None or conn is None or entry.conn is conn

    def leave(self, table: Table | None, conn: Conn, client: str) -> None:
        """``conn`` closed while holding ``table``: the deal waits for its person (parked), or, when it cannot be
        taken back or another connection took it already, it leaves this address's tables (abandoned unless
        another connection plays it)."""
        host = self.shared.host
        if table is None:
            return
        entry = self.by_table.get(id(table))
        if entry is not None and entry.conn is conn and not table.is_over():
            entry.conn, entry.client = None, client
            entry.timer = asyncio.get_running_loop().call_later(self.shared.grace, self._expire, entry)
            return  # still counted among the address's tables
        host.table_count.change(client, True, False)
        if entry is None or entry.conn is conn:
            self.end(table)
            host.abandon(table)

    async def take(self, msg: dict[str, Any], conn: Conn, client: str, replacing: bool) -> Table:
        """``resume``: the deal of ``code`` whose token is ``token``, now ``conn``'s (ValueError: a wrong code or
        token, which costs the address a try; or a parked deal of another address that would take ``client`` past
        its tables, unless it replaces a deal of ``conn``'s: ``replacing``)."""
        shared = self.shared
        shared.check_guesses(client)
        code = normalize_code(msg.get("code"))
        if code is None:
            raise shared.wrong(client, f"code: expected {CODE_LENGTH} characters of {CODE_ALPHABET}")
        entry = self.by_code.get(code)
        if entry is None:
            raise shared.wrong(client, f"no deal to take back has the code {code} (it ended, or was away too long)")
        token = msg.get("token")
        if not (isinstance(token, str) and token.isascii() and len(token) <= MAX_TOKEN_TEXT
                and hmac.compare_digest(entry.token, token)):
            raise shared.wrong(client, f"wrong token for the deal {code}")
        old = entry.conn
        if old is conn:
            raise ValueError(f"you play the deal {code} already")
        if old is None and entry.client != client and not replacing:  # one more table for this address
            counts = shared.host.table_count
            if counts.held[client] + counts.starting[client] >= counts.per_client:
                raise ValueError(f"your address already holds {counts.per_client} tables (the most per client): "
                                 f"close one first to take back the deal {code}")
        if old is None:  # parked: from its old address's tables to this connection's (counted by the caller)
            if entry.timer is not None:
                entry.timer.cancel()
                entry.timer = None
            shared.host.table_count.change(entry.client, True, False)
        elif old.websocket is not None:  # still played by another connection (a reload before its close arrived)
            await _close(old.websocket)
        entry.conn, entry.client = conn, client
        return entry.table

    def _expire(self, entry: OwnTable) -> None:
        """A parked deal nobody took back within the grace: abandoned, its place given back."""
        entry.timer = None
        if entry.conn is None and self.by_code.get(entry.code) is entry:
            self.end(entry.table)
            self.shared.host.table_count.change(entry.client, True, False)
            self.shared.host.abandon(entry.table)

    def close_all(self) -> None:
        """At shutdown: the parked deals abandoned (the others end with their connections)."""
        for entry in list(self.by_code.values()):
            if entry.conn is None:
                if entry.timer is not None:
                    entry.timer.cancel()
                self.shared.host.abandon(entry.table)
        self.by_code.clear()
        self.by_table.clear()


async def _close(websocket: Any) -> None:
    """Tell a connection that its deal was taken back, and close it."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(websocket.send_text(f'{{"type":"error","fatal":true,"taken":true,'
                                                   f'"error":"{TAKEN_TEXT}"}}'), 2.0)
        await asyncio.wait_for(websocket.close(code=TAKEN_CLOSE), 2.0)
