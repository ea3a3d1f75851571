from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "creations.notifications"
    label = "notifications"
    verbose_name = "Notifications"

    def ready(self) -> None:
        from creations.notifications import receivers

        receivers.connect()
