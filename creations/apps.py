from django.apps import AppConfig


class CreationsConfig(AppConfig):
    name = "creations"

    def ready(self) -> None:
        from creations import stored_files
        from creations.runs import admission

        stored_files.connect()
        admission.connect()
