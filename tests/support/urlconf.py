"""Every route the project answers, read from its URLconfs (HTTP and websocket).

Tests that must cover each view walk these lists instead of naming views by hand,
so a view added later is covered, or the test says which one is missing.
The platform serves two URLconfs: its own, and on the artifact origin (chosen by
host in creations.artifacts.origin.ArtifactOriginMiddleware) the artifact routes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RegexPattern, RoutePattern

from creations.artifacts.origin import ARTIFACT_URLCONF


@dataclass(frozen=True)
class Route:
    name: str  # the name reverse() takes (with its namespace); unnamed routes get a placeholder
    route: str  # the full route, e.g. "runs/<int:pk>/cancel/"
    kwargs: tuple[str, ...]  # the URL's keyword arguments, outermost first
    urlconf: str = ""  # the URLconf it belongs to ("" for websocket routes)


def served_urlconfs() -> dict[str, str | None]:
    """Each URLconf the platform serves, with the Host it is served on (None: the platform's own)."""
    return {settings.ROOT_URLCONF: None, ARTIFACT_URLCONF: urlsplit(settings.ARTIFACT_ORIGIN).netloc}


def _kwarg_names(pattern: RoutePattern | RegexPattern | object) -> tuple[str, ...]:
    if isinstance(pattern, RoutePattern):
        return tuple(pattern.converters)
    if isinstance(pattern, RegexPattern):
        return tuple(pattern.regex.groupindex)
    raise AssertionError(f"a URL pattern of an unknown kind: {pattern!r}")


def include_key(resolver: URLResolver) -> str:
    """What an include() is known by: its namespace, else the dotted name of its URLconf."""
    if resolver.namespace:
        return resolver.namespace
    conf = resolver.urlconf_name
    return conf if isinstance(conf, str) else getattr(conf, "__name__", repr(conf))


def walk(
    patterns: Sequence[URLPattern | URLResolver], *, urlconf: str = "", skip_includes: frozenset[str] = frozenset()
) -> Iterator[Route]:
    """Each URLPattern under `patterns`, descending into includes except those named in `skip_includes`."""
    yield from _walk(patterns, urlconf, skip_includes, prefix="", namespace="", kwargs=())


def _walk(
    patterns: Sequence[URLPattern | URLResolver],
    urlconf: str,
    skip_includes: frozenset[str],
    *,
    prefix: str,
    namespace: str,
    kwargs: tuple[str, ...],
) -> Iterator[Route]:
    for entry in patterns:
        route = prefix + str(entry.pattern)
        names = kwargs + _kwarg_names(entry.pattern)
        if isinstance(entry, URLResolver):
            if include_key(entry) in skip_includes:
                continue
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _walk(entry.url_patterns, urlconf, skip_includes, prefix=route, namespace=inner, kwargs=names)
        else:
            name = f"{namespace}{entry.name}" if entry.name else f"<unnamed: {route}>"
            yield Route(name=name, route=route, kwargs=names, urlconf=urlconf)


def http_routes(*, skip_includes: frozenset[str] = frozenset()) -> list[Route]:
    """The routes of every URLconf the platform serves."""
    return [
        route
        for urlconf in served_urlconfs()
        for route in walk(get_resolver(urlconf).url_patterns, urlconf=urlconf, skip_includes=skip_includes)
    ]


def websocket_routes() -> list[Route]:
    from config.routing import websocket_urlpatterns

    return list(walk(websocket_urlpatterns))
