"""Fault fixtures: one `ormah init` per session copied into each test's home, and servers that always die."""

from __future__ import annotations

import pytest

from tests.faults.support import Served, copy_home, manage
from tests.support import pg_databases


@pytest.fixture(scope="session")
def template_home(tmp_path_factory):
    """A home as `ormah init` leaves it (model, migrations, self node, token, UI account), made once."""
    home = tmp_path_factory.mktemp("faults-template") / "home"
    done = manage(home, "init", "--name", "Faults", "--quiet")
    assert done.returncode == 0, done.stderr
    pg_databases.keep(home)  # on PostgreSQL its database is the template of each test's copy
    yield home
    pg_databases.drop_created(everything=True)


@pytest.fixture(autouse=True)
def own_databases():
    """On PostgreSQL, the databases a test's homes got are dropped after it (nothing on SQLite)."""
    yield
    pg_databases.drop_created()


@pytest.fixture
def fault_home(template_home, tmp_path):
    return copy_home(template_home, tmp_path / "home")


@pytest.fixture
def serve():
    """A function starting `ormah serve` on a home; whatever it started is SIGKILLed at the end."""
    started: list[Served] = []

    def start(home, **extra_env) -> Served:
        server = Served(home, extra_env=extra_env)
        started.append(server)
        server.wait_ready()
        return server

    yield start
    for server in started:
        server.kill_all()


@pytest.fixture
def api(home, db, settings):
    """An in-process API client with the bearer token (the index is the test database)."""
    from tests.api.conftest import TOKEN, ApiClient

    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    return ApiClient(TOKEN)
