"""The Evaluations pages."""

from django.urls import path

from creations.evaluations import views

urlpatterns = [
    path("w/<slug:slug>/evaluations/", views.evaluations_list, name="evaluations_list"),
    path("w/<slug:slug>/evaluations/suites/new/", views.suite_upload_view, name="suite_upload"),
    path("w/<slug:slug>/evaluations/suites/samples/", views.samples_add_view, name="suite_samples_add"),
    path("w/<slug:slug>/evaluations/suites/<int:pk>/delete/", views.suite_delete_view, name="suite_delete"),
    path("w/<slug:slug>/evaluations/new/", views.evaluation_new, name="evaluation_new"),
    path("evaluations/<int:pk>/", views.evaluation_detail, name="evaluation_detail"),
    path("evaluations/<int:pk>/cancel/", views.evaluation_cancel_view, name="evaluation_cancel"),
    path("evaluations/<int:pk>/results.csv", views.evaluation_results_csv, name="evaluation_results_csv"),
    path("evaluations/<int:pk>/answers.csv", views.evaluation_answers_csv, name="evaluation_answers_csv"),
]
