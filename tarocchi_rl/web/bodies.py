"""The JSON bodies of the HTTP API of ``tarocchi-rl serve``, as TypedDicts: what a client sends and gets back.
:mod:`~tarocchi_rl.web.openapi` derives the OpenAPI description from them (:mod:`~tarocchi_rl.web.schema`: a
class's docstring is its description, ``Annotated[..., Json(...)]`` adds JSON Schema keywords); a test checks the
server's answers against it.

Keys a body may leave out are declared in a ``total=False`` class over the required ones (Python 3.10 has no
``NotRequired``).
"""

from typing import Annotated, Any, Literal, TypedDict

from ..bot import PROTOCOL as BOT_PROTOCOL
from ..bot import VARIANTS, WANTS
from ..cards import SUIT_NAMES
from ..game import RECORD_FORMAT
from ..variants import OUTCOME_FIELDS
from .schema import Json

Variant = Annotated[str, Json(enum=list(VARIANTS))]
RequestId = int | str
Options = dict[str, Any]  # a variant's options by name (GET /v1/variants lists them)
Cards = list[str]  # card names, e.g. ["T20", "KC"]


def _outcome(field: str) -> Json:
    """The description of an outcome field, from the one outcome schema."""
    return Json(description=OUTCOME_FIELDS[field])


# -- errors ------------------------------------------------------------------------------------------------------
class Error(TypedDict):
    """Every error of the API: what went wrong."""

    error: str


class BusyError(Error, total=False):
    """A refusal of a busy server (503) or of a client over its share (429); the Retry-After header says when to
    come back, and so does ``retry_after`` when a work queue refused."""

    retry_after: Annotated[int, Json(description="seconds to wait before trying again")]


class ReplayError(Error, total=False):
    """A record that is not valid: the reason, and the index of the action at fault (null: none is)."""

    action_index: int | None


# -- POST /v1/act ------------------------------------------------------------------------------------------------
class _ActRequestKeys(TypedDict):
    type: Literal["act", "hello"]


class ActRequest(_ActRequestKeys, total=False):
    """A tarocchi-bot/1 request (docs/bot-protocol.md): act, or hello for the bot's name and capabilities."""

    id: RequestId
    protocol: Annotated[str, Json(description=f"hello: the protocol the client speaks ({BOT_PROTOCOL})")]
    variant: Variant
    options: Options
    seat: int
    hand: Annotated[Cards, Json(description="the seat's cards as dealt")]
    history: Annotated[list[str], Json(description="the seat's view of every step: '<seat>:<action>[;...]'")]
    decision: Annotated[str, Json(description="the phase of the decision: bid, auction, play, ...")]
    want: list[Annotated[str, Json(enum=list(WANTS))]]


class SearchStats(TypedDict):
    """A search's statistics: visits per legal action, and the iterations."""

    visits: dict[str, int]
    iterations: int


class _ActAnswerKeys(TypedDict):
    type: Literal["action", "hello", "error"]


class ActAnswer(_ActAnswerKeys, total=False):
    """A bot's answer: its action (with what the request wanted), its hello, or an error."""

    action: str
    probabilities: dict[str, float]
    value: float
    search: SearchStats
    beliefs: Annotated[dict[str, dict[str, float]],
                       Json(description="per unseen card, the probability of each location (seat0.., stock, "
                                        "discard)")]
    id: RequestId
    error: str
    protocol: str
    name: str
    agent: Annotated[str, Json(description="hello: the bot's name on this server (never a spec)")]
    version: str
    variants: list[Variant]
    capabilities: list[str]


# -- records and POST /v1/replay ---------------------------------------------------------------------------------
class Deal(TypedDict):
    """The cards as dealt: every seat's hand in deal order, and the stock."""

    hands: list[Cards]
    stock: Cards


class RecordResult(TypedDict, total=False):
    """A finished record's result (checked against the engine when given)."""

    payoffs: list[int]


class _RecordKeys(TypedDict):
    format: Annotated[str, Json(const=RECORD_FORMAT)]
    variant: Variant
    deal: Deal
    actions: list[str]


class Record(_RecordKeys, total=False):
    """A tarocchi-record/1 game record (tarocchi_rl/records.py); a line of an arena games.jsonl"""

    options: Options
    result: RecordResult
    practice: Annotated[bool, Json(description="a web deal from a client's seed (a practice table): whatever "
                                               "collects web records must leave it out")]


class Bonus(TypedDict):
    """An itemised bonus, in the family's BONUS_UNIT."""

    name: str
    side: int
    points: int


class Outcome(TypedDict):
    """The one outcome schema (tarocchi_rl.variants.OUTCOME_FIELDS)"""

    payoffs: Annotated[list[int], _outcome("payoffs")]
    contract: Annotated[str | None, _outcome("contract")]
    declarer: Annotated[int | None, _outcome("declarer")]
    sides: Annotated[list[list[int]], _outcome("sides")]
    card_points: Annotated[list[float], _outcome("card_points")]
    card_point_units: Annotated[list[int], _outcome("card_point_units")]
    bonuses: Annotated[list[Bonus], _outcome("bonuses")]
    details: Annotated[dict[str, Any], _outcome("details")]


