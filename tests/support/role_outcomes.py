"""What a person notices from one request, and rules that say it per role:
the vocabulary of the role matrix (tests/config/test_role_matrix.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tests.support.role_world import ANONYMOUS, CREATORS, MANAGERS, MEMBERS, OUTSIDER, PUBLIC, VIEWER, sees

# --- what a person notices ----------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    status: int
    to: str | None = None  # where a redirect goes: a URL name ("login" for the login page)
    changed: bool = False  # the row's change took place
    listed: bool | None = None  # a list page shows the creation (None: not a list page)

    def __str__(self) -> str:
        listing = {True: "listing it", False: "not listing it", None: ""}[self.listed]
        parts = (str(self.status), f"→ {self.to}" if self.to else "", "changed" if self.changed else "", listing)
        return " ".join(part for part in parts if part)


OK = Outcome(200)
LOGIN = Outcome(302, to="login")
NOT_FOUND = Outcome(404)
FORBIDDEN = Outcome(403)
NOT_ALLOWED = Outcome(405)
LISTED = Outcome(200, listed=True)
UNLISTED = Outcome(200, listed=False)


def done(status: int = 302, to: str | None = None) -> Outcome:
    return Outcome(status, to=to, changed=True)


def refused(status: int, to: str | None = None) -> Outcome:
    """Turned down with a message on the page (or on the page redirected to); nothing changes."""
    return Outcome(status, to=to)


def redirect(to: str) -> Outcome:
    return Outcome(302, to=to)


Rule = Callable[[str, str], Outcome]  # (role, visibility) → outcome

# --- rules for pages of the workspace (the creation's visibility does not matter) ---


def anyone(outcome: Outcome) -> Rule:
    return lambda who, visibility: outcome


def signed_in(outcome: Outcome) -> Rule:
    return lambda who, visibility: LOGIN if who == ANONYMOUS else outcome


def members(allowed: set[str], outcome: Outcome, otherwise: Outcome | None = None) -> Rule:
    """A workspace page: signed out, log in first; outsiders are told it does not exist; the `allowed`
    roles get `outcome`, the other members `otherwise`."""

    def rule(who: str, visibility: str) -> Outcome:
        if who == ANONYMOUS:
            return LOGIN
        if who == OUTSIDER:
            return NOT_FOUND
        if who in allowed:
            return outcome
        assert otherwise is not None, f"{who} is a member: say what they get"
        return otherwise

    return rule


# --- rules for a creation's pages (creations.access) ---


def creation_page(who: str, visibility: str) -> Outcome:
    return OK if sees(who, visibility) else NOT_FOUND  # not behind login: public ones are for anyone


def workspace_list(who: str, visibility: str) -> Outcome:
    return members(MEMBERS, LISTED if sees(who, visibility) else UNLISTED)(who, visibility)


def usage_list(who: str, visibility: str) -> Outcome:
    """The usage page: viewers see totals only, so no creation is named to them; the others see the
    costliest creations, each named only to those who see it."""
    if who == VIEWER:
        return UNLISTED
    return workspace_list(who, visibility)


def usage_export(who: str, visibility: str) -> Outcome:
    """The CSV export lists each person's runs: not for viewers; titles only for those who see them."""
    return FORBIDDEN if who == VIEWER else workspace_list(who, visibility)


def public_list(who: str, visibility: str) -> Outcome:
    return LISTED if visibility == PUBLIC else UNLISTED


def start_from_creation(who: str, visibility: str) -> Outcome:
    """Run again or fork: for those who see it and may start runs in its workspace; the others who
    see it are sent back to it with a message."""
    if who == ANONYMOUS:
        return LOGIN
    if not sees(who, visibility):
        return NOT_FOUND
    return done(to="run_detail") if who in CREATORS else refused(302, to="creation_detail")


def refine(who: str, visibility: str) -> Outcome:
    """The next version: for those who see it and may start runs in its workspace (to its live page);
    a viewer gets the creation page back saying why."""
    if who == ANONYMOUS:
        return LOGIN
    if not sees(who, visibility):
        return NOT_FOUND
    return done(to="run_detail") if who in CREATORS else refused(403)


def rename_creation(who: str, visibility: str) -> Outcome:
    """A new title: for those who see it and may work on it (back to its page, which says so); a viewer
    gets the page back saying why not."""
    if who == ANONYMOUS:
        return LOGIN
    if not sees(who, visibility):
        return NOT_FOUND
    return done(to="creation_detail") if who in CREATORS else refused(403)


def talk_to_run(who: str, visibility: str) -> Outcome:
    """A message to the agent: this run has ended, so those who may talk to it are told nobody would
    read it; viewers, that they may not."""
    if who == ANONYMOUS:
        return LOGIN
    if not sees(who, visibility):
        return NOT_FOUND
    return refused(400) if who in CREATORS else refused(403)


def restore_version(who: str, visibility: str) -> Outcome:
    """Back to the creation page, which says what happened (shown now, or why not)."""
    if who == ANONYMOUS:
        return LOGIN
    return redirect("creation_detail") if sees(who, visibility) else NOT_FOUND


def cancel(who: str, visibility: str) -> Outcome:
    """Owners and admins may cancel any run of their workspace, a private creation's too (this run has
    finished, so nothing changes); members only the runs they started, and this one is the author's."""
    if who == ANONYMOUS:
        return LOGIN
    if who in MANAGERS:
        # A private creation's run page stays its author's: they are sent to the dashboard instead.
        return redirect("run_detail" if sees(who, visibility) else "workspace_dashboard")
    return FORBIDDEN if sees(who, visibility) else NOT_FOUND


def delete_creation(who: str, visibility: str) -> Outcome:
    """Its author (not one of the roles here) or the workspace's owners and admins, a private creation's
    too (they land on the dashboard, as after any delete); the others who see it are refused."""
    if who == ANONYMOUS:
        return LOGIN
    if who in MANAGERS:
        return done(to="workspace_dashboard")
    return refused(403) if sees(who, visibility) else NOT_FOUND
