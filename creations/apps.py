from django.apps import AppConfig


class CreationsConfig(AppConfig):
    name = "creations"
