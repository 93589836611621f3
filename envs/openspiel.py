"""OpenSpiel adapter: ``import tarocchi_rl.envs.openspiel`` registers one pyspiel game per variant.

    import pyspiel
    import tarocchi_rl.envs.openspiel  # noqa: F401
    game = pyspiel.load_game("python_tarocchi_mineo(early_solo=False)")

Registered names: ``python_tarocchi_<variant>`` for every variant of the registry (``mineo``, ``piedmont3``,
``piedmont4``, ``french3``, ``french4``, ``tarok3``, ``tarok4``); game parameters are the variant's options
(``early_solo``; ``excuse_exchange``, ``honour_5``; ``excuse_exchange``, ``accuso``, ``accuso_points``) with
their pyspiel types (bool, string, int). The rules are the core's (:mod:`tarocchi_rl`); nothing is copied.

Game type: sequential, imperfect information, explicit stochastic chance, terminal rewards; zero-sum where the
variant is (its ``zero_sum``), else general-sum (tarok: OpenSpiel's own scores).

Chance: the deal is explicit. Chance node k (k = 0 .. C-1, C = 63 or 78 cards) deals the card of deal slot
k in the core's deal order (seat 0's hand, seat 1's, ..., then the stock; Mineo: a hand's first five slots
are its early-round cards); its outcomes are the cards not yet dealt (action id = dense card id, uniform).
Where the family plays only deals in which every hand holds one of its ``ONE_IN_EVERY_HAND`` (tarok: a
tarok), the outcomes are weighted so that the deal is uniform among those deals (a card that would leave a
hand without one has probability 0 and is not listed).
After the last card the core game starts on that deal (``Game.state_from_deal`` semantics); a French deal
with a petit sec ends there (terminal, payoffs 0). Player action ids are the core's action ids.

Observations (an OpenSpiel observer, so C++ and Python algorithms get tensors and strings):

- observation tensor: the core's observation of the player (``docs/observations.md``), named sections;
- information-state tensor: the same, plus ``initial_hand`` (C: the player's first hand, Mineo early round:
  five cards) and ``trick_of_card`` (C x T one-hot: the trick in which each card was played). With the
  core's per-seat played cards these give the order of play, so the tensor holds everything the player has
  seen except the order of his own discards (not needed to act);
- information-state string: ``p<seat>`` then the player's view, one token per step
  (:class:`tarocchi_rl.views.Views`): his cards as dealt, every action with its seat (others'
  face-down discards as ``discard:?``), revealed cards (monte / chien, called trump, poignée, accuso) and
  the cards joining his hand. Equal exactly for the positions he cannot tell apart (ISMCTS keys its nodes
  on it). During the deal: ``p<seat> deal:<k>/<C>`` and the cards he has been dealt so far;
- observation string: the non-zero entries of the observation tensor, by section, cards by name.

``resample_from_infostate(player, sampler)`` returns a state on a random deal consistent with everything the
player has seen, drawn uniformly by the core's exact sampler (:mod:`tarocchi_rl.search.determinize`, the one
ISMCTS uses; ``sampler()`` floats seed it), with the same actions (others' face-down discards rewritten to
the sampled discarded cards) replayed on it; OpenSpiel's Python ISMCTS
(``open_spiel.python.algorithms.ismcts.ISMCTSBot``) uses it. ``clone`` and serialization are supported
(a state pickles as its deal and history and is replayed on load).

Illegal actions (player or chance) raise ``ValueError`` naming the action and the legal ones.

Utility bounds (honest: no deal can exceed them) and the longest game (player decisions) are the variant's
facts, derived in its family module's ``utility_bounds`` / ``max_game_length``
(:mod:`tarocchi_rl.variants.mineo`, ``piedmont``, ``french``); the long name is the variant's ``long_name``.
"""

import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np
import pyspiel
from numpy.typing import NDArray

from tarocchi_rl.bits import seed_states
from tarocchi_rl.core.state import DISCARDED, SHOWN, alloc_state
from tarocchi_rl.core.tables import P_FIRST_ROUND, P_HAND
from tarocchi_rl.engine.observation import observe_row
from tarocchi_rl.search.determinize import determinize_row
from tarocchi_rl.variants import VARIANTS, get_variant
from tarocchi_rl.views import Views, core_game

__all__ = ["GAME_CLASSES", "GAME_NAMES", "TarocchiGame", "TarocchiObserver", "TarocchiState"]

