"""Django settings for Ormah. The only module that reads ORMAH_* environment variables."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

BASE_DIR = Path(__file__).resolve().parent.parent
PACKAGE_DIR = Path(__file__).resolve().parent


def _asset_dir(name: str) -> Path:
    """templates/ and static/: top-level folders in a checkout, ormah_site/<name> inside the wheel (setup.py)."""
    packaged = PACKAGE_DIR / name
    return packaged if packaged.is_dir() else BASE_DIR / name


# No telemetry and no model hub: onnxruntime >= 1.29 phones home unless told not to before it is imported.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DO_NOT_TRACK", "1")


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(f"ORMAH_{name}")
    return value if value not in (None, "") else default


def _env_path(name: str, default: Path) -> Path:
    raw = _env(name)
    return Path(raw).expanduser().resolve() if raw else default


def _env_bool(name: str, default: bool) -> bool:
    raw = _env(name)
    return default if raw is None else raw.strip().lower() in {"1", "true", "yes", "on"}


def _env_float(name: str, default: float) -> float:
    raw = _env(name)
    return default if raw is None else float(raw)


def _env_int(name: str, default: int) -> int:
    raw = _env(name)
    return default if raw is None else int(raw)


ORMAH_HOME = _env_path("HOME", Path("~/.local/share/ormah").expanduser())
ORMAH_HOME.mkdir(parents=True, exist_ok=True, mode=0o700)
MEMORY_DIR = _env_path("MEMORY_DIR", ORMAH_HOME / "memory")
DB_PATH = _env_path("DB_PATH", ORMAH_HOME / "index.sqlite3")
TOKEN_FILE = _env_path("TOKEN_FILE", ORMAH_HOME / "api_token")
LOG_DIR = _env_path("LOG_DIR", ORMAH_HOME / "logs")
MODEL_CACHE_DIR = _env_path("MODEL_CACHE_DIR", ORMAH_HOME / "models")
for _folder in (DB_PATH.parent, LOG_DIR):
    _folder.mkdir(parents=True, exist_ok=True, mode=0o700)


def _secret_key() -> str:
    key = _env("SECRET_KEY")
    if key:
        return key
    path = ORMAH_HOME / "secret_key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        key = secrets.token_urlsafe(50)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(key)
        return key


SECRET_KEY = _secret_key()
SECRET_KEY_FROM_ENV = _env("SECRET_KEY") is not None  # else this home's own secret_key file (checks.py: W001)
DEBUG = _env_bool("DEBUG", False)
HOST = _env("HOST", "127.0.0.1")
PORT = _env_int("PORT", 8787)
SERVER_URL = _env("URL")  # how clients (the MCP server, the hook) reach the server, when not http://HOST:PORT
ALLOWED_HOSTS = [h for h in (_env("ALLOWED_HOSTS", "") or "").split(",") if h] or [
    "127.0.0.1", "localhost", "[::1]", "testserver", HOST,
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_q",
    "ormah_site",
    "memory",
    "whisper",
    "maintenance",
]

MIDDLEWARE = [
    "ormah_site.api_errors.ApiJsonErrors",  # outermost: every error under /api/ leaves as JSON
    "ormah_site.nul.RefuseNul",  # a NUL in the URL, a form or a JSON body never reaches a view or the database
    "django.middleware.security.SecurityMiddleware",
    "ormah_site.csp.ContentSecurityPolicy",
    "ormah_site.peer.RefuseOtherUsersSessions",  # a session cookie replayed by another user's process: 403
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "ormah_site.urls"
WSGI_APPLICATION = "ormah_site.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [_asset_dir("templates")],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "ormah_site.ui.context.nav",
            ],
        },
    },
]



def _postgres(url: str) -> dict:
    """DATABASES["default"] for postgres://user:password@host:port/name?host=/socket/dir&port=N (psycopg 3)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")) or "ormah",
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": query.pop("host", None) or parts.hostname or "",
        "PORT": str(query.pop("port", None) or parts.port or ""),
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": query,  # the rest (sslmode=require, ...) goes to libpq as is
    }


def _sqlite(path: Path) -> dict:
    """DATABASES["default"] for the embedded index at `path` (sqlite-vec loaded on every connection)."""
    return {
        "ENGINE": "ormah_site.sqlitevec",
        "NAME": path,
        # IMMEDIATE + a busy timeout: with web and job processes writing one file, DEFERRED lost 66% of writes.
        "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        # A request thread keeps its connection for the next request: opening one (sqlite-vec, pragmas, the schema)
        # and closing it cost ~1.4 ms of CPU per request (docs/benchmarks.md, "Around the view (session 11)").
        "CONN_MAX_AGE": 60,
    }


