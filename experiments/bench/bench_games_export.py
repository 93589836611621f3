"""How long ``tarocchi-rl games export`` takes on many stored games, and whether its file replays (issue 33: 10,000
games in under 10 s).

    python experiments/bench/bench_games_export.py [--games 10000] [--distinct 500] [--db sqlite:///FILE] [--json]
                                             [--out FILE]

A fresh SQLite file (a temporary one unless ``--db`` names a URL whose database is empty) is filled through the
store, as the server writes it (:meth:`tarocchi_rl.web.store.Store.write`): ``--games`` finished games of the five
variants in turn, each with its seats (two people, bots in the others) and every move, whose records are
``--distinct`` deals played to the end by random legal moves (reused in turn: the export's cost is per game, not
per distinct deal). Then ``tarocchi-rl games export --db URL --out FILE.jsonl`` runs as a subprocess, timed from
start to exit (the figure), and ``tarocchi-rl replay FILE.jsonl`` checks every exported record (exit 0 and one
record a game). Printed: one JSON object (``--json``; else it and a summary), also written to ``--out``.
"""

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from tarocchi_rl.game import make
from tarocchi_rl.variants import VARIANTS
from tarocchi_rl.web.store import Finished, Moves, NewGame, open_store

TARGET_SECONDS = 10.0  # issue 33: 10,000 games exported in under this
WRITE_BATCH = 200  # games a transaction while filling the database


def random_deal(variant: str, seed: int) -> tuple[dict[str, Any], list[int]]:
    """A deal of ``variant`` played to its end by random legal moves (seeded): its record and the seat of each
    of its moves."""
    state = make(variant).new_state(seed)
    rng = np.random.default_rng(seed)
    movers = []
    while not state.is_terminal():
        movers.append(int(state.current_player()))
        state.apply(int(rng.choice(state.legal_actions())))
    return state.to_record(), movers


def game_writes(deal: tuple[dict[str, Any], list[int]], at: dt.datetime) -> list[Any]:
    """The writes of one finished game of ``deal`` (:func:`random_deal`): its game and seats (people at seats 0
    and 1, the heuristic in the others), every move, its record."""
    record, movers = deal
    gid = uuid.uuid4().hex
    seats = tuple(("person", f"p-{k:012x}") if k < 2 else ("bot", "heuristic")
                  for k in range(make(record["variant"]).num_players))
    rows = tuple((seat, action, 1000) for seat, action in zip(movers, record["actions"], strict=True))
    return [NewGame(gid, record["variant"], record.get("options", {}), False, at, seats),
            Moves(gid, 0, rows), Finished(gid, record, at)]


def fill(url: str, games: int, distinct: int) -> float:
    """Write ``games`` finished games to the store at ``url`` (module docstring); the seconds it took."""
    t0 = time.perf_counter()
    deals = [random_deal(VARIANTS[k % len(VARIANTS)], k) for k in range(distinct)]
    store = open_store(url)
    try:
        at = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        batch: list[Any] = []
        for k in range(games):
            batch += game_writes(deals[k % distinct], at + dt.timedelta(seconds=k))
            if len(batch) >= 3 * WRITE_BATCH:
                store.write(batch)
                batch = []
        if batch:
            store.write(batch)
    finally:
        store.close()
    return time.perf_counter() - t0


def cli(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    """``tarocchi-rl ARGS`` in a subprocess: the finished process and its wall seconds."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", "import sys; from tarocchi_rl.cli import main; sys.exit(main())",
                           *args], capture_output=True, text=True, timeout=600)
    return done, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--distinct", type=int, default=500, help="distinct random deals behind the games")
    ap.add_argument("--db", default=None, help="an empty database's URL (default: a temporary SQLite file)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    if a.games < 1 or a.distinct < 1:
        print("error: --games and --distinct must be >= 1", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        url = a.db or f"sqlite:///{Path(tmp) / 'games.db'}"
        fill_s = fill(url, a.games, min(a.distinct, a.games))
        out_file = Path(tmp) / "games.jsonl"
        exported, export_s = cli("games", "export", "--db", url, "--out", str(out_file))
        lines = out_file.read_text().count("\n") if out_file.exists() else 0
        replayed, replay_s = cli("replay", str(out_file))
    result = {"games": a.games, "distinct": a.distinct, "fill_seconds": round(fill_s, 2),
              "export": {"exit": exported.returncode, "seconds": round(export_s, 2), "lines": lines,
                         "stderr": exported.stderr[-500:]},
              "replay": {"exit": replayed.returncode, "seconds": round(replay_s, 2), "stderr": replayed.stderr[-500:]},
              "targets": {"export_under_s": TARGET_SECONDS,
                          "met": exported.returncode == 0 and lines == a.games and export_s < TARGET_SECONDS
                          and replayed.returncode == 0}}
    text = json.dumps(result, indent=1)
    if a.out:
        Path(a.out).write_text(text + "\n")
    print(text)
    if not a.json:
        print(f"{a.games:,} games: export {export_s:.2f} s (exit {exported.returncode}, {lines:,} lines), replay "
              f"{replay_s:.2f} s (exit {replayed.returncode}); target export < {TARGET_SECONDS:g} s: "
              f"{'met' if result['targets']['met'] else 'NOT met'}")
    return 0 if exported.returncode == 0 and replayed.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
