"""The soak's `--home-cache`: indexed homes kept between runs, one per stamp (the memories and the code of the
`--repo` checkout that indexed them), in a folder the bench marked as its own and writes nothing else to."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from bench._common import Memory

# A `--home-cache` folder is the bench's once this file is in it; the bench then writes only its own entries there:
# this file and a folder per stamp (`_cache_slot`). A folder that holds anything else and not this file is refused.
CACHE_MARK = "soak-home"
CACHE_MARK_TEXT = "bench.soak's home cache: a folder per stamp (memories, seed, the --repo code), each a home\n"
# The packages of the --repo checkout whose files build and read the index (their migrations included).
CODE_PACKAGES = ("memory", "whisper", "maintenance", "ormah_site")


class SoakError(Exception):
    """A soak run that cannot start or would measure the wrong thing: bench.soak.main prints it and exits with 2."""


def code_digest(repo: Path) -> str:
    """A digest of every file of the `--repo` checkout's CODE_PACKAGES: the code that built an index. Not `git
    rev-parse HEAD`: a `git archive` has no .git, and a worktree may hold changes not committed."""
    digest = hashlib.sha256()
    for package in CODE_PACKAGES:
        for path in sorted((repo / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(f"{path.relative_to(repo)}\0".encode() + path.read_bytes() + b"\0")
    return digest.hexdigest()


def home_stamp(memories: list[Memory], seed: int, repo: Path) -> str:
    """What a cached home was built from: the memories themselves and the code of the checkout that indexed them
    (an A/B of two --repo checkouts must not serve one's index with the other's code)."""
    corpus_digest = hashlib.sha256(repr(memories).encode()).hexdigest()[:16]
    return f"memories={len(memories)} seed={seed} corpus={corpus_digest} code={code_digest(repo)}\n"


def claim_cache(cache: Path) -> None:
    """Make `cache` the bench's home cache, or refuse it: a folder that holds anything but not CACHE_MARK is not the
    bench's (`--home-cache ~/work`), and the bench writes and removes only its own entries. A cache of the first
    layout (CACHE_MARK held the stamp, `home` the one home) loses that home."""
    if cache.exists() and not cache.is_dir():
        raise SoakError(f"--home-cache {cache} is a file, not a folder")
    mark = cache / CACHE_MARK
    if cache.is_dir() and not mark.is_file() and any(cache.iterdir()):
        raise SoakError(f"--home-cache {cache} is not empty and has no {CACHE_MARK} file, so it is not a soak home "
                        f"cache; give a new or empty folder (the bench would write its homes there)")
    cache.mkdir(parents=True, exist_ok=True)
    if mark.is_file() and mark.read_text() != CACHE_MARK_TEXT:
        shutil.rmtree(cache / "home", ignore_errors=True)  # the first layout's home (its stamp had no code digest)
    mark.write_text(CACHE_MARK_TEXT)


def _cache_slot(cache: Path, stamp: str) -> Path:
    return cache / f"home-{hashlib.sha256(stamp.encode()).hexdigest()[:16]}"


def cached_home(cache: Path, stamp: str) -> Path | None:
    """The home cached for `stamp`, or None."""
    slot = _cache_slot(cache, stamp)
    if (slot / "stamp").is_file() and (slot / "stamp").read_text() == stamp and (slot / "home").is_dir():
        return slot / "home"
    return None


def cache_home(cache: Path, stamp: str, home: Path) -> None:
    """Keep a copy of `home` as the cached home of `stamp` (a folder of its own, so an A/B pair keeps both homes),
    copied aside first and renamed, so an interrupted copy is never taken for a home."""
    slot = _cache_slot(cache, stamp)
    partial = slot.with_name(slot.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    shutil.copytree(home, partial / "home", symlinks=True)
    (partial / "stamp").write_text(stamp)
    shutil.rmtree(slot, ignore_errors=True)
    partial.rename(slot)
