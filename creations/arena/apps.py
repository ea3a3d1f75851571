from django.apps import AppConfig


class ArenaConfig(AppConfig):
    name = "creations.arena"
    label = "arena"
    verbose_name = "Arena"
