from django.apps import AppConfig


class CommentsConfig(AppConfig):
    name = "creations.comments"
    label = "comments"
    verbose_name = "Comments"
