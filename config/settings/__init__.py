"""Atelier settings, read entirely from the environment.

Every value is parsed with a type (environs); an invalid value stops start-up
with an error naming the variable. Defaults are the embedded ones (SQLite,
local media storage, Redis on localhost, the demo model); production sets
DATABASE_URL, REDIS_URL, SECRET_KEY, FIELD_ENCRYPTION_KEYS, ALLOWED_HOSTS and the
storage settings.

One module per concern, read in this order: a module uses the names of those
above it (Redis's address, DEBUG, the beat schedule it adds to), and `checks`
comes last, since it reports every invalid variable at once and fills in what
development may leave out. A name a later module sets again (`checks` sets
SECRET_KEY and ALLOWED_HOSTS, `runs` SANDBOX_RUN_ACTIVE_CHECK) wins here, so keep
the order. `DJANGO_SETTINGS_MODULE=config.settings` names this package; Django
reads the names gathered here.
"""

# In the reading order, never sorted:
# ruff: noqa: I001
from config.settings.base import *  # noqa: F403
from config.settings.database import *  # noqa: F403
from config.settings.celery_channels import *  # noqa: F403
from config.settings.security import *  # noqa: F403
from config.settings.mail import *  # noqa: F403
from config.settings.storage import *  # noqa: F403
from config.settings.sandbox import *  # noqa: F403
from config.settings.agent import *  # noqa: F403
from config.settings.api import *  # noqa: F403
from config.settings.runs import *  # noqa: F403
from config.settings.automation import *  # noqa: F403
from config.settings.evaluations import *  # noqa: F403
from config.settings.web import *  # noqa: F403
from config.settings.checks import *  # noqa: F403
