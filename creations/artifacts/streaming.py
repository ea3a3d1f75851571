"""Streaming file bodies under ASGI without loading them into memory.

Django buffers a synchronous iterator completely before sending it on ASGI, so
large files (videos, zips) are read in chunks off a thread instead.
"""

from collections.abc import AsyncIterator
from typing import IO

from asgiref.sync import sync_to_async

CHUNK_BYTES = 256 * 1024


async def file_chunks(handle: IO[bytes], *, start: int = 0, length: int | None = None) -> AsyncIterator[bytes]:
    """`length` bytes of `handle` from `start` (to the end when None); closes the handle."""
    try:
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
