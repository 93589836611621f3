"""Duplicate challenges, defined: a fixed list of deals that a person plays at one seat against fixed opponent bots,
and that a challenged bot plays offline from the same seat against the same opponents (:mod:`.challenges`).

A challenge is a name, a variant and its options, K deals (decks: int16[K, C] dense card ids in deal order), the
person's seat, the opponents' bots at the other seats and the challenged bot. Its **key** (32 hex digits) is a
digest of all of that (the bots' specs, the files of a bot directory, the tarocchi-rl version): the stored bot
results belong to the key, so a challenge redefined under the same name, or a bot replaced, gets results of its own.

The server offers one built-in challenge per variant with a shipped bot (:func:`builtin_challenges`:
``VARIANT-8``, the first 8 deals of the frozen evaluation set ``benchmarks/deals/VARIANT.jsonl.gz``, shipped as
``web/challenge_deals/``; the person at seat 0, heuristic opponents, the shipped bot ``bot:VARIANT`` challenged)
and those of ``serve --challenges FILE`` (:func:`load_challenges`; JSON, or YAML for ``.yaml`` / ``.yml``)::

    challenges:
      - name: mineo-hard             # letters, digits, - and _ (at most 40)
        variant: mineo
        options: {}                  # optional: the variant's defaults
        deals: {file: deals/mineo.jsonl.gz, first: 0, count: 8}   # a deals file (relative: to this file) ...
        # deals: [{hands: [[...], ...], stock: [...]}, ...]       # ... or the deals themselves
        seat: 0                      # the person's seat (default 0)
        opponents: [heuristic, heuristic, strong=bot:mineo]        # the other seats, in seat order
        bot: bot:mineo               # the challenged bot (NAME=SPEC to show it as NAME)

A bot is shown to clients by name: ``NAME=SPEC``, or a bare spec without a path (``heuristic``, ``bot:mineo``).
The opponents must play deterministically (the heuristic, or a network played greedily: ``bot:``, ``onnx:``): then
a person who plays the moves the challenged bot played meets the same answers, move for move, as the bot did. A bad
file is one ValueError naming the file, the challenge and the field.
"""

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import __version__, bounded
from ..agents.registry import agent_kinds
from ..arena import check_plays, read_deals_file
from ..bounded import shown
from ..game import make
from ..play import make_bot
from ..policies import HeuristicAgent
from ..shipped import shipped_bot, shipped_bots
from ..variants import VARIANTS, get_variant
from .bots import named_entry
from .table import check_options

__all__ = ["Challenge", "ChallengeBot", "MAX_CHALLENGES", "MAX_DEALS", "builtin_challenges", "is_deterministic",
           "load_challenges"]

_MAX_FILE_BYTES = 1 << 20  # a challenges file
MAX_CHALLENGES = 100  # challenges a server offers
MAX_DEALS = 64  # deals of one challenge
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")  # a challenge's name
_SHOWN_SPEC = re.compile(r"[a-z]+(:[A-Za-z0-9_-]+)?")  # a bare spec shown as it is (no path, no arguments)
BUILTIN_DEALS = 8
DEALS_DIR = Path(__file__).resolve().parent / "challenge_deals"  # the built-ins' deals: benchmarks/deals, first 8
_MAX_BOT_FILES_BYTES = 1 << 28  # a bot directory hashed into a challenge's key
FIELDS = ("name", "variant", "options", "deals", "seat", "opponents", "bot")


@dataclass(frozen=True)
class ChallengeBot:
    """A bot of a challenge: its display name (what clients see) and its spec (the operator's)."""

    name: str
    spec: str


