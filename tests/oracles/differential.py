"""The differential harness shared by the rule tests (``tests/core``, ``tests/mineo``) and ``make verify``
(``tests/oracles/verify_*.py``): a deal played on the core and on an independent oracle side by side, with the
random policies that reach the rare branches."""

import numpy as np

import tarocchi_rl
from tests.oracles.oracle_french import FrenchOracle
from tests.oracles.oracle_mineo import MineoOracle
from tests.oracles.oracle_piedmont import PiedmontOracle
from tests.support.engine import oracle_name


# -- the 78-card variants ------------------------------------------------------------------------------------
class Policy:
    """Random legal actions, preferring the rare ones (bids, chelem, poignee, accuso) so they get tested."""

    def __init__(self, seed, prefer=()):
        self.rng = np.random.default_rng(seed)
        self.prefer = prefer

    def choose(self, names):
        for p in self.prefer:
            hits = [k for k, n in enumerate(names) if n.startswith(p)]
            if hits and self.rng.random() < 0.5:
                return int(self.rng.choice(hits))
        return int(self.rng.integers(len(names)))


def french_preferences(seed):
    """A third of the deals random, a third low bids and poignees (discards, petit au bout), a third high."""
    return [(), ("poignee", "bid:prise", "bid:garde", "bid:pass"), ("bid:garde", "poignee", "chelem")][seed % 3]


def play_both(variant, seed, oracle_factory, policy, **options):
    """One deal of a 78-card variant on the core and on its oracle side by side (``policy.choose`` picks among the
    oracle's names); every decision's player and legal set and the payoffs must agree: (state, oracle)."""
    state = tarocchi_rl.make(variant, **options).new_state(seed)
    deal = state.deal()
    oracle = oracle_factory(deal)
    steps = 0
    while not state.is_terminal():
        assert not oracle.is_terminal(), f"{variant} seed {seed}: oracle ended first"
        assert state.current_player() == oracle.current_player(), f"{variant} seed {seed} step {steps}: player"
        legal = state.legal_actions()
        names = [oracle_name(state.action_to_string(a)) for a in legal]
        assert set(names) == oracle.legal_actions(), f"{variant} seed {seed} step {steps}: legal sets differ"
        k = policy.choose(names)
        oracle.apply(names[k])
        state.apply(legal[k])
        steps += 1
    assert oracle.is_terminal(), f"{variant} seed {seed}: core ended first"
    assert state.returns() == oracle.returns(), f"{variant} seed {seed}: payoffs differ"
    return state, oracle


def piedmont_oracle(variant, **options):
    return lambda deal: PiedmontOracle(deal["hands"], deal["stock"], variant=variant, **options)


def french_oracle(n, **options):
    return lambda deal: FrenchOracle(deal["hands"], deal["stock"], n_players=n, **options)


def excuse_changed_camp(state, oracle):
    """The deal where the two readings of excuse_last_trick differ: a defender's EX in the last trick, won by
    another defender."""
    last = oracle.tricks[-1]
    owner = next((seat for seat, card in last["plays"] if card == "EX"), None)
    return owner is not None and owner != oracle.taker and last["winner"] not in (owner, oracle.taker)


# -- Mineo ---------------------------------------------------------------------------------------------------
def play_mineo_both(seed: int, early_solo: bool = True, policy_rng=None):
    """One Mineo deal on the core and on its oracle side by side (``policy_rng.choice`` picks among the legal
    ids); players, legal sets, payoffs, card points and jochi must agree: the state."""
    game = tarocchi_rl.make("mineo", early_solo=early_solo)
    state = game.new_state(seed)
    deal = state.deal()
    oracle = MineoOracle(deal["hands"], deal["stock"], early_solo=early_solo)
    rng = policy_rng or np.random.default_rng(seed)
    steps = 0
    while not state.is_terminal():
        assert not oracle.is_terminal(), f"seed {seed}: oracle ended first"
        assert state.current_player() == oracle.current_player(), f"seed {seed} step {steps}: player"
        legal = state.legal_actions()
        mine = {oracle_name(state.action_to_string(a)) for a in legal}
        assert mine == oracle.legal_actions(), f"seed {seed} step {steps}: legal sets differ"
        a = int(rng.choice(legal))
        oracle.apply(oracle_name(state.action_to_string(a)))
        state.apply(a)
        steps += 1
    assert oracle.is_terminal(), f"seed {seed}: core ended first"
    assert state.returns() == oracle.returns(), f"seed {seed}: payoffs differ"
    out = state.outcome()
    if out["declarer"] is not None:
        assert tuple(out["card_point_units"]) == tuple(oracle.side_thirds()), f"seed {seed}: thirds"
        for side in range(2):
            theirs = {k: v for k, v in oracle.jochi()[side].items() if v}
            if "arie_giove" in theirs:
                theirs["arie"] = theirs.pop("arie_giove")
            ours = {b["name"]: b["points"] for b in out["bonuses"] if b["side"] == side}
            assert ours == theirs, f"seed {seed}: jochi of side {side}"
    return state


class PreferCommitments:
    """Random legal play that picks call / scommessa / rivanto whenever legal, to reach the rare branches."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def choice(self, legal):
        # action ids: 126 pass, 127 solo, 128 call, 129 scommessa, 130 rivanto
        for preferred in (129, 130):
            if preferred in legal and self.rng.random() < 0.7:
                return preferred
        if 128 in legal and self.rng.random() < 0.6:
            return 128
        if 127 in legal and self.rng.random() < 0.9:
            return 126
        return self.rng.choice(legal)
