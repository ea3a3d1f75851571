"""HTTP Range requests (RFC 9110 §14) for one byte range, so video and audio can seek."""

from dataclasses import dataclass


@dataclass(frozen=True)
class ByteRange:
    start: int
    end: int  # inclusive

    @property
    def length(self) -> int:
        return self.end - self.start + 1


class RangeNotSatisfiable(Exception):
    pass


def parse_range(header: str | None, size: int) -> ByteRange | None:
    """The single range asked for, None to send the whole file, or RangeNotSatisfiable.

    Several ranges, other units or a malformed header mean "send it all": a server
    may always ignore Range.
    """
    if not header:
        return None
    unit, _, spec = header.strip().partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first, dash, last = spec.strip().partition("-")
    if not dash:
        return None
    try:
        if first == "":  # suffix: the last N bytes
            suffix = int(last)
            if suffix <= 0:
                raise RangeNotSatisfiable
            return ByteRange(start=max(size - suffix, 0), end=size - 1) if size else _unsatisfiable()
        start = int(first)
        end = int(last) if last else size - 1
    except ValueError:
        return None
    if start < 0:
        return None
    if start >= size:
        raise RangeNotSatisfiable
    if end < start:
        return None
    return ByteRange(start=start, end=min(end, size - 1))


def _unsatisfiable() -> ByteRange:
    raise RangeNotSatisfiable
