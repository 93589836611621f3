"""Observation layouts: each variant's flat float32 observation is a list of named sections.

One observation kernel (:mod:`tarocchi_rl.engine.observation`) writes the shared sections of every variant, a
family's hook its own; a variant chooses its sections and their order, and the offsets travel in
``RuleTables.obs`` (-1 for a section it lacks).
Seats are *relative* to the viewer: r = (seat - viewer) mod N, r = 0 is the viewer. Card planes are indexed
by dense card id (:mod:`tarocchi_rl.cards`). Only what the viewer may know is encoded.

| section       | size          | content                                                                  |
|---------------|---------------|--------------------------------------------------------------------------|
| hand          | C             | own hand                                                                 |
| played        | N x C         | cards played so far by relative seat r (current trick included)          |
| trick         | N x C         | the current trick: the card of relative seat r                           |
| stock         | C             | the stock, once shown to all                                             |
| discard       | C             | own discard (the declarer / dealer / taker only)                         |
| shown         | C             | discarded trumps (shown to all)                                          |
| shown_by      | N x C         | cards shown by relative seat r (a declaration)                           |
| bids          | N x W         | auction word per relative seat (W: the family's bid words)               |
| declarer      | N             | declarer / taker, relative seat                                          |
| contract      | K             | contract one-hot (K: the family's contracts)                             |
| called        | C (or fewer)  | the card called to name a partner, one-hot by dense id (the first ones)  |
| points        | N             | card points in the tricks won by relative seat r / deck total            |
| tricks_won    | N             | tricks won by relative seat r / tricks per deal                          |
| trick_num     | T + 1         | tricks completed, one-hot                                                |
| phase         | 11            | phase one-hot, a phase in its slot (:mod:`tarocchi_rl.core.phases`)      |
| leader        | N             | leader of the current trick, relative seat                               |
| seat          | N             | the viewer's own seat (absolute: 0 speaks first, N-1 deals)              |

**A family's own sections** (its calls and declarations) sit among these where its layout puts them: they take
the entries ``S_FAMILY + k`` of the offsets (k: their position in the family's ``FAMILY_SECTIONS``), the family
module's table says what they hold, and its ``observe_sections`` hook writes them.

**The privileged observation** (:func:`tarocchi_rl.engine.observation.privileged_batch`): the hidden part of
the deal, which only the perfect-information critic of training reads (``critic: perfect`` in
:mod:`tarocchi_rl.rl.config`; never the policy, never an exported bot). Seats are relative to the viewer as above;
its size is (N + 2) x C floats (:func:`build_privileged_layout`). Every variant has a stock and a discard.

| section | size  | content                                                                        |
|---------|-------|--------------------------------------------------------------------------------|
| hands   | N x C | the cards relative seat r holds now (r = 0: the viewer's own hand), and those  |
|         |       | of its share of the deal not handed out yet (Mineo's early round)              |
| stock   | C     | the monte / talon / chien as dealt, shown to all or not                        |
| discard | C     | the declarer's discard so far, whoever views                                   |
"""

from collections.abc import Sequence

import numpy as np

from .phases import PHASE_SLOTS

SECTIONS = (
    "hand", "played", "trick", "stock", "discard", "shown", "shown_by", "bids", "declarer", "contract", "called",
    "points", "tricks_won", "trick_num", "phase", "leader", "seat",
)
(S_HAND, S_PLAYED, S_TRICK, S_STOCK, S_DISCARD, S_SHOWN, S_SHOWN_BY, S_BIDS, S_DECLARER, S_CONTRACT, S_CALLED,
 S_POINTS, S_TRICKS_WON, S_TRICK_NUM, S_PHASE, S_LEADER, S_SEAT) = range(len(SECTIONS))
S_FAMILY = len(SECTIONS)  # + k: a family's own section k (its FAMILY_SECTIONS[k])
MAX_FAMILY_SECTIONS = 8
N_SECTIONS = S_FAMILY + MAX_FAMILY_SECTIONS


