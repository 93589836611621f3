"""A resumable arena: each finished block (one pair of agents x one chunk of deals) kept in a JSON-lines file.

The leaderboard's search tables take hours on a small machine. With a blocks file the arena appends every block
it finishes, and a rerun with the same file plays only the blocks it lacks: an interrupted run loses at most the
blocks in flight, and the same result comes out as from one uninterrupted run (every block starts its two agents
afresh, from seeds of its own: :func:`block_seed`). A line of the file:

| field      | type                              | meaning                                                  |
|------------|-----------------------------------|----------------------------------------------------------|
| format     | ``"tarocchi-arena-block/1"``      |                                                          |
| key        | object (below)                    | everything the block's result depends on                 |
| scores     | [float[k], float[k]]              | agent A's and agent B's score on each of the k deals     |
| declarer   | [stats A, stats B]                | contract -> {"declared": n, "made": n}                   |
| bids       | [stats A, stats B]                | auction word -> n                                        |
| games      | int                               | games played (k x seatings)                              |
| seconds    | float                             | time it took                                             |

The key: the package version, variant, resolved options, both agent specs, their fingerprints (digests of the
files a spec names: :func:`tarocchi_rl.agents.specs.agent_fingerprint`), their seeds, the number of seatings,
the index of the chunk's first deal and the SHA-256 of its decks (int16). A line whose key differs from every
block of the run is ignored (another run's block); a line that is not a block is an error naming the file and the
line, never skipped: the file is read as untrusted input (JSON only). Only a last line cut short (no newline: the
run was killed while appending it) is dropped, with a line on stderr, and its block played again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import zlib
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import __version__, bounded

FORMAT = "tarocchi-arena-block/1"
_KEY_FIELDS = ("version", "variant", "options", "agents", "fingerprints", "seeds", "seatings", "first_deal",
              "deals_sha256")
MAX_LINE = 1 << 22  # bytes; a block of 1,000 deals is about 50 kB
_MAX_FILE = 1 << 28  # bytes of a blocks file (a leaderboard table's 96 blocks of 100 deals are about 0.5 MB)
BLOCK_DEALS = 100  # deals per block of a resumable search arena: a block is minutes, not an hour


def block_seed(seed: int, spec: str, first_deal: int) -> int:
    """The seed an agent starts a block with: from the arena's seed, the agent's spec and the chunk (not from the
    agent's place in the list, so that adding an agent to a table keeps the other pairs' blocks)."""
    ss = np.random.SeedSequence([seed, zlib.crc32(spec.encode()), first_deal])
    return int(ss.generate_state(1, np.uint32)[0])


def block_key(variant: str, options: dict[str, Any], specs: tuple[str, str], fingerprints: tuple[str, str],
              seeds: tuple[int, int], seatings: int, first_deal: int,
              decks: NDArray[np.integer[Any]]) -> dict[str, Any]:
    """The key of a block (module docstring); decks int[k, C], the chunk's deals."""
    digest = hashlib.sha256(np.ascontiguousarray(decks, dtype="<i2").tobytes()).hexdigest()
    return {"version": __version__, "variant": variant, "options": options, "agents": list(specs),
            "fingerprints": list(fingerprints), "seeds": list(seeds), "seatings": int(seatings),
            "first_deal": int(first_deal), "deals_sha256": digest}


def _canon(key: dict[str, Any]) -> str:
    return json.dumps(key, sort_keys=True, separators=(",", ":"))