GAME_NAMES = {v: f"python_tarocchi_{v}" for v in VARIANTS}
_CARD_PLANES = ("hand", "stock", "discard", "shown", "initial_hand")
_SEAT_PLANES = ("played", "trick", "shown_by")


# ----------------------------------------------------------------------------------------------------------
# game type


def _game_type(variant: str) -> pyspiel.GameType:
    spec = get_variant(variant)
    return pyspiel.GameType(
        short_name=GAME_NAMES[variant],
        long_name=f"Python {spec.long_name} (tarocchi_rl)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM if spec.zero_sum else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=spec.n_players,
        min_num_players=spec.n_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={name: default for name, (_, default) in spec.options.items()},
    )


class _Config:
    """One (variant, options): the core Game and layout constants, shared by every state of a game (never
    copied: deepcopy returns it, pickle refers to it by name)."""

    _cache: ClassVar[dict[tuple[str, tuple[tuple[str, Any], ...]], "_Config"]] = {}

    def __init__(self, variant: str, options: Mapping[str, Any]) -> None:
        spec = get_variant(variant)
        self.variant = variant
        self.options = dict(options)
        self.spec = spec
        self.core = core_game(variant, options)
        self.deck = spec.deck
        self.n_cards = spec.deck.n_cards
        self.n_players = spec.n_players
        self.n_tricks = spec.hand_sizes[0]
        tb = spec.resolved_tables(self.options)
        self.first_round = int(tb.params[P_FIRST_ROUND])  # cards per seat dealt before the first decision
        self.early = self.first_round < int(tb.params[P_HAND])  # a first round of the deal before the rest
        self.blocks: list[range] = []
        k = 0
        for size in spec.hand_sizes:
            self.blocks.append(range(k, k + size))
            k += size
        self.needed = frozenset(spec.rules.ONE_IN_EVERY_HAND)  # every hand holds one of these (empty: no rule)

    @classmethod
    def get(cls, variant: str, options: Mapping[str, Any]) -> "_Config":
        key = (variant, tuple(sorted(options.items())))
        if key not in cls._cache:
            cls._cache[key] = cls(variant, options)
        return cls._cache[key]

    def visible_slots(self, seat: int) -> range:
        """Deal slots whose card ``seat`` sees while the deal is being made (Mineo early round: the first
        round's cards)."""
        block = self.blocks[seat]
        return block[: self.first_round] if self.early else block

    def __deepcopy__(self, memo: dict[int, Any]) -> "_Config":
        return self

    def __reduce__(self) -> tuple[Callable[..., "_Config"], tuple[str, dict[str, Any]]]:
        return (_Config.get, (self.variant, self.options))


# ----------------------------------------------------------------------------------------------------------
# game, state


class TarocchiGame(pyspiel.Game):
    """A variant of the core as a pyspiel game (module docstring)."""

    def __init__(self, variant: str, params: Mapping[str, Any] | None = None) -> None:
        spec = get_variant(variant)
        options = spec.resolve_options(dict(params or {}))
        spec.tables(options)  # checks the option values now (e.g. honour_5), not at the first deal
        lo, hi = spec.utility_bounds(options)
        info = pyspiel.GameInfo(
            num_distinct_actions=spec.n_actions,
            max_chance_outcomes=spec.deck.n_cards,
            num_players=spec.n_players,
            min_utility=float(lo),
            max_utility=float(hi),
            utility_sum=0.0 if spec.zero_sum else None,
            max_game_length=spec.max_game_length(options),
        )
        super().__init__(_GAME_TYPES[variant], info, dict(options))
        self._cfg = _Config.get(variant, options)

    def new_initial_state(self) -> "TarocchiState":
        return TarocchiState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: Mapping[str, Any] | None = None
    ) -> "TarocchiObserver":
        return TarocchiObserver(self._cfg, iig_obs_type, params)

    def max_chance_nodes_in_history(self) -> int:
        return self._cfg.n_cards


def _completions(cfg: _Config, dealt: bytes) -> int:
    """The number of ways to deal the cards not in ``dealt`` (dense ids of the first deal slots) so that every
    hand holds one of ``cfg.needed``: inclusion-exclusion over the hands still without one (the ways in which
    the hands of a set A get none of the t needed cards left: C(slots left outside A, t) t! (others)!)."""
    n_left = cfg.n_cards - len(dealt)
    t = len(cfg.needed) - sum(c in cfg.needed for c in dealt)
    short = []  # the free slots of each hand that holds none of cfg.needed yet
    for block in cfg.blocks:
        if not any(dealt[k] in cfg.needed for k in block if k < len(dealt)):
            short.append(sum(1 for k in block if k >= len(dealt)))
    ways = 0
    for mask in range(1 << len(short)):
        shut = sum(r for j, r in enumerate(short) if mask >> j & 1)
        ways += (-1) ** bin(mask).count("1") * math.comb(n_left - shut, t)
    return ways * math.factorial(t) * math.factorial(n_left - t)


