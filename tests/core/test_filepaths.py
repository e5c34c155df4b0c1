"""A Windows session's paths are keyed like any other: Git Bash's form, relative to the root."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.core.filepaths import file_id, fold_ids, is_harness_path, posix_path, relativize

WIN_ROOT = r"C:\Users\ada\src\app"


def test_a_drive_path_reads_as_git_bash_writes_it() -> None:
    assert posix_path(r"C:\Users\ada\src\app\billing\proration.py") == "/c/Users/ada/src/app/billing/proration.py"
    assert posix_path("D:/work/app/x.go") == "/d/work/app/x.go"
    assert posix_path(r"billing\proration.py") == "billing/proration.py"  # relative, no slash: a Windows path


def test_a_posix_path_stays_as_it_is() -> None:
    assert posix_path("/home/ada/src/app/x.py") == "/home/ada/src/app/x.py"
    assert posix_path(r"docs/a\b.md") == r"docs/a\b.md"  # a slash: POSIX, whose names may hold a backslash
    assert posix_path(r"\\server\share\x.py") == r"\\server\share\x.py"  # a share has no root the session knows


@given(st.lists(st.text(alphabet="abcXYZ019_.-", min_size=1, max_size=8), min_size=1, max_size=6))
def test_every_posix_absolute_path_is_unchanged_and_every_drive_path_becomes_one(parts: list[str]) -> None:
    posix = "/" + "/".join(parts)
    assert posix_path(posix) == posix
    converted = posix_path("E:\\" + "\\".join(parts))
    assert converted == "/e/" + "/".join(parts) and "\\" not in converted


def test_a_windows_sessions_file_is_keyed_relative_to_its_root_whichever_way_it_is_named() -> None:
    by_drive = relativize(r"C:\Users\ada\src\app\billing\proration.py", WIN_ROOT)
    by_slashes = relativize("C:/Users/ada/src/app/billing/proration.py", WIN_ROOT)
    from_subdir = relativize("proration.py", WIN_ROOT, WIN_ROOT + r"\billing")
    relative = relativize(r"billing\proration.py", WIN_ROOT)
    assert by_drive == by_slashes == from_subdir == relative == "billing/proration.py"
    assert file_id(by_drive) == "billing-proration-py"
    assert relativize(r"C:\Users\ada\other\x.py", WIN_ROOT) == "~/other/x.py"  # outside: home shortened


def test_claude_codes_own_files_on_windows_are_the_harness() -> None:
    assert is_harness_path(r"C:\Users\ada\.claude\plans\gentle-otter.md")
    assert is_harness_path(r"C:\Users\ada\AppData\Local\Temp\claude-1a2b\tasks\b7x.output")
    assert not is_harness_path(r"C:\Users\ada\src\app\billing\proration.py")


def test_files_a_project_stores_under_generated_ids_are_one_file() -> None:
    # The Entire CLI keeps each checkpoint as <shard>/<id>/metadata.json: 18 such paths in the
    # corpus chain were 18 file nodes touched once each; the sessions came back to the kind.
    root = "/home/ada/src/cli"
    one = relativize(f"{root}/.entire/metadata/0b/ce1a40f816/metadata.json", root)
    other = relativize(".entire/metadata/33/406b6b748d/metadata.json", root, root)
    assert one == other == ".entire/metadata/{id}/{id}/metadata.json" and file_id(one) == file_id(other)
    assert relativize(f"{root}/sessions/3f2a1b4c-1234-4abc-9def-0123456789ab.jsonl", root) == "sessions/{id}.jsonl"
    assert relativize("/tmp/run/2c/417201dfb7/1/prompt.txt", root) == "/tmp/run/{id}/{id}/1/prompt.txt"
    # Words, dates and names are no ids, nor is a short hex word or a shard alone.
    for path in ("cmd/entire/cli/strategy/session.go", "notes/deadbeef/x.md", "db/migrations/20240101/init.sql",
                 "lib/ab/x.py", "docs/adr-0001-decide.md", "src/cafe12/x.go"):
        assert relativize(path, root, root) == path
    assert file_id(one) != file_id("metadata.json"), "the kind of file is not a file of that name at the top"


@given(st.lists(st.text(alphabet="0123456789abcdefgz._-", min_size=1, max_size=12), min_size=1, max_size=6))
def test_folding_ids_twice_folds_nothing_more_and_keeps_a_files_extension(parts: list[str]) -> None:
    path = "/".join(parts)
    once = fold_ids(path)
    assert fold_ids(once) == once
    assert once.count("/") == path.count("/")
    name = parts[-1]
    if "." in name.strip("."):
        assert once.rpartition("/")[2].endswith("." + name.rpartition(".")[2])