DATABASE_URL = _env("DATABASE_URL")  # unset: the embedded SQLite index at DB_PATH (the default, one person)
if DATABASE_URL and urlsplit(DATABASE_URL).scheme not in {"postgres", "postgresql"}:
    raise ValueError(f"ORMAH_DATABASE_URL must start with postgres:// (got {urlsplit(DATABASE_URL).scheme}://)")
DATABASES = {"default": _postgres(DATABASE_URL) if DATABASE_URL else _sqlite(DB_PATH)}
if DATABASE_URL:  # the documents store (memory/documents.py): several hosts share the memory files in PostgreSQL
    INSTALLED_APPS.append("memory.docstore")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CACHES = {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "ormah_cache"}}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [_asset_dir("static")]
STATIC_ROOT = ORMAH_HOME / "static"
LOGIN_URL = "/login/"
CSRF_FAILURE_VIEW = "ormah_site.ui.views.errors.csrf_failure"  # a readable "page out of date", in place for htmx
LOGIN_REDIRECT_URL = "/"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SAMESITE = "Strict"
SESSION_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
DATA_UPLOAD_MAX_MEMORY_SIZE = 16 * 1024 * 1024

Q_CLUSTER = {
    "name": "ormah",
    "orm": "default",
    "workers": _env_int("JOB_WORKERS", 1),
    "timeout": 600,
    "retry": 900,  # must exceed timeout
    "max_attempts": 1,
    "poll": 1,
    "catch_up": False,
    "save_limit": 250,
    "ack_failures": True,
    "sync": False,
    # A fresh job worker (a fork of the sentinel) for every task: what a task loaded (the model, the vector matrix,
    # a job's candidates) goes back to the system when it ends (docs/benchmarks.md, "Serve tree RSS").
    "recycle": 1,
}

