"""Phase codes, shared by every variant (a variant uses the phases its rules have).

| code | phase      | variants        | who acts, what                                             |
|------|------------|-----------------|------------------------------------------------------------|
| 0    | early      | mineo           | seats 0..3 after 5 cards: pass / solo (doubled)            |
| 1    | auction    | mineo           | seats 0..3: pass / solo / call                             |
| 2    | discard    | all             | declarer / dealer / taker: discard one card per action     |
| 3    | scommessa  | mineo           | declarer: pass / scommessa                                 |
| 4    | rivanto    | mineo           | declarer+1..+3: pass / rivanto                             |
| 5    | play       | all             | the seat to play: a card                                   |
| 6    | done       | all             | -                                                          |
| 7    | bid        | french          | seats in turn: pass / prise / garde / garde sans / contre  |
| 8    | chelem     | french          | taker: pass / chelem                                       |
| 9    | poignee    | french          | each seat before his first card: pass / poignee level      |
| 10   | accuso     | piedmont4       | seats 0..3 after the discard: pass / accuso                |
"""

EARLY, AUCTION, DISCARD, SCOMMESSA, RIVANTO, PLAY, DONE, BID, CHELEM, POIGNEE, ACCUSO = range(11)
PHASE_NAMES = (
    "early", "auction", "discard", "scommessa", "rivanto", "play", "done", "bid", "chelem", "poignee", "accuso",
)
N_PHASES = len(PHASE_NAMES)
BIDDING_PHASES = (EARLY, AUCTION, BID)

# The kinds of decision, as researchers split bots (a bidding bot, a card-play bot): the auction and every
# commitment (calls, scommessa, rivanto, chelem, poignée, accuso) are ``bid``; monte / chien discards are
# ``discard``; the cards played to tricks are ``play``. ``DECISION_KIND_OF_PHASE[phase]`` is the kind's index.
DECISION_KINDS = ("bid", "discard", "play")
DECISION_KIND_OF_PHASE = (0, 0, 1, 0, 0, 2, -1, 0, 0, 0, 0)  # by phase code; done: -1 (no decision)
# The commitments (calls, scommessa, rivanto, chelem, poignée, accuso): decisions of kind ``bid`` outside the auction
DECLARATION_PHASES = tuple(p for p, k in enumerate(DECISION_KIND_OF_PHASE) if k == 0 and p not in BIDDING_PHASES)
TRICK_PHASES = (PLAY, POIGNEE)  # the phases during which a trick may lie on the table (a poignée before a card)
