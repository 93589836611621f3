"""GET /openapi.json against the server it describes: every answer of every route (successes and errors) is valid
against the schema the document gives for its status, the requests sent are valid against the request schemas,
the act request's schema has the bot protocol's fields; and the schema builder of tarocchi_rl.web.schema."""

import json
from typing import Annotated, Any, Literal, TypedDict

import pytest
from starlette.testclient import TestClient

from tarocchi_rl.bot import FIELDS, PROTOCOL, Referee
from tarocchi_rl.game import RECORD_FORMAT
from tarocchi_rl.variants import OUTCOME_FIELDS
from tarocchi_rl.web import bodies
from tarocchi_rl.web.app import ServerConfig, create_app
from tarocchi_rl.web.schema import Json, SchemaBuilder

jsonschema = pytest.importorskip("jsonschema")  # installed with the dev extra (nbformat needs it)

LOCAL = "http://127.0.0.1:8000"  # a Host the server serves (loopback)


@pytest.fixture(scope="module")
def client():
    config = ServerConfig(agents=["net=bot:mineo"], ismcts="ismcts:iterations=20", warmup=False)
    with TestClient(create_app(config), base_url=LOCAL) as c:
        yield c


@pytest.fixture(scope="module")
def doc(client):
    out = client.get("/openapi.json")
    assert out.status_code == 200
    return out.json()


def check(doc: dict[str, Any], schema: dict[str, Any], body: Any) -> None:
    """``body`` is valid against ``schema`` (its references resolved in the document's components)."""
    jsonschema.Draft202012Validator({**schema, "components": doc["components"]}).validate(body)


def check_answer(doc: dict[str, Any], path: str, method: str, answer: Any) -> None:
    """The answer's body is valid against the schema the document gives for its route and status."""
    responses = doc["paths"][path][method]["responses"]
    assert str(answer.status_code) in responses, (path, answer.status_code, answer.text[:200])
    check(doc, responses[str(answer.status_code)]["content"]["application/json"]["schema"], answer.json())


def request_schema(doc: dict[str, Any], path: str) -> dict[str, Any]:
    return doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]


def first_request(variant: str, seed: int) -> dict[str, Any]:
    """The act request of a referee deal's first decision."""
    msg = Referee().handle(json.dumps({"type": "new", "variant": variant, "seed": seed}))
    assert msg["type"] == "turn"
    return msg["request"]


