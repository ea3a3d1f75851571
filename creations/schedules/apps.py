from django.apps import AppConfig


class SchedulesConfig(AppConfig):
    name = "creations.schedules"
    label = "schedules"
    verbose_name = "Schedules"

    def ready(self) -> None:
        from creations.schedules import receivers  # noqa: F401 - connects them
