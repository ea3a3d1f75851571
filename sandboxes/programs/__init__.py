"""Programs that run inside the sandbox, kept as real files (read with importlib.resources)."""

from importlib.resources import files


def program_text(name: str) -> str:
    """The text of the program `name` in this package."""
    return files(__package__).joinpath(name).read_text(encoding="utf-8")