def test_every_schema_of_the_document_is_a_valid_json_schema(doc):
    for schema in doc["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)
    assert PROTOCOL in doc["components"]["schemas"]["ActRequest"]["description"]
    assert RECORD_FORMAT in doc["components"]["schemas"]["Record"]["description"]


def test_the_get_routes_answer_as_described(client, doc):
    for path in ("/v1/variants", "/v1/bots", "/v1/health", "/v1/tables", "/openapi.json"):
        check_answer(doc, path, "get", client.get(path))


def test_act_answers_and_errors_are_as_described(client, doc):
    req = first_request("mineo", 3)
    sent = [("heuristic", req), ("net", {**req, "want": ["probabilities", "value"], "id": 7}),
            ("ismcts", {**req, "want": ["search"], "id": "x"}), ("net", {"type": "hello", "protocol": PROTOCOL}),
            ("heuristic", {**req, "decision": "nonsense"})]
    for agent, body in sent:
        check(doc, request_schema(doc, "/v1/act"), body)
        answer = client.post(f"/v1/act?agent={agent}", json=body)
        check_answer(doc, "/v1/act", "post", answer)
    assert answer.status_code == 400 and answer.json()["type"] == "error"
    for url, body in (("/v1/act?agent=nobody", req), ("/v1/act", {"type": "quit"})):
        answer = client.post(url, json=body)
        assert answer.status_code == 400 and "type" not in answer.json()  # a plain error, not the bot's answer
        check_answer(doc, "/v1/act", "post", answer)
    check_answer(doc, "/v1/act", "post", client.post("/v1/act", content=b"{}", headers={"content-type": "text/plain"}))


def test_replay_answers_and_errors_are_as_described(client, doc):
    with client.websocket_connect("ws://127.0.0.1:8000/ws") as ws:
        ws.send_json({"type": "start", "variant": "piedmont3", "seats": ["human", "heuristic", "heuristic"],
                      "seed": 5})
        msg = ws.receive_json()
        while msg["type"] == "state":
            ws.send_json({"type": "act", "action": msg["table"]["legal"][0]["action"]})
            msg = ws.receive_json()
    record = msg["record"]
    check(doc, request_schema(doc, "/v1/replay"), record)
    for url in ("/v1/replay", "/v1/replay?steps=true"):
        answer = client.post(url, json=record)
        assert answer.status_code == 200
        check_answer(doc, "/v1/replay", "post", answer)
    bad = client.post("/v1/replay", json={**record, "actions": record["actions"][:5] + ["play:nothing"]})
    assert bad.status_code == 400 and bad.json()["action_index"] == 5
    check_answer(doc, "/v1/replay", "post", bad)


def test_the_act_request_schema_has_the_bot_protocols_fields(doc):
    schema = doc["components"]["schemas"]["ActRequest"]
    assert set(schema["properties"]) == set(FIELDS["act"]) | set(FIELDS["hello"])
    assert schema["additionalProperties"] is False
    with pytest.raises(jsonschema.ValidationError, match="colour"):
        check(doc, schema, {"type": "act", "colour": 1})
    assert list(doc["components"]["schemas"]["Outcome"]["properties"]) == list(OUTCOME_FIELDS)


class _Point(TypedDict, total=False):
    """A point."""

    x: int
    tag: Annotated[str, Json(description="a label")]


class _Shape(TypedDict):
    kind: Literal["a", "b"]
    corner: _Point
    corners: list[_Point]
    weight: float | None
    attrs: dict[str, Any]
    flag: Literal[True]
    either: _Point | int


def test_the_schema_builder():
    builder = SchemaBuilder()
    assert builder.schema(_Shape) == {"$ref": "#/components/schemas/_Shape"}
    shape, point = builder.components["_Shape"], builder.components["_Point"]
    assert shape["required"] == ["kind", "corner", "corners", "weight", "attrs", "flag", "either"]
    assert shape["properties"] == {
        "kind": {"enum": ["a", "b"]}, "corner": {"$ref": "#/components/schemas/_Point"},
        "corners": {"type": "array", "items": {"$ref": "#/components/schemas/_Point"}},
        "weight": {"type": ["number", "null"]}, "attrs": {"type": "object"}, "flag": {"const": True},
        "either": {"anyOf": [{"$ref": "#/components/schemas/_Point"}, {"type": "integer"}]}}
    assert point == {"type": "object", "description": "A point.", "properties": {
        "x": {"type": "integer"}, "tag": {"type": "string", "description": "a label"}}}  # nothing required
    assert "description" not in shape  # no docstring
    closed = SchemaBuilder(closed=[_Point])
    closed.schema(_Point)
    assert closed.components["_Point"]["additionalProperties"] is False


def test_the_schema_builder_refuses_what_it_cannot_describe():
    with pytest.raises(TypeError, match="set\\[int\\]"):
        SchemaBuilder().schema(set[int])
    with pytest.raises(TypeError, match="dict\\[int, str\\]"):
        SchemaBuilder().schema(dict[int, str])

    class _Point(TypedDict):  # another class of the same name
        y: int

    builder = SchemaBuilder()
    builder.schema(globals()["_Point"])
    with pytest.raises(TypeError, match="two body types are named _Point"):
        builder.schema(_Point)


def test_every_body_type_is_described():
    builder = SchemaBuilder(closed=bodies.CLOSED)
    for name in dir(bodies):
        model = getattr(bodies, name)
        if isinstance(model, type) and issubclass(model, dict) and not name.startswith("_"):
            builder.schema(model)
            assert builder.components[name].get("description"), f"{name} has no docstring"
