"""Tests for nbagent.policy.commandline.paths_named: every path a line may name, spelled out.

The threat: a prompt-injected model spells a secret's path so that a rule does not see it
(``$HOME``, quotes, globs, brace expansion, ``cd`` first).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.policy.commandline import allowed_by, parse, paths_named
from tests.policy.commandline.helpers import HOME, spelled


@pytest.mark.parametrize(
    "line",
    [
        "cat ~/.ssh/id_rsa",
        "cat $HOME/.ssh/id_rsa",
        "cat ${HOME}/.ssh/id_rsa",
        'cat "$HOME/.ssh/id_rsa"',
        "cat ~/.ss\\h/id_rsa",
        "cat ~/'.ssh'/id_rsa",
        "cat ~/.ssh/../.ssh/id_rsa",
        f"cat {HOME}/.ssh/id_rsa",
        "cat ~/.{ssh,aws}/id_rsa",
        "cd ~/.ssh && cat id_rsa",
        "cd ~ && cat .ssh/id_rsa",
        "d=~/.ssh; cat $d/id_rsa",
        "for d in ~/.ssh; do cat $d/id_rsa; done",
        "bash -c 'cat ~/.ssh/id_rsa'",
        "echo $(cat ~/.ssh/id_rsa)",
        "scp -i~/.ssh/id_rsa a b:",
        "ssh -i ~/.ssh/id_rsa host",
        "curl --data-binary=@/x --key=~/.ssh/id_rsa x",
        "dd if=~/.ssh/id_rsa",
        "cat < ~/.ssh/id_rsa",
        "cp x ~/.ssh/id_rsa",
    ],
)
def test_paths_named_spells_out_home(line: str) -> None:
    assert f"{HOME}/.ssh/id_rsa" in paths_named(line), paths_named(line)


@st.composite
def secret_paths(draw: st.DrawFn) -> str:
    """``~/.ssh/id_rsa`` in the spellings bash accepts."""
    home = draw(st.sampled_from(["~", "$HOME", "${HOME}", '"$HOME"', HOME]))
    middle = draw(st.sampled_from(["/", "/./", "/.ssh/../", "//"]))
    tail = "".join(spelled(draw, part) for part in (".ssh", "/", "id_rsa"))
    return home + middle + tail


GLOB_SPELLINGS = {
    "letter": [
        "?",
        "[[:lower:]]",
        "[[:alpha:]]",
        "[[:alnum:]]",
        "[[:graph:]]",
        "[!x]",
        "[^x]",
        "[^[:upper:]]",
        "[a-z]",
        "[A-Z]",
        "[!A-Z]",
        "[]{c}]",
        "[{c}]",
    ],
    ".": ["?", "[.]", "[[:punct:]]", "[!a]", "[^[:alnum:]]"],
    "_": ["?", "[_]", "[[:punct:]]", "[[:word:]]", "[!.]"],
    "/": ["/"],
}


@st.composite
def globbed_secret_paths(draw: st.DrawFn) -> str:
    """``~/.ssh/id_rsa`` with any of its characters spelled as a glob bash would match."""
    home = draw(st.sampled_from(["~", "$HOME", "${HOME}"]))
    out = []
    for char in ".ssh/id_rsa":
        choices = GLOB_SPELLINGS.get(char, GLOB_SPELLINGS["letter"])
        spelling = draw(st.sampled_from([char, char, *choices]))
        out.append(spelling.replace("{c}", char))
    return home + "/" + "".join(out)


@settings(max_examples=200, deadline=None)
@given(globbed_secret_paths(), st.sampled_from(["cat {}", "cp {} /tmp/x", "< {} wc"]))
def test_property_paths_named_matches_globbed_secrets(
    fake_home: str, path: str, template: str
) -> None:
    line = template.format(path)
    assert f"{fake_home}/.ssh/id_rsa" in paths_from(fake_home, line), line


@settings(max_examples=200, deadline=None)
@given(secret_paths(), st.sampled_from(["cat {}", "cp {} /tmp/x", "x={}; cat $x", "< {} wc"]))
def test_property_paths_named_spells_out_secrets(path: str, template: str) -> None:
    line = template.format(path)
    assert f"{HOME}/.ssh/id_rsa" in paths_named(line), line


@pytest.fixture(scope="module")
def fake_home(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A home folder holding ``.ssh/id_rsa`` and ``.aws/credentials`` (globs need files)."""
    home = tmp_path_factory.mktemp("home")
    for folder, name in [(".ssh", "id_rsa"), (".aws", "credentials"), (".sx", "id_rsb")]:
        (home / folder).mkdir()
        (home / folder / name).write_text("K")
    return str(home)


