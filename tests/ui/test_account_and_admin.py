"""The UI account made by `ormah init`, and the Django admin (node edits through the services)."""

from __future__ import annotations

import io
import stat

import pytest
from django.apps import apps
from django.contrib.auth import authenticate
from django.core.management import call_command

from memory import runtime
from tests.ui.conftest import csrf_post


def run_init(*args: str) -> str:
    out = io.StringIO()
    call_command("init", *args, stdout=out)
    return out.getvalue()


def test_first_init_creates_the_account_and_prints_the_password_once(home, db):
    first = run_init()
    path = home / "ui_password"
    password = path.read_text().strip()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert f"sign in as ormah with password {password}" in first
    user = authenticate(username="ormah", password=password)
    assert user is not None and user.is_superuser
    second = run_init()
    assert password not in second
    assert f"(user ormah, password in {path})" in second


def test_init_new_password_replaces_the_old_one(home, db):
    run_init("--quiet")
    old = (home / "ui_password").read_text().strip()
    run_init("--new-password", "--quiet")
    new = (home / "ui_password").read_text().strip()
    assert new != old
    assert authenticate(username="ormah", password=old) is None
    assert authenticate(username="ormah", password=new) is not None


def test_init_password_asks_and_removes_the_generated_file(home, db, monkeypatch):
    run_init("--quiet")
    answers = iter(["my own passphrase", "my own passphrase"])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))
    out = run_init("--password")
    assert "the password you just set" in out
    assert not (home / "ui_password").exists()
    assert authenticate(username="ormah", password="my own passphrase") is not None


def admin_models():
    return list(apps.get_app_config("memory").get_models())


@pytest.mark.parametrize("model", admin_models(), ids=lambda m: m.__name__)
def test_every_model_has_an_admin_changelist(ui, mem, model):
    mem("Something for the lists", auto_link=False)
    meta = model._meta
    response = ui.get(f"/admin/{meta.app_label}/{meta.model_name}/")
    assert response.status_code == 200


def test_admin_requires_sign_in(client, db):
    response = client.get("/admin/memory/noderow/")
    assert response.status_code == 302


def test_admin_node_edit_is_written_to_the_markdown_file(ui, mem):
    from memory.models import NodeRow

    node = mem("Written in the admin", tags=["admin"], auto_link=False)
    row = NodeRow.objects.get(uid=node.id)
    url = f"/admin/memory/noderow/{row.pk}/change/"
    assert ui.get(url).status_code == 200
    form = {"title": "", "content": "Edited in the admin", "type": "fact", "tier": "core", "space": "",
            "tags_text": "admin edited", "confidence": "1.0",
            "tag_rows-TOTAL_FORMS": "1", "tag_rows-INITIAL_FORMS": "1", "tag_rows-0-id": "", "tag_rows-0-node": row.pk,
            "out_edges-TOTAL_FORMS": "0", "out_edges-INITIAL_FORMS": "0"}
    tag_row = row.tag_rows.get()
    form["tag_rows-0-id"] = tag_row.pk
    response = csrf_post(ui, url, form, htmx=False)
    assert response.status_code == 302, response.content.decode()[:2000]
    text = runtime.store().path_for(node.id).read_text()
    assert "Edited in the admin" in text
    assert "tier: core" in text
    assert "- edited" in text


def test_admin_delete_forgets_the_memory(ui, mem):
    from memory.models import NodeRow

    node = mem("Delete me in the admin", auto_link=False)
    row = NodeRow.objects.get(uid=node.id)
    path = runtime.store().path_for(node.id)
    response = csrf_post(ui, f"/admin/memory/noderow/{row.pk}/delete/", {"post": "yes"}, htmx=False)
    assert response.status_code == 302
    assert not path.exists()
    assert list(runtime.store().deleted_paths())
