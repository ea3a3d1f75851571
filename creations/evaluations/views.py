"""The Evaluations pages: the list, uploading a suite (or adding the samples), starting an
evaluation, its results (with CSV downloads), and cancelling it. Thin: parse, call a service,
render. Members of the workspace read everything, viewers too; those who may start runs upload and
start (workspaces.permissions.may_run_evaluations)."""

from __future__ import annotations

import csv
from collections.abc import Iterator

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from creations.evaluations.chart import accuracy_chart
from creations.evaluations.forms import EvaluationForm, SuiteUploadForm
from creations.evaluations.models import Evaluation, Suite
from creations.evaluations.results import (
    ANSWERS_CSV_HEADER,
    RESULTS_CSV_HEADER,
    answers_csv_rows,
    evaluation_items,
    evaluation_progress,
    evaluation_results,
    results_csv_rows,
)
from creations.evaluations.services import evaluation_cancel, evaluation_start
from creations.evaluations.suites import SuiteInUse, sample_suites_add, suite_delete, suite_upload
from creations.web.csp import with_platform_csp
from workspaces.models import Membership
from workspaces.permissions import (
    EVALUATE_REFUSED,
    may_cancel_evaluation,
    may_delete_suite,
    may_run_evaluations,
    workspace_membership_or_404,
)
from workspaces.selectors import membership_get

# Past this many bytes a file is not read further: the service refuses it, saying its limit.
_READ_SLACK = 1


def _signed_in(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


def _errors_onto(form: Form, error: ValidationError) -> None:
    if hasattr(error, "error_dict"):
        for field, errors in error.error_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, error)


def _evaluation_or_404(request: HttpRequest, pk: int) -> tuple[Evaluation, Membership]:
    evaluation = Evaluation.objects.select_related("workspace", "suite", "started_by").filter(pk=pk).first()
    membership = membership_get(workspace=evaluation.workspace_id, user=request.user) if evaluation else None
    if evaluation is None or membership is None:
        raise Http404("No such evaluation.")
    return evaluation, membership


