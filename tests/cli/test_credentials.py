"""Where the login is kept: readable by its owner only; the environment overrides it."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from atelier_cli.credentials import Credentials, credentials_load, credentials_save, normalize_url
from atelier_cli.errors import CliError, NotLoggedIn


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("ATELIER_URL", raising=False)
    monkeypatch.delenv("ATELIER_TOKEN", raising=False)


def test_the_saved_token_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    stale = tmp_path / "atelier/config.json"
    stale.parent.mkdir()
    stale.write_text("{}")
    stale.chmod(0o644)
    path = credentials_save(Credentials(url="http://a.test", token="atl_x"))
    assert path == stale
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert credentials_load() == Credentials(url="http://a.test", token="atl_x")


def test_the_environment_overrides_the_file_each_on_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    credentials_save(Credentials(url="http://a.test", token="atl_saved"))
    monkeypatch.setenv("ATELIER_TOKEN", "atl_ci")
    assert credentials_load() == Credentials(url="http://a.test", token="atl_ci")
    monkeypatch.setenv("ATELIER_URL", "ci.test:8000")
    assert credentials_load() == Credentials(url="https://ci.test:8000", token="atl_ci")


def test_without_a_login_it_says_how_to_make_one() -> None:
    with pytest.raises(NotLoggedIn, match="atelier login"):
        credentials_load()


def test_a_damaged_file_is_explained(tmp_path: Path) -> None:
    (tmp_path / "atelier").mkdir()
    (tmp_path / "atelier/config.json").write_text("{not json")
    with pytest.raises(CliError, match="run `atelier login` again"):
        credentials_load()


@pytest.mark.parametrize(
    ("typed", "url"),
    [
        ("localhost:8000", "https://localhost:8000"),
        ("atelier.example", "https://atelier.example"),
        ("http://localhost:8000", "http://localhost:8000"),
        ("https://atelier.example/", "https://atelier.example"),
        ("https://atelier.example/api/v1/", "https://atelier.example"),
    ],
)
def test_addresses_are_taken_as_people_type_them(typed: str, url: str) -> None:
    assert normalize_url(typed) == url


def test_a_non_address_is_refused() -> None:
    with pytest.raises(CliError, match="is not a server address"):
        normalize_url("ftp://x")
