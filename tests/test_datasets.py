"""MovieLens-100k loading and the click-through instance, from a tiny synthetic data set in the
same (RecBole atomic-file) format; recbole itself is never needed."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.envs import datasets
from banditkit.envs.datasets import click_through_arms, movielens_100k_dir
from banditkit.envs.instances import make_instance


def _write_tiny(folder, rng):
    occupations = ["student", "engineer", "artist", "lawyer"]
    ages = [18, 30, 40, 60]
    genres = ["Action", "Comedy", "Drama", "Romance Comedy", "Sci-Fi Action", "War",
              "Horror", "Musical Drama", "Western", "Crime Thriller", "unknown"]
    with open(folder / "ml-100k.user", "w") as f:
        f.write("user_id:token\tage:token\tgender:token\toccupation:token\tzip_code:token\n")
        for u in range(32):
            f.write(f"{u + 1}\t{ages[u % 4]}\t{'MF'[(u // 4) % 2]}\t{occupations[u // 8]}"
                    f"\t00000\n")
    with open(folder / "ml-100k.item", "w") as f:
        f.write("item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n")
        for m, g in enumerate(genres):
            f.write(f"{m + 1}\tMovie {m}\t1995\t{g}\n")
    with open(folder / "ml-100k.inter", "w") as f:
        f.write("user_id:token\titem_id:token\trating:float\ttimestamp:float\n")
        for _ in range(6000):
            u, m = rng.integers(1, 33), rng.integers(1, len(genres) + 1)
            # Women like dramas; students like action: a signal the fit should find.
            p = 0.3 + 0.4 * ((u - 1) // 4 % 2 == 1 and "Drama" in genres[m - 1]) + 0.2 * (
                u <= 8 and "Action" in genres[m - 1])
            f.write(f"{u}\t{m}\t{5 if rng.random() < p else 2}\t0\n")


def test_click_through_from_synthetic_files(tmp_path, monkeypatch):
    _write_tiny(tmp_path, np.random.default_rng(0))
    monkeypatch.delenv(datasets.DATA_ENV, raising=False)
    X, theta = click_through_arms(data_dir=tmp_path, min_records=5)
    assert X.shape[1] == 10 * 18
    # Outer products of one-hot user blocks and genre distributions: each arm sums to 3.
    np.testing.assert_allclose(X.sum(axis=1), 3.0)
    values = X @ theta
    assert 0.0 < values.min() and values.max() < 1.2
    # The fitted preference: women on pure dramas beat men on pure dramas.
    drama = datasets.GENRES.index("Drama")
    u = X.reshape(-1, 10, 18)
    pure_drama = np.isclose(u[:, :, drama].sum(axis=1), 3.0)
    female = u[:, 5, :].sum(axis=1) > 0
    assert values[pure_drama & female].mean() > values[pure_drama & ~female].mean() + 0.3

    env = make_instance("click-through", n=6, rng=np.random.default_rng(1), data_dir=tmp_path,
                        min_gap=0.01, min_records=5)
    assert env.noise == "bernoulli" and env.n_arms == 6
    assert np.linalg.matrix_rank(env.X) == env.d  # spans R^d after the change of basis
    # Inner products with θ* are preserved by the change of basis; best arm kept; gaps ≥ 0.01.
    vals = np.sort(env.item_values)
    assert vals[-1] == pytest.approx(values.max())
    assert vals[-1] - vals[-2] >= 0.01
    assert np.all((env.means >= 0) & (env.means <= 1))


def test_env_var_and_missing_data(tmp_path, monkeypatch):
    _write_tiny(tmp_path, np.random.default_rng(0))
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path))
    assert movielens_100k_dir() == tmp_path
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv(datasets.DATA_ENV, str(empty))
    monkeypatch.setattr(datasets.importlib.metadata, "distribution",
                        lambda name: (_ for _ in ()).throw(
                            datasets.importlib.metadata.PackageNotFoundError(name)))
    with pytest.raises(FileNotFoundError, match=r"pip install --no-deps recbole==1\.2\.1"):
        movielens_100k_dir()
    with pytest.raises(ValueError, match="ridge"):
        click_through_arms(data_dir=tmp_path, ridge=0.0)
