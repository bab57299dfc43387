"""MovieLens ratings (Harper & Konstan 2015), for the SVD recommender on explicit ratings."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ._base import DataFormatError, find_data_file, iter_csv_rows

_DIR = "movielens-small"
_RATINGS_HEADER = ["userId", "movieId", "rating", "timestamp"]
_MOVIES_HEADER = ["movieId", "title", "genres"]


def _rows(path: Path, header: list[str]):
    """The rows of a CSV file after checking its header and row lengths."""
    rows = iter_csv_rows(path)
    first = next(rows, None)
    if first is None or first[1] != header:
        raise DataFormatError(
            path, 1, f"the header {','.join(header)}", None if first is None else ",".join(first[1])
        )
    for lineno, row in rows:
        if len(row) != len(header):
            raise DataFormatError(
                path, lineno, f"{len(header)} fields ({','.join(header)})", ",".join(row)
            )
        yield lineno, row


def _read_movies(path: Path) -> tuple[dict[int, str], dict[int, tuple[str, ...]]]:
    titles, genres = {}, {}
    for lineno, (movie_id, title, movie_genres) in _rows(path, _MOVIES_HEADER):
        if not movie_id.isascii() or not movie_id.isdigit():
            raise DataFormatError(path, lineno, "an integer movieId", movie_id)
        titles[int(movie_id)] = title
        genres[int(movie_id)] = tuple(g for g in movie_genres.split("|") if g)
    return titles, genres


def load_movielens_ratings(data_home=None) -> Bunch:
    """Load the MovieLens ml-latest-small ratings (and movie titles when present).

    Parameters
    ----------
    data_home : str or os.PathLike, default=None
        See :func:`get_data_home`; reads ``<data_home>/movielens-small/ratings.csv`` and,
        if present, ``movies.csv`` beside it (either may be ``.csv.gz``).

    Returns
    -------
    data : sklearn.utils.Bunch
        user_ids : ndarray of int64
            MovieLens user ids.
        item_ids : ndarray of int64
            MovieLens movie ids.
        ratings : ndarray of float32
            0.5 to 5 stars.
        timestamps : ndarray of int64
            Seconds since the Unix epoch.
        titles : dict of int -> str
            Movie id -> title ("Toy Story (1995)"); empty without ``movies.csv``.
        genres : dict of int -> tuple of str
            Movie id -> genres; empty without ``movies.csv``.
        filename : str
            The ratings file read.

    References
    ----------
    Harper & Konstan, "The MovieLens Datasets: History and Context", ACM TiiS 2015.
    MovieLens has its own terms of use (``movielens-small/README.txt``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from irdialog.datasets import load_movielens_ratings
    >>> home = pathlib.Path(tempfile.mkdtemp())
    >>> (home / "movielens-small").mkdir()
    >>> _ = (home / "movielens-small" / "ratings.csv").write_text(
    ...     "userId,movieId,rating,timestamp\\n1,1,4.0,964982703\\n1,3,3.5,964981247\\n")
    >>> data = load_movielens_ratings(home)
    >>> data.user_ids.tolist(), data.item_ids.tolist(), data.ratings.tolist()
    ([1, 1], [1, 3], [4.0, 3.5])
    """
    path = find_data_file(data_home, [f"{_DIR}/ratings.csv"], "MovieLens ratings")
    users, items, ratings, stamps = [], [], [], []
    for lineno, (user, item, rating, stamp) in _rows(path, _RATINGS_HEADER):
        try:
            users.append(int(user))
            items.append(int(item))
            ratings.append(float(rating))
            stamps.append(int(stamp))
            if not math.isfinite(ratings[-1]):
                raise ValueError
        except ValueError:
            raise DataFormatError(
                path,
                lineno,
                "integer userId, movieId, timestamp and a numeric rating",
                f"{user},{item},{rating},{stamp}",
            ) from None
    try:
        movies = find_data_file(data_home, [f"{_DIR}/movies.csv"], "MovieLens movies")
    except FileNotFoundError:
        titles, genres = {}, {}
    else:
        titles, genres = _read_movies(movies)
    return Bunch(
        user_ids=np.asarray(users, dtype=np.int64),
        item_ids=np.asarray(items, dtype=np.int64),
        ratings=np.asarray(ratings, dtype=np.float32),
        timestamps=np.asarray(stamps, dtype=np.int64),
        titles=titles,
        genres=genres,
        filename=str(path),
    )
