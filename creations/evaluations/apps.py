from django.apps import AppConfig

SUITES = "evaluation suites"


class EvaluationsConfig(AppConfig):
    name = "creations.evaluations"
    label = "evaluations"
    verbose_name = "Evaluations"

    def ready(self) -> None:
        from django.db.models import F

        from creations.evaluations import receivers  # noqa: F401 - receivers connects itself
        from creations.evaluations.models import Suite, SuiteFile
        from creations.usage.storage import storage_holder_register

        # A suite's task file and its input files count in the workspace's storage quota.
        storage_holder_register(Suite, workspace="workspace_id", size=F("task_file_bytes"), label=SUITES)
        storage_holder_register(SuiteFile, workspace="suite__workspace_id", size=F("size"), label=SUITES)
