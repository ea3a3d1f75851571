"""Bradley-Terry ratings from votes: who ranks first, and how sure the interval is."""

import random
import time

import pytest

from creations.arena.ratings import Ballot, ratings


def seeded_votes(count: int, *, prefer_a: float, seed: int = 7) -> list[Ballot]:
    chooser = random.Random(seed)
    return [Ballot(models=("A", "B"), winner="A" if chooser.random() < prefer_a else "B") for _ in range(count)]


@pytest.mark.alone  # times the fit on this machine's clock
def test_200_votes_preferring_a_seven_times_in_ten_rank_a_first_with_its_interval_above_bs_centre() -> None:
    started = time.monotonic()
    board = ratings(seeded_votes(200, prefer_a=0.7))
    elapsed = time.monotonic() - started
    first, second = board
    assert first.model == "A"
    assert second.model == "B"
    assert first.low > second.rating
    assert first.low <= first.rating <= first.high
    assert first.votes == second.votes == 200
    assert first.wins == second.losses
    assert 120 <= first.wins <= 160
    # A 70% preference is about 147 points on the Elo scale; the anchor pulls the fit in a little.
    assert 100 < first.rating - second.rating < 190
    assert elapsed < 5


def test_ties_count_half_a_win_each_way() -> None:
    board = ratings([Ballot(models=("A", "B"), winner=None)] * 10)
    assert {r.model for r in board} == {"A", "B"}
    assert abs(board[0].rating - board[1].rating) < 1e-6
    assert all(r.ties == 10 and r.wins == 0 and r.losses == 0 for r in board)


def test_a_model_that_never_lost_gets_a_finite_rating() -> None:
    board = ratings([Ballot(models=("A", "B", "C"), winner="A")] * 5)
    assert board[0].model == "A"
    assert board[0].rating < 2000
    assert board[1].rating == board[2].rating


def test_the_same_votes_give_the_same_intervals() -> None:
    votes = seeded_votes(50, prefer_a=0.6)
    assert ratings(votes) == ratings(votes)


def test_one_vote_gives_a_wide_interval_that_narrows_as_votes_come_in() -> None:
    one = ratings([Ballot(models=("A", "B"), winner="A")])
    many = ratings(seeded_votes(400, prefer_a=0.6))
    assert one[0].model == "A"
    assert one[0].high - one[0].low > 600
    assert one[0].low < one[1].rating  # one vote proves little
    assert many[0].high - many[0].low < 150


def test_no_votes_no_board() -> None:
    assert ratings([]) == []