class TarocchiState(pyspiel.State):
    """A deal being dealt (chance nodes) and then played on the core (with each seat's view: Views)."""

    def __init__(self, game: TarocchiGame) -> None:
        super().__init__(game)
        self._cfg: _Config = game._cfg
        self._dealt = b""  # chance outcomes so far (dense card ids)
        self._views: Views | None = None  # the core game and what each seat has seen, once dealt
        self._plan: list[int] | None = None  # players of the actions being installed (resample_from_infostate)
        self._k = 0

    # -- OpenSpiel API ------------------------------------------------------------------------------------
    def current_player(self) -> int:
        if self._plan is not None:
            return self._plan[self._k]
        t = self._views
        if t is None:
            return pyspiel.PlayerId.CHANCE
        if t.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return t.current_player()

    def _legal_actions(self, player: int) -> list[int]:
        assert self._views is not None  # pyspiel asks only at a player node, and the deal is complete there
        return self._views.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._views is not None:
            raise ValueError("not a chance node: the deal is complete")
        cfg = self._cfg
        dealt = set(self._dealt)
        left = [c for c in range(cfg.n_cards) if c not in dealt]
        if not cfg.needed:
            p = 1.0 / len(left)
            return [(c, p) for c in left]
        # uniform over the deals the family plays (every hand holds one of cfg.needed): each card weighted by the
        # number of such deals that it leaves possible
        weight = {}  # the cards of cfg.needed weigh alike, and so do the others
        for c in left:
            key = c in cfg.needed
            if key not in weight:
                weight[key] = _completions(cfg, self._dealt + bytes((c,)))
        weights = [weight[c in cfg.needed] for c in left]
        total = sum(weights)
        return [(c, w / total) for c, w in zip(left, weights, strict=True) if w]

    def _apply_action(self, action: int) -> None:
        if self._plan is not None:
            self._k += 1
            return
        if self._views is not None:
            self._views.apply(action)
            return
        cfg = self._cfg
        a = int(action)
        legal = [c for c, _ in self.chance_outcomes()]
        if a not in legal:
            what = ("out of range" if not 0 <= a < cfg.n_cards else f"{cfg.deck.names[a]} is already dealt"
                    if a in self._dealt else f"{cfg.deck.names[a]} would leave a hand without any of its "
                    "required cards")
            left = ", ".join(cfg.deck.names[c] for c in legal)
            which = "the cards not yet dealt" if not cfg.needed else "the cards that leave every hand one"
            raise ValueError(f"illegal chance outcome {action} ({what}) at deal slot {len(self._dealt)}; "
                             f"legal: {which}: {left}")
        self._dealt += bytes((a,))
        if len(self._dealt) == cfg.n_cards:
            self._views = Views(cfg.core, list(self._dealt))

    def _action_to_string(self, player: int, action: int) -> str:
        cfg = self._cfg
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal:{cfg.deck.names[int(action)]}"
        if self._views is None:
            return cfg.spec.rules.action_to_string(int(action), -1)
        return self._views.action_to_string(int(action))

    def is_terminal(self) -> bool:
        return self._views is not None and self._plan is None and self._views.is_terminal()

    def returns(self) -> list[float]:
        if self._views is None:
            return [0.0] * self._cfg.n_players
        return [float(x) for x in self._views.returns()]

    def __str__(self) -> str:
        cfg = self._cfg
        if self._views is None:
            cards = " ".join(cfg.deck.names[c] for c in self._dealt)
            return f"{cfg.variant} dealing {len(self._dealt)}/{cfg.n_cards}: {cards}"
        t = self._views
        return f"{t.state}\n  actions: {' '.join(map(str, t.state.history))}"

    # -- determinization ----------------------------------------------------------------------------------
    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float]) -> "TarocchiState":
        """A state on a random deal consistent with all ``player_id`` has seen (the cards he cannot locate are
        redistributed uniformly, see the module docstring), with the same actions; ``probability_sampler()``
        gives floats in [0, 1) (OpenSpiel's UniformProbabilitySampler) and seeds the draw."""
        cfg = self._cfg
        player_id = int(player_id)
        if not 0 <= player_id < cfg.n_players:
            raise ValueError(f"player_id must be a seat 0..{cfg.n_players - 1}, got {player_id}")
        seed = 0
        for _ in range(2):
            seed = (seed << 32) | int(float(probability_sampler()) * 2**32)
        game = self.get_game()
        if self._views is None:  # during the deal: keep the cards the player has seen
            rng = np.random.default_rng(seed)
            seen = {k for k in cfg.visible_slots(player_id) if k < len(self._dealt)}
            mine = {self._dealt[k] for k in seen}
            others = [c for c in range(cfg.n_cards) if c not in mine]
            rng.shuffle(others)
            it = iter(others)
            new = game.new_initial_state()
            for k in range(len(self._dealt)):
                new.apply_action(self._dealt[k] if k in seen else next(it))
            return new
        return self._installed(game, _resampled(cfg, self._views, player_id, seed))

    def _installed(self, game: TarocchiGame, views: Views) -> "TarocchiState":
        """A new state whose history is the deal and actions of ``views``, holding them (the actions are
        recorded, not replayed again)."""
        new = game.new_initial_state()
        deck = views.deck_ids()
        new._plan = [pyspiel.PlayerId.CHANCE] * len(deck) + list(views.actors)
        for a in deck + list(views.state.history):
            new.apply_action(a)
        new._plan = None
        new._k = 0
        new._dealt = bytes(deck)
        new._views = views
        return new


