"""Game records, format ``tarocchi-record/1``: one JSON object per game.

```json
{"format": "tarocchi-record/1", "variant": "mineo", "options": {"early_solo": true},
 "deal": {"hands": [["T20", "KC", "..."], ["..."], ["..."], ["..."]], "stock": ["5S", "T3", "QD"]},
 "actions": ["bid:pass", "bid:pass", "bid:pass", "bid:pass", "bid:call", "...", "discard:5D", "play:KC"],
 "result": {"payoffs": [3, -1, -1, -1]}}
```

``deal.hands[s]`` lists seat s's cards in deal order (Mineo: the first five are the early-round cards);
``deal.stock`` is the monte / talon / chien. :func:`replay` checks everything and raises
:class:`RecordError` naming the field or the action index and the reason.

A record exported from the games' database (``tarocchi-rl games export``) also holds ``stored``: the game's id,
its UTC times and who sat where, ``"seats": [{"kind": "person" | "bot", "name": "..."}, ...]`` one per seat
(:func:`stored_seat_kinds` reads the kinds). :func:`replay` ignores it.
"""

import os
from collections.abc import Callable, Iterator
from typing import Any

from . import bounded
from .bounded import shown
from .game import RECORD_FORMAT, Game, State
from .variants import get_variant

FORMAT = RECORD_FORMAT
MAX_RECORD_BYTES = 1 << 20  # bytes of one record (file or text); a real record is under 2 kB
_MAX_RECORDS_FILE_BYTES = 1 << 31  # bytes of a JSON-lines file of records (a million games is about 2 GB)
_SEAT_KINDS = ("person", "bot")  # stored.seats[i].kind of an exported record


class RecordError(ValueError):
    """A malformed or inconsistent record. ``action_index`` is set when an action is at fault."""

    def __init__(self, message: str, action_index: int | None = None) -> None:
        super().__init__(message)
        self.action_index = action_index


_PATH_SHOWN = 1024  # characters of a file path shown in an error (a path is named whole, a value cut at 80)


def load(path_or_text: str | os.PathLike[str]) -> dict[str, Any]:
    """Parse a record from a file path or a JSON string (a string that starts with ``{``).

    Everything that goes wrong is a :class:`RecordError`: an argument that is neither a string nor a path (an
    int is never taken for a file descriptor), a file that cannot be read, is not UTF-8 or is over
    :data:`MAX_RECORD_BYTES` (a stream that does not end within :data:`tarocchi_rl.bounded.READ_SECONDS` too),
    text that is not JSON, is nested too deeply or holds an integer of too many digits."""
    if not isinstance(path_or_text, (str, os.PathLike)):
        raise RecordError(f"a record is read from a file path or JSON text, got {type(path_or_text).__name__}")
    text = os.fspath(path_or_text)
    if not isinstance(text, str):  # a bytes path
        raise RecordError(f"a record is read from a file path or JSON text, got {shown(text, 80)}")
    try:
        if not text.lstrip().startswith("{"):
            text = bounded.read_text(text, MAX_RECORD_BYTES, what=f"record file {shown(path_or_text, _PATH_SHOWN)}")
        record = bounded.loads(text, max_bytes=MAX_RECORD_BYTES)
    except bounded.BoundedInputError as e:
        raise RecordError(str(e)) from None
    if not isinstance(record, dict):
        raise RecordError(f"a record must be a JSON object, got {type(record).__name__}")
    return record


