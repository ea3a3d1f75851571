"""The public API, version 1, at /api/v1/: typed operations whose OpenAPI schema
django-ninja generates from the code (/api/v1/openapi.json, browsable at /api/v1/docs).

Every operation answers errors as problem details (api/problems.py); the schema
says so for each of them, so a client generated from it knows the error shape.
Permission rules are never decided here: each operation asks the same service or
access check the web pages ask.
"""

from __future__ import annotations

from typing import Any

from ninja import NinjaAPI
from ninja.operation import Operation

from api.auth import READ
from api.operations.arena import router as comparisons_router
from api.operations.arena import workspace_router as workspace_arena_router
from api.operations.artifacts import router as artifacts_router
from api.operations.artifacts import run_router as run_artifacts_router
from api.operations.comments import comment_router as comments_router
from api.operations.comments import router as run_comments_router
from api.operations.compare import router as compare_router
from api.operations.creations import router as creations_router
from api.operations.evaluations import router as evaluations_router
from api.operations.evaluations import workspace_router as workspace_evaluations_router
from api.operations.events import router as events_router
from api.operations.follows import router as follows_router
from api.operations.inputs import router as inputs_router
from api.operations.language_models import router as language_models_router
from api.operations.messages import router as messages_router
from api.operations.notifications import router as notifications_router
from api.operations.runs import router as runs_router
from api.operations.runs import workspace_router as workspace_runs_router
from api.operations.schedules import router as schedules_router
from api.operations.share_links import link_router as share_links_router
from api.operations.share_links import router as run_share_links_router
from api.operations.share_links import workspace_router as workspace_share_links_router
from api.operations.usage import router as usage_router
from api.operations.versions import router as versions_router
from api.operations.webhooks import router as webhooks_router
from api.operations.webhooks import workspace_router as workspace_webhooks_router
from api.operations.workspaces import router as workspaces_router
from api.problems import MEDIA_TYPE, TITLES, Problem, install_problem_handlers
from api.throttling import PerCallerRateLimit

# Answers any operation may give besides its own.
COMMON_PROBLEMS = (400, 401, 403, 404, 422, 429)
# Operation ids as first published, "api_endpoints_<module>_<function>" (the package was called
# endpoints then), so clients generated from the schema keep their method names when a module
# moves; a module whose name changed maps back to the name it was published under.
PUBLISHED_OPERATION_ID_PREFIX = "api_endpoints_"
PUBLISHED_MODULE_NAMES = {"language_models": "models"}


class AtelierAPI(NinjaAPI):
    """The schema is made once per process and URL prefix: it follows from the code alone, and making it
    costs about a tenth of a second of CPU, which every GET of /api/v1/openapi.json (open to anyone, like
    the docs page that reads it) would otherwise spend again. Callers read the schema; none change it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._schemas: dict[str, Any] = {}

    def get_openapi_operation_id(self, operation: Operation) -> str:
        module = operation.view_func.__module__.rsplit(".", 1)[-1]
        published = PUBLISHED_MODULE_NAMES.get(module, module)
        return f"{PUBLISHED_OPERATION_ID_PREFIX}{published}_{operation.view_func.__name__}"

    def get_openapi_schema(self, *, path_prefix: str | None = None, path_params: dict[str, Any] | None = None) -> Any:
        if path_prefix is None:
            path_prefix = self.get_root_path(path_params or {})
        schema = self._schemas.get(path_prefix)
        if schema is None:  # two requests at once may both make it: the same document either way
            schema = self._schemas[path_prefix] = self._made_schema(path_prefix)
        return schema

    def _made_schema(self, path_prefix: str) -> Any:
        schema = super().get_openapi_schema(path_prefix=path_prefix)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        problem_schema = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(problem_schema.pop("$defs", {}))
        components["Problem"] = problem_schema
        problem_content = {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}
        for path in schema["paths"].values():
            for operation in path.values():
                declared = operation.get("responses", {})
                responses: dict[str, Any] = {str(code): answer for code, answer in declared.items()}
                for problem_status in COMMON_PROBLEMS:
                    responses.setdefault(str(problem_status), {"description": TITLES[problem_status]})
                for code, response in responses.items():
                    if code.isdigit() and int(code) >= 400:
                        response["content"] = problem_content
                operation["responses"] = responses
        return schema


api = AtelierAPI(
    title="Atelier API",
    version="1",
    description=(
        "Give a language model a computer and get real things back, from a script. "
        "Authenticate with a personal access token: `Authorization: Bearer atl_…` "
        "(made on your Access tokens page)."
    ),
    urls_namespace="api-v1",
    auth=READ,
    throttle=[PerCallerRateLimit()],
)
install_problem_handlers(api)
api.add_router("/workspaces", workspaces_router)
api.add_router("/workspaces", inputs_router)
api.add_router("/workspaces", language_models_router)
api.add_router("/workspaces", usage_router)
api.add_router("/workspaces", workspace_runs_router)
api.add_router("/runs", runs_router)
api.add_router("/runs", versions_router)
api.add_router("/runs", creations_router)
api.add_router("/runs", messages_router)
api.add_router("/runs", events_router)
api.add_router("/runs", run_artifacts_router)
api.add_router("/runs", compare_router)
api.add_router("/artifacts", artifacts_router)
api.add_router("/workspaces", workspace_share_links_router)
api.add_router("/runs", run_share_links_router)
api.add_router("/share-links", share_links_router)
api.add_router("/workspaces", workspace_webhooks_router)
api.add_router("/webhooks", webhooks_router)
api.add_router("/runs", schedules_router)
api.add_router("/runs", run_comments_router)
api.add_router("/runs", follows_router)
api.add_router("/comments", comments_router)
api.add_router("/notifications", notifications_router)
api.add_router("/workspaces", workspace_evaluations_router)
api.add_router("/evaluations", evaluations_router)
api.add_router("/workspaces", workspace_arena_router)
api.add_router("/comparisons", comparisons_router)
