"""The memory app's typed, frozen configuration, built from settings.ORMAH."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings


@dataclass(frozen=True, slots=True)
class MemoryConf:
    home: Path
    memory_dir: Path
    token_file: Path
    api_token: str | None
    model_cache_dir: Path
    embedder: str
    embedding_model: str
    embedding_threads: int | None
    auto_link_threshold: float
    cross_space_penalty: float
    core_cap: int
    self_name: str
    default_space: str | None

    @property
    def lock_file(self) -> Path:
        return self.home / ".write.lock"

    @property
    def evidence_dir(self) -> Path:
        """The evidence ledger's day files (docs/trust.md)."""
        return self.home / "evidence"


# The last conf built and a copy of the settings.ORMAH it was built from: one entry, replaced when the settings differ.
_built: tuple[dict, MemoryConf] | None = None


def get_conf() -> MemoryConf:
    """The conf of the current settings.ORMAH: built again whenever it differs from the one the last conf was built
    from (an override_settings, a key set in place), else that conf (a remember asks for it ~6 times; building it
    took ~11 us, the comparison ~1 us: docs/benchmarks.md "Served CPU, session 26")."""
    global _built
    o = settings.ORMAH
    built = _built
    if built is not None and built[0] == o:
        return built[1]
    conf = _build(o)
    _built = (dict(o), conf)
    return conf


def _build(o) -> MemoryConf:
    return MemoryConf(
        home=Path(o["HOME"]),
        memory_dir=Path(o["MEMORY_DIR"]),
        token_file=Path(o["TOKEN_FILE"]),
        api_token=o.get("API_TOKEN"),
        model_cache_dir=Path(o["MODEL_CACHE_DIR"]),
        embedder=o["EMBEDDER"],
        embedding_model=o["EMBEDDING_MODEL"],
        embedding_threads=o.get("EMBEDDING_THREADS"),
        auto_link_threshold=float(o["AUTO_LINK_THRESHOLD"]),
        cross_space_penalty=float(o["CROSS_SPACE_PENALTY"]),
        core_cap=int(o["CORE_CAP"]),
        self_name=o["SELF_NAME"],
        default_space=o.get("SPACE"),
    )
