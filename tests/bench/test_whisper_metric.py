"""bench.whisper_metric's pure part: the exact vectors of a hit's cosine, the reweighted-cosine fit."""

from __future__ import annotations

import numpy as np
import pytest

from bench.roc import roc_auc
from bench.whisper_metric import exact, fit, held_out, main


def test_exact_finds_the_query_and_the_passage_the_cosine_was_taken_with():
    rng = np.random.default_rng(0)
    joined, alone, own, passage = (v / np.linalg.norm(v) for v in rng.normal(size=(4, 8)))
    near = passage + 0.1 * alone  # the passage is the memory's best vector for the prompt alone
    cosine = max(float(alone @ own), float(alone @ near / np.linalg.norm(near)))
    q, m, err = exact(cosine, [joined, alone], [own, near])
    assert q is alone and err < 1e-9
    assert m is (near if float(alone @ near / np.linalg.norm(near)) >= float(alone @ own) else own)


def _pairs(n=1200, d=16, seed=1):
    """Unit pairs whose label depends on the first dimensions' agreement only."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, d))
    m = q * 0.3 + rng.normal(size=(n, d))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    prod = q * m
    y = (rng.random(n) < 1 / (1 + np.exp(-(40 * prod[:, :4].sum(axis=1) - 1)))).astype(float)
    return prod, y


def test_a_strong_penalty_gives_back_the_cosine_and_a_weak_one_learns_the_weighting():
    prod, y = _pairs()
    held = fit(prod, y, 1e6)
    assert np.allclose(held[1:], held[1], rtol=1e-3)  # every dimension weighed alike: the cosine, rescaled
    free = fit(prod, y, 1e-3)
    assert free[1:5].min() > free[5:].max()  # the informative dimensions weigh most
    cos = prod.sum(axis=1)
    groups = np.arange(len(y)) % 4
    assert roc_auc(held_out(prod, y, groups, 1e-3), y) > roc_auc(cos, y) + 0.05
    assert roc_auc(held_out(prod, y, groups, None), y) > roc_auc(cos, y) + 0.05  # lam chosen inside each training set


def test_fit_without_a_pairs_file_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["fit", str(tmp_path / "none.npz")])
    assert "no such file" in capsys.readouterr().err