def load_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The records of a JSON-lines file (``games.jsonl`` of an arena, ``tarocchi-rl games export``): (line
    number, record) for every line that is not blank, read line by line within bounds
    (:data:`_MAX_RECORDS_FILE_BYTES`, :data:`MAX_RECORD_BYTES` a line). A :class:`RecordError` naming the line
    (``line K: ...``) or the file."""
    where = os.fspath(path)
    try:
        chunks = bounded.iter_chunks(path, _MAX_RECORDS_FILE_BYTES, what=f"records file {shown(where, _PATH_SHOWN)}")
        for k, record in bounded.iter_json_lines(chunks, MAX_RECORD_BYTES, lambda k: f"line {k}"):
            if not isinstance(record, dict):
                raise RecordError(f"line {k}: a record must be a JSON object, got {type(record).__name__}")
            yield k, record
    except bounded.BoundedInputError as e:
        raise RecordError(str(e)) from None


def replay(record: dict[str, Any], require_finished: bool = True,
           on_action: Callable[[State, int], object] | None = None) -> State:
    """Rebuild the game of a record, checking every field and every action.

    Returns the final State. Raises RecordError on a wrong format, unknown variant or option, a malformed
    deal (wrong hand size, unknown or duplicated card), an unknown or illegal action (naming its index), a
    record that ends before the deal is over (when ``require_finished``), or a ``result`` that disagrees
    with the engine. ``on_action(state, action)``, when given, sees every action (its id) once it is checked
    legal, with the state before it is applied (e.g. to read the acting seat's observation and legal mask).
    """
    if not isinstance(record, dict):
        raise RecordError(f"a record must be a JSON object, got {type(record).__name__}")
    if record.get("format") != FORMAT:
        raise RecordError(f"format must be {FORMAT!r}, got {shown(record.get('format'), 80)}")
    for key in ("variant", "deal", "actions"):
        if key not in record:
            raise RecordError(f"missing field {key!r}")
    variant = record["variant"]
    if not isinstance(variant, str):
        raise RecordError(f"variant must be a string, got {shown(variant, 80)}")
    options = record.get("options") or {}
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        raise RecordError(f"options must be an object, got {shown(options, 80)}")
    try:
        game = Game(variant, **options)
    except (ValueError, TypeError) as e:
        raise RecordError(str(e)) from None
    deal = record["deal"]
    if not isinstance(deal, dict) or "hands" not in deal or "stock" not in deal:
        raise RecordError("deal must be an object with 'hands' and 'stock'")
    try:
        state = game.state_from_deal(deal["hands"], deal["stock"])
    except ValueError as e:
        raise RecordError(str(e)) from None
    actions = record["actions"]
    if not isinstance(actions, list):
        raise RecordError("actions must be a list of strings")
    for k, text in enumerate(actions):
        if not isinstance(text, str):
            raise RecordError(f"action {k}: must be a string, got {shown(text, 80)}", k)
        if state.is_terminal():
            raise RecordError(f"action {k} ({text}): the deal is already over", k)
        try:
            a = state.string_to_action(text)
        except ValueError as e:
            raise RecordError(f"action {k}: {e}", k) from None
        legal = state.legal_actions()
        if a not in legal:
            names = ", ".join(state.action_to_string(x) for x in legal)
            raise RecordError(
                f"action {k} ({text}) is illegal for seat {state.current_player()} in phase {state.phase}; "
                f"legal: {names}",
                k,
            )
        if on_action is not None:
            on_action(state, a)
        state.apply(a)
    if not state.is_terminal():
        if require_finished:
            raise RecordError(
                f"the record ends after {len(actions)} actions before the deal is over "
                f"(seat {state.current_player()} to act in phase {state.phase})"
            )
        return state
    result = record.get("result")
    if result is not None:
        if not isinstance(result, dict):
            raise RecordError(f"result must be an object, got {shown(result, 80)}")
        payoffs = result.get("payoffs")
        if payoffs is not None:
            if not isinstance(payoffs, list) or not all(isinstance(x, int) and not isinstance(x, bool)
                                                        for x in payoffs):
                raise RecordError(f"result.payoffs must be a list of integers, one per seat, got {shown(payoffs, 80)}")
            if payoffs != state.returns():
                raise RecordError(f"result.payoffs {shown(payoffs, 80)} disagree with the engine: {state.returns()}")
    return state


def stored_seat_kinds(record: dict[str, Any], num_players: int) -> list[str] | None:
    """The kind of each seat (one of :data:`_SEAT_KINDS`) of an exported record's ``stored.seats``; None for a
    record without ``stored``. A :class:`RecordError` when ``stored`` is not an object whose ``seats`` lists
    ``num_players`` objects with a known ``kind``."""
    stored = record.get("stored")
    if stored is None:
        return None
    if not isinstance(stored, dict):
        raise RecordError(f"stored must be an object, got {shown(stored, 80)}")
    seats = stored.get("seats")
    if not isinstance(seats, list) or len(seats) != num_players:
        raise RecordError(f"stored.seats must list the {num_players} seats, got {shown(seats, 80)}")
    kinds = []
    for k, seat in enumerate(seats):
        kind = seat.get("kind") if isinstance(seat, dict) else None
        if kind not in _SEAT_KINDS:
            raise RecordError(f"stored.seats[{k}].kind must be one of {', '.join(_SEAT_KINDS)}, got {shown(kind, 80)}")
        kinds.append(kind)
    return kinds


def describe_outcome(out: dict[str, Any], variant: str) -> list[str]:
    """Human-readable lines for an outcome in the one schema (:data:`tarocchi_rl.variants.OUTCOME_FIELDS`):
    contract and declarer, payoffs, card points per side, itemised bonuses, the family's details."""
    spec = get_variant(variant)
    role = spec.declarer_role
    head = f"contract: {out['contract']}" if out.get("contract") is not None else "no contract"
    if out.get("declarer") is not None:
        head += f", {role} seat {out['declarer']}"
    lines = [head, f"payoffs: {out['payoffs']}"]
    for k, seats in enumerate(out.get("sides", [])):
        points = out["card_points"][k]
        bonuses = [f"{b['name']} {b['points']}" for b in out.get("bonuses", []) if b["side"] == k]
        lines.append(f"side {k} seats {seats}: {points:g} card points"
                     + (f"; {spec.rules.BONUS_UNIT}: {', '.join(bonuses)}" if bonuses else ""))
    details = out.get("details") or {}
    if details:
        lines.append("details: " + ", ".join(f"{k} {v}" for k, v in details.items()))
    return lines
