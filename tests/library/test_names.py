"""Names that become URLs and paths are refused before anything is built from them."""

from __future__ import annotations

import pytest

from desktop_app.library.errors import InvalidNameError
from desktop_app.library.names import check_hub_file, check_name, check_repo_id

BAD_FILE_NAMES = {
    "": "is empty",
    ".": "is a folder, not a name",
    "..": "is a folder, not a name",
    "sub/x.gguf": "has a '/'",
    "sub\\x.gguf": "has a '\\'",
    "x\x00.gguf": "has a control character (U+0000)",
    "x\n.gguf": "has a control character (U+000A)",
}


@pytest.mark.parametrize("name,problem", BAD_FILE_NAMES.items(), ids=[repr(n) for n in BAD_FILE_NAMES])
def test_a_file_name_is_one_plain_name(name: str, problem: str) -> None:
    with pytest.raises(InvalidNameError) as caught:
        check_name(name)
    assert str(caught.value) == f"file name {name!r} {problem}" or problem in str(caught.value)


@pytest.mark.parametrize(
    "path,problem",
    [
        ("../../tmp/escape.gguf", "has '..' as a part"),
        ("sub/../../x.gguf", "has '..' as a part"),
        ("./x.gguf", "has '.' as a part"),
        ("/tmp/x.gguf", "has an empty folder name"),
        ("sub//x.gguf", "has an empty folder name"),
        ("sub\\..\\x.gguf", "has a '\\'"),
    ],
    ids=["climbs out", "climbs out later", "dot", "absolute", "double slash", "backslash"],
)
def test_a_path_inside_a_repo_cannot_leave_it(path: str, problem: str) -> None:
    with pytest.raises(InvalidNameError, match=r"^file name .* " + problem.replace("\\", "\\\\")):
        check_name(path, folders=True)


def test_a_file_in_a_folder_of_the_repo_keeps_its_own_name_here() -> None:
    assert check_hub_file("owner/repo", "MTP/mtp-Q8_0.gguf", "refs/pr/1") == "mtp-Q8_0.gguf"


@pytest.mark.parametrize("repo_id", ["", "..", "owner/..", "../x", "a/b/c", "owner/re po"])
def test_a_repo_id_is_huggingfaces_own_form(repo_id: str) -> None:
    with pytest.raises(InvalidNameError, match=r"^repo id "):
        check_repo_id(repo_id)


@pytest.mark.parametrize("revision", ["", "..", "main/../.."])
def test_a_revision_cannot_climb_out_of_the_resolve_url(revision: str) -> None:
    with pytest.raises(InvalidNameError, match=r"^revision "):
        check_hub_file("owner/repo", "x.gguf", revision)
