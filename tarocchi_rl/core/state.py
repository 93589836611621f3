"""The batch state: B games held as four arrays (a NamedTuple, so kernels take it as one argument).

Few, wide arrays rather than one array per field: Numba passes a NamedTuple of dozens of arrays so slowly
that a kernel spent most of its time copying it (measured: 200 ns against 1 ns per call). Fields are
columns, named by the constants below. Their offsets and these tables come from one declaration per array
(``META_LAYOUT``, ``CARDS_LAYOUT``; :mod:`tarocchi_rl.core.offsets`): a table is ``LAYOUT.table()`` pasted,
which ``tests/core/test_layouts.py`` checks.

``meta`` : int32[B, N_META], one row per game

| offset   | column(s)          | field            | meaning                                                           |
|----------|--------------------|------------------|-------------------------------------------------------------------|
| 0        | PHASE              | phase            | variant's PHASE code; each variant has a 'done' phase             |
| 1        | CUR                | seat to act      |                                                                   |
| 2        | DECLARER           | declarer         | soloist / caller / taker, -1 none                                 |
| 3        | CONTRACT           | contract         | variant's contract code, 0 none                                   |
| 4        | MULT               | stake multiplier |                                                                   |
| 5        | CALLED             | called card      | the card called to name a partner (dense id), -1 none             |
| 6        | PARTNER            | partner seat     | -1 none                                                           |
| 7        | STOCK_SHOWN        | 0/1              | the monte / chien has been shown to all                           |
| 8        | DISCARDS_LEFT      | count            |                                                                   |
| 9        | TURN               | counter          | position within a round of turns                                  |
| 10       | TRICK_LEADER       | seat             |                                                                   |
| 11       | TRICK_COUNT        | cards in trick   |                                                                   |
| 12       | LED_SUIT           | 0..3, 4 trump    | -1 while unset (nothing or only EX played)                        |
| 13       | BEST_SEAT          | seat             | who wins the trick so far                                         |
| 14       | BEST_TRUMP         | 0/1              | ... with a trump                                                  |
| 15       | BEST_BIT           | bit              | ... the winning card's bit (strength order)                       |
| 16       | TRICK_NUM          | tricks completed |                                                                   |
| 17       | EX_PLAYER          | seat             | who played EX (-1: not yet)                                       |
| 18       | EX_TRICK_WINNER    | seat             | winner of the trick EX was played to                              |
| 19       | EX_LAST            | 0/1              | EX went by the last-trick rule (tables' P_EX_LAST: winner, camp)  |
| 20       | LAST_WINNER        | seat             | winner of the last trick                                          |
| 21 .. 23 | (unused)           |                  |                                                                   |
| 24 .. 27 | (unused)           |                  |                                                                   |
| 28 .. 31 | BID_WORD + s       | per seat         | word in the auction (-1 not spoken)                               |
| 32 .. 35 | SIDE + s           | per seat         | 0 declarer's side, 1 opponents                                    |
| 36 .. 39 | COMMIT + k         | 4 slots          | variant's commitments                                             |
| 40 .. 43 | TRICK + s          | per seat         | card played to the current trick (-1 none)                        |
| 44 .. 47 | TRICKS_WON + s     | per seat         |                                                                   |
| 48 .. 51 | POINTS + k         | per side / seat  | card points (the family's unit) per side; per seat where each is  |
|          |                    |                  | a side                                                            |
| 52 .. 67 | BONUS + 8*side + k | per side         | itemised bonuses (variant's J_* slots)                            |
| 68 .. 71 | PAYOFF + s         | per seat         | the deal's payoffs, set when done                                 |
| 72 .. 79 | FAMILY_META + k    | the family's own | each family module names the columns it uses (its aliases)        |

``cards`` : uint64[B, N_SETS, 2], two-word card sets (layout in :mod:`tarocchi_rl.cards`)

| offset   | row          | set                                                           |
|----------|--------------|---------------------------------------------------------------|
| 0 .. 3   | HAND + s     | cards held by seat s                                          |
| 4 .. 7   | PLAYED + s   | cards seat s has played (current trick too)                   |
| 8 .. 11  | WON + s      | cards seat s has won in tricks                                |
| 12       | STOCK        | the monte / talon / chien                                     |
| 13       | DISCARDED    | the declarer's discard                                        |
| 14       | SHOWN        | cards shown to all (discarded trumps)                         |
| 15 .. 18 | SHOWN_BY + s | cards seat s showed (a declaration)                           |
| 19       | (unused)     |                                                               |
| 20 .. 23 | EXCLUDED + s | cards seat s provably does not hold, known to all (see below) |

``EXCLUDED + s`` is public knowledge kept by the kernels, for determinization (:mod:`tarocchi_rl.search`):
a seat that does not follow suit lacks the suit led; one that neither follows nor trumps lacks every trump;
one that plays a trump below the best one where overtrumping is compulsory lacks the trumps above it; the
seats other than the declarer lack the shown stock; cards a seat shows are lacked by the others; a declarer who
discarded a trump holds no discardable card once the discard is over. A family's kernels add what its own
calls and declarations prove (each family module says which). Cards only leave hands during play, so an
exclusion stays true.

``deck`` : int16[B, 78], the shuffled deal (dense ids; hands by seat in blocks, then the stock).
``rng`` : uint64[B], each game's SplitMix64 state.
"""

