"""The decisions of recorded games (``imitation.records``), for the warm start to imitate: people's, by default.

Each record of the JSON-lines files (``tarocchi-record/1``, e.g. written by ``tarocchi-rl games export``) is replayed
through the engine by :func:`tarocchi_rl.records.replay` (every field and action checked, the result against the
engine's), and each decision of a chosen seat becomes a sample, as that seat saw it:

| key    | array          | what                                                                          |
|--------|----------------|-------------------------------------------------------------------------------|
| obs    | float32[N, D]  | the acting seat's observation: its own view, never the cards hidden from it   |
| mask   | bool[N, A]     | the legal actions there                                                       |
| action | int64[N]       | the recorded action                                                           |
| ret    | float32[N]     | the deal's final payoff of that seat / ``payoff_scale``                       |
| hidden | float32[N, H]  | ``critic: perfect`` only: the cards hidden from the seat, the critic's input |

The chosen seats (``imitation.record_seats``): ``people`` (default), the seats whose ``stored.seats[i].kind`` is
``person`` (every seat of a record without ``stored``); ``all``, every seat. At most ``imitation.decisions`` samples
are taken, in file order (the files in the order given); reading stops there.

Records are untrusted: the files are read line by line within the bounds of :func:`tarocchi_rl.records.load_lines`,
at most :data:`MAX_IMITATION_RECORDS` records in all, and anything wrong (a line that is not a record, an illegal
action, another variant or other options than the run's, a malformed ``stored``) is a one-line
:class:`~tarocchi_rl.rl.config.ConfigError` naming the file and the line. :func:`check_records` reads them all
before a run writes anything; :func:`record_chunks` reads them again for the warm start. No torch here.
"""

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..bounded import shown
from ..game import State
from ..records import RecordError, load_lines, replay, stored_seat_kinds
from ..variants import VariantSpec
from .config import ConfigError, TrainConfig

MAX_IMITATION_RECORDS = 1_000_000  # records read from imitation.records, all files together
CHUNK_DECISIONS = 8192  # samples per chunk of record_chunks (whole deals; 8192 x 858 floats of mineo: 28 MB)
KEY = "imitation.records"


def check_records(cfg: TrainConfig) -> dict[str, Any]:
    """Read and check every record that the warm start will read (up to ``imitation.decisions`` samples):
    {"files": [...], "records": records read, "decisions": samples}. A ConfigError for a bad record, or when no
    decision is chosen at all."""
    records, decisions = 0, 0
    for _, k in _deal_samples(cfg, observe=False, privileged=False):
        records += 1
        decisions += k
    if decisions == 0:
        whose = "of people " if cfg.imitation.record_seats == "people" else ""
        raise ConfigError(f"{KEY}: no decisions {whose}in {', '.join(cfg.imitation.records)} "
                          f"(imitation.record_seats: {cfg.imitation.record_seats})")
    return {"files": list(cfg.imitation.records), "records": records, "decisions": decisions}


def record_chunks(cfg: TrainConfig, privileged: bool = False,
                  chunk_decisions: int = CHUNK_DECISIONS) -> Iterator[dict[str, np.ndarray]]:
    """The samples of the records (module docstring) in chunks of whole deals of at least ``chunk_decisions``
    samples (the last one fewer), ``hidden`` with ``privileged``; at most ``imitation.decisions`` in all."""
    parts: list[dict[str, np.ndarray]] = []
    size = 0
    for sample, n in _deal_samples(cfg, observe=True, privileged=privileged):
        if n == 0:
            continue
        parts.append(sample)
        size += n
        if size >= chunk_decisions:
            yield _concat(parts)
            parts, size = [], 0
    if parts:
        yield _concat(parts)


def _concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _deal_samples(cfg: TrainConfig, observe: bool, privileged: bool) -> Iterator[tuple[dict[str, np.ndarray], int]]:
    """(samples of one record, their number) for every record read, until ``imitation.decisions`` samples (the last
    record's cut there); without ``observe`` the samples are an empty dict (the records are still checked)."""
    spec = cfg.spec
    options = spec.resolve_options(dict(cfg.options))
    left, read = cfg.imitation.decisions, 0
    for path in cfg.imitation.records:
        try:
            for line, record in load_lines(path):
                read += 1
                if read > MAX_IMITATION_RECORDS:
                    raise ConfigError(f"{KEY}: more than {MAX_IMITATION_RECORDS:,} records (at {path}: line {line})")
                try:
                    sample, n = _samples(record, cfg, spec, options, observe, privileged, left)
                except RecordError as e:
                    raise ConfigError(f"{KEY}: {path}: line {line}: {' '.join(str(e).split())}") from None
                left -= n
                yield sample, n
                if left == 0:
                    return
        except RecordError as e:  # the file: missing, too big, not UTF-8, a line that is not a JSON object
            why = " ".join(str(e).split())
            where = "" if path in why else f"{path}: "  # "cannot read records file PATH" names it already
            raise ConfigError(f"{KEY}: {where}{why}") from None


def _samples(record: dict[str, Any], cfg: TrainConfig, spec: VariantSpec, options: dict[str, Any], observe: bool,
             privileged: bool, most: int) -> tuple[dict[str, np.ndarray], int]:
    """The samples of one record (at most ``most``) and their number; a RecordError for a bad record."""
    if "variant" in record and record["variant"] != cfg.variant:
        raise RecordError(f"a record of variant {shown(record['variant'], 80)}, the run trains {cfg.variant}")
    raw = record.get("options") or {}
    try:
        played = spec.resolve_options(dict(raw)) if isinstance(raw, dict) else None
    except (ValueError, TypeError):  # replay names what is wrong with them
        played = None
    if played is not None and played != options:
        raise RecordError(f"options {shown(played, 80)} differ from the run's {shown(options, 80)}")
    kinds = stored_seat_kinds(record, spec.n_players)
    if cfg.imitation.record_seats == "all" or kinds is None:
        chosen = [True] * spec.n_players
    else:
        chosen = [kind == "person" for kind in kinds]
    seats: list[int] = []
    rows: dict[str, list[np.ndarray]] = {"obs": [], "mask": [], "hidden": []}
    actions: list[int] = []

    def take(state: State, action: int) -> None:
        seat = state.current_player()
        if not chosen[seat] or len(actions) == most:
            return
        seats.append(seat)
        actions.append(action)
        if observe:
            rows["obs"].append(state.observation(seat))  # the seat's own view
            rows["mask"].append(state.legal_mask())
            if privileged:
                rows["hidden"].append(state.privileged_observation(seat))

    final = replay(record, on_action=take)
    n = len(actions)
    if not observe or n == 0:
        return {}, n
    assert cfg.payoff_scale is not None  # resolved by TrainConfig.validate
    payoffs = np.asarray(final.returns(), np.float64)
    sample = {"obs": np.stack(rows["obs"]), "mask": np.stack(rows["mask"]), "action": np.asarray(actions, np.int64),
              "ret": (payoffs[seats] / cfg.payoff_scale).astype(np.float32)}
    if privileged:
        sample["hidden"] = np.stack(rows["hidden"])
    return sample, n


