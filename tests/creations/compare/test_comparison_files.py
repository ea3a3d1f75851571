"""Comparing two versions of a creation: files matched by path, compared by checksum, and who may look."""

import pytest
from django.core.exceptions import ValidationError
from django.http import Http404

from creations.compare.results import DetailState
from creations.compare.selectors import run_comparison
from tests.support.artifacts import Output
from tests.support.comparisons import two_versions
from tests.support.fixtures.accounts import Team

pytestmark = [pytest.mark.django_db]


def test_files_are_matched_by_path_and_compared_by_checksum(team: Team) -> None:
    run_a, run_b = two_versions(
        workspace=team.workspace,
        author=team.owner,
        older=[Output("same.txt", b"kept\n"), Output("gone.csv", b"a,b\n"), Output("notes.bin", b"\x00\x01")],
        newer=[Output("same.txt", b"kept\n"), Output("new.csv", b"c,d\n"), Output("notes.bin", b"\x00\x02")],
    )
    comparison = run_comparison(run_a=run_a, run_b=run_b, user=team.viewer)
    assert [f.path for f in comparison.added] == ["new.csv"]
    assert [f.path for f in comparison.removed] == ["gone.csv"]
    assert [f.path for f in comparison.unchanged] == ["same.txt"]
    (changed,) = comparison.changed
    assert changed.path == "notes.bin"
    assert changed.detail_state == DetailState.NONE  # an unknown file: its checksum is all there is to say
    assert not comparison.pending


def test_outsiders_are_told_the_runs_do_not_exist(team: Team) -> None:
    run_a, run_b = two_versions(workspace=team.workspace, author=team.owner, older=[], newer=[])
    with pytest.raises(Http404):
        run_comparison(run_a=run_a, run_b=run_b, user=team.outsider)


def test_runs_of_two_creations_are_refused_with_a_reason(team: Team) -> None:
    run_a, _ = two_versions(workspace=team.workspace, author=team.owner, older=[], newer=[])
    other, _ = two_versions(workspace=team.workspace, author=team.owner, older=[], newer=[])
    with pytest.raises(ValidationError, match="different creations"):
        run_comparison(run_a=run_a, run_b=other, user=team.owner)
