"""Real-data problem instances: MovieLens-100k, located without importing the package that
ships it, and turned into a click-through linear bandit.

The paper's click-through experiment (Fiez et al. 2019, Section 5, Fig. 2b) uses the Yahoo!
Webscope R6A log, which cannot be redistributed or downloaded here. We build the same kind of
problem from MovieLens-100k (GroupLens; ``ml-100k`` in RecBole's atomic-file format), which the
PyPI wheel ``recbole==1.2.1`` ships under ``recbole/dataset_example/ml-100k/``. The data are
read from the installed distribution's files (``importlib.metadata``); ``recbole`` itself is
never imported (it needs torch). Never commit the data: its licence forbids redistribution.

Construction (:func:`click_through_arms`)
-----------------------------------------
* User features ``u`` (10 numbers, three one-hot blocks): age bucket (<25, 25–34, 35–49, ≥50),
  gender (M, F), occupation group (student; technical/health: engineer, programmer, technician,
  scientist, doctor, healthcare; arts/education/media: artist, educator, librarian, writer,
  entertainment, marketing; other: the remaining eight).
* Movie features ``g`` (18 numbers): the movie's genres, as a distribution (each listed genre
  gets ``1 / #genres``); movies listed only as "unknown" are dropped.
* Each rating record ``(user, movie)`` gives the vector ``vec(u gᵀ)`` (180 numbers); the arms
  are the distinct such vectors seen in at least ``min_records`` = 20 records.
* ``θ*`` is the ridge regression (λ = 0.01) of the click proxy ``rating ≥ 4`` on the record
  vectors, so ``xᵀθ*`` is the fitted probability that a user of that profile likes a movie of
  that genre mix.

:func:`banditkit.envs.instances.rage.click_through` then keeps the best arm and ``n − 1`` arms
with gap at least 0.01, and expresses them in an orthonormal basis of their span (so the arms
span ``R^r``, ``r`` their rank; inner products with θ* are unchanged).
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "AGE_BUCKETS",
    "GENRES",
    "OCCUPATION_GROUPS",
    "RatingRecords",
    "click_through_arms",
    "movie_features",
    "movielens_100k_dir",
    "rating_records",
    "read_table",
    "user_features",
]

#: Environment variable naming a directory holding ``ml-100k.{inter,user,item}``.
DATA_ENV = "BANDITKIT_DATA"
_FILES = ("ml-100k.inter", "ml-100k.user", "ml-100k.item")
_INSTALL_HINT = "`make data` (or `.venv/bin/pip install --no-deps recbole==1.2.1`)"

#: Upper ends (exclusive) of the age buckets; the last bucket is open.
AGE_BUCKETS = (25, 35, 50)
GENRES = ("Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary",
          "Drama", "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi",
          "Thriller", "War", "Western")
OCCUPATION_GROUPS = {
    "student": 0,
    **dict.fromkeys(("engineer", "programmer", "technician", "scientist", "doctor",
                     "healthcare"), 1),
    **dict.fromkeys(("artist", "educator", "librarian", "writer", "entertainment",
                     "marketing"), 2),
}  # every other occupation is group 3
N_USER_FEATURES = len(AGE_BUCKETS) + 1 + 2 + 4


def _has_files(path: Path) -> bool:
    return all((path / f).is_file() for f in _FILES)


def movielens_100k_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The directory holding MovieLens-100k in RecBole's atomic-file format.

    Looked for, in order: ``data_dir``; the directory in ``$BANDITKIT_DATA`` (or its
    ``ml-100k`` subdirectory); the files of the installed ``recbole`` distribution (found with
    ``importlib.metadata``, without importing recbole).

    Raises
    ------
    FileNotFoundError
        With the command that installs the data, when none of these holds the files.
    """
    tried = []
    candidates = []
    if data_dir is not None:
        candidates += [Path(data_dir), Path(data_dir) / "ml-100k"]
    env = os.environ.get(DATA_ENV)
    if env:
        candidates += [Path(env), Path(env) / "ml-100k"]
    for path in candidates:
        tried.append(str(path))
        if _has_files(path):
            return path
    try:
        dist = importlib.metadata.distribution("recbole")
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        inter = [f for f in (dist.files or []) if str(f).endswith("ml-100k/ml-100k.inter")]
        if inter:
            path = Path(str(dist.locate_file(inter[0]))).parent
            tried.append(str(path))
            if _has_files(path):
                return path
    raise FileNotFoundError(
        "MovieLens-100k not found (looked in: " + (", ".join(tried) or "nowhere") + "). "
        f"Install the wheel that ships it with {_INSTALL_HINT}, or point ${DATA_ENV} (or "
        "data_dir) at a directory holding ml-100k.inter, ml-100k.user and ml-100k.item.")


