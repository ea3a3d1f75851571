"""Artifacts stored in S3 (a real S3-compatible server, SeaweedFS), served by the artifact origin
itself (redirects to the store off, or a file the store cannot serve with our headers): a Range
request downloads only the range."""

import os
from typing import Any

import pytest
from django.test import Client

from devstack.s3 import S3Server
from tests.creations.artifacts.test_origin import body, get, one_artifact, url_for
from tests.support.fixtures.accounts import Team

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]


def test_a_range_of_a_large_s3_artifact_reads_only_that_range_from_s3(
    team: Team, client: Client, s3_storage: S3Server, settings: Any
) -> None:
    settings.S3_PRESIGNED_REDIRECTS = False
    data = os.urandom(8 * 1024 * 1024)
    artifact = one_artifact(team, "clip.mp4", b"\x00\x00\x00\x18ftypmp42" + data)
    url = url_for(artifact, team.owner)

    s3_storage.proxy.reset()
    response = get(client, url, range="bytes=1000-1999")
    assert response.status_code == 206
    assert body(response) == (b"\x00\x00\x00\x18ftypmp42" + data)[1000:2000]
    assert s3_storage.proxy.received < 64 * 1024  # the range and some headers, not 8 MB

    s3_storage.proxy.reset()
    whole = get(client, url)
    assert body(whole) == b"\x00\x00\x00\x18ftypmp42" + data
    assert s3_storage.proxy.received < len(data) + 64 * 1024  # fetched once, not once more to spool it


def test_an_s3_artifact_outside_any_range_is_served_whole(team: Team, client: Client, s3_storage: S3Server) -> None:
    artifact = one_artifact(team, "notes.txt", b"hello from s3\n")
    response = get(client, url_for(artifact, team.owner))
    assert response.status_code == 200
    assert body(response) == b"hello from s3\n"
    assert s3_storage.object_bytes(str(artifact.file.name)) == b"hello from s3\n"  # it really lives in the bucket
