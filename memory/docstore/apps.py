from django.apps import AppConfig


class DocstoreConfig(AppConfig):
    name = "memory.docstore"
    label = "docstore"
    verbose_name = "Documents (PostgreSQL)"
    default_auto_field = "django.db.models.BigAutoField"
