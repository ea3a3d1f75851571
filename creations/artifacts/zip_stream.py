"""A run's artifacts as a zip archive, produced as a stream of chunks.

`zipfile` writes to an output it cannot seek by putting each entry's sizes
after its data (a data descriptor); every reader handles that. Here the
output is a drain the generator empties after each write, so at most one
chunk of each file is held in memory and nothing is spooled to disk (from S3 either:
each file is one GET read as it arrives).
Already-compressed media is stored as is; text is deflated.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable, Iterator
from contextlib import closing

from creations.artifacts.streaming import open_stream
from creations.models import Artifact, ArtifactKind

CHUNK_BYTES = 256 * 1024
DEFLATED_KINDS = frozenset(
    {ArtifactKind.HTML, ArtifactKind.MAP, ArtifactKind.SVG, ArtifactKind.MARKDOWN, ArtifactKind.TEXT, ArtifactKind.MIDI}
)


class _Drain:
    """Where zipfile writes: it keeps what was written until the generator takes it."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def take(self) -> bytes:
        data = b"".join(self._parts)
        self._parts.clear()
        return data


def zip_artifacts(artifacts: Iterable[Artifact]) -> Iterator[bytes]:
    drain = _Drain()
    with zipfile.ZipFile(drain, "w") as archive:
        for artifact in artifacts:
            info = zipfile.ZipInfo(artifact.path, date_time=artifact.created_at.timetuple()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED if artifact.kind in DEFLATED_KINDS else zipfile.ZIP_STORED
            source = open_stream(artifact.file.storage, str(artifact.file.name))
            with closing(source), archive.open(info, "w", force_zip64=True) as target:
                while chunk := source.read(CHUNK_BYTES):
                    target.write(chunk)
                    if data := drain.take():
                        yield data
            if data := drain.take():
                yield data
    if data := drain.take():
        yield data
