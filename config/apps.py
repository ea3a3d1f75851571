from django.apps import AppConfig


class PlatformConfig(AppConfig):
    """The project's own app: its management command, and the checks that refuse to start on settings
    unfit for production."""

    name = "config"
    verbose_name = "Platform"

    def ready(self) -> None:
        from config import system_checks  # noqa: F401  (registers the checks)
