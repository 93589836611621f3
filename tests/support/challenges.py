"""A small duplicate challenge over the server, shared by the challenge tests: its file, a server that serves it,
and a deal of it played over a WebSocket."""

import json
from pathlib import Path

from tarocchi_rl.web.app import ServerConfig, create_app

ROOT = Path(__file__).resolve().parents[2]
FRENCH3 = ROOT / "benchmarks" / "deals" / "french3.jsonl.gz"
FIRST = 3  # the challenge's deals: lines 4 and 5 of the frozen french3 set


def small_challenge(path: Path, **change) -> Path:
    """A file with one french3 challenge of 2 deals: the person at seat 1, heuristic opponents, bot:french3."""
    item = {"name": "small", "variant": "french3", "deals": {"file": str(FRENCH3), "first": FIRST, "count": 2},
            "seat": 1, "opponents": ["heuristic", "heuristic"], "bot": "bot:french3", **change}
    path.write_text(json.dumps({"challenges": [item]}))
    return path


def server(tmp_path, file: Path | None = None, **kw):
    """The app over a fresh SQLite store in ``tmp_path``, serving ``file`` (default: :func:`small_challenge`)."""
    return create_app(ServerConfig(warmup=False, db=f"sqlite:///{tmp_path / 'g.db'}", builtin_challenges=False,
                                   challenges=str(file or small_challenge(tmp_path / "c.json")), **kw))


def play(ws, msg: dict, moves: list[str] | None = None) -> tuple[dict, list[dict]]:
    """Start a challenge's deal and play it: the record's moves (``moves``) or the first legal ones; (over, the
    state messages)."""
    ws.send_json(msg)
    m, states = ws.receive_json(), []
    while m["type"] == "state":
        states.append(m)
        t = m["table"]
        ws.send_json({"type": "act", "action": moves[t["steps"]] if moves else t["legal"][0]["action"]})
        m = ws.receive_json()
    assert m["type"] == "over", m
    return m, states
