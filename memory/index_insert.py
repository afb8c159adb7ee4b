"""Inserting derived index rows without the ORM's query compiler: the values `bulk_create` would send (each field's
own `pre_save` and `get_db_prep_save`), one multi-row INSERT per CHUNK rows.

A remember inserts one node row, one embedding-cache row and a few edges: `bulk_create` cost ~0.5, ~0.16 and
~0.27 ms CPU of it, mostly building the statement (docs/benchmarks.md, "Served CPU, session 19").

A value of a plain field that is already what the field would make of it (a `str` for a CharField or TextField, a
`float` for a FloatField, a `bool` for a BooleanField, an `int` for an IntegerField or BigIntegerField where the
backend sends ints as they are (not psycopg 3's), an `int` for a ForeignKey to an auto id where the backend takes any
id (not MySQL's), None for any of them but a BooleanField) is sent as it is: Django's chain of five
calls per value (pre_save, get_db_prep_save, get_db_prep_value, get_prep_value, to_python) returns that same object
for it. Anything else (another type, a subclass, a lazy string, an expression, a field of another class or one of
ours) goes through the chain. A whisper call's candidate rows (~20 rows of 16 columns) cost 0.30 ms through the
chain and ~0.05 this way (docs/benchmarks.md, "Served CPU, session 22").
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection
from django.db.backends.base.operations import BaseDatabaseOperations
from django.db.models import (AutoField, BigAutoField, BigIntegerField, BooleanField, CharField, Field, FloatField,
                              ForeignKey, IntegerField, Model, TextField)
from django.db.models.constants import OnConflict

from memory.index_rows import CHUNK


# A field class (exactly) -> the value types it returns unchanged, and whether None passes unchanged.
_PLAIN: dict[type, tuple[tuple[type, ...], bool]] = {CharField: ((str,), True), TextField: ((str,), True),
                                                      FloatField: ((float,), True), BooleanField: ((bool,), False)}
_INTEGERS: dict[type, tuple[tuple[type, ...], bool]] = {IntegerField: ((int,), True), BigIntegerField: ((int,), True)}
_PLANS: dict[tuple, list[tuple[Field, str, tuple[type, ...] | None, bool]]] = {}


def _plan(model: type[Model], fields: list[Field]) -> list[tuple[Field, str, tuple[type, ...] | None, bool]]:
    """Per field: (field, attname, the value types sent as they are (None: always the chain), None sent as it is)."""
    ops = type(connection.ops)
    key = (model, ops)
    plan = _PLANS.get(key)
    if plan is None:
        plain = dict(_PLAIN)
        if ops.adapt_integerfield_value is BaseDatabaseOperations.adapt_integerfield_value:  # psycopg 3 wraps ints
            plain.update(_INTEGERS)
        autopk = ops.validate_autopk_value is BaseDatabaseOperations.validate_autopk_value  # MySQL refuses 0
        plan = []
        for f in fields:
            types, none_ok = plain.get(type(f), (None, False))
            if type(f) is ForeignKey and type(f.target_field) in (AutoField, BigAutoField) and autopk:
                types, none_ok = (int,), True  # the target's id as it is (None: no target)
            plan.append((f, f.attname, types, none_ok))
        _PLANS[key] = plan  # the same list whichever thread builds it first
    return plan


def _values(plan: list[tuple[Field, str, tuple[type, ...] | None, bool]], objs: Sequence[Model]) -> list:
    """The values `bulk_create` sends for `objs`, row after row (see the module's docstring)."""
    out = []
    append = out.append
    for obj in objs:
        for f, attname, types, none_ok in plan:
            if types is not None:
                value = getattr(obj, attname)
                if type(value) in types or (value is None and none_ok):
                    append(value)
                    continue
            append(f.get_db_prep_save(f.pre_save(obj, True), connection))
    return out


def insert_rows(model: type[Model], objs: Sequence[Model], *, ignore_conflicts: bool = False) -> None:
    """Insert `objs` (new instances of `model`) as `model.objects.bulk_create(objs, batch_size=CHUNK,
    ignore_conflicts=...)` does: the same columns and values; without ignore_conflicts each instance gets its new
    primary key and is marked saved. A backend that cannot return ids from a multi-row insert gets bulk_create."""
    objs = list(objs)
    if not objs:
        return
    pk = model._meta.pk
    if (not ignore_conflicts and not connection.features.can_return_rows_from_bulk_insert) or \
            any(obj.pk is not None for obj in objs):
        model.objects.bulk_create(objs, batch_size=CHUNK, ignore_conflicts=ignore_conflicts)
        return
    for obj in objs:  # as bulk_create: a related instance's id copied in (an unsaved one refused)
        obj._prepare_related_fields_for_save(operation_name="bulk_create")
    fields = [f for f in model._meta.concrete_fields if f is not pk]
    plan = _plan(model, fields)
    ops = connection.ops
    on_conflict = OnConflict.IGNORE if ignore_conflicts else None
    columns = ", ".join(ops.quote_name(f.column) for f in fields)
    head = f"{ops.insert_statement(on_conflict=on_conflict)} {ops.quote_name(model._meta.db_table)} ({columns}) VALUES "
    row_sql = "(" + ", ".join(["%s"] * len(fields)) + ")"
    tail = ops.on_conflict_suffix_sql(fields, on_conflict, None, None) if ignore_conflicts else ""
    if not ignore_conflicts:
        tail += f" RETURNING {ops.quote_name(pk.column)}"
    with connection.cursor() as cur:
        for at in range(0, len(objs), CHUNK):
            chunk = objs[at:at + CHUNK]
            params = _values(plan, chunk)
            cur.execute(head + ", ".join([row_sql] * len(chunk)) + (" " + tail.strip() if tail else ""), params)
            if ignore_conflicts:
                continue
            for obj, (new_id,) in zip(chunk, cur.fetchall(), strict=True):
                setattr(obj, pk.attname, new_id)
                obj._state.adding = False
                obj._state.db = connection.alias
