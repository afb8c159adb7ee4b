"""docs/architecture.md's layout names every module and package of memory, maintenance and ormah_site (whisper's
are in docs/whisper.md, "Layout"), so a new engineer finds each one there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP = {"__init__", "apps", "admin", "migrations", "management", "__pycache__"}


def test_every_module_of_the_apps_is_named_in_the_architecture_doc():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    unnamed = []
    for app in ("memory", "maintenance", "ormah_site"):
        for path in sorted((ROOT / app).iterdir()):
            if path.is_dir() and (path / "__init__.py").exists() and path.name not in SKIP:
                shown = path.name + "/"
            elif path.suffix == ".py" and path.stem not in SKIP:
                shown = path.name
            else:
                continue
            if not re.search(r"(?<![\w.])" + re.escape(shown), doc) and f"{app}.{path.stem}" not in doc:
                unnamed.append(f"{app}/{shown}")
    assert unnamed == []


def test_every_module_the_architecture_doc_names_exists():
    """The reverse: a module named as a path (`memory/index.py`) or dotted (`memory.index`, `whisper.hook_net.x`)
    is in the tree, so a module renamed or removed leaves no stale name behind."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    stale = [path for path in re.findall(r"(?<![\w./$-])((?:memory|whisper|maintenance|ormah_site)/[\w/]+\.py)", doc)
             if not (ROOT / path).is_file()]
    for dotted in re.findall(r"(?<![\w./])((?:memory|whisper|maintenance|ormah_site)(?:\.[a-z_]\w*)+)", doc):
        parts = dotted.split(".")
        for n in range(len(parts), 0, -1):
            module = ROOT.joinpath(*parts[:n])
            source = module.with_suffix(".py") if module.with_suffix(".py").is_file() else module / "__init__.py"
            if source.is_file():
                break
        else:
            source = None
        # a module, or one name defined or imported in it (`memory.index.sync`, `whisper.hook_net.foreign_server`)
        if source is None or n < len(parts) - 1 or (n == len(parts) - 1
                                                    and not re.search(rf"\b{parts[-1]}\b", source.read_text())):
            stale.append(dotted)
    assert stale == []
