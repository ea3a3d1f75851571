from django.contrib import admin
from django.urls import include, path

from config.health import healthz
from workspaces import views as workspace_views

urlpatterns = [
    path("", workspace_views.home, name="home"),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("accounts/signup/", workspace_views.signup, name="signup"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("creations.urls")),
]
