from django.apps import AppConfig


class SchedulesConfig(AppConfig):
    name = "creations.schedules"
    label = "schedules"
    verbose_name = "Schedules"

    def ready(self) -> None:
        from creations.schedules import announcements, receivers  # noqa: F401 - receivers connects itself

        announcements.connect()