class BlockFile:
    """The blocks of a JSON-lines file (module docstring): :meth:`get` a finished block, :meth:`add` a new one."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.blocks: dict[str, dict[str, Any]] = {}
        if os.path.isdir(self.path):
            raise ValueError(f"blocks file {self.path}: is a directory")
        if os.path.exists(self.path):
            self._read()
        else:
            parent = os.path.dirname(os.path.abspath(self.path))
            if not os.path.isdir(parent):
                raise ValueError(f"blocks file {self.path}: no directory {parent}")
            if not os.access(parent, os.W_OK):
                raise ValueError(f"blocks file {self.path}: cannot create it in {parent} (not writable)")

    def _read(self) -> None:
        """Every block of the file, line by line within :data:`_MAX_FILE` and :data:`MAX_LINE` (a ValueError naming
        the line otherwise); a last line without its newline is cut off the file (module docstring)."""
        what = f"blocks file {self.path}"
        complete = 0  # bytes of the complete lines read so far
        try:
            lines = bounded.iter_lines(bounded.iter_chunks(self.path, _MAX_FILE, what=what), MAX_LINE)
            for n, raw in enumerate(lines, 1):
                where = f"{what} line {n}"
                if len(raw) > MAX_LINE:
                    raise ValueError(f"{where}: longer than {MAX_LINE} bytes")
                if not raw.endswith(b"\n"):  # the last line, cut short: an append the run did not finish
                    self._drop_last_line(complete)
                    break
                complete += len(raw)
                if raw.strip():
                    rec = bounded.loads(raw, what=where)
                    _check_block(rec, where)
                    self.blocks[_canon(rec["key"])] = rec
        except bounded.BoundedInputError as e:
            raise ValueError(str(e)) from None

    def _drop_last_line(self, complete: int) -> None:
        """Cut the file to its first ``complete`` bytes (its complete lines), saying so on stderr."""
        print(f"blocks file {self.path}: its last line is incomplete (a block being written when the run stopped): "
              "dropped, the block is played again", file=sys.stderr)
        try:
            with open(self.path, "r+b") as f:
                f.truncate(complete)
        except OSError as e:
            raise ValueError(f"blocks file {self.path}: cannot cut its last line: {e.strerror or e}") from None

    def get(self, key: dict[str, Any]) -> dict[str, Any] | None:
        """The recorded block with this key, or None."""
        return self.blocks.get(_canon(key))

    def add(self, key: dict[str, Any], scores: NDArray[np.float64], declarer: list[dict[str, Any]],
            bids: list[dict[str, int]], games: int, seconds: float) -> None:
        """Append a finished block (scores float[2, k]) as one line, flushed to disk."""
        rec = {"format": FORMAT, "key": key, "scores": [[float(x) for x in row] for row in scores],
               "declarer": declarer, "bids": bids, "games": int(games), "seconds": float(seconds)}
        _check_block(rec, f"blocks file {self.path} (new block)")
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.blocks[_canon(key)] = rec


def _is_count(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _check_block(rec: Any, where: str) -> None:
    """A ValueError naming ``where`` and the field unless ``rec`` is a block (module docstring)."""
    if not isinstance(rec, dict) or rec.get("format") != FORMAT:
        raise ValueError(f"{where}: not a {FORMAT} record")
    key = rec.get("key")
    if not isinstance(key, dict) or sorted(key) != sorted(_KEY_FIELDS):
        raise ValueError(f"{where}: key must have the fields {', '.join(_KEY_FIELDS)}")
    scores = rec.get("scores")
    ok = (isinstance(scores, list) and len(scores) == 2 and all(isinstance(r, list) for r in scores)
          and len(scores[0]) == len(scores[1]) > 0
          and all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                  for r in scores for x in r))
    if not ok:
        raise ValueError(f"{where}: scores must be two equally long lists of finite numbers")
    decl, bids = rec.get("declarer"), rec.get("bids")
    if not (isinstance(decl, list) and len(decl) == 2 and all(
            isinstance(d, dict) and all(isinstance(c, str) and isinstance(v, dict) and sorted(v) == ["declared", "made"]
                                        and all(_is_count(n) for n in v.values()) for c, v in d.items())
            for d in decl)):
        raise ValueError(f"{where}: declarer must be two objects contract -> {{declared, made}} (counts)")
    if not (isinstance(bids, list) and len(bids) == 2 and all(
            isinstance(b, dict) and all(isinstance(w, str) and _is_count(n) for w, n in b.items()) for b in bids)):
        raise ValueError(f"{where}: bids must be two objects word -> count")
    if not _is_count(rec.get("games")):
        raise ValueError(f"{where}: games must be a count")
    s = rec.get("seconds")
    if not (isinstance(s, int | float) and not isinstance(s, bool) and math.isfinite(s) and s >= 0):
        raise ValueError(f"{where}: seconds must be a number >= 0")
