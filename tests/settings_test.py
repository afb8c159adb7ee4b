"""Test settings: a temporary ORMAH_HOME unless one is given, then the real settings."""

import os
import tempfile
from pathlib import Path

os.environ.setdefault("ORMAH_HOME", tempfile.mkdtemp(prefix="ormah-test-home-"))
os.environ.setdefault("ORMAH_MODEL_CACHE_DIR", str(Path(tempfile.gettempdir()) / "ormah-test-models"))

from ormah_site.settings import *  # noqa: E402,F401,F403
