"""Project identity is the repository: its worktrees are one project, other repositories another."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rolling_graph.store.project import project_key, project_root, worktree_root


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo_with_worktree(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "app"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (repo / "src").mkdir()
    (repo / "src" / "main.py").write_text("print(1)\n")
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "init", cwd=repo)
    worktree = tmp_path / "app-worktrees" / "feature-x"
    git("worktree", "add", "-q", str(worktree), cwd=repo)
    return repo.resolve(), worktree.resolve()


def test_two_worktrees_of_one_repository_are_one_project(repo_with_worktree: tuple[Path, Path]) -> None:
    repo, worktree = repo_with_worktree
    assert project_root(str(worktree)) == str(repo)
    assert project_root(str(worktree / "src")) == str(repo)
    assert project_root(str(repo / "src")) == str(repo)
    assert project_key(project_root(str(worktree))) == project_key(project_root(str(repo)))


def test_files_are_keyed_by_their_own_worktree(repo_with_worktree: tuple[Path, Path]) -> None:
    repo, worktree = repo_with_worktree
    assert worktree_root(str(worktree / "src")) == str(worktree)
    assert worktree_root(str(repo / "src")) == str(repo)


def test_an_unrelated_repository_is_another_project(repo_with_worktree: tuple[Path, Path], tmp_path: Path) -> None:
    repo, _ = repo_with_worktree
    other = tmp_path / "other"
    other.mkdir()
    git("init", "-q", cwd=other)
    assert project_root(str(other)) == str(other.resolve()) != str(repo)


def test_a_directory_that_no_longer_exists_stays_in_its_repository(repo_with_worktree: tuple[Path, Path]) -> None:
    _, worktree = repo_with_worktree
    assert project_root(str(worktree / "deleted" / "subdir")) == project_root(str(worktree))


def test_a_hostile_git_file_is_not_followed_beyond_one_bounded_read(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / ".git").write_text("gitdir: " + "x" * 10_000)
    assert project_root(str(tmp_path / "w")) == str((tmp_path / "w").resolve())
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / ".git").write_text("not a pointer")
    assert project_root(str(tmp_path / "v")) == str((tmp_path / "v").resolve())
