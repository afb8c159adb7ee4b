"""The schemathesis run (tests/api/test_schemathesis.py) covers every API route: it parametrizes over the whole
published schema, and the only operation the schema leaves out is the Swagger UI asset route, whose hostile names
are tested in tests/hostile/test_traversal.py."""

from __future__ import annotations

from ormah_site.api import api


def _operations() -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    published, hidden = set(), set()
    for prefix, router in api._routers:
        for path, view in router.path_operations.items():
            for operation in view.operations:
                for method in operation.methods:
                    route = (method.lower(), "/api" + (prefix + path).replace("//", "/"))
                    (published if operation.include_in_schema else hidden).add(route)
    return published, hidden


def test_every_api_operation_but_the_docs_assets_is_in_the_fuzzed_schema():
    from tests.api.test_schemathesis import schema

    published, hidden = _operations()
    fuzzed = {(op.ok().method.lower(), op.ok().path) for op in schema.get_all_operations()}
    assert hidden == {("get", "/api/docs/assets/{name}")}
    assert fuzzed == published
    assert len(fuzzed) >= 38
