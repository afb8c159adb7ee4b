from django.apps import AppConfig


class WhisperConfig(AppConfig):
    name = "whisper"
