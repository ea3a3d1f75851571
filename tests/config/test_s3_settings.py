"""The S3 storage settings: read from the environment, bad values stop start-up naming the variable."""

import json

import pytest

from tests.config.test_settings import manage

S3 = {"STORAGE_BACKEND": "s3", "S3_BUCKET": "atelier"}


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("S3_PRESIGNED_SECONDS", "0"),
        ("S3_PRESIGNED_SECONDS", "a while"),
        ("S3_PRESIGNED_REDIRECTS", "perhaps"),
        ("S3_PUBLIC_ENDPOINT_URL", "ftp://store.example.net"),
    ],
)
def test_it_refuses_a_bad_value_naming_the_variable(variable: str, value: str) -> None:
    result = manage("check", **S3, **{variable: value})
    assert result.returncode != 0
    assert variable in result.stderr
    assert "Traceback" not in result.stderr


def test_the_bucket_location_signature_and_redirects_come_from_the_environment() -> None:
    code = (
        "import json; from django.conf import settings as s; o = s.STORAGES['default']['OPTIONS'];"
        " print(json.dumps([o['location'], o['signature_version'], o['querystring_auth'],"
        " s.S3_PRESIGNED_REDIRECTS, s.S3_PRESIGNED_SECONDS, s.S3_PUBLIC_ENDPOINT_URL]))"
    )
    result = manage(
        "shell", "-c", code, **S3, S3_LOCATION="/install-2/", S3_PRESIGNED_SECONDS="60",
        S3_PUBLIC_ENDPOINT_URL="https://atelier-store.example.net",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [
        "install-2",
        "s3v4",
        True,
        True,
        60,
        "https://atelier-store.example.net",
    ]