ORMAH = {
    "HOME": ORMAH_HOME,
    "MEMORY_DIR": MEMORY_DIR,
    "TOKEN_FILE": TOKEN_FILE,
    "API_TOKEN": _env("API_TOKEN"),
    "MODEL_CACHE_DIR": MODEL_CACHE_DIR,
    "EMBEDDER": _env("EMBEDDER", "memory.embeddings.FastEmbedEmbedder"),
    "EMBEDDING_MODEL": _env("EMBEDDING_MODEL", "ormah/all-MiniLM-L6-v2-int8"),
    "EMBEDDING_THREADS": _env_int("EMBEDDING_THREADS", 0) or None,
    "AUTO_LINK_THRESHOLD": _env_float("AUTO_LINK_THRESHOLD", 0.65),
    "CROSS_SPACE_PENALTY": _env_float("CROSS_SPACE_PENALTY", 0.1),
    "CORE_CAP": _env_int("CORE_CAP", 50),
    "SELF_NAME": _env("SELF_NAME", "Self"),
    "SPACE": _env("SPACE"),
    "WEB_WORKERS": _env_int("WEB_WORKERS", 2),  # 2 x 4; 1 x 8 for the smallest tree: docs/team-server.md, "Sizing"
    "WEB_THREADS": _env_int("WEB_THREADS", 4),
    "WEB_SOCKETS": _env("WEB_SOCKETS", "shared"),  # 2+ workers: "shared" or "per-worker" (gunicorn_conf)
    "JOB_NICE": _env_int("JOB_NICE", 10),  # the job cluster's niceness under `ormah serve` (0: the web's priority)
    "WATCH": _env_bool("WATCH", True),
    "WATCH_DEBOUNCE_SECONDS": _env_float("WATCH_DEBOUNCE_SECONDS", 0.3),
    # Whisper (involuntary recall); meanings and calibration in docs/whisper.md.
    "WHISPER_ENABLED": _env_bool("WHISPER_ENABLED", True),
    "WHISPER_SEARCH_LIMIT": _env_int("WHISPER_SEARCH_LIMIT", 6),
    "WHISPER_MAX_NODES": _env_int("WHISPER_MAX_NODES", 2),
    "WHISPER_MIN_SCORE": _env_float("WHISPER_MIN_SCORE", None),  # None: the scorer's recall_floor
    "WHISPER_ACTIVATION": _env_bool("WHISPER_ACTIVATION", False),
    "WHISPER_BUDGET_TOKENS": _env_int("WHISPER_BUDGET_TOKENS", 300),
    "WHISPER_CONTENT_MAX_CHARS": _env_int("WHISPER_CONTENT_MAX_CHARS", 600),
    "WHISPER_FULL_ITEMS": _env_int("WHISPER_FULL_ITEMS", 2),
    "WHISPER_RERANKER": _env("WHISPER_RERANKER"),
    "WHISPER_RERANKER_MODEL": _env("WHISPER_RERANKER_MODEL", "Xenova/ms-marco-MiniLM-L-6-v2"),
    "WHISPER_RERANKER_MIN_SCORE": _env_float("WHISPER_RERANKER_MIN_SCORE", 0.40),
    "WHISPER_RERANKER_BLEND": _env_float("WHISPER_RERANKER_BLEND", 0.6),
    "WHISPER_GATE": _env_float("WHISPER_GATE", 0.45),
    "WHISPER_GATE_NO_RERANKER": _env_float("WHISPER_GATE_NO_RERANKER", None),  # None: the scorer's whisper_gate
    "WHISPER_GATE_MIN_COSINE": _env_float("WHISPER_GATE_MIN_COSINE", 0.35),
    "WHISPER_GATE_RELATIVE": _env_float("WHISPER_GATE_RELATIVE", 0.7),
    "WHISPER_GATE_WEIGHTS": _env("WHISPER_GATE_WEIGHTS"),  # None: the fitted logistic gate; "off": the rules above
    "WHISPER_GATE_LOGIT": _env_float("WHISPER_GATE_LOGIT", None),  # None: whisper.conf.GATE_LOGIT
    "WHISPER_PROJECT_PASS": _env_bool("WHISPER_PROJECT_PASS", True),  # the second recall over the prompt's project
    "WHISPER_IDENTITY_GATE": _env_float("WHISPER_IDENTITY_GATE", 0.25),
    "WHISPER_IDENTITY_GATE_NO_WORD": _env_float("WHISPER_IDENTITY_GATE_NO_WORD", 0.35),
    "WHISPER_FOLLOW_UP_COSINE": _env_float("WHISPER_FOLLOW_UP_COSINE", 0.35),
    "WHISPER_STANDOUT_Z": _env_float("WHISPER_STANDOUT_Z", 4.5),  # whisper.conventions: a convention a task needs
    "WHISPER_STANDOUT_MIN_COSINE": _env_float("WHISPER_STANDOUT_MIN_COSINE", 0.25),
    "WHISPER_STANDOUT_MIN_SET": _env_int("WHISPER_STANDOUT_MIN_SET", 8),
    "WHISPER_OVERLAP_CE_FLOOR": _env_float("WHISPER_OVERLAP_CE_FLOOR", 0.45),
    "WHISPER_OVERLAP_COSINE_FLOOR": _env_float("WHISPER_OVERLAP_COSINE_FLOOR", 0.70),
    "WHISPER_INTENT_THRESHOLD": _env_float("WHISPER_INTENT_THRESHOLD", 0.65),
    "WHISPER_BUFFER_SIZE": _env_int("WHISPER_BUFFER_SIZE", 5),
    "WHISPER_SESSION_GAP_MINUTES": _env_float("WHISPER_SESSION_GAP_MINUTES", 10.0),
    "WHISPER_EXPLORATION": _env_bool("WHISPER_EXPLORATION", False),
    "WHISPER_SYNTHETIC_PATTERNS": _env("WHISPER_SYNTHETIC_PATTERNS", ""),
    "WHISPER_NUDGE_INTERVAL": _env_int("WHISPER_NUDGE_INTERVAL", 10),
    "WHISPER_STORE_INTERVAL": _env_int("WHISPER_STORE_INTERVAL", 10),
    "WHISPER_STORE_MIN_TURNS": _env_int("WHISPER_STORE_MIN_TURNS", 3),
    "WHISPER_STORE_DEDUP_THRESHOLD": _env_float("WHISPER_STORE_DEDUP_THRESHOLD", 0.90),
    "WHISPER_LOG_RETENTION_DAYS": _env_int("WHISPER_LOG_RETENTION_DAYS", 30),
    "WHISPER_AFFINITY_SIMILARITY": _env_float("WHISPER_AFFINITY_SIMILARITY", 0.70),
    "WHISPER_AFFINITY_HALF_LIFE_DAYS": _env_float("WHISPER_AFFINITY_HALF_LIFE_DAYS", 30.0),
    "WHISPER_AFFINITY_MAX_BOOST": _env_float("WHISPER_AFFINITY_MAX_BOOST", 0.15),
    "WHISPER_AFFINITY_IMPLICIT_WEIGHT": _env_float("WHISPER_AFFINITY_IMPLICIT_WEIGHT", 0.8),
    "WHISPER_MAINTENANCE_DUE": _env("WHISPER_MAINTENANCE_DUE"),
    # Maintenance jobs and the LLM provider; meanings and defaults in docs/jobs.md.
    "LLM_PROVIDER": _env("LLM_PROVIDER", "none"),  # none | openai | a dotted path to a provider class
    "LLM_BASE_URL": _env("LLM_BASE_URL", "http://127.0.0.1:11434/v1"),
    "LLM_MODEL": _env("LLM_MODEL", ""),
    "LLM_API_KEY": _env("LLM_API_KEY") or os.environ.get("OPENAI_API_KEY") or None,
    "LLM_TIMEOUT_SECONDS": _env_float("LLM_TIMEOUT_SECONDS", 60.0),
    "LLM_MAX_RETRIES": _env_int("LLM_MAX_RETRIES", 2),
    "LLM_BACKOFF_SECONDS": _env_float("LLM_BACKOFF_SECONDS", 1.0),
    "LLM_MAX_CALLS_PER_RUN": _env_int("LLM_MAX_CALLS_PER_RUN", 40),
    "LLM_PAIRS_PER_CALL": _env_int("LLM_PAIRS_PER_CALL", 8),
    "MAINTENANCE_JOB_TIME_LIMIT_SECONDS": _env_float("MAINTENANCE_JOB_TIME_LIMIT_SECONDS", 60.0),
    "MAINTENANCE_PROPOSAL_CAP": _env_int("MAINTENANCE_PROPOSAL_CAP", 200),
    "MAINTENANCE_PROPOSAL_TTL_DAYS": _env_float("MAINTENANCE_PROPOSAL_TTL_DAYS", 14.0),
    "MAINTENANCE_TIMEOUT_MINUTES": _env_float("MAINTENANCE_TIMEOUT_MINUTES", 30.0),
    "MAINTENANCE_BATCH_SIZE": _env_int("MAINTENANCE_BATCH_SIZE", 25),
    "MAINTENANCE_MAX_EDGES_PER_RUN": _env_int("MAINTENANCE_MAX_EDGES_PER_RUN", 500),
    "MAINTENANCE_AUTO_MERGE_THRESHOLD": _env_float("MAINTENANCE_AUTO_MERGE_THRESHOLD", 0.85),
    "MAINTENANCE_AUDIT_RETENTION_DAYS": _env_int("MAINTENANCE_AUDIT_RETENTION_DAYS", 180),
    "MAINTENANCE_AUDIT_MAX_ROWS": _env_int("MAINTENANCE_AUDIT_MAX_ROWS", 50_000),
    "MAINTENANCE_LEDGER_RETENTION_DAYS": _env_int("MAINTENANCE_LEDGER_RETENTION_DAYS", 30),
    "MAINTENANCE_MERGE_UNDO_DAYS": _env_int("MAINTENANCE_MERGE_UNDO_DAYS", 90),
    "MAINTENANCE_SURFACING_RETENTION_DAYS": _env_int("MAINTENANCE_SURFACING_RETENTION_DAYS", 90),
    "MAINTENANCE_VERIFICATION_RETENTION_DAYS": _env_int("MAINTENANCE_VERIFICATION_RETENTION_DAYS", 180),
    # Backups (docs/backup.md): where `ormah backup` writes snapshots, and how many ordinary ones it keeps.
    "BACKUP_DIR": _env_path("BACKUP_DIR", ORMAH_HOME / "backups"),
    "BACKUP_KEEP": _env_int("BACKUP_KEEP", 10),
}

