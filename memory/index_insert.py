"""Inserting derived index rows without the ORM's query compiler: the values `bulk_create` would send (each field's
own `pre_save` and `get_db_prep_save`), one multi-row INSERT per CHUNK rows.

A remember inserts one node row, one embedding-cache row and a few edges: `bulk_create` cost ~0.5, ~0.16 and
~0.27 ms CPU of it, mostly building the statement (docs/benchmarks.md, "Served CPU, session 19").
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection
from django.db.models import Model
from django.db.models.constants import OnConflict

from memory.index_rows import CHUNK


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
            params = [f.get_db_prep_save(f.pre_save(obj, True), connection) for obj in chunk for f in fields]
            cur.execute(head + ", ".join([row_sql] * len(chunk)) + (" " + tail.strip() if tail else ""), params)
            if ignore_conflicts:
                continue
            for obj, (new_id,) in zip(chunk, cur.fetchall(), strict=True):
                setattr(obj, pk.attname, new_id)
                obj._state.adding = False
                obj._state.db = connection.alias
