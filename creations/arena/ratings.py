"""Bradley-Terry ratings from arena votes, with 95% intervals from the fit's standard errors.

A vote for a winner among k contestants counts as the winner beating each of the others (and
says nothing of the others among themselves); a tie as half a win each way between every pair.
Strengths are fitted by Hunter's MM iteration (2004), with every model also given one drawn
game against a fixed anchor of strength 1, which keeps a model that never lost finite. Ratings
are on the Elo scale (400 points per factor of ten in the odds) with the models' average at
1000. The interval is the rating plus or minus 1.96 standard errors, from the inverse of the
fit's Fisher information: wide after a vote or two, narrowing as votes come in (a bootstrap
over the votes would give a single vote no width at all).

Plain Python: a leaderboard has a handful of models, and a numeric library would be the
platform's largest dependency for a few dozen lines.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

ANCHOR_GAMES = 1.0
SCALE = 400 / math.log(10)
BASE = 1000.0
Z95 = 1.959964  # the normal distribution's 97.5th percentile
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


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan with partial pivoting: the information matrix is small and, with the anchor's
    games on its diagonal, always invertible."""
    size = len(matrix)
    work = [row[:] + [1.0 if i == j else 0.0 for j in range(size)] for i, row in enumerate(matrix)]
    for column in range(size):
        pivot = max(range(column, size), key=lambda row: abs(work[row][column]))
        work[column], work[pivot] = work[pivot], work[column]
        lead = work[column][column]
        work[column] = [value / lead for value in work[column]]
        for row in range(size):
            if row != column and work[row][column]:
                factor = work[row][column]
                work[row] = [a - factor * b for a, b in zip(work[row], work[column], strict=True)]
    return [row[size:] for row in work]


def standard_errors(ballots: Sequence[Ballot], strength: dict[Hashable, float]) -> dict[Hashable, float]:
    """Each model's standard error on the log-strength scale: the square root of the diagonal of the
    inverse Fisher information of the fit (the anchor's games included), against the models' average."""
    _, games = _games(ballots)
    models = list(strength)
    index = {model: i for i, model in enumerate(models)}
    information = [[0.0] * len(models) for _ in models]
    for model, i in index.items():
        p = strength[model] / (strength[model] + 1.0)
        information[i][i] += ANCHOR_GAMES * p * (1 - p)
    for (a, b), count in games.items():
        p = strength[a] / (strength[a] + strength[b])
        weight = count * p * (1 - p)
        i, j = index[a], index[b]
        information[i][i] += weight
        information[j][j] += weight
        information[i][j] -= weight
        information[j][i] -= weight
    covariance = _inverse(information)
    # Of each model against the models' average: the anchor pins the scale's level only loosely,
    # and how strong everyone is together is not what a leaderboard tells.
    size = len(models)
    row_means = [sum(row) / size for row in covariance]
    grand_mean = sum(row_means) / size
    return {model: math.sqrt(max(covariance[i][i] - 2 * row_means[i] + grand_mean, 0.0)) for model, i in index.items()}


def ratings(ballots: Sequence[Ballot]) -> list[Rating]:
    """Every model that took part in a vote, best first, with its 95% interval and tallies."""
    if not ballots:
        return []
    fitted = strengths(ballots)
    errors = standard_errors(ballots, fitted)
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
    average = sum(math.log(strength) for strength in fitted.values()) / len(fitted)
    for model, strength in fitted.items():
        rating = BASE + SCALE * (math.log(strength) - average)
        spread = Z95 * SCALE * errors[model]
        votes, won, tied, lost = tallies[model]
        results.append(
            Rating(
                model=model,
                rating=rating,
                low=rating - spread,
                high=rating + spread,
                votes=votes,
                wins=won,
                ties=tied,
                losses=lost,
            )
        )
    return sorted(results, key=lambda r: (-r.rating, repr(r.model)))
