"""The web master's preload (ormah_site.gunicorn_conf): it forks with one thread and the model loaded, its forked
workers embed the very bytes it does, and a vector written through one worker is found by another's next query,
which takes no write lock (it answers while another connection holds SQLite's)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The master's part as gunicorn runs it (import the WSGI application, then the `when_ready` preload), then two
# forked workers: B searches the vectors, A remembers through the API (the WSGI handler), B searches again.
MASTER = textwrap.dedent("""
    import json, os, sys, traceback
    from ormah_site.wsgi import application
    from ormah_site import gunicorn_conf
    from ormah_site.cli.client import local_call
    from memory import embeddings, runtime

    TEXT = "To flash the espresso machine firmware, hold the steam button while powering on"
    QUERY = "how do I flash the espresso machine firmware?"
    gunicorn_conf.preload()
    from whisper.words import english_words
    report = {"threads_at_fork": gunicorn_conf.thread_count(), "model_loaded_at_fork": bool(embeddings._MODELS),
              "words_read_at_fork": english_words.cache_info().currsize}

    def nearest():  # the vector matrix alone (recall's full-text half would find the words without it)
        from memory.models import NodeRow
        from memory.search.semantic import vector_search

        hits = vector_search(runtime.embedder().embed_query(QUERY), 3)
        uids = dict(NodeRow.objects.filter(id__in=[h.row_id for h in hits]).values_list("id", "uid"))
        return [uids[h.row_id] for h in hits]

    def worker(job):
        out_r, out_w = os.pipe()
        go_r, go_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(out_r)
            os.close(go_w)
            code = 0
            with os.fdopen(out_w, "w") as out, os.fdopen(go_r) as go:
                try:
                    job(out, go)
                except BaseException:
                    out.write(json.dumps({"error": traceback.format_exc()}) + "\\n")
                    code = 1
            os._exit(code)
        os.close(out_w)
        os.close(go_r)
        return pid, os.fdopen(out_r), os.fdopen(go_w, "w")

    def reader(out, go):
        out.write(json.dumps({"first": nearest(), "query": runtime.embedder().embed_query(QUERY).tobytes().hex()})
                  + "\\n")
        out.flush()
        go.readline()
        out.write(json.dumps({"second": nearest()}) + "\\n")

    def writer(out, go):
        vector = runtime.embedder().embed_documents([TEXT])[0].tobytes().hex()
        written = local_call("POST", "/agent/remember", {"content": TEXT})["node"]["id"]
        out.write(json.dumps({"written": written, "document": vector}) + "\\n")

    b, b_out, b_go = worker(reader)
    report.update(json.loads(b_out.readline()))
    a, a_out, _ = worker(writer)
    report.update(json.loads(a_out.readline()))
    report["a_status"] = os.waitpid(a, 0)[1]
    from django.db import connection
    lock = None
    if connection.vendor == "sqlite":  # B's next search runs while a writer holds SQLite's write lock
        import sqlite3
        lock = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")
    b_go.write("go\\n")
    b_go.flush()
    report.update(json.loads(b_out.readline()))
    if lock is not None:
        lock.execute("ROLLBACK")
        lock.close()
    report["b_status"] = os.waitpid(b, 0)[1]
    report["master_document"] = runtime.embedder().embed_documents([TEXT])[0].tobytes().hex()
    report["master_query"] = runtime.embedder().embed_query(QUERY).tobytes().hex()
    print(json.dumps(report))
""")


def test_forked_workers_share_the_masters_model_and_stay_in_step(tmp_path):
    from tests.faults.support import child_env

    env = child_env(tmp_path / "home", ORMAH_EMBEDDING_THREADS="1", OPENBLAS_NUM_THREADS="1")
    subprocess.run([sys.executable, "manage.py", "init"], cwd=ROOT, env=env, check=True, capture_output=True)
    subprocess.run([sys.executable, "manage.py", "remember", "The garden sensors report soil moisture every fifteen "
                    "minutes"], cwd=ROOT, env=env, check=True, capture_output=True)
    done = subprocess.run([sys.executable, "-c", MASTER], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert "error" not in report, report["error"]
    assert (report["threads_at_fork"], report["model_loaded_at_fork"], report["words_read_at_fork"]) == (1, True, 1)
    assert (report["a_status"], report["b_status"]) == (0, 0)
    assert report["document"] == report["master_document"]
    assert report["query"] == report["master_query"]
    assert report["written"] not in report["first"]
    assert report["second"][0] == report["written"]
