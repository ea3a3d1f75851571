"""Streaming file bodies under ASGI without loading them into memory.

Django buffers a synchronous iterator completely before sending it on ASGI, so
large files (videos, zips) are read in chunks off a thread instead. A byte
range is read as a range from any storage: from S3 with a ranged GET (the
storage's own file object would first download the whole object), elsewhere
by seeking.
"""

from collections.abc import AsyncIterator, Iterator
from typing import IO, Any

from asgiref.sync import sync_to_async
from django.core.files.storage import Storage
from django.http import HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase

from creations.artifacts.http_range import ByteRange, RangeNotSatisfiable, parse_range

CHUNK_BYTES = 256 * 1024


def _next_chunk(chunks: Iterator[bytes]) -> bytes | None:
    return next(chunks, None)


async def chunks_off_thread(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    """A blocking iterator (file reads, compression) consumed in a worker thread, chunk by chunk."""
    while (chunk := await sync_to_async(_next_chunk, thread_sensitive=False)(chunks)) is not None:
        yield chunk


def open_byte_range(storage: Storage, name: str, *, start: int, length: int) -> tuple[Any, int]:
    """A readable object for `length` bytes of a stored file from `start`, and the offset to seek to first."""
    handle = storage.open(name, "rb")
    s3_object = getattr(handle, "obj", None)  # django-storages' S3File: the boto3 object, nothing fetched yet
    if s3_object is not None and length > 0:
        body = s3_object.get(Range=f"bytes={start}-{start + length - 1}")["Body"]
        return body, 0
    return handle, start


def open_stream(storage: Storage, name: str) -> Any:
    """A stored file to read front to back in chunks (`read(n)`, `close()`): from S3 the body of
    one GET as it arrives, where the storage's own file object would first copy it all to disk."""
    handle = storage.open(name, "rb")
    s3_object = getattr(handle, "obj", None)
    return s3_object.get()["Body"] if s3_object is not None else handle


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


def ranged_file_response(
    *, storage: Storage, name: str, size: int, range_header: str | None, method: str, headers: dict[str, str]
) -> HttpResponseBase:
    """A stored file (or the one byte range asked for) as a streamed response with `headers`:
    200, 206 with Content-Range, or 416. Only the range is read from storage."""
    headers = {**headers, "Accept-Ranges": "bytes"}
    try:
        byte_range = parse_range(range_header, size)
    except RangeNotSatisfiable:
        return HttpResponse(status=416, headers={**headers, "Content-Range": f"bytes */{size}"})
    status = 206 if byte_range else 200
    if byte_range is None:
        byte_range = ByteRange(start=0, end=size - 1)
    else:
        headers["Content-Range"] = f"bytes {byte_range.start}-{byte_range.end}/{size}"
    headers["Content-Length"] = str(max(byte_range.length, 0))
    if method == "HEAD" or size == 0:
        return HttpResponse(status=status, headers=headers)
    handle, seek_to = open_byte_range(storage, name, start=byte_range.start, length=byte_range.length)
    return StreamingHttpResponse(
        file_chunks(handle, start=seek_to, length=byte_range.length), status=status, headers=headers
    )
