"""The lobby cannot be crowded out (issue 52): an address lists at most ``LOBBY_PER_CLIENT`` tables, a table whose
people left is not listed from that moment (it still waits the seat grace for them, unlisted), and the listing
gives every address its oldest table first, oldest first: a burst of tables from a few addresses, or from more
addresses than the list has places, never pushes an older table off it.

Several addresses are played by calling the shared tables directly (the TestClient has one address); one test goes
through ``/ws`` and ``GET /v1/tables``."""

import asyncio
import time

import pytest

from tarocchi_rl.web.app import ServerConfig, create_app
from tarocchi_rl.web.shared import LOBBY_PER_CLIENT, LOBBY_SIZE, Conn
from tests.support.web_client import LocalClient

SEATS = ["human", "heuristic", "human", "heuristic"]  # two people: a table that waits for the second
OPEN = {"type": "open", "variant": "mineo", "seats": SEATS, "lobby": True}


def run(scenario, **config) -> None:
    """``scenario(shared)`` on an event loop, the server's shared tables given (closed at the end)."""
    server = create_app(ServerConfig(warmup=False, max_tables=2000, **config)).state.server

    async def main() -> None:
        try:
            await scenario(server.shared)
        finally:
            server.shared.close_all()

    asyncio.run(main())


def open_from(shared, address: str, lobby: bool = True) -> tuple[Conn, str]:
    conn = Conn(address, f"person-{address}")
    return conn, shared.open({**OPEN, "lobby": lobby}, conn)["code"]


def listed(shared) -> list[str]:
    return [t["code"] for t in shared.lobby()]


def test_an_address_lists_at_most_its_share_of_tables():
    async def scenario(shared):
        codes = [open_from(shared, "10.0.0.1")[1] for _ in range(LOBBY_PER_CLIENT)]
        with pytest.raises(ValueError, match=f"lobby: your address has {LOBBY_PER_CLIENT} tables waiting"):
            open_from(shared, "10.0.0.1")
        unlisted = open_from(shared, "10.0.0.1", lobby=False)[1]  # a table shared by its code is still allowed
        other = open_from(shared, "10.0.0.2")[1]  # another address has its own share
        assert set(listed(shared)) == {*codes, other} and unlisted not in listed(shared)

    run(scenario)


@pytest.mark.parametrize("addresses", [5, LOBBY_SIZE + 30])
def test_a_burst_of_tables_never_pushes_an_older_table_off_the_list(addresses):
    async def scenario(shared):
        _, genuine = open_from(shared, "10.1.0.1")
        await asyncio.sleep(0.01)  # (the burst comes later)
        burst = [open_from(shared, f"10.2.{k // 250}.{k % 250}")[1] for k in range(addresses)
                 for _ in range(LOBBY_PER_CLIENT)]
        shown = listed(shared)
        assert genuine in shown and len(shown) == min(LOBBY_SIZE, 1 + len(burst))
        owners = [shared.tables[c].owner for c in shown]
        first = owners[:min(len(shown), addresses + 1)]
        assert len(set(first)) == len(first)  # every address's first table before any address's second

    run(scenario, max_tables_per_client=LOBBY_PER_CLIENT + 1)


def test_a_table_whose_people_left_is_not_listed_but_waits_for_them():
    async def scenario(shared):
        conn, code = open_from(shared, "10.3.0.1")
        assert listed(shared) == [code]
        joined = shared.tables[code].seats[0].token
        shared.leave(conn)  # the opener's connection closed
        assert listed(shared) == [] and code in shared.tables  # unlisted at once; the table waits the grace
        back = Conn("10.3.0.1", "person-back")
        assert (await shared.join({"type": "join", "code": code, "token": joined}, back))["type"] == "joined"
        assert listed(shared) == [code]  # the person is back: listed again

    run(scenario, seat_grace=60.0)


def test_the_lobby_drops_a_table_when_its_opener_disconnects():
    with LocalClient(create_app(ServerConfig(warmup=False, seat_grace=60.0))) as client:
        with client.websocket_connect("/ws") as ws:
            ws.send_json(OPEN)
            code = ws.receive_json()["code"]
            assert [t["code"] for t in client.get("/v1/tables").json()["tables"]] == [code]
        deadline = time.monotonic() + 30  # far less than the grace (60 s): the connection's end is what counts
        while client.get("/v1/tables").json()["tables"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.get("/v1/tables").json() == {"tables": []}
        assert client.get("/v1/health").json()["tables"] == 1  # the table itself still waits for its person