@dataclass(frozen=True, eq=False)
class Challenge:
    """One challenge (module docstring). ``opponents[k]`` is the bot at seat k (None at the person's ``seat``)."""

    name: str
    variant: str
    options: dict[str, Any]
    decks: NDArray[np.int16]
    seat: int
    opponents: tuple[ChallengeBot | None, ...]
    bot: ChallengeBot
    key: str

    @property
    def deals(self) -> int:
        return len(self.decks)

    def players(self) -> list[str]:
        """Per seat: ``human`` (the person's) or the opponent's display name."""
        return ["human" if b is None else b.name for b in self.opponents]

    def info(self) -> dict[str, Any]:
        """What a client is told (never a deal's cards, a spec or a path)."""
        return {"name": self.name, "variant": self.variant, "options": dict(self.options), "deals": self.deals,
                "seat": self.seat, "players": self.players(), "bot": self.bot.name, "key": self.key}

    def deal_seed(self, deal: int) -> int:
        """The seed of deal ``deal`` (its bots' seeds are drawn from it, at the table and offline alike)."""
        digest = hashlib.blake2b(f"{self.key}:{deal}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "little") >> 1


def is_deterministic(agent: Any) -> bool:
    """Whether an agent's move is a function of what its seat has seen: the heuristic, a network played greedily,
    a composed bot of such parts."""
    if isinstance(agent, HeuristicAgent):
        return True
    parts = getattr(agent, "parts", None)
    if isinstance(parts, list) and parts:
        return all(is_deterministic(p) for p in parts)
    return getattr(agent, "greedy", None) is True


def _bot(entry: Any, where: str) -> ChallengeBot:
    if not isinstance(entry, str) or not entry.strip() or len(entry) > 500:
        raise ValueError(f"{where}: expected a bot spec (NAME=SPEC or a spec such as heuristic), got {shown(entry)}")
    name, spec = named_entry(entry)
    if name is None:
        if not _SHOWN_SPEC.fullmatch(spec):
            raise ValueError(f"{where}: give {spec[:60]!r} a display name (NAME=SPEC): clients never see a spec "
                             "with a path or arguments")
        name = spec
    return ChallengeBot(name, spec)




def _spec_files(spec: str) -> list[Path]:
    """The bot directory of a ``bot:`` or ``onnx:`` spec (its files go into the key); none for other kinds."""
    kind_name, _, text = spec.partition(":")
    kind = agent_kinds().get(kind_name.strip().lower())
    if kind is None or kind.name not in ("bot", "onnx"):
        return []
    values = kind.parse(text)
    root = shipped_bot(values["name"]) if kind.name == "bot" else Path(values["path"])
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []


def _fingerprint(spec: str) -> str:
    """A digest of the files a spec loads (a bot directory), bounded by :data:`_MAX_BOT_FILES_BYTES`."""
    h, size = hashlib.sha256(), 0
    for p in _spec_files(spec):
        size += p.stat().st_size
        if size > _MAX_BOT_FILES_BYTES:
            raise ValueError(f"bot {spec[:60]!r}: its directory holds more than {_MAX_BOT_FILES_BYTES:,} bytes")
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def challenge_key(variant: str, options: dict[str, Any], decks: NDArray[np.int16], seat: int,
                  opponents: Sequence[ChallengeBot | None], bot: ChallengeBot) -> str:
    """32 hex digits naming everything that decides the bot's results (module docstring)."""
    specs = [None if b is None else b.spec for b in opponents]
    text = json.dumps({"variant": variant, "options": options, "decks": np.asarray(decks).tolist(), "seat": seat,
                       "opponents": specs, "bot": bot.spec, "version": __version__,
                       "files": {s: _fingerprint(s) for s in {bot.spec, *(x for x in specs if x)}}},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _make_challenge(name: str, variant: str, options: Any, decks: NDArray[np.int16], seat: int,
                   opponents: Sequence[ChallengeBot | None], bot: ChallengeBot, where: str) -> Challenge:
    """A checked challenge (ValueError naming ``where``)."""
    try:
        resolved = check_options(variant, options)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    return Challenge(name, variant, resolved, np.asarray(decks, np.int16), seat, tuple(opponents), bot,
                     challenge_key(variant, resolved, decks, seat, opponents, bot))


def builtin_challenges() -> list[Challenge]:
    """One challenge per variant with a shipped bot (the bot challenged): ``VARIANT-8`` (module docstring)."""
    out = []
    for v in (v for v in VARIANTS if v in shipped_bots()):
        n = get_variant(v).n_players
        decks = read_deals_file(DEALS_DIR / f"{v}.jsonl", v)[:BUILTIN_DEALS]
        heuristic = ChallengeBot("heuristic", "heuristic")
        out.append(_make_challenge(f"{v}-{BUILTIN_DEALS}", v, {}, decks, 0, [None] + [heuristic] * (n - 1),
                                  ChallengeBot(f"bot:{v}", f"bot:{v}"), f"built-in challenge {v}"))
    return out


def _read_file(path: str) -> Any:
    """The file's content: JSON, or YAML for ``.yaml`` / ``.yml``, within :data:`_MAX_FILE_BYTES`."""
    import yaml

    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_FILE_BYTES + 1)
    except OSError as e:
        raise ValueError(f"--challenges {path}: cannot read it: {e.strerror or e}") from None
    if len(data) > _MAX_FILE_BYTES:
        raise ValueError(f"--challenges {path}: larger than {_MAX_FILE_BYTES:,} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"--challenges {path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        if path.lower().endswith((".yaml", ".yml")):
            return yaml.safe_load(text)
        return bounded.loads(text, what=f"--challenges {path}")
    except yaml.YAMLError as e:
        raise ValueError(f"--challenges {path}: not YAML: {' '.join(str(e).split())[:200]}") from None
    except bounded.BoundedInputError as e:
        raise ValueError(str(e)) from None


def load_challenges(path: str, taken: Sequence[str] = ()) -> list[Challenge]:
    """The challenges of a file (module docstring), every bot built once and checked on its variant; ``taken``:
    names already offered (the built-ins). Anything wrong is a ValueError naming the file and the challenge."""
    doc = _read_file(path)
    items = doc.get("challenges") if isinstance(doc, dict) and set(doc) == {"challenges"} else None
    if not isinstance(items, list) or not items:
        raise ValueError(f"--challenges {path}: expected an object {{\"challenges\": [...]}} with at least one")
    if len(items) > MAX_CHALLENGES:
        raise ValueError(f"--challenges {path}: more than {MAX_CHALLENGES} challenges")
    names = {n.lower() for n in taken}
    out = []
    for k, item in enumerate(items):
        where = f"--challenges {path}: challenge {k + 1}"
        ch = _challenge(item, where, os.path.dirname(os.path.abspath(path)))
        if ch.name.lower() in names:
            raise ValueError(f"{where}: the name {ch.name!r} is taken (names are case-insensitive)")
        names.add(ch.name.lower())
        out.append(ch)
    return out


def _challenge(item: Any, where: str, base: str) -> Challenge:
    if not isinstance(item, dict):
        raise ValueError(f"{where}: expected an object with {', '.join(FIELDS)}")
    extra = sorted(str(x) for x in set(item) - set(FIELDS))
    if extra:
        raise ValueError(f"{where}: unknown field {extra[0][:40]!r} (known: {', '.join(FIELDS)})")
    name = item.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(f"{where}: name: 1-40 letters, digits, - and _, got {shown(name)}")
    where = f"{where} ({name})"
    variant = item.get("variant")
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise ValueError(f"{where}: variant: unknown {shown(variant)} (known: {', '.join(VARIANTS)})")
    n = get_variant(variant).n_players
    seat = item.get("seat", 0)
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < n:
        raise ValueError(f"{where}: seat: the person's seat, 0..{n - 1}, got {shown(seat)}")
    opponents = item.get("opponents")
    if not isinstance(opponents, list) or len(opponents) != n - 1:
        raise ValueError(f"{where}: opponents: a list of {n - 1} bots, the seats other than {seat} in order")
    bots = [_bot(b, f"{where}: opponents[{j}]") for j, b in enumerate(opponents)]
    seated: list[ChallengeBot | None] = [*bots[:seat], None, *bots[seat:]]
    bot = _bot(item.get("bot"), f"{where}: bot")
    decks = _decks(item.get("deals"), variant, where, base)
    ch = _make_challenge(name, variant, item.get("options"), decks, seat, seated, bot, where)
    _check_bots(ch, where)
    return ch


def _decks(deals: Any, variant: str, where: str, base: str) -> NDArray[np.int16]:
    """The decks of ``deals``: a deals file ``{file, first?, count?}`` or a list of ``{hands, stock}``."""
    if isinstance(deals, dict):
        extra = sorted(str(x) for x in set(deals) - {"file", "first", "count"})
        if extra or not isinstance(deals.get("file"), str):
            raise ValueError(f"{where}: deals: {{file, first?, count?}} or a list of {{hands, stock}}")
        first, count = deals.get("first", 0), deals.get("count", MAX_DEALS)
        for key, value in (("first", first), ("count", count)):
            if not isinstance(value, int) or isinstance(value, bool) or value < (0 if key == "first" else 1):
                raise ValueError(f"{where}: deals.{key}: expected an integer >= {0 if key == 'first' else 1}")
        if count > MAX_DEALS:
            raise ValueError(f"{where}: deals.count: at most {MAX_DEALS} deals")
        file = os.path.join(base, deals["file"])
        try:
            decks = read_deals_file(file, variant)
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        if first >= len(decks):
            raise ValueError(f"{where}: deals.first: {first}, but {deals['file']} has {len(decks)} deals")
        return decks[first : first + count]
    if not isinstance(deals, list) or not deals:
        raise ValueError(f"{where}: deals: {{file, first?, count?}} or a list of {{hands, stock}}")
    if len(deals) > MAX_DEALS:
        raise ValueError(f"{where}: deals: at most {MAX_DEALS} deals")
    game = make(variant)
    out = []
    for k, d in enumerate(deals):
        if not isinstance(d, dict) or set(d) != {"hands", "stock"}:
            raise ValueError(f"{where}: deals[{k}]: expected {{hands, stock}}")
        try:
            state = game.state_from_deal(d["hands"], d["stock"])
        except (ValueError, TypeError) as e:
            raise ValueError(f"{where}: deals[{k}]: {' '.join(str(e).split())[:200]}") from None
        out.append(state._env.state.deck[0, : game.deck.n_cards].copy())
    return np.array(out, np.int16)


def _check_bots(ch: Challenge, where: str) -> None:
    """Every bot of a file's challenge built once (a bad spec fails here) and the opponents deterministic."""
    for k, b in enumerate(ch.opponents):
        if b is None:
            continue
        agent = make_bot(b.spec, 0, f"{where}: opponents (seat {k})")
        if not is_deterministic(agent):
            raise ValueError(f"{where}: the opponent at seat {k} ({b.name}) does not play deterministically: use "
                             "the heuristic or a network played greedily, so that the person and the bot meet the "
                             "same answers")
        _plays(agent, ch, f"{where}: opponents (seat {k})")
    _plays(make_bot(ch.bot.spec, 0, f"{where}: bot"), ch, f"{where}: bot")


def _plays(agent: Any, ch: Challenge, where: str) -> None:
    try:
        check_plays(agent, ch.variant, ch.options)
    except (ValueError, OSError, RuntimeError) as e:
        raise ValueError(f"{where}: cannot play {ch.variant}: {' '.join(str(e).split())[:200]}") from None