class ReplayStep(TypedDict):
    """A position of a replay: its index (0: the deal), the move that led to it, the open table (every hand
    shown)."""

    index: int
    move: dict[str, Any] | None
    table: dict[str, Any]


class _ReplayResultKeys(TypedDict):
    valid: Literal[True]
    variant: str
    options: Options
    actions: Annotated[int, Json(description="number of actions")]
    outcome: Outcome
    summary: list[str]
    sheet: Annotated[dict[str, Any], Json(description="the score in words (web/score_sheet.py): headline, rows "
                                                       "[{term, text}], tally (each side's tricks and final card "
                                                       "points, null without a contract)")]
    record: Record


class ReplayResult(_ReplayResultKeys, total=False):
    """A valid record, scored."""

    steps: Annotated[list[ReplayStep], Json(description="with ?steps=true: the deal, then one entry per action")]


# -- GET /v1/variants, /v1/bots, /v1/health ----------------------------------------------------------------------
class _VariantOptionKeys(TypedDict):
    name: str
    type: Literal["boolean", "integer", "string"]
    default: bool | int | str


class VariantOption(_VariantOptionKeys, total=False):
    """An option of a variant: its type and default; the choices of a string, the range of an integer."""

    choices: list[str]
    minimum: int
    maximum: int


class VariantInfo(TypedDict):
    """A variant: names, players, sizes, the facts of its family, its cards, options and action table."""

    name: Variant
    long_name: str
    players: int
    hand_sizes: list[int]
    stock_size: int
    declarer_role: str
    bonus_unit: str
    end_count: Annotated[str, Json(description="what the card points of the tricks leave to the end of the deal "
                                               "(the discard, the Excuse, ...)")]
    card_point_units: int
    suits: Annotated[str, Json(description="the suit letters, e.g. CDSB")]
    suit_system: Annotated[str, Json(enum=list(SUIT_NAMES), description="the suits' pattern (which symbols)")]
    cards: Cards
    card_labels: Annotated[list[str], Json(description="each card of cards in words, e.g. King of Hearts")]
    options: list[VariantOption]
    actions: Annotated[list[str], Json(description="every action by id")]
    bidding_actions: Annotated[dict[str, str], Json(description="id -> the action's name in a bidding phase, "
                                                                "where it differs (e.g. bid:pass)")]


class VariantList(TypedDict):
    """The variants the server plays, and the WebSocket protocol's name."""

    protocol: str
    variants: list[VariantInfo]


class BotInfo(TypedDict):
    """A bot of the server, by index and display name (never a spec)."""

    index: int
    name: str
    fast: bool
    capabilities: list[str]
    variants: list[Variant]


class BotList(TypedDict):
    """The bots a client may name, the default one, the page's default seating (null: none) and the seconds an
    idle table is kept."""

    bots: list[BotInfo]
    default: str
    seats: list[str] | None
    idle_timeout: float


class LobbyTable(TypedDict):
    """A shared table with a free seat: its code (join it with {type: join, code} over /ws), variant, options,
    who sits where (human: a person's seat, else the bot's name), its person seats and how many are taken, the
    seconds since it opened and whether it is a practice table (opened with a seed: its opener may know every
    hand)."""

    code: str
    variant: Variant
    options: Options
    players: int
    seats: list[str]
    people: int
    taken: int
    open_for: Annotated[int, Json(description="seconds since the table opened")]
    practice: Annotated[bool, Json(description="opened with a seed (open's seed): whoever knows it knows every "
                                   "hand; stored as a practice game")]


class TableList(TypedDict):
    """The lobby: the shared tables opened with lobby: true that have a free seat, newest first (at most 50);
    a table opened without it is never listed."""

    tables: list[LobbyTable]


class ChallengeInfo(TypedDict):
    """A duplicate challenge: play its deals one by one over /ws ({type: challenge, name, deal, player?}); after each
    deal your payoff is shown beside the challenged bot's on the same cards, from the same seat."""

    name: str
    variant: Variant
    options: Options
    deals: Annotated[int, Json(description="deals 0..deals-1")]
    seat: Annotated[int, Json(description="the person's seat")]
    players: Annotated[list[str], Json(description="per seat: human (the person's) or the opponent bot's name")]
    bot: Annotated[str, Json(description="the challenged bot's name")]
    key: Annotated[str, Json(description="32 hex digits naming the challenge's deals, seats and bots")]


class ChallengeList(TypedDict):
    """The server's duplicate challenges (built in and serve --challenges)."""

    challenges: list[ChallengeInfo]


class Health(TypedDict):
    """The server is alive; its open tables."""

    status: Literal["ok"]
    tables: int


CLOSED = (ActRequest,)  # bodies that refuse a key they do not declare (the bot protocol's field check)
