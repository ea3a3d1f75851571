"""A creation's schedule page: set it (or set it again, which resumes it), clear it, and see its
refreshes. Thin: parse, call a service, render. The creation page shows it through the
`schedule_panel` template tag."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from creations.access import creation_for_viewer_or_404
from creations.models import Creation
from creations.schedules.cadence import cadence_fields
from creations.schedules.forms import ScheduleForm
from creations.schedules.models import Schedule
from creations.schedules.services import schedule_clear, schedule_set
from creations.web.csp import with_platform_csp
from workspaces.permissions import SCHEDULE_REFUSED, may_schedule_refreshes


def _signed_in(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


@login_required
@with_platform_csp
@require_http_methods(["GET", "POST"])
def creation_schedule(request: HttpRequest, pk: int) -> HttpResponse:
    viewing = creation_for_viewer_or_404(
        pk=pk, user=request.user, queryset=Creation.objects.select_related("workspace")
    )
    creation = viewing.creation
    schedule = Schedule.objects.filter(creation=creation).select_related("set_by").first()
    allowed = viewing.is_member and may_schedule_refreshes(viewing.membership)
    initial = (
        {**cadence_fields(schedule.cadence, schedule.cron), "instruction": schedule.instruction}
        if schedule
        else {"cadence": "weekly", "weekday": 0, "at": "06:00"}
    )
    form = ScheduleForm(request.POST or None, initial=initial)
    status = 200 if allowed else 403
    if allowed and request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                schedule_set(creation=creation, user=_signed_in(request), **form.cleaned_data)
            except ValidationError as error:
                if hasattr(error, "error_dict"):
                    for field, errors in error.error_dict.items():
                        form.add_error(field if field in form.fields else None, errors)
                else:
                    form.add_error(None, error)
            else:
                messages.success(request, "Scheduled: the creation page says when it refreshes next.")
                return redirect("creation_detail", pk=creation.pk)
    refreshes = schedule.refreshes.select_related("run")[:20] if schedule else []
    context = {
        "creation": creation,
        "workspace": creation.workspace if viewing.is_member else None,
        "schedule": schedule,
        "refreshes": refreshes,
        "form": form,
        "allowed": allowed,
        "refusal": SCHEDULE_REFUSED,
    }
    return render(request, "schedules/creation_schedule.html", context, status=status)


@login_required
@require_POST
def creation_schedule_clear(request: HttpRequest, pk: int) -> HttpResponse:
    creation = creation_for_viewer_or_404(pk=pk, user=request.user).creation
    if schedule_clear(creation=creation, user=_signed_in(request)):  # PermissionDenied: the 403 page says why
        messages.success(request, "No more scheduled refreshes; the versions they made stay.")
    return redirect("creation_detail", pk=creation.pk)