_MAX_VOID_TRIES = 100_000


def _resampled(cfg: _Config, views: Views, p: int, seed: int) -> Views:
    """Views of the game of ``views`` replayed on a deal drawn by the exact sampler for seat ``p``.

    The sampler redistributes, uniformly over the consistent assignments, the cards p cannot locate in the core
    row and rewrites its deal (``deck``); the other seats' face-down discards in the history then discard the
    sampled face-down cards (in random order), and the history is replayed on the new deal. p's view must come
    out equal. One case is drawn by rejection on it: a deal that ended at once (a French petit sec, no action)
    tells p only that some seat was dealt a petit sec, which the sampler does not condition on.
    """
    env = views.state._env
    dst = alloc_state(1)
    dst.rng[:] = seed_states(seed, 1)
    history = views.state.history
    steps = [k for k in views.face_down if views.actors[k] != p]
    want = views.view(p)
    ended_at_once = not history and views.is_terminal()
    shuffle = np.random.default_rng(seed).permutation if steps else None
    n = cfg.n_cards
    for _ in range(_MAX_VOID_TRIES if ended_at_once else 1):
        if not determinize_row(env.state, 0, p, env.tables, dst, 0):
            raise RuntimeError(f"no deal is consistent with what seat {p} has seen ({cfg.variant}, "
                               f"{len(history)} actions): the core state is inconsistent")
        actions = list(history)
        if steps:  # the sampled face-down discard, in random order
            hidden = dst.cards[0, DISCARDED] & ~dst.cards[0, SHOWN]
            assert shuffle is not None  # made when there are steps
            cards = shuffle(cfg.deck.cards_of(hidden))
            for k, c in zip(steps, cards, strict=True):
                actions[k] = n + int(c)
        new = Views(cfg.core, dst.deck[0, :n].tolist())
        try:
            for a in actions:
                new.apply(a)
        except ValueError as e:
            raise RuntimeError(f"internal error: the history is illegal on a deal drawn for seat {p}: {e}") from e
        if new.view(p) == want:
            return new
        if not ended_at_once:
            break
    raise RuntimeError(f"internal error: a deal drawn for seat {p} ({cfg.variant}, {len(history)} actions) "
                       f"does not look the same to him")


# ----------------------------------------------------------------------------------------------------------
# observer


