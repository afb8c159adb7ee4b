import json
import os
import stat
import time
from collections import defaultdict
from pathlib import Path

from memory import index, runtime
from memory.backends import backend
from memory.conf import get_conf
from memory.domain.node import utcnow
from memory.domain.wording import counted
from memory.management.base import OrmahCommand
from memory.ranking.scorer import load_scorer
from memory.schemas import CLOCK_SKEW
from memory.selectors import dangling_connections, index_drift, rows_dated_after, rows_without_vector
from memory.store import MAX_READ_BYTES, stale_temps
from memory.services import connections_prune_dangling, index_sync


class Warning_(Exception):  # noqa: N801
    """A finding that does not fail the doctor (exit 0) but is shown as WARN."""


def unread_files(folder: Path, *, limit: int = 1000) -> list[str]:
    """Memory-looking files under `folder` (nodes/) that no sync reads, relative to it: `.md` files in its subfolders
    and names ending in `.md` in another case (`.MD`); hidden files and folders (editors', a trash) are left out.
    At most `limit` folders are walked."""
    found: list[str] = []
    for i, (where, dirs, names) in enumerate(os.walk(folder)):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if i >= limit:
            break
        top = Path(where) == folder
        found += [os.path.relpath(os.path.join(where, n), folder) for n in sorted(names)
                  if not n.startswith(".") and n.lower().endswith(".md") and not (top and n.endswith(".md"))]
    return found


def _check(name, fn):
    try:
        detail = fn()
        return {"check": name, "ok": True, "detail": detail}
    except Warning_ as exc:
        return {"check": name, "ok": True, "warning": True, "detail": str(exc)}
    except Exception as exc:  # Trigger: any failing probe. Why: doctor reports, it does not crash. Outcome: a failed row.
        return {"check": name, "ok": False, "detail": str(exc)}


