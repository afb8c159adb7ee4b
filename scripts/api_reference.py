"""Write the route-by-route reference of docs/api.md from the live OpenAPI schema (every parameter, every body
field with its type, default and description), or check that the file is up to date.

    python scripts/api_reference.py          # rewrite the "## Reference" section
    python scripts/api_reference.py --check  # exit 1 when a route, parameter or field is missing from it
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "api.md"
TITLE = "## Reference"
INTRO = ("Generated from the OpenAPI schema by `python scripts/api_reference.py` (a test fails when it is out of "
         "date). Types are JSON types; `?` marks an optional field, with its default after `=`.")


def _schema() -> dict:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")
    import django

    django.setup()
    from ormah_site.api import api

    return api.get_openapi_schema(path_prefix="/api")


def _ref(schema: dict, spec: dict) -> dict:
    while "$ref" in spec:
        spec = schema["components"]["schemas"][spec["$ref"].rsplit("/", 1)[1]]
    return spec


def _type(schema: dict, spec: dict) -> str:
    if "allOf" in spec and len(spec["allOf"]) == 1:
        return _type(schema, spec["allOf"][0])
    if "$ref" in spec:
        target = _ref(schema, spec)
        if "enum" in target:
            return _type(schema, target)
        return spec["$ref"].rsplit("/", 1)[1]
    if "enum" in spec:
        return " \\| ".join(f"`{v}`" for v in spec["enum"])
    if "const" in spec:
        return f"`{spec['const']}`"
    for key in ("anyOf", "oneOf"):
        if key in spec:
            parts = [_type(schema, s) for s in spec[key] if s.get("type") != "null"]
            return " \\| ".join(parts) + (" \\| null" if any(s.get("type") == "null" for s in spec[key]) else "")
    if spec.get("type") == "array":
        return f"array of {_type(schema, spec.get('items', {}))}"
    kind = spec.get("type", "any")
    return f"{kind} ({spec['format']})" if "format" in spec else kind


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


def _fields(schema: dict, spec: dict) -> list[str]:
    spec = _ref(schema, spec)
    required = set(spec.get("required", []))
    rows = []
    for name, field in spec.get("properties", {}).items():
        optional = "" if name in required else "?"
        default = f" = `{field['default']}`" if "default" in field and field["default"] is not None else ""
        limits = ", ".join(f"{k} {field[k]}" for k in ("minimum", "maximum", "minLength", "maxLength", "maxItems")
                           if k in field)
        note = " ".join(x for x in (field.get("description", ""), f"({limits})" if limits else "") if x)
        rows.append(f"| `{name}`{optional} | {_type(schema, field)}{default} | {_cell(note)} |")
    return rows


def render() -> str:
    schema = _schema()
    lines = [TITLE, "", INTRO, ""]
    for path, operations in sorted(schema["paths"].items()):
        for method, op in operations.items():
            lines += [f"### `{method.upper()} {path}`", "", _cell(op.get("summary", "")) + ".", ""]
            if op.get("description"):
                lines += [" ".join(op["description"].split()), ""]
            params = [p for p in op.get("parameters", []) if p.get("in") in ("query", "path")]
            if params:
                lines += ["| parameter | in | type | description |", "|---|---|---|---|"]
                for p in params:
                    spec = p.get("schema", {})
                    default = f" = `{spec['default']}`" if spec.get("default") is not None else ""
                    name = p["name"] + ("" if p.get("required") else "?")
                    lines.append(f"| `{name}` | {p['in']} | {_type(schema, spec)}{default} | "
                                 f"{_cell(p.get('description') or spec.get('description', ''))} |")
                lines.append("")
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body:
                lines += [f"Body: `{_type(schema, body)}`", "", "| field | type | description |", "|---|---|---|"]
                lines += _fields(schema, body) + [""]
            ok = next((c for c in op.get("responses", {}) if str(c).startswith("2")), None)
            if ok:
                content = op["responses"][ok].get("content", {}).get("application/json", {}).get("schema")
                lines += [f"Answer: {ok}" + (f" `{_type(schema, content)}`" if content else "") + "", ""]
    used = sorted(schema["components"]["schemas"])
    lines += ["### Answer shapes", ""]
    for name in used:
        rows = _fields(schema, schema["components"]["schemas"][name])
        if rows:
            lines += [f"#### `{name}`", "", "| field | type | description |", "|---|---|---|", *rows, ""]
    return "\n".join(lines).rstrip() + "\n"


def updated(text: str, section: str) -> str:
    pattern = re.compile(rf"^{re.escape(TITLE)}\n.*?(?=^## |\Z)", re.DOTALL | re.MULTILINE)
    if pattern.search(text):
        return pattern.sub(lambda _: section + "\n", text, count=1).rstrip() + "\n"
    return text.rstrip() + "\n\n" + section


def missing_entries(current: str, section: str) -> list[str]:
    """Routes, parameters and fields the generated reference has and docs/api.md lacks (wording may differ)."""
    missing = []
    documented = {block.split("`", 2)[1]: block for block in current.split("\n### ")[1:] if block.startswith("`")}
    for block in section.split("\n### ")[1:]:
        if not block.startswith("`"):
            continue
        name = block.split("`", 2)[1]
        if name not in documented:
            missing.append(name)
            continue
        for row in re.findall(r"^\| `([^`]+)`", block, re.MULTILINE):
            if f"| `{row}`" not in documented[name]:
                missing.append(f"{name} {row}")
    return missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/api.md is out of date")
    args = parser.parse_args()
    current = DOC.read_text()
    section = render()
    if args.check:
        missing = missing_entries(current, section)
        if missing:
            print(f"docs/api.md lacks {', '.join(missing[:10])}: run python scripts/api_reference.py",
                  file=sys.stderr)
            return 1
        return 0
    wanted = updated(current, section)
    DOC.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
