from django.contrib import admin
from django.urls import include, path

from config.health import healthz, healthz_workers

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("healthz/workers", healthz_workers, name="healthz-workers"),
    path("admin/", admin.site.urls),
    path("", include("api.urls")),
    path("", include("api.web_urls")),
    path("", include("workspaces.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("creations.urls")),
]

handler400 = "config.errors.bad_request"
handler403 = "config.errors.forbidden"
handler404 = "config.errors.not_found"
handler500 = "config.errors.server_error"
