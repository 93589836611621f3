"""JSON Schemas (the 2020-12 dialect of OpenAPI 3.1) of Python type hints, for the bodies of
:mod:`~tarocchi_rl.web.bodies`: the OpenAPI description is derived from the types, never written twice.

- ``str``, ``int``, ``float``, ``bool``, ``None``: ``{"type": "string"}`` (``integer``, ``number``, ``boolean``,
  ``null``);
- ``list[T]``: ``{"type": "array", "items": T}`` (``list[Any]``: no ``items``);
- ``dict[str, Any]``: ``{"type": "object"}``; ``dict[str, T]``: with ``"additionalProperties": T``;
- ``Literal[a]``: ``{"const": a}``; ``Literal[a, b]``: ``{"enum": [a, b]}``;
- ``A | B``: ``{"type": [A, B]}`` when both are plain types, else ``{"anyOf": [A, B]}``;
- ``Annotated[T, Json(**keywords)]``: T's schema with the keywords added (a description, an enum, a default);
- a TypedDict: ``{"$ref": "#/components/schemas/NAME"}``, its object collected under its class name (the
  properties in the order declared, the required keys, the class docstring as its description);
- ``Any``: ``{}`` (anything).
"""

import inspect
import types
from collections.abc import Collection
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

_REF_PREFIX = "#/components/schemas/"
_PLAIN = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


class Json:
    """JSON Schema keywords added to an annotated type's schema: ``Annotated[str, Json(enum=["a", "b"])]``."""

    def __init__(self, **keywords: Any) -> None:
        self.keywords = keywords


def describe(text: str | None) -> str:
    """A docstring as one line of description (whitespace runs as single spaces; empty when there is none)."""
    return " ".join(inspect.cleandoc(text).split()) if text else ""


class SchemaBuilder:
    """Schemas of type hints (:meth:`schema`), every TypedDict met gathered in :attr:`components` under its class
    name; the TypedDicts of ``closed`` refuse the keys they do not declare (``additionalProperties: false``)."""

    def __init__(self, closed: Collection[type] = ()) -> None:
        self.components: dict[str, dict[str, Any]] = {}
        self.closed = closed
        self._models: dict[str, type] = {}

    def schema(self, hint: Any) -> dict[str, Any]:
        """The schema of ``hint`` (see the module's table); a TypeError naming a hint it cannot describe."""
        origin, args = get_origin(hint), get_args(hint)
        if hint is Any:
            return {}
        if hint in _PLAIN:
            return {"type": _PLAIN[hint]}
        if is_typeddict(hint):
            return self.ref(hint)
        if origin is Annotated:
            extra = {k: v for meta in args[1:] if isinstance(meta, Json) for k, v in meta.keywords.items()}
            return {**self.schema(args[0]), **extra}
        if origin is Literal:
            return {"const": args[0]} if len(args) == 1 else {"enum": list(args)}
        if origin in (Union, types.UnionType):
            return self._union(args)
        if origin is list:
            return {"type": "array"} if args[0] is Any else {"type": "array", "items": self.schema(args[0])}
        if origin is dict and args[0] is str:
            return {"type": "object"} if args[1] is Any else {"type": "object",
                                                             "additionalProperties": self.schema(args[1])}
        raise TypeError(f"no JSON Schema for the type hint {hint!r}")

    def _union(self, members: tuple[Any, ...]) -> dict[str, Any]:
        """``{"type": [...]}`` when every member is a plain type (``{"type": NAME}`` alone), else ``anyOf``."""
        schemas = [self.schema(m) for m in members]
        if all(s.keys() == {"type"} and isinstance(s["type"], str) for s in schemas):
            return {"type": [s["type"] for s in schemas]}
        return {"anyOf": schemas}

    def ref(self, model: type) -> dict[str, Any]:
        """A reference to the TypedDict ``model``'s component, collected on first use (a TypeError when another
        model of the same name was collected)."""
        name = model.__name__
        if self._models.setdefault(name, model) is not model:
            raise TypeError(f"two body types are named {name}: {self._models[name]!r} and {model!r}")
        if name not in self.components:
            self.components[name] = {}  # taken before its fields: a model may refer to itself
            self.components[name] = self._object(model)
        return {"$ref": _REF_PREFIX + name}

    def _object(self, model: Any) -> dict[str, Any]:
        """The object schema of a TypedDict: its docstring, its fields in the order declared, its required keys."""
        hints = get_type_hints(model, include_extras=True)
        out: dict[str, Any] = {"type": "object"}
        if description := describe(model.__doc__):
            out["description"] = description
        required = [k for k in hints if k in model.__required_keys__]
        if required:
            out["required"] = required
        out["properties"] = {k: self.schema(h) for k, h in hints.items()}
        if model in self.closed:
            out["additionalProperties"] = False
        return out
