"""A run's events: a JSON page, and a live stream of Server-Sent Events."""

from django.http import HttpRequest, StreamingHttpResponse
from ninja import Field, Header, Query, Router, Schema

from api.auth import caller, calling_token
from api.event_stream import MEDIA_TYPE, Watcher, resume_after, run_event_stream
from api.schemas.events import EventsPageOut
from config.client_address import address_of_request
from creations.access import run_for_viewer_or_404
from creations.arena.selectors import run_names_hidden_from
from creations.events.follow import events_page
from creations.models import Run

router = Router(tags=["events"])
# With what tells whether its model is hidden from the reader: no query more for a run of no comparison.
RUN_WITH_MODEL = Run.objects.select_related("creation__workspace", "creation__model_endpoint", "creation__contestant")


class PageQuery(Schema):
    after: int = Field(0, ge=0, description="Events with a seq above this")
    limit: int = Field(200, ge=1, le=1000)


@router.get("/{run_id}/events", response=EventsPageOut, summary="A page of a run's events")
def list_events(request: HttpRequest, run_id: int, query: Query[PageQuery]) -> EventsPageOut:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_WITH_MODEL).run
    hidden = run_names_hidden_from(run, user)
    page = events_page(run_id=run.pk, after=query.after, limit=query.limit, hidden=hidden)
    next_after = page.events[-1]["seq"] if page.events else max(query.after, 0)
    return EventsPageOut.model_validate(
        {"events": page.events, "last_seq": page.last_seq, "is_final": page.is_final, "next_after": next_after}
    )


class StreamQuery(Schema):
    after: int | None = Field(None, ge=0, description="Start after this seq (Last-Event-ID wins)")


@router.get(
    "/{run_id}/events/stream",
    summary="A run's events, live (Server-Sent Events)",
    description=(
        "`text/event-stream`: each event as `id: <seq>`, `event: <kind>`, `data: <the event as JSON>`. "
        "Reconnect with `Last-Event-ID` (or `?after=`) to get exactly what you missed. Comment lines keep an "
        "idle connection open; the stream ends after the run's final status event."
    ),
    openapi_extra={
        "responses": {200: {"description": "The event stream", "content": {MEDIA_TYPE: {"schema": {"type": "string"}}}}}
    },
)
def stream_events(
    request: HttpRequest,
    run_id: int,
    query: Query[StreamQuery],
    last_event_id: str | None = Header(None, alias="Last-Event-ID"),
) -> StreamingHttpResponse:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_WITH_MODEL).run
    token = calling_token(request)
    watcher = Watcher(
        user_id=user.pk,
        address=address_of_request(request),
        token_id=token.pk if token is not None else None,
        session_key=None if token is not None else request.session.session_key,
    )
    stream = run_event_stream(
        run_id=run.pk,
        after=resume_after(last_event_id=last_event_id, after=query.after),
        watcher=watcher,
        hidden=run_names_hidden_from(run, user),  # decided as it opens, like the websocket's
    )
    response = StreamingHttpResponse(stream, content_type=MEDIA_TYPE)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a proxy in front must pass each event on at once
    return response