def paths_from(home: str, line: str) -> tuple[str, ...]:
    """:func:`paths_named` with ``HOME`` set to a folder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", home)
        return paths_named(line)


@pytest.mark.parametrize(
    "line",
    [
        "cat ~/.[[:lower:]]sh/id_rsa",
        "cat ~/.[^x]sh/id_rsa",
        "cat ~/.[!x]sh/id_rsa",
        "cat ~/.[[:alpha:]]ws/credentials",
        "cat ~/[.]ssh/id_rs[a-z]",
        "cat ~/.s[[:alnum:]]h/id_rsa",
        "cat ~/.s[^[:upper:]]h/id_[[:alpha:]]sa",
        "cat ~/.[]s]sh/id_rsa",
        "cat ~/.s[!]]h/id_rsa",
        "cat ~/.ss[A-Z]/id_rsa",
        "cat ~/?ssh/id?rsa",
        "cat ~/.s*/*",
        "cat $HOME/.[[:alpha:]][[:alpha:]][[:alpha:]]/[[:graph:]]*",
        "cat ~/{" + ",".join(f"a{i}" for i in range(64)) + ",.ssh/id_rsa}",
        "cat ~/{" + ",".join(f"a{i}" for i in range(64)) + ",.[[:lower:]]sh/id_rsa}",
    ],
)
def test_paths_named_matches_globs_as_bash_does(fake_home: str, line: str) -> None:
    found = paths_from(fake_home, line)
    assert any(p in found for p in (f"{fake_home}/.ssh/id_rsa", f"{fake_home}/.aws/credentials"))


@pytest.mark.parametrize(
    "line",
    [
        "cat ~/.[[=s=]]sh/id_rsa",
        "cat ~/.[[.s.]]sh/id_rsa",
        "cat ~/.[[:nope:]]sh/id_rsa",
        "cat ~/.[!+-s]sh/id_rsa",
        "cat ~/.s[a-Z]h/id_rsa",
        "x='@(ssh)'; cat ~/.$x/id_rsa",
        "cat ~/.@(ssh)/id_rsa",
        "cat ~/.+(s|h)/id_rsa",
        "cat ~/{" + ",".join(f"a{i}" for i in range(300)) + ",.ssh/id_rsa}",
        "cat ~/a{1..300}b ~/.ssh/id_rsa",
        "cat ~/{1..a}",
        "for d in " + " ".join(f"d{i}" for i in range(20)) + " ~/.ssh; do cat $d/id_rsa; done",
        "".join(f"a={i}; " for i in range(20)) + "cat $a",
        "".join(f"a={i}; b={i}; " for i in range(9)) + "cat $a$b",
        "cd a; " + "".join(f"cd x{i}; " for i in range(20)) + "cat ../id_rsa",
    ],
)
def test_what_paths_named_cannot_spell_out_is_opaque(fake_home: str, line: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", fake_home)
        assert parse(line).opaque, line
    assert not allowed_by(line, ["cat:*", "cd:*"])


def test_a_glob_matching_too_many_paths_is_opaque(tmp_path: pytest.TempPathFactory) -> None:
    folder = tmp_path / "many"  # type: ignore[operator]
    folder.mkdir()
    for index in range(300):
        (folder / f"f{index}").write_text("")
    assert not parse(f"cat {folder}/f1*").opaque
    assert allowed_by(f"cat {folder}/f1*", ["cat:*"])
    assert parse(f"cat {folder}/*").opaque
    assert not allowed_by(f"cat {folder}/*", ["cat:*"])


def test_paths_named_keeps_plain_words() -> None:
    assert {"data/a.csv", "./b"} <= set(paths_named("cat data/a.csv ./b"))
