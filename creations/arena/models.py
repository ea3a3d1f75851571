"""The arena: one brief made by two to four of a workspace's models at once (a comparison), and the
members' votes for the best of them, from which the workspace's leaderboard is computed."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from creations.models import Creation, Run
from workspaces.models import ModelEndpoint, Workspace

MIN_CONTESTANTS = 2
MAX_CONTESTANTS = 4
LETTERS = "ABCD"


class Comparison(models.Model):
    """The same brief and inputs, run once per contestant model; each run an ordinary creation."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    brief = models.TextField()
    # Model names stay hidden from each person until they have voted, so a vote judges the work alone.
    blind = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["workspace", "-created_at"], name="comparison_workspace_newest")]

    def __str__(self) -> str:
        return f"comparison {self.pk}"

    def get_absolute_url(self) -> str:
        return reverse("comparison_detail", kwargs={"pk": self.pk})


class Contestant(models.Model):
    """One model's attempt: the first run of a creation of its own, shown as "A", "B", … by position."""

    comparison = models.ForeignKey(Comparison, on_delete=models.CASCADE, related_name="contestants")
    position = models.PositiveSmallIntegerField()
    creation = models.OneToOneField(Creation, on_delete=models.CASCADE, related_name="contestant")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+")
    # An endpoint that made creations is retired rather than deleted: the leaderboard keeps its name.
    # RESTRICT, not PROTECT: deleting the whole workspace takes its contestants with it.
    model_endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.RESTRICT, related_name="+")

    class Meta:
        ordering = ["comparison", "position"]
        constraints = [
            models.UniqueConstraint(fields=["comparison", "position"], name="contestant_unique_position"),
            models.UniqueConstraint(fields=["comparison", "model_endpoint"], name="contestant_unique_model"),
            models.CheckConstraint(condition=Q(position__lt=MAX_CONTESTANTS), name="contestant_position_in_range"),
        ]

    def __str__(self) -> str:
        return f"{self.letter} of comparison {self.comparison_id}"

    @property
    def letter(self) -> str:
        return LETTERS[self.position]


class Vote(models.Model):
    """A member's verdict on a comparison: the best contestant, or a tie (`winner` None). One per
    person per comparison, and final: once cast it reveals a blind comparison's names to its voter."""

    comparison = models.ForeignKey(Comparison, on_delete=models.CASCADE, related_name="votes")
    voter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    winner = models.ForeignKey(Contestant, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [models.UniqueConstraint(fields=["comparison", "voter"], name="vote_one_per_person")]

    def __str__(self) -> str:
        return f"vote of {self.voter_id} on comparison {self.comparison_id}"

    @property
    def is_tie(self) -> bool:
        return self.winner_id is None
