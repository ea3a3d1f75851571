from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from creations.models import Creation, Run
from creations.permissions import creation_viewable_or_404


def creation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    creation = get_object_or_404(Creation.objects.select_related("workspace", "author"), pk=pk)
    creation_viewable_or_404(creation=creation, user=request.user)
    runs = creation.runs.all()
    return render(request, "creations/creation_detail.html", {"creation": creation, "runs": runs})


def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(Run.objects.select_related("creation", "creation__workspace"), pk=pk)
    creation_viewable_or_404(creation=run.creation, user=request.user)
    return render(request, "creations/run_detail.html", {"run": run, "creation": run.creation})
