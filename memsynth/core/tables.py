"""Output tables declared as pydantic row models, with Arrow schemas derived from them."""

from __future__ import annotations

import datetime as dt
import json
import types
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import AwareDatetime, BaseModel

if TYPE_CHECKING:
    import pyarrow as pa

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Ref:
    """A reference: each row's `column` (every element, for a list; NULL: none) names a row
    of `table` by its `key`. With `when=(column, value)`, only rows holding that value refer."""

    column: str
    table: str
    key: str
    when: tuple[str, Any] | None = None


@dataclass(frozen=True)
class Table:
    """A named output table whose rows are instances of `row`.

    `key` names one row's item (for the record when it leaves); `refs` are the rows it
    cannot stand without: a row whose reference breaks leaves the build with it.
    """

    name: str
    row: type[BaseModel]
    key: str | None = None
    refs: tuple[Ref, ...] = ()

    @property
    def schema(self) -> pa.Schema:
        return arrow_schema(self.row)

    def to_arrow(self, rows: list[BaseModel]) -> pa.Table:
        """Rows as an Arrow table with this table's exact schema (even when empty).

        Built column by column from the attributes: dumping each row to a dict first cost
        more than the rest of a cached rebuild.
        """
        import pyarrow as pa

        schema = self.schema
        columns = []
        for name, f in self.row.model_fields.items():
            values = [getattr(row, name) for row in rows]
            kind = _value_kind(f.annotation)
            if kind == "json":
                values = [None if v is None else json.dumps(v, ensure_ascii=False, sort_keys=True,
                                                             default=str) for v in values]
            elif kind == "models":
                values = [None if v is None else [m.model_dump() for m in v] for v in values]
            columns.append(pa.array(values, type=schema.field(name).type))
        return pa.Table.from_arrays(columns, schema=schema)


def trusted_row(model: type[M], values: dict[str, Any]) -> M:
    """A row from values that are already valid (taken from a validated answer or built by
    the runner), with every field given: pydantic's `model_construct` without its per-field
    work, a quarter of its cost, which tells on the hundreds of thousands of turn rows a
    build makes. Anything short of every field goes through `model_construct`."""
    if values.keys() != model.__pydantic_fields__.keys():
        return model.model_construct(**values)
    row = model.__new__(model)
    object.__setattr__(row, "__dict__", values)
    object.__setattr__(row, "__pydantic_fields_set__", set(values))
    object.__setattr__(row, "__pydantic_extra__", None)
    object.__setattr__(row, "__pydantic_private__", None)
    return row


def arrow_schema(model: type[BaseModel]) -> pa.Schema:
    """The Arrow schema of a row model: scalars, dates, lists and nested models map directly;
    free-form dicts become JSON text."""
    # pyarrow (with numpy, 0.1 s) is imported where a schema is first wanted, not by every
    # command that declares tables: a config error is reported before it loads.
    import pyarrow as pa

    return pa.schema([pa.field(name, _arrow_type(f.annotation), nullable=_nullable(f.annotation))
                      for name, f in model.model_fields.items()])


def _strip_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


def _nullable(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType) and type(None) in typing.get_args(tp)


def _arrow_type(tp: Any) -> pa.DataType:
    import pyarrow as pa

    tp = _strip_optional(tp)
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return pa.string()
    if origin in (list, tuple):
        (inner, *_) = typing.get_args(tp) or (str,)
        return pa.list_(_arrow_type(inner))
    if origin is dict or tp is dict or tp is Any:
        return pa.string()
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return pa.struct([pa.field(n, _arrow_type(f.annotation)) for n, f in tp.model_fields.items()])
    # Wall-clock times (log timestamps) stay naive; instants (when a call ran) are UTC.
    mapping = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_(),
               dt.date: pa.date32(), dt.datetime: pa.timestamp("us"),
               AwareDatetime: pa.timestamp("us", tz="UTC")}
    if tp in mapping:
        return mapping[tp]
    raise TypeError(f"no Arrow type for {tp!r}")


def _value_kind(tp: Any) -> str:
    """'json' for free-form dicts (stored as JSON text), 'models' for lists of row models."""
    tp = _strip_optional(tp)
    if typing.get_origin(tp) is dict or tp is dict or tp is Any:
        return "json"
    if typing.get_origin(tp) in (list, tuple):
        (inner, *_) = typing.get_args(tp) or (str,)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return "models"
    return "plain"
