from django.apps import AppConfig


class SandboxesConfig(AppConfig):
    name = "sandboxes"
    verbose_name = "Sandboxes and agent"

    def ready(self) -> None:
        from sandboxes import worker_start  # noqa: F401 - connects the worker's start-up hooks
