"""A Windows session's paths are keyed like any other: Git Bash's form, relative to the root."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.core.filepaths import file_id, is_harness_path, posix_path, relativize

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