class TarocchiObserver:
    """Tensors and strings of a state seen by one player (module docstring). Supports the two standard
    observation types: private info of a single player with public info, with or without perfect recall."""

    def __init__(
        self,
        cfg: _Config,
        iig_obs_type: pyspiel.IIGObservationType | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        t = iig_obs_type if iig_obs_type is not None else pyspiel.IIGObservationType(perfect_recall=False)
        if t.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not t.public_info:
            raise ValueError("only observations of one player's private information with the public "
                             "information are supported (perfect_recall True or False)")
        self.cfg = cfg
        self.perfect_recall = bool(t.perfect_recall)
        n, c = cfg.n_players, cfg.n_cards
        pieces: list[tuple[str, int, int, tuple[int, ...]]] = []
        for offset, size, name in cfg.spec.obs_rows:
            shape = (n, size // n) if name in _SEAT_PLANES + ("bids", "early", "poignee") else (size,)
            pieces.append((name, offset, size, shape))
        self.obs_dim = cfg.spec.obs_dim
        total = self.obs_dim
        if self.perfect_recall:
            pieces.append(("initial_hand", total, c, (c,)))
            pieces.append(("trick_of_card", total + c, c * cfg.n_tricks, (c, cfg.n_tricks)))
            total += c + c * cfg.n_tricks
        self.pieces = pieces
        self.tensor: NDArray[np.float32] = np.zeros(total, np.float32)
        self.dict: dict[str, NDArray[np.float32]] = {
            name: self.tensor[o : o + size].reshape(shape) for name, o, size, shape in pieces
        }
        self._obs = self.tensor[: self.obs_dim]

    def set_from(self, state: TarocchiState, player: int) -> None:
        """Write ``state`` seen by ``player`` into ``tensor`` (and its named views in ``dict``)."""
        self.tensor.fill(0.0)
        t = state._views
        if t is None:  # during the deal: the cards he has seen and his seat
            for k in self.cfg.visible_slots(player):
                if k < len(state._dealt):
                    self.dict["hand"][state._dealt[k]] = 1.0
                    if self.perfect_recall:
                        self.dict["initial_hand"][state._dealt[k]] = 1.0
            self.dict["seat"][player] = 1.0
            return
        core = t.state._env
        observe_row(core.state, 0, int(player), core.tables, self._obs)
        if self.perfect_recall:
            ids, rest = [], t.initial_hands[player]
            while rest:
                low = rest & -rest
                ids.append(low.bit_length() - 1)
                rest ^= low
            self.dict["initial_hand"][ids] = 1.0
            played = np.flatnonzero(t.trick_of >= 0)
            self.dict["trick_of_card"][played, t.trick_of[played]] = 1.0

    def string_from(self, state: TarocchiState, player: int) -> str:
        """Information-state string (perfect recall) or the observation as text (module docstring)."""
        if self.perfect_recall:
            t = state._views
            if t is not None:
                return t.info_string(player)
            names = self.cfg.deck.names
            seen = [names[state._dealt[k]] for k in self.cfg.visible_slots(player) if k < len(state._dealt)]
            return f"p{player} deal:{len(state._dealt)}/{self.cfg.n_cards} hand:{','.join(sorted(seen))}"
        self.set_from(state, player)
        names = self.cfg.deck.names
        parts = [f"p{player}"]
        for name, _, _, _ in self.pieces:
            view = self.dict[name]
            if not view.any():
                continue
            if name in _CARD_PLANES:
                parts.append(f"{name}:" + ",".join(names[c] for c in np.flatnonzero(view)))
            elif name in _SEAT_PLANES:
                seats = [f"{r}=" + ",".join(names[c] for c in np.flatnonzero(row)) for r, row in enumerate(view)
                         if row.any()]
                parts.append(f"{name}:" + "/".join(seats))
            else:
                flat = view.reshape(-1)
                nz = np.flatnonzero(flat)
                if (flat[nz] == 1.0).all():
                    parts.append(f"{name}:" + ",".join(map(str, nz)))
                else:
                    parts.append(f"{name}:" + ",".join(f"{k}={flat[k]:.4g}" for k in nz))
        return " ".join(parts)


# ----------------------------------------------------------------------------------------------------------
# registration (importing this module registers the games)


def _game_class(variant: str) -> type:
    """The pyspiel creator of a variant: a TarocchiGame subclass taking the game parameters (a class, as
    in OpenSpiel's own Python games: a plain closure in pyspiel's registry crashes Python at exit)."""

    def __init__(self: TarocchiGame, params: Mapping[str, Any] | None = None) -> None:
        TarocchiGame.__init__(self, variant, params)

    name = "Tarocchi" + variant.capitalize() + "Game"
    return type(name, (TarocchiGame,), {"__init__": __init__, "__doc__": f"pyspiel game {GAME_NAMES[variant]}"})


_GAME_TYPES = {v: _game_type(v) for v in VARIANTS}
GAME_CLASSES = {v: _game_class(v) for v in VARIANTS}
for _v in VARIANTS:
    if GAME_NAMES[_v] not in pyspiel.registered_names():
        pyspiel.register_game(_GAME_TYPES[_v], GAME_CLASSES[_v])