from typing import NamedTuple

import numpy as np

from .offsets import Layout

_MAX_PLAYERS = 4
_MAX_CARDS = 78

# The two layouts, declared once: the offsets, N_META, N_SETS and the docstring's tables come from these rows.
META_LAYOUT = Layout("meta", ("column(s)", "field", "meaning"), [
    ("PHASE", 1, "phase", "variant's PHASE code; each variant has a 'done' phase"),
    ("CUR", 1, "seat to act"),
    ("DECLARER", 1, "declarer", "soloist / caller / taker, -1 none"),
    ("CONTRACT", 1, "contract", "variant's contract code, 0 none"),
    ("MULT", 1, "stake multiplier"),
    ("CALLED", 1, "called card", "the card called to name a partner (dense id), -1 none"),
    ("PARTNER", 1, "partner seat", "-1 none"),
    ("STOCK_SHOWN", 1, "0/1", "the monte / chien has been shown to all"),
    ("DISCARDS_LEFT", 1, "count"),
    ("TURN", 1, "counter", "position within a round of turns"),
    ("TRICK_LEADER", 1, "seat"),
    ("TRICK_COUNT", 1, "cards in trick"),
    ("LED_SUIT", 1, "0..3, 4 trump", "-1 while unset (nothing or only EX played)"),
    ("BEST_SEAT", 1, "seat", "who wins the trick so far"),
    ("BEST_TRUMP", 1, "0/1", "... with a trump"),
    ("BEST_BIT", 1, "bit", "... the winning card's bit (strength order)"),
    ("TRICK_NUM", 1, "tricks completed"),
    ("EX_PLAYER", 1, "seat", "who played EX (-1: not yet)"),
    ("EX_TRICK_WINNER", 1, "seat", "winner of the trick EX was played to"),
    ("EX_LAST", 1, "0/1", "EX went by the last-trick rule (tables' P_EX_LAST: winner, camp)"),
    ("LAST_WINNER", 1, "seat", "winner of the last trick"),
    ("", 3),
    ("", _MAX_PLAYERS),
    ("BID_WORD + s", _MAX_PLAYERS, "per seat", "word in the auction (-1 not spoken)"),
    ("SIDE + s", _MAX_PLAYERS, "per seat", "0 declarer's side, 1 opponents"),
    ("COMMIT + k", 4, "4 slots", "variant's commitments"),
    ("TRICK + s", _MAX_PLAYERS, "per seat", "card played to the current trick (-1 none)"),
    ("TRICKS_WON + s", _MAX_PLAYERS, "per seat"),
    ("POINTS + k", 4, "per side / seat", "card points (the family's unit) per side; per seat where each is a side"),
    ("BONUS + 8*side + k", 2 * 8, "per side", "itemised bonuses (variant's J_* slots)"),
    ("PAYOFF + s", _MAX_PLAYERS, "per seat", "the deal's payoffs, set when done"),
    ("FAMILY_META + k", 8, "the family's own", "each family module names the columns it uses (its aliases)"),
], total="N_META")
CARDS_LAYOUT = Layout("cards", ("row", "set"), [
    ("HAND + s", _MAX_PLAYERS, "cards held by seat s"),
    ("PLAYED + s", _MAX_PLAYERS, "cards seat s has played (current trick too)"),
    ("WON + s", _MAX_PLAYERS, "cards seat s has won in tricks"),
    ("STOCK", 1, "the monte / talon / chien"),
    ("DISCARDED", 1, "the declarer's discard"),
    ("SHOWN", 1, "cards shown to all (discarded trumps)"),
    ("SHOWN_BY + s", _MAX_PLAYERS, "cards seat s showed (a declaration)"),
    ("", 1),
    ("EXCLUDED + s", _MAX_PLAYERS, "cards seat s provably does not hold, known to all (see below)"),
], total="N_SETS")

