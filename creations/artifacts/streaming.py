"""Streaming file bodies under ASGI without loading them into memory.

Django buffers a synchronous iterator completely before sending it on ASGI, so
large files (videos, zips) are read in chunks off a thread instead. A byte
range is read as a range from any storage: from S3 with a ranged GET (the
storage's own file object would first download the whole object), elsewhere
by seeking.
"""

from collections.abc import AsyncIterator
from typing import IO, Any

from asgiref.sync import sync_to_async
from django.core.files.storage import Storage

CHUNK_BYTES = 256 * 1024


def open_byte_range(storage: Storage, name: str, *, start: int, length: int) -> tuple[Any, int]:
    """A readable object for `length` bytes of a stored file from `start`, and the offset to seek to first."""
    handle = storage.open(name, "rb")
    s3_object = getattr(handle, "obj", None)  # django-storages' S3File: the boto3 object, nothing fetched yet
    if s3_object is not None and length > 0:
        body = s3_object.get(Range=f"bytes={start}-{start + length - 1}")["Body"]
        return body, 0
    return handle, start


async def file_chunks(handle: IO[bytes] | Any, *, start: int = 0, length: int | None = None) -> AsyncIterator[bytes]:
    """`length` bytes of `handle` from `start` (to the end when None); closes the handle."""
    try:
        if start:
            await sync_to_async(handle.seek)(start)
        remaining = length
        while remaining is None or remaining > 0:
            size = CHUNK_BYTES if remaining is None else min(CHUNK_BYTES, remaining)
            chunk: bytes = await sync_to_async(handle.read)(size)
            if not chunk:
                break
            if remaining is not None:
                remaining -= len(chunk)
            yield chunk
    finally:
        await sync_to_async(handle.close)()