LOG_LEVEL = (_env("LOG_LEVEL", "DEBUG" if DEBUG else "INFO") or "INFO").upper()
LOG_FILE = LOG_DIR / "ormah.log"
_LOG_HANDLERS = {
    "console": {"class": "logging.StreamHandler", "formatter": "plain"},
    "file": {  # every process of `ormah serve` writes this file; one rotates it at a time (ormah_site/logfiles.py)
        "class": "ormah_site.logfiles.SharedRotatingFileHandler",
        "filename": str(LOG_FILE),
        "maxBytes": 5 * 1024 * 1024,
        "backupCount": 3,
        "formatter": "plain",
    },
}
# A read-only home must not stop every command in logging setup before it can say what is wrong: console only.
if not os.access(LOG_DIR, os.W_OK) or any(path.exists() and not os.access(path, os.W_OK)
                                          for path in (LOG_FILE, LOG_DIR / "ormah.log.lock")):
    del _LOG_HANDLERS["file"]
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": _LOG_HANDLERS,
    "root": {"handlers": list(_LOG_HANDLERS), "level": "WARNING"},
    "loggers": {
        "memory": {"level": LOG_LEVEL},
        "whisper": {"level": LOG_LEVEL},
        "maintenance": {"level": LOG_LEVEL},
        "ormah_site": {"level": LOG_LEVEL},
    },
}
