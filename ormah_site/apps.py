from django.apps import AppConfig


class OrmahSiteConfig(AppConfig):
    name = "ormah_site"
    verbose_name = "Ormah site"

    def ready(self) -> None:
        from ormah_site import checks  # noqa: F401  (registers the system checks)
