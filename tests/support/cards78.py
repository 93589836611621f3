"""Writing 78-card deals by card name, for the Piedmontese and French scenario tests.

Conventions: seat 0 speaks and leads first (unless a French chelem is announced: the taker leads); play passes
seat i -> i+1; the dealer is seat N-1. A deal is given as hands in deal order plus the stock / chien; ``fill``
completes a partial deal with the remaining cards.
"""

import tarocchi_rl
from tarocchi_rl.variants import get_variant

RANKS = ("K", "Q", "N", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2", "1")
# players, hand size, stock size per 78-card variant, from the registry
SHAPE = {v: (get_variant(v).n_players, get_variant(v).hand_sizes[0], get_variant(v).stock_size)
         for v in ("piedmont3", "piedmont4", "french3", "french4")}
N_CARDS = 78


# ----------------------------------------------------------------------------------------------------------
# helpers


def full_deck(variant: str) -> list:
    """The 78 cards in the order the oracle tests fill hands: suits (K..1 each), then T1..T21, then EX."""
    letters = "CDSB" if variant.startswith("piedmont") else "SHDC"
    return [r + s for s in letters for r in RANKS] + [f"T{k}" for k in range(1, 22)] + ["EX"]


def suit(s: str, ranks: str | None = None) -> list:
    """Cards of suit s: suit("S", "K Q 1") -> ["KS", "QS", "1S"]; all 14 (K..1) when ranks is None."""
    return [r + s for r in (RANKS if ranks is None else ranks.split())]


def pips(s: str, hi: int, lo: int) -> list:
    """Pip cards of suit s from hi down to lo: pips("S", 8, 3) -> ["8S", ..., "3S"]."""
    return [f"{i}{s}" for i in range(hi, lo - 1, -1)]


def trumps(a: int, b: int) -> list:
    """Trumps from T<a> to T<b> inclusive, in that direction: trumps(1, 3) = T1 T2 T3, trumps(3, 1) = T3 T2 T1."""
    step = 1 if b >= a else -1
    return [f"T{k}" for k in range(a, b + step, step)]


def fill(variant: str, fixed: dict, stock: list | None = None):
    """Hands with the given cards first, the rest filled in deck order (seats 0.., then the stock)."""
    n, size, stock_size = SHAPE[variant]
    used = [c for cards in fixed.values() for c in cards] + list(stock or [])
    rest = [c for c in full_deck(variant) if c not in used]
    hands = []
    for seat in range(n):
        hand = list(fixed.get(seat, []))
        while len(hand) < size:
            hand.append(rest.pop(0))
        hands.append(hand)
    stock = list(stock) if stock is not None else [rest.pop(0) for _ in range(stock_size)]
    assert not rest
    return hands, stock


def new(variant: str, hands, stock, **options):
    return tarocchi_rl.make(variant, **options).state_from_deal([list(h) for h in hands], list(stock))


def act(state, actions) -> None:
    """Apply action strings in order: a list, or one whitespace-separated string."""
    for a in actions.split() if isinstance(actions, str) else actions:
        state.apply(a)


def legal(state) -> set:
    return {state.action_to_string(a) for a in state.legal_actions()}


def card_set(cards):
    return cards.split() if isinstance(cards, str) else list(cards)


def plays(cards) -> set:
    return {"play:" + c for c in card_set(cards)}


def discards(cards) -> set:
    return {"discard:" + c for c in card_set(cards)}


def section(state, name: str, viewer: int):
    """The named section of ``viewer``'s observation (offsets from the variant's obs_rows)."""
    rows = get_variant(state.game.variant).obs_rows
    off, size, _ = next(r for r in rows if r[2] == name)
    return state.observation(viewer)[off : off + size]


def plane(state, name: str, viewer: int, rel: int = 0) -> set:
    """Card names set in a card plane of ``viewer``'s observation (rel: relative seat for per-seat planes)."""
    vec = section(state, name, viewer)[rel * N_CARDS : (rel + 1) * N_CARDS]
    assert len(vec) == N_CARDS
    names = state.game.deck.names
    return {names[c] for c in range(N_CARDS) if vec[c] > 0.5}


def play_first(states) -> None:
    """Play every state to the end with the same actions: always the first legal action of the first state."""
    while not states[0].is_terminal():
        a = states[0].legal_actions()[0]
        for s in states:
            s.apply(a)


def hands_from_tricks(n, size, tricks, taker=None, stock=(), discarded=()):
    """The deal implied by a scripted game: in each (leader, cards) trick card i is played by seat
    (leader + i) % n. The player who took the stock held his played cards + discards - stock."""
    hands = [[] for _ in range(n)]
    for leader, cards in tricks:
        assert len(cards) == n
        for i, card in enumerate(cards):
            hands[(leader + i) % n].append(card)
    if discarded:
        hands[taker].extend(discarded)
        for card in stock:
            hands[taker].remove(card)
    assert all(len(h) == size for h in hands), [len(h) for h in hands]
    return hands


def play_tricks(state, n, tricks, poignees=None) -> None:
    """Plays the scripted tricks, checking who is to act. French: at his first turn each seat first decides
    his poignee (poignees[seat], default "pass")."""
    poignees = poignees or {}
    french = state.game.variant.startswith("french")
    for t, (leader, cards) in enumerate(tricks):
        for i, card in enumerate(cards):
            seat = (leader + i) % n
            assert state.current_player() == seat, (t, i, card)
            if french and t == 0:
                assert state.phase == "poignee"
                state.apply(poignees.get(seat, "pass"))
                assert state.current_player() == seat
            assert state.phase == "play"
            state.apply("play:" + card)
    assert state.is_terminal() and state.current_player() == -1 and state.legal_actions() == []