PHASE = META_LAYOUT["PHASE"]
CUR = META_LAYOUT["CUR"]
DECLARER = META_LAYOUT["DECLARER"]
CONTRACT = META_LAYOUT["CONTRACT"]
MULT = META_LAYOUT["MULT"]
CALLED = META_LAYOUT["CALLED"]
PARTNER = META_LAYOUT["PARTNER"]
STOCK_SHOWN = META_LAYOUT["STOCK_SHOWN"]
DISCARDS_LEFT = META_LAYOUT["DISCARDS_LEFT"]
TURN = META_LAYOUT["TURN"]
TRICK_LEADER = META_LAYOUT["TRICK_LEADER"]
TRICK_COUNT = META_LAYOUT["TRICK_COUNT"]
LED_SUIT = META_LAYOUT["LED_SUIT"]
BEST_SEAT = META_LAYOUT["BEST_SEAT"]
BEST_TRUMP = META_LAYOUT["BEST_TRUMP"]
BEST_BIT = META_LAYOUT["BEST_BIT"]
TRICK_NUM = META_LAYOUT["TRICK_NUM"]
EX_PLAYER = META_LAYOUT["EX_PLAYER"]
EX_TRICK_WINNER = META_LAYOUT["EX_TRICK_WINNER"]
EX_LAST = META_LAYOUT["EX_LAST"]
LAST_WINNER = META_LAYOUT["LAST_WINNER"]
BID_WORD = META_LAYOUT["BID_WORD"]
SIDE = META_LAYOUT["SIDE"]
COMMIT = META_LAYOUT["COMMIT"]
TRICK = META_LAYOUT["TRICK"]
TRICKS_WON = META_LAYOUT["TRICKS_WON"]
POINTS = META_LAYOUT["POINTS"]
BONUS = META_LAYOUT["BONUS"]
PAYOFF = META_LAYOUT["PAYOFF"]
FAMILY_META = META_LAYOUT["FAMILY_META"]
N_META = META_LAYOUT.total

HAND = CARDS_LAYOUT["HAND"]
PLAYED = CARDS_LAYOUT["PLAYED"]
WON = CARDS_LAYOUT["WON"]
STOCK = CARDS_LAYOUT["STOCK"]
DISCARDED = CARDS_LAYOUT["DISCARDED"]
SHOWN = CARDS_LAYOUT["SHOWN"]
SHOWN_BY = CARDS_LAYOUT["SHOWN_BY"]
EXCLUDED = CARDS_LAYOUT["EXCLUDED"]
N_SETS = CARDS_LAYOUT.total

META_LAYOUT.check_bound(globals())
CARDS_LAYOUT.check_bound(globals())


class BatchState(NamedTuple):
    """State of B games (see the module tables)."""

    meta: np.ndarray
    cards: np.ndarray
    deck: np.ndarray
    rng: np.ndarray

    @property
    def batch_size(self) -> int:
        return self.meta.shape[0]


def alloc_state(batch_size: int) -> BatchState:
    """Zeroed state for ``batch_size`` games (a variant's reset fills it)."""
    b = int(batch_size)
    return BatchState(
        meta=np.zeros((b, N_META), np.int32),
        cards=np.zeros((b, N_SETS, 2), np.uint64),
        deck=np.full((b, _MAX_CARDS), -1, np.int16),
        rng=np.zeros(b, np.uint64),
    )


def copy_state(st: BatchState) -> BatchState:
    """Deep copy of a batch state."""
    return BatchState(*(a.copy() for a in st))

