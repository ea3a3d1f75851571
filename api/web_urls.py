from django.urls import path

from api import views

urlpatterns = [
    path("settings/tokens/", views.access_tokens, name="access_tokens"),
    path("settings/tokens/<int:pk>/revoke/", views.access_token_revoke, name="access_token_revoke"),
]
