"""The OpenAPI description of ``tarocchi-rl serve`` (``GET /openapi.json``), written by hand next to the routes it
describes (:mod:`tarocchi_rl.web.app`); a test checks that it lists every route."""

from typing import Any

from .. import __version__
from ..bot import PROTOCOL as BOT_PROTOCOL
from ..bot import VARIANTS, WANTS
from ..game import RECORD_FORMAT


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _error(description: str) -> dict[str, Any]:
    return _json({"$ref": "#/components/schemas/Error"}, description)


def _busy(description: str) -> dict[str, Any]:
    """A refusal that says when to come back: the error body and the ``Retry-After`` header (seconds)."""
    return {**_error(description), "headers": {"Retry-After": {
        "schema": {"type": "integer"}, "description": "seconds to wait before trying again"}}}


def openapi_schema(protocol: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document (``protocol``: the WebSocket protocol's name)."""
    obj = {"type": "object"}
    act_request = {
        "type": "object",
        "description": f"A {BOT_PROTOCOL} request (docs/bot-protocol.md): act, or hello for the bot's name and "
                       "capabilities.",
        "required": ["type"],
        "properties": {
            "type": {"enum": ["act", "hello"]},
            "id": {"type": ["integer", "string"]},
            "variant": {"enum": list(VARIANTS)},
            "options": obj,
            "seat": {"type": "integer"},
            "hand": {"type": "array", "items": {"type": "string"}, "description": "the seat's cards as dealt"},
            "history": {"type": "array", "items": {"type": "string"},
                        "description": "the seat's view of every step: '<seat>:<action>[;...]'"},
            "decision": {"type": "string", "description": "the phase of the decision: bid, auction, play, ..."},
            "want": {"type": "array", "items": {"enum": list(WANTS)}},
        },
        "additionalProperties": False,
    }
    answer = {
        "type": "object",
        "required": ["type"],
        "properties": {
            "type": {"enum": ["action", "hello", "error"]},
            "action": {"type": "string"},
            "probabilities": {"type": "object", "additionalProperties": {"type": "number"}},
            "value": {"type": "number"},
            "search": obj,
            "id": {"type": ["integer", "string"]},
            "error": {"type": "string"},
        },
    }
    record = {
        "type": "object",
        "description": f"A {RECORD_FORMAT} game record (tarocchi_rl/records.py); a line of an arena games.jsonl",
        "required": ["format", "variant", "deal", "actions"],
        "properties": {
            "format": {"const": RECORD_FORMAT},
            "variant": {"enum": list(VARIANTS)},
            "options": obj,
            "deal": {"type": "object", "required": ["hands", "stock"],
                     "properties": {"hands": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
                                    "stock": {"type": "array", "items": {"type": "string"}}}},
            "actions": {"type": "array", "items": {"type": "string"}},
            "result": {"type": "object", "properties": {"payoffs": {"type": "array", "items": {"type": "integer"}}}},
        },
    }
    outcome = {
        "type": "object",
        "description": "The one outcome schema (tarocchi_rl.variants.OUTCOME_FIELDS)",
        "properties": {
            "payoffs": {"type": "array", "items": {"type": "integer"}},
            "contract": {"type": ["string", "null"]},
            "declarer": {"type": ["integer", "null"]},
            "sides": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
            "card_points": {"type": "array", "items": {"type": "number"}},
            "card_point_units": {"type": "array", "items": {"type": "integer"}},
            "bonuses": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "side": {"type": "integer"}, "points": {"type": "integer"}}}},
            "details": obj,
        },
    }
    replay_result = {
        "type": "object",
        "required": ["valid", "variant", "options", "actions", "outcome", "summary", "record"],
        "properties": {
            "valid": {"const": True},
            "variant": {"type": "string"},
            "options": obj,
            "actions": {"type": "integer", "description": "number of actions"},
            "outcome": {"$ref": "#/components/schemas/Outcome"},
            "summary": {"type": "array", "items": {"type": "string"}},
            "record": {"$ref": "#/components/schemas/Record"},
            "steps": {"type": "array", "description": "with ?steps=true: the deal, then one entry per action: "
                      "{index, move, table} (table: the open snapshot, every hand shown)",
                      "items": {"type": "object", "properties": {
                          "index": {"type": "integer"}, "move": {"type": ["object", "null"]}, "table": obj}}},
        },
    }
    too_big = _error("the body is larger than the limit (1 MB by default)")
    not_json = _error("the body is not declared Content-Type: application/json")
    limits = {  # the limits against one greedy client (tarocchi_rl/web/limits.py)
        "408": _error("the body did not arrive within the limit (10 s by default); the connection is closed"),
        "429": _busy("this client address has its share of the work queued, or of its connections, already"),
        "503": _busy("the server's queue for this kind of work is full"),
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "tarocchi-rl", "version": __version__,
                 "description": "The browser game and the HTTP API of `tarocchi-rl serve`. Every error has a "
                                "body {\"error\": \"...\"}; a Host name the server does not serve is a 400; a "
                                "busy server answers 503 or 429 with Retry-After."},
        "paths": {
            "/": {"get": {"summary": "The page: play a deal against the server's bots, replay records",
                          "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}}}},
            "/ws": {"get": {
                "summary": f"WebSocket ({protocol}): one table per connection",
                "description": "Upgrade to a WebSocket. Client messages (JSON text): "
                               "{type: start, variant, options?, seats: ['human', BOT, ...], seed?, id?} (seed: "
                               "an integer or its digits as a string; a client's seed makes a practice table), "
                               "{type: act, action: 'play:KC' (or its id), id?}, {type: ping, id?}. Server "
                               "messages: {type: state, table, moves} (no seed before the end), {type: over, "
                               "seed (a string), practice, table, moves, outcome, summary, record, annulled}, "
                               "{type: error, error, fatal?}, {type: pong}; id is echoed. An idle table is closed "
                               "(code 4000); a handshake whose Origin is another site's is refused (code 1008).",
                "responses": {"101": {"description": "switching protocols"}}}},
            "/v1/variants": {"get": {
                "summary": "Variants: long names, players, options (type, default, choices), the action table",
                "responses": {"200": _json(obj, "{protocol, variants: [{name, long_name, players, hand_sizes, "
                                                "stock_size, declarer_role, bonus_unit, card_point_units, suits, "
                                                "cards, options, actions, bidding_actions}]}")}}},
            "/v1/bots": {"get": {
                "summary": "The bots this server offers, by name and index (the only names /ws and /v1/act accept)",
                "responses": {"200": _json(obj, "{bots: [{index, name, fast, capabilities, variants}], default, "
                                                "seats, idle_timeout}")}}},
            "/v1/health": {"get": {"summary": "Liveness and the number of open tables",
                                   "responses": {"200": _json(obj, "{status: 'ok', tables}")}}},
            "/v1/act": {"post": {
                "summary": f"One {BOT_PROTOCOL} act request answered by one of the server's bots",
                "parameters": [{"name": "agent", "in": "query", "required": False,
                                "schema": {"type": "string", "default": "heuristic"},
                                "description": "a bot of GET /v1/bots, by name"}],
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/ActRequest"}}}},
                "responses": {"200": _json({"$ref": "#/components/schemas/ActAnswer"}, "the bot's answer"),
                              "400": _json({"$ref": "#/components/schemas/ActAnswer"},
                                           "the bot's error answer {type: error, error}, or a bad agent / body"),
                              "413": too_big, "415": not_json, **limits}}},
            "/v1/replay": {"post": {
                "summary": "Validate and score a game record",
                "parameters": [{"name": "steps", "in": "query", "required": False,
                                "schema": {"type": "boolean", "default": False},
                                "description": "also return the open snapshot after every step"}],
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Record"}}}},
                "responses": {"200": _json({"$ref": "#/components/schemas/ReplayResult"}, "the record is valid"),
                              "400": _json({"allOf": [{"$ref": "#/components/schemas/Error"}, {
                                  "properties": {"action_index": {"type": ["integer", "null"]}}}]},
                                  "not JSON, or an invalid record: the reason and the action at fault"),
                              "413": too_big, "415": not_json, **limits}}},
            "/openapi.json": {"get": {"summary": "This document",
                                      "responses": {"200": _json(obj, "OpenAPI 3.1")}}},
        },
        "components": {"schemas": {
            "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
            "ActRequest": act_request,
            "ActAnswer": answer,
            "Record": record,
            "Outcome": outcome,
            "ReplayResult": replay_result,
        }},
    }
