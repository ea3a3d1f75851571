"""The platform's error pages, in its look. Only the platform's URLconf names
these handlers: the artifact origin keeps Django's bare pages, which link to
nothing of the platform (its URLconf has none of the platform's names)."""

from django.http import HttpRequest, HttpResponse
from django.views import defaults


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    return defaults.page_not_found(request, exception, template_name="errors/404.html")


def forbidden(request: HttpRequest, exception: Exception) -> HttpResponse:
    return defaults.permission_denied(request, exception, template_name="errors/403.html")
