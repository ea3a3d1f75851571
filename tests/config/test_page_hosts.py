"""The hosts an artifact page may load from are origins written exactly: nothing that widens them passes."""

import pytest

from config.page_hosts import page_host_origins


def test_origins_are_kept_normalized_in_order_without_repeats() -> None:
    given = ["https://Tile.OpenStreetMap.org/", " https://fonts.example.net:8443", "https://tile.openstreetmap.org"]
    assert page_host_origins(given) == ["https://tile.openstreetmap.org", "https://fonts.example.net:8443"]
    assert page_host_origins([]) == []


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("https://*.tile.openstreetmap.org", "no wildcard"),
        ("*", "only https"),
        ("http://tiles.example.net", "only https"),
        ("tiles.example.net", "only https"),
        ("https://tiles.example.net/tiles/", "without a path"),
        ("https://tiles.example.net?x=1", "without a path"),
        ("https://user@tiles.example.net", "without a path"),
        ("https://tiles.example.net; script-src *", "written out in full"),
        ("https://tiles example.net", "no wildcard"),
        ("'unsafe-inline'", "only https"),
        ("https://tiles.example.net:99999", "not an origin"),
    ],
)
def test_anything_but_one_https_origin_is_refused_saying_why(value: str, says: str) -> None:
    with pytest.raises(ValueError, match=says) as refused:
        page_host_origins([value])
    assert repr(value) in str(refused.value)
