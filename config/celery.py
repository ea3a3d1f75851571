"""Celery application: `celery -A config worker`."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("atelier")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Run tasks live with the rest of a run's lifecycle, not at the app's top level.
app.autodiscover_tasks(["creations.runs", "creations.compare"])