def read_table(path: Path) -> list[list[str]]:
    """Rows of a RecBole atomic file (tab-separated, after its ``name:type`` header)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        next(fh)  # header "name:type\t..."
        return [line.rstrip("\n").split("\t") for line in fh if line.strip()]


def user_features(rows: list[list[str]]) -> dict[str, np.ndarray]:
    """User id → one-hot age bucket, gender and occupation group (``ml-100k.user`` rows)."""
    out = {}
    for row in rows:
        uid, age, gender, occupation = row[0], int(row[1]), row[2], row[3]
        u = np.zeros(N_USER_FEATURES)
        u[int(np.searchsorted(AGE_BUCKETS, age, side="right"))] = 1.0
        u[len(AGE_BUCKETS) + 1 + (gender.upper() == "F")] = 1.0
        u[len(AGE_BUCKETS) + 3 + OCCUPATION_GROUPS.get(occupation, 3)] = 1.0
        out[uid] = u
    return out


def movie_features(rows: list[list[str]]) -> dict[str, np.ndarray]:
    """Movie id → its genre mix, equal weights over its known genres (``ml-100k.item`` rows);
    movies without a known genre are left out."""
    index = {g: i for i, g in enumerate(GENRES)}
    out = {}
    for row in rows:
        listed = [index[g] for g in row[3].split(" ") if g in index] if len(row) > 3 else []
        if listed:
            g = np.zeros(len(GENRES))
            g[listed] = 1.0 / len(listed)
            out[row[0]] = g
    return out


@dataclass(frozen=True)
class RatingRecords:
    """The MovieLens-100k ratings whose user and movie have features, as indices into the
    distinct user profiles and genre mixes (few: each outer-product vector is built once per
    distinct (profile, mix) pair, never once per record).

    Attributes
    ----------
    profiles : array, shape (P, N_USER_FEATURES)
        Distinct user feature vectors.
    mixes : array, shape (M, len(GENRES))
        Distinct genre mixes.
    pair : array of int, shape (n,)
        ``profile index × M + mix index`` of each kept record.
    ratings, timestamps : arrays, shape (n,)
        Of each kept record, in file order.
    """

    profiles: np.ndarray
    mixes: np.ndarray
    pair: np.ndarray
    ratings: np.ndarray
    timestamps: np.ndarray


def rating_records(folder: Path) -> RatingRecords:
    """The rating records of ``folder`` (``ml-100k.{user,item,inter}``) mapped to profiles and
    genre mixes; records of unknown users or of movies without a known genre are left out.

    Raises
    ------
    ValueError
        If no record is left.
    """
    users = user_features(read_table(folder / "ml-100k.user"))
    movies = movie_features(read_table(folder / "ml-100k.item"))
    inter = np.loadtxt(folder / "ml-100k.inter", skiprows=1, usecols=(0, 1, 2, 3), ndmin=2)
    profiles, user_prof = np.unique(np.array(list(users.values())), axis=0, return_inverse=True)
    mixes, movie_mix = np.unique(np.array(list(movies.values())), axis=0, return_inverse=True)
    uids = np.array([int(k) for k in users])
    mids = np.array([int(k) for k in movies])
    # id -> profile / mix through lookup arrays (-1: unknown)
    u_of = np.full(int(max(uids.max(), inter[:, 0].max())) + 1, -1)
    m_of = np.full(int(max(mids.max(), inter[:, 1].max())) + 1, -1)
    u_of[uids] = user_prof.reshape(-1)
    m_of[mids] = movie_mix.reshape(-1)
    u = u_of[inter[:, 0].astype(np.int64)]
    m = m_of[inter[:, 1].astype(np.int64)]
    keep = (u >= 0) & (m >= 0)
    if not np.any(keep):
        raise ValueError(f"no usable rating records in {folder}")
    return RatingRecords(profiles, mixes, u[keep] * mixes.shape[0] + m[keep], inter[keep, 2],
                         inter[keep, 3])


@functools.lru_cache(maxsize=4)
def _arms_cached(path: str, ridge: float, min_records: int) -> tuple[np.ndarray, np.ndarray]:
    data = rating_records(Path(path))
    profiles, mixes, pair = data.profiles, data.mixes, data.pair
    labels = (data.ratings >= 4.0).astype(float)
    codes, inverse, counts = np.unique(pair, return_inverse=True, return_counts=True)
    arms = np.einsum("ni,nj->nij", profiles[codes // mixes.shape[0]],
                     mixes[codes % mixes.shape[0]]).reshape(codes.size, -1)
    sums = np.bincount(inverse.reshape(-1), weights=labels, minlength=codes.size)
    gram = (arms * counts[:, None]).T @ arms + ridge * np.eye(arms.shape[1])
    theta = np.linalg.solve(gram, arms.T @ sums)
    arms = arms[counts >= min_records]
    arms.setflags(write=False)
    theta.setflags(write=False)
    return arms, theta


def click_through_arms(data_dir: str | os.PathLike | None = None, ridge: float = 0.01,
                       min_records: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """All click-through arms and the ridge-regression θ* from MovieLens-100k.

    Parameters
    ----------
    data_dir : path, optional
        Directory with ``ml-100k.{inter,user,item}``; see :func:`movielens_100k_dir`.
    ridge : float
        Ridge regularisation λ of the fit (the paper's value, 0.01).
    min_records : int
        Keep only arms seen in at least this many records (the fit uses every record). Rare
        profile × genre-mix combinations get ridge predictions far outside [0, 1] (one reaches
        1.01 from a handful of ratings) that would make the best arm an artefact of the fit.

    Returns
    -------
    X : array, shape (K, 180)
        Distinct outer-product vectors ``vec(u gᵀ)`` of the rating records.
    theta : array, shape (180,)
        Ridge estimate of ``P(rating ≥ 4)`` as a linear function of the features.
    """
    if not (np.isfinite(ridge) and ridge > 0):
        raise ValueError(f"ridge must be a positive number, got {ridge}")
    folder = movielens_100k_dir(data_dir)
    if isinstance(min_records, bool) or not isinstance(min_records, int) or min_records < 1:
        raise ValueError(f"min_records must be an integer >= 1, got {min_records!r}")
    arms, theta = _arms_cached(str(folder.resolve()), float(ridge), int(min_records))
    return arms.copy(), theta.copy()