@login_required
@require_GET
def evaluations_list(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    workspace = membership.workspace
    evaluations = Evaluation.objects.filter(workspace=workspace).select_related("suite", "started_by")[:50]
    suites = Suite.objects.filter(workspace=workspace).select_related("uploaded_by")
    context = {
        "workspace": workspace,
        "membership": membership,
        "allowed": may_run_evaluations(membership),
        "suites": [
            (suite, may_delete_suite(membership, uploaded_by_id=suite.uploaded_by_id, user=request.user))
            for suite in suites
        ],
        "evaluations": [(evaluation, evaluation_progress(evaluation)) for evaluation in evaluations],
    }
    return render(request, "evaluations/list.html", context)


@login_required
@with_platform_csp
@require_http_methods(["GET", "POST"])
def suite_upload_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    allowed = may_run_evaluations(membership)
    form = SuiteUploadForm(request.POST or None, request.FILES or None)
    status = 200 if allowed else 403
    if allowed and request.method == "POST":
        status = 400
        if form.is_valid():
            zipped = form.cleaned_data["input_files"]
            try:
                suite = suite_upload(
                    workspace=membership.workspace,
                    user=_signed_in(request),
                    name=form.cleaned_data["name"],
                    data=form.cleaned_data["tasks"].read(settings.EVALUATION_SUITE_MAX_BYTES + _READ_SLACK),
                    zip_data=zipped.read() if zipped else None,
                )
            except ValidationError as error:
                _errors_onto(form, error)
            else:
                messages.success(
                    request, f"“{suite.name}” is kept: {suite.task_count} tasks. Start an evaluation of it."
                )
                return redirect(f"{_new_url(membership)}?suite={suite.pk}")
    context = {"workspace": membership.workspace, "membership": membership, "form": form, "allowed": allowed}
    context["refusal"] = EVALUATE_REFUSED
    return render(request, "evaluations/suite_upload.html", context, status=status)


def _new_url(membership: Membership) -> str:
    return reverse("evaluation_new", args=[membership.workspace.slug])


@login_required
@require_POST
def samples_add_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    sample_suites_add(workspace=membership.workspace, user=_signed_in(request))  # PermissionDenied: the 403 page
    messages.success(request, "The three sample suites are added, labelled as samples.")
    return redirect("evaluations_list", slug=membership.workspace.slug)


@login_required
@require_POST
def suite_delete_view(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    suite = Suite.objects.filter(pk=pk, workspace=membership.workspace).first()
    if suite is None:
        raise Http404("No such suite.")
    try:
        suite_delete(suite=suite, user=_signed_in(request))  # PermissionDenied: the 403 page
    except SuiteInUse as refused:
        messages.error(request, " ".join(refused.messages))
    else:
        messages.success(request, f"“{suite.name}” is deleted, with its evaluations and their results.")
    return redirect("evaluations_list", slug=membership.workspace.slug)


@login_required
@with_platform_csp
@require_http_methods(["GET", "POST"])
def evaluation_new(request: HttpRequest, slug: str) -> HttpResponse:
    membership = workspace_membership_or_404(slug=slug, user=request.user)
    workspace = membership.workspace
    allowed = may_run_evaluations(membership)
    initial = {"suite": request.GET.get("suite")} if request.GET.get("suite", "").isdigit() else {}
    form = EvaluationForm(request.POST or None, initial=initial, workspace=workspace)
    status = 200 if allowed else 403
    if allowed and request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                evaluation = evaluation_start(
                    workspace=workspace,
                    user=_signed_in(request),
                    suite=form.cleaned_data["suite"],
                    endpoints=form.chosen_endpoints(),
                    modes=form.cleaned_data["modes"],
                )
            except ValidationError as error:
                _errors_onto(form, error)
            else:
                return redirect("evaluation_detail", pk=evaluation.pk)
    context = {
        "workspace": workspace,
        "membership": membership,
        "form": form,
        "allowed": allowed,
        "refusal": EVALUATE_REFUSED,
        "concurrency": workspace.quota_concurrent_runs,
    }
    return render(request, "evaluations/evaluation_new.html", context, status=status)


@login_required
@require_GET
def evaluation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    evaluation, membership = _evaluation_or_404(request, pk)
    results = evaluation_results(evaluation)
    done, total = evaluation_progress(evaluation)
    context = {
        "workspace": evaluation.workspace,
        "membership": membership,
        "evaluation": evaluation,
        "results": results,
        "chart": accuracy_chart(results),
        "items": evaluation_items(evaluation),
        "done": done,
        "total": total,
        "both": evaluation.modes == "both",
        "may_cancel": evaluation.is_running
        and may_cancel_evaluation(membership, started_by_id=evaluation.started_by_id, user=request.user),
    }
    return render(request, "evaluations/evaluation_detail.html", context)


@login_required
@require_POST
def evaluation_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    evaluation, _ = _evaluation_or_404(request, pk)
    if evaluation_cancel(evaluation=evaluation, user=_signed_in(request)):  # PermissionDenied: the 403 page
        messages.success(request, "Cancelled: nothing more starts, and what was scored stays.")
    return redirect("evaluation_detail", pk=evaluation.pk)


class _Echo:
    def write(self, line: str) -> str:
        return line


def _csv(header: list[str], rows: Iterator[list[str]], filename: str) -> StreamingHttpResponse:
    writer = csv.writer(_Echo())

    def lines() -> Iterator[str]:
        yield writer.writerow(header)
        for row in rows:
            # A cell a spreadsheet would run as a formula is written as text.
            yield writer.writerow([_as_text(cell) for cell in row])

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _as_text(cell: str) -> str:
    """A cell a spreadsheet would run as a formula ("=…", "@…"), written as text; numbers ("-10.0") as they are."""
    if cell[:1] not in ("=", "+", "-", "@"):
        return cell
    try:
        float(cell)
    except ValueError:
        return "'" + cell
    return cell


@login_required
@require_GET
def evaluation_results_csv(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    evaluation, _ = _evaluation_or_404(request, pk)
    return _csv(RESULTS_CSV_HEADER, results_csv_rows(evaluation), f"evaluation-{evaluation.pk}-results.csv")


@login_required
@require_GET
def evaluation_answers_csv(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    evaluation, _ = _evaluation_or_404(request, pk)
    return _csv(ANSWERS_CSV_HEADER, answers_csv_rows(evaluation), f"evaluation-{evaluation.pk}-answers.csv")
