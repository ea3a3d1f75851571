from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "creations.webhooks"
    label = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from creations.webhooks import receivers  # noqa: F401 - connects them
