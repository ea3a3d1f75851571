"""Bradley-Terry ratings from arena votes, with bootstrap intervals.

A vote for a winner among k contestants counts as the winner beating each of the others (and
says nothing of the others among themselves); a tie as half a win each way between every pair.
Strengths are fitted by Hunter's MM iteration (2004), with every model also given one drawn
game against a fixed anchor of strength 1: the anchor keeps a model that never lost finite and
puts the scale at 1000 for an average model. Shown on the Elo scale (400 points per factor of
ten in the odds). The interval is the 2.5th to 97.5th percentile over resamples of the votes,
drawn with a fixed seed so a page reads the same twice.

Plain Python: a leaderboard has a handful of models, and a numeric library would be the
platform's largest dependency for a few dozen lines.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

ANCHOR_GAMES = 1.0
SCALE = 400 / math.log(10)
BASE = 1000.0
RESAMPLES = 200
SEED = 1
ITERATIONS = 500
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Ballot:
    """One vote: the contestants' models in the comparison, and the winner's (None: a tie)."""

    models: tuple[Hashable, ...]
    winner: Hashable | None


@dataclass(frozen=True)
class Rating:
    model: Hashable
    rating: float
    low: float
    high: float
    votes: int
    wins: int
    ties: int
    losses: int


def _games(ballots: Sequence[Ballot]) -> tuple[dict[Hashable, float], dict[tuple[Hashable, Hashable], float]]:
    """Wins per model (ties half) and games per unordered pair."""
    wins: dict[Hashable, float] = defaultdict(float)
    games: dict[tuple[Hashable, Hashable], float] = defaultdict(float)
    for ballot in ballots:
        for index, a in enumerate(ballot.models):
            wins[a] += 0.0
            for b in ballot.models[index + 1 :]:
                if ballot.winner is not None and ballot.winner not in (a, b):
                    continue  # two losers: the vote says nothing of which of them is better
                pair = (a, b) if repr(a) <= repr(b) else (b, a)
                games[pair] += 1
                if ballot.winner is None:
                    wins[a] += 0.5
                    wins[b] += 0.5
                else:
                    wins[ballot.winner] += 1
    return wins, games


def strengths(ballots: Sequence[Ballot]) -> dict[Hashable, float]:
    """Each model's Bradley-Terry strength (1: as strong as the anchor)."""
    wins, games = _games(ballots)
    models = list(wins)
    strength = dict.fromkeys(models, 1.0)
    opponents: dict[Hashable, list[tuple[Hashable, float]]] = defaultdict(list)
    for (a, b), count in games.items():
        opponents[a].append((b, count))
        opponents[b].append((a, count))
    for _ in range(ITERATIONS):
        moved = 0.0
        for model in models:
            # The anchor's drawn game: half a win, and one game against strength 1.
            denominator = ANCHOR_GAMES / (strength[model] + 1.0)
            denominator += sum(count / (strength[model] + strength[other]) for other, count in opponents[model])
            new = (wins[model] + ANCHOR_GAMES / 2) / denominator
            moved = max(moved, abs(math.log(new) - math.log(strength[model])))
            strength[model] = new
        if moved < TOLERANCE:
            break
    return strength


def _elo(strength: float) -> float:
    return BASE + SCALE * math.log(strength)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def ratings(ballots: Sequence[Ballot], *, resamples: int = RESAMPLES, seed: int = SEED) -> list[Rating]:
    """Every model that took part in a vote, best first, with its 95% bootstrap interval and tallies."""
    if not ballots:
        return []
    fitted = strengths(ballots)
    draws: dict[Hashable, list[float]] = defaultdict(list)
    chooser = random.Random(seed)  # noqa: S311 - a reproducible resample, not a secret
    for _ in range(resamples):
        sample = [ballots[chooser.randrange(len(ballots))] for _ in ballots]
        resampled = strengths(sample)
        for model in fitted:
            # A model absent from a resample is unmeasured there, not average: it gives no draw.
            if model in resampled:
                draws[model].append(_elo(resampled[model]))
    tallies: dict[Hashable, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for ballot in ballots:
        for model in ballot.models:
            tally = tallies[model]
            tally[0] += 1
            if ballot.winner is None:
                tally[2] += 1
            elif ballot.winner == model:
                tally[1] += 1
            else:
                tally[3] += 1
    results = []
    for model, strength in fitted.items():
        rating = _elo(strength)
        spread = draws[model] or [rating]
        votes, won, tied, lost = tallies[model]
        results.append(
            Rating(
                model=model,
                rating=rating,
                low=min(rating, _percentile(spread, 0.025)),
                high=max(rating, _percentile(spread, 0.975)),
                votes=votes,
                wins=won,
                ties=tied,
                losses=lost,
            )
        )
    return sorted(results, key=lambda r: (-r.rating, repr(r.model)))
