"""The batch state: B games held as four arrays (a NamedTuple, so kernels take it as one argument).

Few, wide arrays rather than one array per field: Numba passes a NamedTuple of dozens of arrays so slowly
that a kernel spent most of its time copying it (measured: 200 ns against 1 ns per call). Fields are
columns, named by the constants below.

``meta`` : int32[B, N_META], one row per game

| column(s)            | field            | meaning                                                         |
|----------------------|------------------|-----------------------------------------------------------------|
| PHASE                | phase            | variant's PHASE code; each variant has a 'done' phase           |
| CUR                  | seat to act      |                                                                 |
| DECLARER             | declarer         | soloist / caller / taker, -1 none                               |
| CONTRACT             | contract         | variant's contract code, 0 none                                 |
| MULT                 | stake multiplier |                                                                 |
| CALLED               | called card      | Mineo: the called trump (dense id), -1 none                     |
| PARTNER              | partner seat     | -1 none                                                         |
| STOCK_SHOWN          | 0/1              | the monte / chien has been shown to all                         |
| DISCARDS_LEFT        | count            |                                                                 |
| TURN                 | counter          | position within a round of turns                                |
| TRICK_LEADER         | seat             |                                                                 |
| TRICK_COUNT          | cards in trick   |                                                                 |
| LED_SUIT             | 0..3, 4 trump    | -1 while unset (nothing or only EX played)                      |
| BEST_SEAT            | seat             | who wins the trick so far                                       |
| BEST_TRUMP           | 0/1              | ... with a trump                                                |
| BEST_BIT             | bit              | ... the winning card's bit (strength order)                     |
| TRICK_NUM            | tricks completed |                                                                 |
| EX_PLAYER            | seat             | who played EX (-1: not yet)                                     |
| EX_TRICK_WINNER      | seat             | winner of the trick EX was played to                            |
| EX_LAST              | 0/1              | EX went by the last-trick rule (tables' P_EX_LAST: winner, camp)|
| LAST_WINNER          | seat             | winner of the last trick                                        |
| EARLY_BID + s        | per seat         | word in the early round (-1 not spoken)                         |
| BID_WORD + s         | per seat         | word in the auction (-1 not spoken)                             |
| SIDE + s             | per seat         | 0 declarer's side, 1 opponents                                  |
| COMMIT + k           | 4 slots          | variant's commitments                                           |
| TRICK + s            | per seat         | card played to the current trick (-1 none)                      |
| TRICKS_WON + s       | per seat         |                                                                 |
| POINTS + k           | per side / seat  | card points (thirds / half points): per side, per seat in piedmont3 |
| BONUS + 8*side + k   | per side         | itemised bonuses (variant's J_* slots)                          |
| PAYOFF + s           | per seat         | the deal's payoffs, set when done                               |
| POIGNEE_LEVEL + s    | per seat         | French: poignee declared (0 none, 1..3 simple..triple; -1 not yet)|
| ACCUSO_DECL + s      | per seat         | Piedmontese: accuso conditions declared (0..2; -1 not spoken)   |

``cards`` : uint64[B, N_SETS, 2], two-word card sets (layout in :mod:`tarocchi_rl.cards`)

| row            | set                                         |
|----------------|---------------------------------------------|
| HAND + s       | cards held by seat s                        |
| PLAYED + s     | cards seat s has played (current trick too) |
| WON + s        | cards seat s has won in tricks              |
| STOCK          | the monte / talon / chien                   |
| DISCARDED      | the declarer's discard                      |
| SHOWN          | cards shown to all (discarded trumps)       |
| SHOWN_BY + s   | cards seat s showed (poignee, accuso)       |
| EXCLUDED + s   | cards seat s provably does not hold, known to all (see below) |

``EXCLUDED + s`` is public knowledge kept by the kernels, for determinization (:mod:`tarocchi_rl.search`):
a seat that does not follow suit lacks the suit led; one that neither follows nor trumps lacks every trump;
one that plays a trump below the best one where overtrumping is compulsory lacks the trumps above it; the
seats other than the declarer lack the shown monte / chien; Mineo: the caller lacks the called trump, the
others lack the trumps above it (the caller's) and, after a scommessa, T20 and EX; a rivanto seat lacks the
called trump; shown poignee / accuso cards are lacked by the others, and the shower lacks the trumps below
his highest shown one (all his other trumps when EX is shown or ten trumps are accused); a declarer who
discarded a trump holds no discardable card once the discard is over. Cards only leave hands during play,
so an exclusion stays true.

``deck`` : int16[B, 78], the shuffled deal (dense ids; hands by seat in blocks, then the stock).
``rng`` : uint64[B], each game's SplitMix64 state.
"""

from typing import NamedTuple

import numpy as np

MAX_PLAYERS = 4
MAX_CARDS = 78

(PHASE, CUR, DECLARER, CONTRACT, MULT, CALLED, PARTNER, STOCK_SHOWN, DISCARDS_LEFT, TURN, TRICK_LEADER,
 TRICK_COUNT, LED_SUIT, BEST_SEAT, BEST_TRUMP, BEST_BIT, TRICK_NUM, EX_PLAYER, EX_TRICK_WINNER, EX_LAST,
 LAST_WINNER) = range(21)
EARLY_BID = 24
BID_WORD = 28
SIDE = 32
COMMIT = 36
TRICK = 40
TRICKS_WON = 44
POINTS = 48
BONUS = 52  # 2 sides x 8 slots
PAYOFF = 68
POIGNEE_LEVEL = 72
ACCUSO_DECL = 76
N_META = 80

HAND = 0
PLAYED = 4
WON = 8
STOCK = 12
DISCARDED = 13
SHOWN = 14
SHOWN_BY = 15
EXCLUDED = 20
N_SETS = 24


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
        deck=np.full((b, MAX_CARDS), -1, np.int16),
        rng=np.zeros(b, np.uint64),
    )


def copy_state(st: BatchState) -> BatchState:
    """Deep copy of a batch state."""
    return BatchState(*(a.copy() for a in st))

