from django.urls import path

from creations import views

urlpatterns = [
    path("creations/<int:pk>/", views.creation_detail, name="creation_detail"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
]
