from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    name = "creations.evaluations"
    label = "evaluations"
    verbose_name = "Evaluations"

    def ready(self) -> None:
        from creations.evaluations import receivers  # noqa: F401 - receivers connects itself
