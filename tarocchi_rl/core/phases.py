"""Phases: the three the engine drives, and the record with which a family declares its own.

``meta[PHASE]`` holds the code of the phase a deal is in. The engine (:mod:`tarocchi_rl.engine.drivers`) knows
only these three, which every variant has:

| code | phase   | who acts, what                                              |
|------|---------|-------------------------------------------------------------|
| 2    | discard | the declarer / dealer / taker: one card per action          |
| 5    | play    | the seat to play: a card                                    |
| 6    | done    | -                                                           |

Every other phase (auctions, calls, commitments, declarations) belongs to a rule family, which lists its own in its
module's ``PHASES`` as :class:`Phase` records and drives them with its kernels; :mod:`tarocchi_rl.variants.phases`
gathers every family's rows into the one table the upper layers read (names, decision kinds), and checks that
codes are unique (two families may share a phase only as the same record). A phase code is below
:data:`MAX_PHASES`; the observation shows the phase as a one-hot of :data:`PHASE_SLOTS` entries, a phase in its
``slot`` (the first eleven codes are their own slots: the shipped networks read them so).
"""

from typing import NamedTuple

DISCARD, PLAY, DONE = 2, 5, 6
MAX_PHASES = 16  # phase codes are 0 .. MAX_PHASES - 1 (the rule tables hold one entry per code)
PHASE_SLOTS = 11  # the observation's phase one-hot width

# The kinds of decision, as researchers split bots (a bidding bot, a card-play bot): the auction and every
# commitment (calls, declarations) are ``bid``; stock exchanges and discards are ``discard``; cards played to
# tricks are ``play``.
DECISION_KINDS = ("bid", "discard", "play")


class Phase(NamedTuple):
    """One phase of a family's deal (a row of its ``PHASES``)."""

    code: int  # meta[PHASE]; unique across the registry (0 .. MAX_PHASES - 1)
    name: str  # in records, views and errors
    kind: str  # the decisions taken in it: one of DECISION_KINDS ("" for done: no decision)
    bidding: bool = False  # part of the auction: the sides are not settled yet
    trick: bool = False  # a trick may lie on the table (a declaration before a card)
    slot: int = -1  # the observation's phase one-hot entry (-1: the code itself, below PHASE_SLOTS)
    what: str = ""  # who acts, and what they say or do


    @property
    def shown_as(self) -> int:
        """The observation's phase one-hot entry of this phase."""
        return self.code if self.slot < 0 else self.slot


ENGINE_PHASES = (
    Phase(DISCARD, "discard", "discard", what="the declarer / dealer / taker: one card per action"),
    Phase(PLAY, "play", "play", trick=True, what="the seat to play: a card"),
    Phase(DONE, "done", "", what="-"),
)


def check_phases(rows: tuple[Phase, ...] | list[Phase], owner: str) -> None:
    """ValueError naming ``owner`` where a row of ``rows`` is not a valid phase (code, kind, slot)."""
    for p in rows:
        if not 0 <= p.code < MAX_PHASES:
            raise ValueError(f"{owner}: phase {p.name!r} has code {p.code}, outside 0 .. {MAX_PHASES - 1}")
        if p.kind not in DECISION_KINDS + ("",):
            raise ValueError(f"{owner}: phase {p.name!r} has kind {p.kind!r} (kinds: {', '.join(DECISION_KINDS)})")
        if not 0 <= p.shown_as < PHASE_SLOTS:
            raise ValueError(f"{owner}: phase {p.name!r} is shown in slot {p.shown_as}, outside 0 .. "
                             f"{PHASE_SLOTS - 1}")
