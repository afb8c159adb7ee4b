import getpass
import logging
import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from memory import runtime
from memory.conf import get_conf
from memory.domain.wording import counted
from memory.embeddings import DEFAULT_MODEL, prepare_default_model
from memory.errors import MalformedNodeFile
from memory.management.base import OrmahCommand, progress_bar
from memory.services import index_sync, self_ensure
from ormah_site.tokens import token_ensure, token_file


UI_USER = "ormah"
UI_PASSWORD_FILE = "ui_password"


def _write_secret(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text + "\n")
    os.replace(tmp, path)


def _console_warnings_only() -> None:
    """`--quiet`: the console log handler shows warnings and errors only (the model check's INFO line went to
    stderr); the log file keeps every level."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            handler.setLevel(max(handler.level, logging.WARNING))


class Command(OrmahCommand):
    help = "Prepare ORMAH_HOME: the embedded model, the database, the index, the self node and the API token."

    def add_arguments(self, parser):
        parser.add_argument("--name", help="your name, for the self node")
        parser.add_argument("--quiet", action="store_true")
        parser.add_argument("--password", action="store_true",
                            help=f"set the web UI password of the '{UI_USER}' account (asks for it)")
        parser.add_argument("--new-password", action="store_true",
                            help=f"generate a new web UI password into ORMAH_HOME/{UI_PASSWORD_FILE}")

    def handle(self, *args, **o):
        if o["quiet"]:
            _console_warnings_only()
        conf = get_conf()
        if conf.embedding_model == DEFAULT_MODEL:
            prepare_default_model(conf.model_cache_dir)
        call_command("migrate", interactive=False, verbosity=0)
        call_command("createcachetable", verbosity=0)
        runtime.embedder(conf).embed_query("warm up")
        report = index_sync(progress=None if o["quiet"] else progress_bar())
        try:
            me = self_ensure(name=o["name"])
            self_line = f"Self node:  {me.title} ({me.id})"
        except MalformedNodeFile as exc:  # no second self node; everything else is prepared, and `serve` can start
            self_line = (f"Self node:  its file {exc.path} is malformed ({exc.reason}); no new one was made: fix the "
                         "file and run `ormah init` again")
            if o["quiet"]:
                self.stderr.write(self_line)
        token_ensure()
        ui_line = self._ui_account(conf.home, ask=o["password"], regenerate=o["new_password"])
        if o["quiet"]:
            return
        self.stdout.write(f"Ormah home: {conf.home}")
        self.stdout.write(f"Memories:   {conf.memory_dir} ({counted(report.indexed + report.unchanged, 'file')} indexed)")
        self.stdout.write(self_line)
        self.stdout.write(f"API token:  {token_file()} (mode 0600)" if not conf.api_token else "API token:  from ORMAH_API_TOKEN")
        self.stdout.write(ui_line)
        for path, reason in report.malformed:
            self.stderr.write(f"Malformed (skipped, left untouched): {path}: {reason}")

    def _ui_account(self, home: Path, *, ask: bool, regenerate: bool) -> str:
        """Create the web UI account on first run (generated password, written 0600); report how to sign in."""
        users = get_user_model()
        path = home / UI_PASSWORD_FILE
        url = f"http://{settings.HOST}:{settings.PORT}/"
        user = users.objects.filter(username=UI_USER).first()
        password = None
        if ask:
            password = getpass.getpass(f"New web UI password for '{UI_USER}': ")
            if not password or password != getpass.getpass("Again: "):
                raise CommandError("The passwords are empty or differ; nothing changed.")
        elif user is None or regenerate:
            password = secrets.token_urlsafe(18)
        if password is None:
            where = f"password in {path}" if path.exists() else "set a password with `ormah init --password`"
            return f"Web UI:     {url} (user {UI_USER}, {where})"
        if user is None:
            user = users.objects.create_superuser(username=UI_USER, email=None, password=password)
        else:
            user.set_password(password)
            user.save(update_fields=["password"])
        if ask:
            path.unlink(missing_ok=True)
            return f"Web UI:     {url} (user {UI_USER}, the password you just set)"
        _write_secret(path, password)
        return (f"Web UI:     {url}\n            sign in as {UI_USER} with password {password}\n"
                f"            (saved in {path}, mode 0600; `ormah init --password` sets your own)")