class Command(OrmahCommand):
    help = "Check extensions, model, home folder, malformed files and drift between files and index."

    def add_arguments(self, parser):
        parser.add_argument("--heal", action="store_true",
                            help="run an incremental sync first to repair drift, and prune dangling connections")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        conf = get_conf()
        store = runtime.store(conf)
        healed = None
        if o["heal"]:
            healed = index_sync().as_dict()
            healed["pruned_connections"] = connections_prune_dangling()

        def extensions():
            return backend().engine_line()

        def model():
            emb = runtime.embedder(conf)
            vec = emb.embed_query("doctor")
            shared = index.shared_model_mismatch(emb)
            if shared is not None:
                raise RuntimeError(f"{emb.model_id}, but the shared index was built with {shared}: this host's writes "
                                   "and syncs are refused (set ORMAH_EMBEDDER to it, or switch the store with "
                                   "`ormah rebuild`)")
            behind = index.model_behind(emb)
            if behind is not None:
                raise Warning_(f"{emb.model_id}, dim {len(vec)}, but the index's vectors were made with {behind}: the "
                               "next sync re-embeds every memory (`ormah serve` runs one as it starts, `ormah doctor "
                               "--heal` now); until then recall and whisper compare this model's queries with the "
                               "other model's vectors")
            return f"{emb.model_id}, dim {len(vec)}"

        def home():
            mode = stat.S_IMODE(conf.home.stat().st_mode)
            probe = conf.home / ".doctor_probe"
            probe.write_text("ok")
            probe.unlink()
            token = conf.token_file
            token_mode = oct(stat.S_IMODE(token.stat().st_mode)) if token.exists() else "missing"
            if token.exists() and stat.S_IMODE(token.stat().st_mode) & 0o077:
                raise RuntimeError(f"token file {token} is readable by others ({token_mode})")
            return f"{conf.home} writable, mode {oct(mode)}, token file {token_mode}"

        items = list(store.scan())
        bad = [{"path": str(i.path), "reason": i.error} for i in items if i.error]
        bad_rel = {str(Path(b["path"]).relative_to(store.root)) for b in bad}

        def malformed():
            if bad:
                raise RuntimeError("; ".join(f"{b['path']}: {b['reason']}" for b in bad) +
                                   f" ({'it is' if len(bad) == 1 else 'they are'} not indexed and left untouched): fix "
                                   "the front matter in an editor (docs/file-format.md; `ormah serve` indexes a fixed "
                                   "file within seconds, else `ormah doctor --heal`), or move a plain note out of "
                                   "nodes/ and bring it in with `ormah import FOLDER`")
            return "none"

        def drift():
            d = index_drift(store=store)
            d.not_indexed = [p for p in d.not_indexed if p not in bad_rel]
            if not d.clean:
                raise RuntimeError(json.dumps(d.as_dict()))
            return "files and index agree"

        def without_vector():
            count, ids = rows_without_vector()
            if count:
                raise RuntimeError(f"{counted(count, 'memory')} {'has' if count == 1 else 'have'} no vector, so semantic search cannot "
                                   "find them (a re-embed after a model switch was interrupted?); `ormah doctor --heal` "
                                   f"or the running server's next sync embeds them: {json.dumps(ids)}")
            return "every memory has one"

        def duplicates():
            owners = defaultdict(list)
            for item in items:
                if item.node is not None:
                    owners[item.node.id].append(str(item.path.relative_to(store.root)))
            found = {uid: paths for uid, paths in owners.items() if len(paths) > 1}
            if found:
                raise RuntimeError(f"{len(found)} id(s) held by more than one file (one is indexed: a name ending in "
                                   f"_<8 hex>.md first, then by name; give the others new ids or delete them): {json.dumps(found)}")
            return "none"

        def large():
            big = [f"{i.path.relative_to(store.root)} ({i.stored.size:,} bytes)" for i in items if i.stored.truncated]
            if big:
                raise Warning_(f"only the first {MAX_READ_BYTES // 1024} KiB of these files is read, indexed and "
                               f"served, and Ormah never rewrites them; split them: {', '.join(big)}")
            return "none"

        def unread():
            found = unread_files(store.nodes_dir)
            if found:
                raise Warning_(f"{counted(len(found), 'file')} under nodes/ {'is' if len(found) == 1 else 'are'} never "
                               "read: only files directly in nodes/ whose names end in .md are memories (move them "
                               f"up, or rename them): {', '.join(found[:20])}")
            return "none"

        def dated_ahead():
            found = rows_dated_after(when=utcnow() + CLOCK_SKEW)
            if found:
                raise Warning_("memories dated more than a day ahead of this machine's clock (a typo in a year?) "
                               "rank and decay as new until then; fix the dates in their files: " + json.dumps(found))
            return "none"

        def conflicts():
            found = sorted(p.name for p in store.conflicts_dir.glob("*.md") if p.is_file())
            if found:
                displaced = sum(name.endswith((".hand.md", ".aside.md")) for name in found)
                raise Warning_(f"{counted(len(found), 'version')} in {store.conflicts_dir} ({displaced} of them a file "
                               "a write displaced (.hand: a hand edit, .aside: set aside), the others an app write that "
                               "met a newer hand edit): merge what you want into the live file, then delete each: "
                               + ", ".join(found[:20]))
            return "none"

        def left_aside():
            found = sorted(p.name for p in store.nodes_dir.glob(".ormah_aside.*") if p.is_file())
            if found:
                raise RuntimeError("memory files set aside by an interrupted write (rename each back to the name "
                                   f"after '.ormah_aside.' if that name is free): {', '.join(found)}")
            return "none"

        def temps_stale():
            found = stale_temps(store, now=time.time())
            if found:
                raise Warning_(f"{counted(len(found), 'temp file')} left by interrupted writes (over an hour old; "
                               "the next sync, `ormah doctor --heal` or a restart removes them): "
                               + ", ".join(str(p.relative_to(store.root)) for p in found[:20]))
            return "none"

        def dangling():
            found = dangling_connections()
            if found:
                raise RuntimeError(f"{counted(len(found), 'connection')} to memories that are gone (`ormah doctor --heal` "
                                   f"prunes them): {json.dumps(found[:20])}")
            return "none"

        def scorer():
            s = load_scorer()
            detail = f"{s.version}, {len(s.features)} features, thresholds " + \
                ", ".join(f"{k} {v:g}" for k, v in sorted(s.thresholds.items()))
            fitted_on, running = s.meta.get("model"), runtime.embedder(conf).model_id
            if fitted_on and fitted_on != running:
                raise Warning_(f"{detail}; fitted on {fitted_on} but the store embeds with {running}: recall's "
                               "probabilities, whisper's cosine gates and the duplicate thresholds are calibrated "
                               "for the other model and may let too much or too little through (docs/recall.md, "
                               "\"Another embedding model\")")
            return detail

        results = [_check(n, f) for n, f in [("extensions", extensions), ("model", model), ("scorer", scorer),
                                               ("home", home),
                                               ("malformed_files", malformed), ("drift", drift), ("vectors", without_vector),
                                               ("duplicate_ids", duplicates), ("large_files", large),
                                               ("unread_files", unread), ("dated_ahead", dated_ahead), ("conflict_files", conflicts), ("set_aside_files", left_aside), ("stale_temp_files", temps_stale), ("dangling_connections", dangling)]]
        ok = all(r["ok"] for r in results)
        if o["json"]:
            self.stdout.write(json.dumps({"ok": ok, "checks": results, "healed": healed}))
        else:
            for r in results:
                label = "WARN" if r.get("warning") else "ok  " if r["ok"] else "FAIL"
                self.stdout.write(f"{label} {r['check']}: {r['detail']}")
        if not ok:
            raise SystemExit(1)
