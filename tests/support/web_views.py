"""What a browser game message may show its human: the cards his seat may know, checked message by message."""

from tarocchi_rl.core.state import CALLED, DECLARER, DISCARDED, HAND, PARTNER, PLAYED, SHOWN, SHOWN_BY, STOCK_SHOWN
from tarocchi_rl.game import make


def card_names(obj, names: set[str]) -> set[str]:
    """Every card named anywhere in a JSON value: a card name, or the card of an action string."""
    out: set[str] = set()
    if isinstance(obj, dict):
        for v in obj.values():
            out |= card_names(v, names)
    elif isinstance(obj, list):
        for v in obj:
            out |= card_names(v, names)
    elif isinstance(obj, str):
        for part in (obj, obj.partition(":")[2]):
            if part in names:
                out.add(part)
    return out


def visible_cards(record: dict, steps: int, human: int) -> set[str]:
    """What the human may know after ``steps`` actions, computed from the true game (not from the views): his
    cards (held, played, discarded), every card played, the cards shown to all, the called trump's name and the
    monte / chien once shown."""
    game = make(record["variant"], **record["options"])
    state = game.state_from_deal(**record["deal"])
    for a in record["actions"][:steps]:
        state.apply(a)
    st = state._env.state
    d = game.deck
    m = st.meta[0]
    rows = [HAND + human, SHOWN] + [PLAYED + q for q in range(game.num_players)] + \
        [SHOWN_BY + q for q in range(game.num_players)]
    if int(m[DECLARER]) == human:
        rows.append(DISCARDED)
    ids = {c for r in rows for c in d.cards_of(st.cards[0, r])}
    names = {d.names[c] for c in ids}
    if int(m[CALLED]) >= 0:
        names.add(d.names[int(m[CALLED])])
    if int(m[STOCK_SHOWN]) == 1:
        names |= set(record["deal"]["stock"])
    return names


def check_message(msg: dict, record: dict, human: int) -> None:
    """Nothing in a message (its table and moves: the record of an ``over`` message shows the whole deal) names a
    card the human may not know; his hand is his true hand; the Mineo partnership appears only once he knows it."""
    t = msg["table"]
    game = make(record["variant"], **record["options"])
    shown = card_names({"table": t, "moves": msg["moves"]}, set(game.deck.names))  # "over" adds the record
    allowed = visible_cards(record, t["steps"], human)
    assert shown <= allowed, f"step {t['steps']}: seat {human} is shown {sorted(shown - allowed)}"
    state = game.state_from_deal(**record["deal"])
    for a in record["actions"][: t["steps"]]:
        state.apply(a)
    assert t["hand"] == state.hand(human)
    assert t["hand_counts"] == [len(state.hand(q)) for q in range(game.num_players)]  # every seat's, face down
    if record["variant"] == "mineo" and t["contract"] == "call" and not t["over"]:
        m = state._env.state.meta[0]
        called = game.deck.names[int(m[CALLED])]
        rows = state._env.state.cards[0]
        played = {game.deck.names[c] for q in range(4) for c in game.deck.cards_of(rows[PLAYED + q])}
        knows = human == int(m[PARTNER]) or called in played
        assert (t["sides"] is not None) == knows and (t["partner"] is not None) == knows
