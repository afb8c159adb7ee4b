"""Every ORMAH_* variable the settings read is in the README's configuration tables (a row may shorten a family:
`ORMAH_WHISPER_AFFINITY_SIMILARITY` / `_HALF_LIFE_DAYS`)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_variable_the_settings_read_is_in_the_readme():
    settings = (ROOT / "ormah_site" / "settings.py").read_text()
    read = {f"ORMAH_{name}" for name in re.findall(r'_env(?:_path|_bool|_float|_int)?\("([A-Z0-9_]+)"', settings)}
    assert len(read) > 50
    readme = (ROOT / "README.md").read_text()
    named = set(re.findall(r"`(ORMAH_[A-Z0-9_]+)`", readme))
    for full, tails in re.findall(r"`(ORMAH_[A-Z0-9_]+)`((?: / `_[A-Z0-9_]+`)+)", readme):  # `ORMAH_X_Y` / `_Z`
        named |= {full.rsplit("_", 1)[0] + tail for tail in re.findall(r"`(_[A-Z0-9_]+)`", tails)}
    assert read - named == set()


def test_on_the_server_side_only_the_settings_read_ormah_variables():
    """docs/architecture.md: settings.py is the server's one reader (ORMAH_SQLITE_DRIVER aside, read by the backend
    it picks the driver for); the Django-free clients (the CLI's thin path, the hook, setup) read their own."""
    clients = {"ormah_site/settings.py", "ormah_site/sqlitevec/base.py", "whisper/hook.py", "whisper/hook_env.py",
               "whisper/claude_settings.py"}
    readers = []
    for app in ("memory", "whisper", "maintenance", "ormah_site"):
        for path in sorted((ROOT / app).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in clients or rel.startswith("ormah_site/cli/"):
                continue
            if re.search(r"(environ\.get|environ\[|getenv)\(?\s*[\"']ORMAH_", path.read_text()):
                readers.append(rel)
    assert readers == []


def _readme_defaults() -> dict[str, str]:
    """Each variable of the README's tables with its Default cell's part (`ORMAH_A` / `ORMAH_B` | `1` / `2`)."""
    defaults = {}
    for line in (ROOT / "README.md").read_text().splitlines():
        if not line.startswith("| `ORMAH_"):
            continue
        names_cell, default_cell = (c.strip() for c in line.strip("|").split("|")[:2])
        names = []
        for name in re.findall(r"`(ORMAH_[A-Z0-9_]+|_[A-Z0-9_]+)`", names_cell):
            names.append(re.sub(r"_[A-Z0-9]+$", "", names[0]) + name if name.startswith("_") else name)
        for name, default in zip(names, default_cell.split(" / ")):
            defaults[name] = default.strip()
    return defaults


def _code_default(name: str, literal: str):
    """A settings default as a value (None when it is not a plain literal); a whisper setting whose default is None
    in the settings takes whisper.conf's."""
    import ast

    from whisper.conf import WhisperConf

    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        return None
    if value is None and name.startswith("ORMAH_WHISPER_"):
        value = getattr(WhisperConf(), name.removeprefix("ORMAH_WHISPER_").lower(), None)
    return value


def test_every_plain_default_in_the_readme_is_the_code_default():
    settings = (ROOT / "ormah_site" / "settings.py").read_text()
    code = {}
    for name, literal in re.findall(r'_env(?:_path|_bool|_float|_int)?\("([A-Z0-9_]+)", ([^)]+?)\)', settings):
        code.setdefault(f"ORMAH_{name}", literal)
    checked, wrong = 0, []
    for name, shown in _readme_defaults().items():
        plain = re.fullmatch(r"`([^`]+)`", shown)
        value = _code_default(name, code[name]) if plain and name in code else None
        if value is None:
            continue
        checked += 1
        text = plain.group(1)
        if isinstance(value, bool):
            same = text == str(value).lower()
        elif isinstance(value, (int, float)):
            same = float(text) == float(value)
        else:
            same = text == value
        if not same:
            wrong.append((name, text, value))
    assert checked > 60
    assert wrong == []


def test_every_whisper_variable_the_settings_read_is_in_the_whisper_settings_table():
    settings = (ROOT / "ormah_site" / "settings.py").read_text()
    read = set(re.findall(r'_env(?:_path|_bool|_float|_int)?\("WHISPER_([A-Z0-9_]+)"', settings))
    assert len(read) > 30
    doc = (ROOT / "docs" / "whisper.md").read_text()
    table = doc.split("## Settings (`ORMAH_WHISPER_*`)", 1)[1].split("\n## ", 1)[0]
    named = set()
    for row in re.findall(r"^\| (.+?) \|", table, re.M):
        names = re.findall(r"`([A-Z0-9_]+)`", row)
        for name in names:
            named.add(re.sub(r"_[A-Z0-9]+$", "", names[0]) + name if name.startswith("_") else name)
    assert read - named == set()


def test_every_plain_default_in_the_whisper_settings_table_is_whisper_confs():
    from whisper.conf import WhisperConf

    conf = WhisperConf()
    table = (ROOT / "docs" / "whisper.md").read_text().split("## Settings (`ORMAH_WHISPER_*`)", 1)[1]
    checked, wrong = 0, []
    for names_cell, default_cell in re.findall(r"^\| (.+?) \| (.+?) \|", table.split("\n## ", 1)[0], re.M):
        names = []
        for name in re.findall(r"`([A-Z0-9_]+)`", names_cell):
            names.append(re.sub(r"_[A-Z0-9]+$", "", names[0]) + name if name.startswith("_") else name)
        for name, shown in zip(names, default_cell.split(" / ")):
            shown, value = shown.strip(), getattr(conf, name.lower(), None)
            if isinstance(value, bool) and shown in ("true", "false"):
                checked += 1
                if shown != str(value).lower():
                    wrong.append((name, shown, value))
            elif isinstance(value, (int, float)) and re.fullmatch(r"[0-9.]+", shown):
                checked += 1
                if float(shown) != float(value):
                    wrong.append((name, shown, value))
    assert checked > 30
    assert wrong == []
