from django.apps import AppConfig


class WhisperConfig(AppConfig):
    name = "whisper"

    def ready(self) -> None:
        from whisper import checks  # noqa: F401  (registers the system checks)
