"""The LoCoMo dev split read into conversations, turns and questions (bench/locomo.py states the protocol).

The data is read from ../shared/benchmarks/locomo-dev relative to the repository root (never copied into it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench._common import REPO


def shared_dir() -> Path:
    """../shared beside the repository root; from a git worktree, beside the main checkout's root."""
    here = REPO.parent / "shared"
    if here.is_dir():
        return here
    common = REPO / ".git"
    if common.is_file():  # a worktree: ".git" names the main repository's git dir
        gitdir = Path(common.read_text().split(":", 1)[1].strip())
        main_root = gitdir.parent.parent.parent if gitdir.parent.name == "worktrees" else gitdir.parent
        if (main_root.parent / "shared").is_dir():
            return main_root.parent / "shared"
    return here


DATA = shared_dir() / "benchmarks" / "locomo-dev" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


@dataclass(frozen=True)
class Turn:
    dia_id: str
    text: str
    created: datetime


@dataclass(frozen=True)
class Question:
    text: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def _session_date(raw: str) -> datetime:
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load_split(path: Path = DATA) -> list[Conversation]:
    """The conversations of the split, or SystemExit with a plain message when the data is absent."""
    if not path.is_file():
        raise SystemExit(f"LoCoMo dev split not found at {path}: it lives outside the repository "
                         "(../shared/benchmarks/locomo-dev/); nothing to measure.")
    out = []
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        turns = []
        sessions = sorted((int(k.split("_")[1]), k) for k in conv if re.fullmatch(r"session_\d+", k))
        for _, key in sessions:
            created = _session_date(conv[f"{key}_date_time"])
            for t in conv[key]:
                text = f"{t['speaker']}: {t['text']}"
                if t.get("blip_caption"):
                    text += f" [shares {t['blip_caption']}]"
                turns.append(Turn(dia_id=t["dia_id"], text=text, created=created))
        known = {t.dia_id for t in turns}
        questions = []
        for qa in sample["qa"]:
            evidence = tuple(e for e in qa.get("evidence", []) if e in known)
            if qa.get("category") in CATEGORIES and evidence:
                questions.append(Question(text=qa["question"], evidence=evidence, category=qa["category"]))
        out.append(Conversation(sample_id=sample["sample_id"], turns=tuple(turns), questions=tuple(questions)))
    return out


def folds(convs: list[Conversation], n: int) -> list[list[str]]:
    """Conversation ids split into n folds (round robin in split order; n = number of conversations: one each)."""
    n = max(1, min(n, len(convs)))
    return [[c.sample_id for c in convs[i::n]] for i in range(n)]
