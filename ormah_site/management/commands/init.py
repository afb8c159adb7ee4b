from django.core.management import call_command

from memory import runtime
from memory.conf import get_conf
from memory.embeddings import DEFAULT_MODEL, prepare_default_model
from memory.management.base import OrmahCommand, progress_bar
from memory.services import index_sync, self_ensure
from ormah_site.tokens import token_ensure, token_file


class Command(OrmahCommand):
    help = "Prepare ORMAH_HOME: the embedded model, the database, the index, the self node and the API token."

    def add_arguments(self, parser):
        parser.add_argument("--name", help="your name, for the self node")
        parser.add_argument("--quiet", action="store_true")

    def handle(self, *args, **o):
        conf = get_conf()
        if conf.embedding_model == DEFAULT_MODEL:
            prepare_default_model(conf.model_cache_dir)
        call_command("migrate", interactive=False, verbosity=0)
        call_command("createcachetable", verbosity=0)
        runtime.embedder(conf).embed_query("warm up")
        report = index_sync(progress=None if o["quiet"] else progress_bar())
        me = self_ensure(name=o["name"])
        token_ensure()
        if o["quiet"]:
            return
        self.stdout.write(f"Ormah home: {conf.home}")
        self.stdout.write(f"Memories:   {conf.memory_dir} ({report.indexed + report.unchanged} files indexed)")
        self.stdout.write(f"Self node:  {me.title} ({me.id})")
        self.stdout.write(f"API token:  {token_file()} (mode 0600)" if not conf.api_token else "API token:  from ORMAH_API_TOKEN")
        for path, reason in report.malformed:
            self.stderr.write(f"Malformed (skipped, left untouched): {path}: {reason}")
