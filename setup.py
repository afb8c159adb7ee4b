"""Build step of the wheel: the top-level templates/ and static/ folders go inside it as ormah_site/templates and
ormah_site/static (settings look there first). Everything else is declared in pyproject.toml."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
ASSETS = ("templates", "static")


class BuildPyWithAssets(build_py):
    """build_py plus a copy of each asset folder into the built ormah_site package (not for editable installs,
    which read the folders where they are)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name in ASSETS:
            source = ROOT / name
            if not source.is_dir():  # building from an sdist that already carries them inside ormah_site/
                continue
            target = Path(self.build_lib) / "ormah_site" / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))


setup(cmdclass={"build_py": BuildPyWithAssets})
