"""The tarok family's step kernels allocate nothing.

The search's selection step (``_descend`` in search/ismcts.py) is compiled without reference counting
(``_nrt=False``) and calls the engine's ``step_row``; on a cold Numba cache it is the first to compile that chain,
in its own mode, so an array allocated anywhere in a family's step (the ultimo once held its cards in
``np.empty``) made every search kernel fail to compile ("Only accept returning of array passed into the
function") until something else had compiled the engine first.
"""

import numpy as np
from numba import njit

from tarocchi_rl import BatchEnv
from tarocchi_rl.bits import bit
from tarocchi_rl.core.state import CALLED, SIDE, STOCK, TRICK, TRICK_LEADER
from tarocchi_rl.core.tables import CARD_BIT, CARD_WORD, P_HAND, P_PLAYERS
from tarocchi_rl.variants import tarok


def ultimo_reference(st, i, winner, remainder, tb):
    """The ultimo as docs/rules.md says it, written plainly: the trick's cards from its leader, then (with
    ``remainder``) the talon's rest in the deck's order join the winner's pile; the called King among the pile's
    last N cards 10, else the Pagat 25; + for the declarer's side."""
    m = st.meta[i]
    n, h = int(tb.params[P_PLAYERS]), int(tb.params[P_HAND])
    pile = [int(m[TRICK + (int(m[TRICK_LEADER]) + q) % n]) for q in range(n)]
    if remainder:
        for q in range(tarok.TALON):
            c = int(st.deck[i, n * h + q])
            if int(st.cards[i, STOCK, tb.card[c, CARD_WORD]]) & int(bit(tb.card[c, CARD_BIT])):
                pile.append(c)
    last = pile[-n:]
    u = tarok.KING_ULTIMO if int(m[CALLED]) in last else (tarok.PAGAT_ULTIMO if tarok.PAGAT_ID in last else 0)
    return u if m[SIDE + winner] == 0 else -u


def test_the_ultimo_compiles_without_reference_counting_and_counts_the_pile_s_last_cards():
    without_nrt = njit(_nrt=False)(getattr(tarok._ultimo, "py_func", tarok._ultimo))
    rng = np.random.default_rng(7)
    seen = set()
    for variant in ("tarok3", "tarok4"):
        env = BatchEnv(variant, 32, seed=11, auto_reset=True)
        env.reset(seed=11)
        n = env.num_players
        for _ in range(120):
            st, tb = env.state, env.tables
            for i in range(env.batch_size):
                for winner in range(n):
                    for remainder in (False, True):
                        want = ultimo_reference(st, i, winner, remainder, tb)
                        assert without_nrt(st, i, winner, remainder, tb) == want
                        assert tarok._ultimo(st, i, winner, remainder, tb) == want
                        seen.add(want)
            mask = env.legal_mask()
            env.step([rng.choice(np.flatnonzero(row)) for row in mask])
    assert {0, tarok.KING_ULTIMO, -tarok.KING_ULTIMO, tarok.PAGAT_ULTIMO, -tarok.PAGAT_ULTIMO} <= seen
