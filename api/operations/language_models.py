"""The language models a person may start runs with in a workspace: its switched-on model
endpoints and the built-in demo model. Never a key, nor a part of one; the address without
any credentials written into it (as the web's Models page shows it)."""

from django.http import HttpRequest
from ninja import Router

from api.auth import caller
from api.schemas.language_models import ModelOut
from sandboxes.agent.demo import DEMO_MODEL_NAME
from sandboxes.agent.demo.client import DEMO_MODEL_LABEL
from sandboxes.agent.endpoint_addresses import public_url
from workspaces.permissions import workspace_membership_or_404
from workspaces.selectors import workspace_endpoints

router = Router(tags=["models"])


@router.get("/{slug}/models", response=list[ModelOut], summary="Models you may use in a workspace")
def list_models(request: HttpRequest, slug: str) -> list[ModelOut]:
    workspace = workspace_membership_or_404(slug=slug, user=caller(request)).workspace
    models = [ModelOut(id=None, name=DEMO_MODEL_LABEL, model=DEMO_MODEL_NAME, base_url=None, last_check=None)]
    for endpoint in workspace_endpoints(workspace=workspace).filter(is_enabled=True):
        models.append(
            ModelOut(
                id=endpoint.pk,
                name=endpoint.name,
                model=endpoint.model,
                base_url=public_url(endpoint.base_url),
                last_check=endpoint.check_verdict or None,
            )
        )
    return models
