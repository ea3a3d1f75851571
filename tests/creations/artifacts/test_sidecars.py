"""What an agent says its files show or say (`<file>.alt.txt`, `<file>.vtt`) reaches the people who
cannot see or hear them: checked at ingestion, shown as alt text, captions and transcripts; and no
picture is ever left without a text alternative."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from creations.artifacts.ingest import ingest_outputs
from creations.models import Artifact, RunStatus
from sandboxes.runtime import CopiedFile
from tests.support.artifacts import Output
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import png_bytes, wav_bytes
from tests.support.pages import a_run, signed_in

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]

MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + b"\x00" * 64
CAPTIONS = "WEBVTT\n\n00:00.000 --> 00:02.000\nHello from the harbour\n\n00:02.000 --> 00:04.000\nGoodbye\n"


def copied(tmp_path: Path, name: str, data: bytes) -> CopiedFile:
    path = tmp_path / name.replace("/", "_")
    path.write_bytes(data)
    return CopiedFile(path=name, local_path=path, size=len(data))


def test_sidecars_become_the_files_alt_text_captions_and_transcript_not_files_of_their_own(
    team: Team, tmp_path: Path
) -> None:
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True)
    files = [
        copied(tmp_path, "poster.png", png_bytes()),
        copied(tmp_path, "poster.png.alt.txt", b"\xef\xbb\xbfA red poster:\n  the fair, on 3 May.\n"),
        copied(tmp_path, "clip.mp4", MP4),
        copied(tmp_path, "clip.mp4.vtt", CAPTIONS.encode()),
        copied(tmp_path, "clip.mp4.alt.txt", b"Boats leave the harbour at dawn."),
        copied(tmp_path, "song.wav", wav_bytes(seconds=0.1)),
        copied(tmp_path, "song.wav.alt.txt", b"Verse one:\nthe tide comes in\n"),
    ]

    ingested = ingest_outputs(run=run, files=files)

    assert [artifact.path for artifact in ingested.artifacts] == ["clip.mp4", "poster.png", "song.wav"]
    stored = {artifact.path: artifact for artifact in Artifact.objects.filter(run=run)}
    assert set(stored) == {"clip.mp4", "poster.png", "song.wav"}
    assert stored["poster.png"].alt_text == "A red poster: the fair, on 3 May."
    assert stored["clip.mp4"].alt_text == "Boats leave the harbour at dawn."
    assert stored["clip.mp4"].captions_vtt == CAPTIONS
    assert stored["song.wav"].alt_text == "Verse one:\nthe tide comes in"


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("poster.png.alt.txt", b"x" * 1001),  # past a picture's alternative
        ("poster.png.alt.txt", b"caf\xe9"),  # not UTF-8
        ("poster.png.alt.txt", b"a\x00b"),
        ("poster.png.alt.txt", b"  \n "),
        ("clip.mp4.vtt", b"00:00.000 --> 00:02.000\nno header\n"),
        ("clip.mp4.vtt", b"WEBVTT\n\nno cue at all\n"),
        ("clip.mp4.vtt", b"WEBVTT\n\n00:00.000 --> 00:02.000\n" + b"x" * 300_000),
        ("poster.png.vtt", CAPTIONS.encode()),  # captions for a picture
        ("missing.png.alt.txt", b"A file that is not there."),
    ],
)
def test_a_sidecar_that_does_not_pass_is_kept_as_a_file_and_sets_nothing(
    team: Team, tmp_path: Path, name: str, data: bytes
) -> None:
    run = make_run(team, status=RunStatus.SUCCEEDED, finished=True)
    files = [copied(tmp_path, "poster.png", png_bytes()), copied(tmp_path, "clip.mp4", MP4)]
    files.append(copied(tmp_path, name, data))

    ingest_outputs(run=run, files=files)

    stored = {artifact.path: artifact for artifact in Artifact.objects.filter(run=run)}
    assert set(stored) == {"poster.png", "clip.mp4", name}  # nothing the agent made is lost
    assert stored["poster.png"].alt_text == stored["clip.mp4"].alt_text == stored["clip.mp4"].captions_vtt == ""


def test_pages_give_every_picture_a_text_alternative_videos_captions_and_audio_its_transcript(
    team: Team, client: Client
) -> None:
    run = a_run(
        team,
        title="Harbour festival",
        outputs=[
            Output("poster.png", png_bytes()),
            Output("chart.png", png_bytes()),
            Output("clip.mp4", MP4),
            Output("song.wav", wav_bytes(seconds=0.1)),
        ],
    )
    described = {artifact.path: artifact for artifact in run.artifacts.all()}
    Artifact.objects.filter(pk=described["poster.png"].pk).update(alt_text="A red poster for the fair")
    Artifact.objects.filter(pk=described["clip.mp4"].pk).update(captions_vtt=CAPTIONS)
    Artifact.objects.filter(pk=described["song.wav"].pk).update(alt_text="Verse one: the tide comes in")
    client = signed_in(client, team.member)

    page = client.get(run.creation.get_absolute_url()).content.decode()
    assert 'alt="A red poster for the fair"' in page
    assert 'alt="Harbour festival: chart.png"' in page  # no alternative left: the creation's title
    track = re.search(r'<track kind="captions" label="Captions" src="data:text/vtt;base64,([^"]+)" default>', page)
    assert track is not None
    assert base64.b64decode(track.group(1)).decode() == CAPTIONS
    assert "Verse one: the tide comes in" in page

    gallery = client.get(reverse("workspace_gallery", args=[team.workspace.slug])).content.decode()
    assert 'alt=""' not in gallery
    assert 'alt="A red poster for the fair"' in gallery
    assert 'alt="Harbour festival: chart.png"' in gallery