def section_sizes(n_players: int, n_cards: int, bid_words: int, n_contracts: int, n_tricks: int) -> dict[str, int]:
    """The size of each shared section (a family adds its own sections' sizes, and may narrow ``called``)."""
    n, c = n_players, n_cards
    return {
        "hand": c, "played": n * c, "trick": n * c, "stock": c, "discard": c, "shown": c, "shown_by": n * c,
        "bids": n * bid_words, "declarer": n, "contract": n_contracts, "called": c, "points": n, "tricks_won": n,
        "trick_num": n_tricks + 1, "phase": PHASE_SLOTS, "leader": n, "seat": n,
    }


#: a row of a layout table: (offset, size, section name)
Row = tuple[int, int, str]
Rows = list[Row]


def build_layout(names: Sequence[str], sizes: dict[str, int],
                 family_sections: Sequence[str] = ()) -> tuple[np.ndarray, int, Rows]:
    """Offsets (int64[N_SECTIONS], -1 where absent), total size, and the rows of the layout table, for the sections
    ``names`` in order (shared ones, and the family's own ``family_sections``, entry S_FAMILY + k each)."""
    if len(family_sections) > MAX_FAMILY_SECTIONS:
        raise ValueError(f"a family has at most {MAX_FAMILY_SECTIONS} sections of its own, got {len(family_sections)}")
    offsets = np.full(N_SECTIONS, -1, np.int64)
    rows: Rows = []
    k = 0
    for name in names:
        if name in SECTIONS:
            offsets[SECTIONS.index(name)] = k
        elif name in family_sections:
            offsets[S_FAMILY + list(family_sections).index(name)] = k
        else:
            raise ValueError(f"unknown observation section {name!r} (shared: {', '.join(SECTIONS)}; the family's: "
                             f"{', '.join(family_sections) or 'none'})")
        rows.append((k, sizes[name], name))
        k += sizes[name]
    return offsets, k, rows


def layout_table(rows: Sequence[Row]) -> str:
    """The layout as a Markdown table (offset, size, section)."""
    lines = ["| offset | size | section |", "|---|---|---|"]
    lines += [f"| {o} | {s} | {name} |" for o, s, name in rows]
    return "\n".join(lines)


PRIVILEGED_SECTIONS = ("hands", "stock", "discard")
PV_HANDS, PV_STOCK, PV_DISCARD = range(len(PRIVILEGED_SECTIONS))


def build_privileged_layout(n_players: int, n_cards: int) -> tuple[np.ndarray, int, Rows]:
    """The privileged observation's offsets (int64[3], indexed by ``PV_*``), total size and layout-table rows."""
    sizes = {"hands": n_players * n_cards, "stock": n_cards, "discard": n_cards}
    offsets = np.zeros(len(PRIVILEGED_SECTIONS), np.int64)
    rows: Rows = []
    k = 0
    for j, name in enumerate(PRIVILEGED_SECTIONS):
        offsets[j] = k
        rows.append((k, sizes[name], name))
        k += sizes[name]
    return offsets, k, rows


#: the sections that are card planes (C floats each, ``played``, ``trick`` and ``shown_by``: one per relative seat),
#: which the ``cards`` network (:mod:`tarocchi_rl.rl.network`) reads card by card
CARD_SECTIONS = ("hand", "played", "trick", "stock", "discard", "shown", "shown_by")


def card_planes(rows: Sequence[Row], n_cards: int) -> tuple[np.ndarray, np.ndarray]:
    """A layout's card planes and the rest, from its rows (offset, size, name): (plane_index int64[P * C], the
    observation index of card c of plane p at p * C + c; rest_index int64[R], every other entry, in order)."""
    planes: list[np.ndarray] = []
    rest: list[np.ndarray] = []
    for offset, size, name in rows:
        index = np.arange(offset, offset + size, dtype=np.int64)
        (planes if name in CARD_SECTIONS else rest).append(index)
    plane_index = np.concatenate(planes) if planes else np.zeros(0, np.int64)
    assert plane_index.size % n_cards == 0, "a card section is not a whole number of planes"
    return plane_index, np.concatenate(rest) if rest else np.zeros(0, np.int64)
