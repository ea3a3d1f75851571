"""Whether a page offers "Use in a new creation" for an artifact."""

from django import template

from creations.models import Artifact
from creations.runs.artifact_inputs import artifact_usable_as_input

register = template.Library()


@register.filter
def usable_as_input(artifact: Artifact) -> bool:
    """Only for files the upload rules take (type, size): a link to a refusal helps nobody."""
    return artifact_usable_as_input(artifact)
