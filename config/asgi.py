"""ASGI entry point: HTTP through Django, websockets through Channels (daphne config.asgi:application)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Django must be set up before importing anything that touches models.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from config.backpressure import BackpressureMiddleware  # noqa: E402
from config.routing import websocket_urlpatterns  # noqa: E402
from config.startup_objects import freeze_startup_objects  # noqa: E402
from config.websocket_backlog import WebsocketBacklogMiddleware  # noqa: E402

# Outermost, so that they see daphne's own `send`: response bodies wait for a client that reads
# slowly; a websocket whose client leaves too much unread is closed.
application = BackpressureMiddleware(
    WebsocketBacklogMiddleware(
        ProtocolTypeRouter(
            {
                "http": django_asgi_app,
                "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
            }
        )
    )
)

# Every page's and API operation's module loaded now rather than at the first request, so that
# they are frozen with the rest of what the process serves from (config/startup_objects.py).
get_resolver().url_patterns  # noqa: B018 - loading the URLconf is the point
freeze_startup_objects()
