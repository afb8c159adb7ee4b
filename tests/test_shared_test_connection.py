"""The test index's in-memory connection, shared by a test and its live server's threads, prepares a statement once
when two threads ask for it at once, and keeps answering after the driver's statement cache evicts it
(tests/support/sqlite_shared; session 26's final CI: every browser test after the first failed on a KeyError from
that cache). The connection here is one of the test settings' backend with a cache of 5 statements, so evictions
come at once, as they come late in the suite."""

from __future__ import annotations

import importlib
import random
import threading
import time

from django.db import connections

from tests.postgres import sqlite_only


@sqlite_only(reason="the statement cache is the SQLite driver's; PostgreSQL's test connections are per thread")
def test_two_threads_asking_for_one_new_statement_prepare_it_once(db):
    settings = connections["default"].settings_dict
    backend = importlib.import_module(f"{settings['ENGINE']}.base")
    conn = backend.DatabaseWrapper({**settings, "NAME": ":memory:",
                                    "OPTIONS": {**settings["OPTIONS"], "cached_statements": 5}}, alias="shared")
    conn.inc_thread_sharing()  # what pytest-django's live server does with the test's connection
    asked, prepared, errors = threading.Event(), [], []

    def run(query: str) -> list:
        with conn.cursor() as cursor:
            cursor.execute(query)
            return cursor.fetchall()

    def authorizer(*_args) -> int:
        """SQLite asks this while it prepares a statement: the first thread waits inside its preparation until the
        second has asked for the same statement."""
        prepared.append(threading.current_thread().name)
        if len(prepared) == 1:
            asked.wait(10)
            time.sleep(1.0)  # the second thread's lookup runs meanwhile
        return conn.Database.SQLITE_OK

    def ask(name: str) -> None:
        try:
            if name == "second":
                asked.set()
            run("SELECT 'asked twice'")
        except Exception as exc:  # Trigger: the query failed in this thread. Why: the assert below names it.
            errors.append(repr(exc)[:120])  # Outcome: kept for the assert.

    try:
        for n in range(5):
            run(f"SELECT {n}")  # the cache full
        conn.connection.set_authorizer(authorizer)
        first = threading.Thread(target=ask, args=("first",), name="first")
        second = threading.Thread(target=ask, args=("second",), name="second")
        first.start()
        while not prepared:
            time.sleep(0.01)
        second.start()
        first.join()
        second.join()
        conn.connection.set_authorizer(None)
        rng = random.Random(1)  # then statements old and new, the one asked twice among them: evictions
        answers = [run(f"SELECT {rng.randint(0, 12)}") + (run("SELECT 'asked twice'") if i % 7 == 0 else [])
                   for i in range(300)]
    finally:
        conn.dec_thread_sharing()
        conn.close()
    assert errors == []
    assert set(prepared) == {"first"}  # only the first prepared it: the second found it in the cache
    assert len(answers) == 300
