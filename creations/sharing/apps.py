from django.apps import AppConfig


class SharingConfig(AppConfig):
    name = "creations.sharing"
    label = "sharing"
    verbose_name = "Share links"
