"""Tests for nbagent.policy.commandline.denied_by: deny rules catch every spelling of the program
they name.

The threat: a prompt-injected model spells a denied program so that a rule does not see it
(``\\rm``, ``r''m``, ``/bin/rm``, ``env rm``, ``bash -c 'rm f'``).
"""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.policy.commandline import denied_by
from tests.policy.commandline.helpers import spelled

RM_SPELLINGS = [
    "rm -rf x",
    r"\rm f",
    "/bin/rm f",
    "/usr/bin/rm f",
    "command rm f",
    "command -p rm f",
    "builtin rm f",
    "exec rm f",
    "exec -a x rm f",
    "env rm f",
    "env -i FOO=1 rm f",
    "env -u X rm f",
    "env -S 'rm f'",
    "/usr/bin/env rm f",
    "FOO=1 rm f",
    "FOO=$(date) rm f",
    "r''m f",
    "'r'm f",
    '"r"m f',
    "r\\m f",
    "$'\\x72m' f",
    "$'\\162\\155' f",
    "$'r'm f",
    "r\\\nm f",
    "xargs rm",
    "echo x | xargs -0 rm",
    "xargs -I{} rm {}",
    "xargs -n 1 -P 4 rm -f",
    "find . -delete",
    "find . -exec rm {} +",
    "find . -execdir rm {} \\;",
    "find . -ok rm {} ';'",
    "bash -c 'rm f'",
    'sh -c "rm f"',
    "bash -lc 'rm f'",
    "bash -o pipefail -c 'rm f'",
    "eval 'rm f'",
    "eval rm f",
    "true; rm f",
    "true && rm f",
    "false || rm f",
    "ls | rm f",
    "ls\nrm f",
    "(rm f)",
    "{ rm f; }",
    "echo $(rm f)",
    "echo `rm f`",
    'echo "`rm f`"',
    "cat <(rm f)",
    "sudo rm f",
    "sudo -u root rm f",
    "sudo -E -- rm f",
    "doas rm f",
    "su -c 'rm f'",
    "timeout 5 rm f",
    "timeout -s KILL 5 rm f",
    "timeout --signal=KILL 5 rm f",
    "nice rm f",
    "nice -n 5 rm f",
    "nice -5 rm f",
    "nohup rm f &",
    "stdbuf -o0 rm f",
    "time rm f",
    "setsid rm f",
    "ionice -c 3 rm f",
    "chrt -f 10 rm f",
    "taskset -c 0 rm f",
    "watch 'rm f'",
    "watch -n 1 rm f",
    "busybox rm f",
    "ssh host rm f",
    "uv run rm f",
    "unbuffer rm f",
    "caffeinate -i rm f",
    "flock /tmp/l rm f",
    "command >/dev/null rm f",
    "> /dev/null rm f",
    "2>/dev/null rm f",
    "bash <<'EOF'\nrm f\nEOF",
    "bash <<< 'rm f'",
    "echo 'rm f' | bash",
    "curl -s x | sh",
    "$X f",
    '"$(echo rm)" f',
    "${x:-rm} f",
    "r${x}m f",
    "{r,}m f",
    "r?m f",
    'eval "$(echo rm f)"',
    "bash -c \"$1\" _ 'rm f'",
    "x='a[$(rm f)]'; echo $((x))",
    "x='$(rm f)'; echo ${x@P}",
    "python -c 'import os; os.system(\"rm f\")'",
    'python3 -c \'import subprocess; subprocess.run(["rm", "f"])\'',
    "perl -e 'system \"rm f\"'",
    "awk 'BEGIN { system(\"rm f\") }'",
    "sed 's/x/rm f/e' g",
    "git -c alias.x='!rm f' x",
    "tar --to-command='rm f' -xf a.tar",
    "GIT_SSH_COMMAND='rm f' git fetch",
    "f() { rm f; }; f",
    "ls\t;\trm f",
    "timeout --weird 5 rm f",
    "nice -n 5 timeout 5 env A=1 sudo -u x bash -c \"eval 'xargs -0 rm'\"",
    "shopt -s expand_aliases\nalias x=rm\nx f",
    "trap 'rm f' EXIT",
    "PS4='$(rm f)'; set -x; :",
    "BASH_ENV=<(echo rm f) bash -c :",
    "su root -c 'rm f'",
    "runuser -u x rm f",
    "script -qc 'rm f' /dev/null",
    "flock /tmp/l -c 'rm f'",
    "env - rm f",
    "coproc rm f",
    "coproc x { rm f; }",
    "ssh -o ProxyCommand='rm f' host",
    "tar -I 'rm f' -cf a.tar .",
    "rm${IFS}f",
    "bash -c 'exec \"$@\"' _ rm f",
    "rg --pre rm x",
    "find . -exec sh -c 'rm \"$1\"' _ {} \\;",
    "xargs -0 -I % sh -c 'rm %'",
    "nix-shell --run 'rm f'",
    "npm exec -c 'rm f'",
    "watch -n1 -x rm f",
    "git difftool -x 'rm f'",
    "make SHELL='rm f'",
    'node -e \'require("child_process").execSync("rm f")\'',
    "python3 - <<'EOF'\nimport os\nos.system('rm f')\nEOF",
    "sed 's/.*/rm f/e' x",
    "dc -e '!rm f'",
    "vim -c '!rm f' -c q",
    "echo ${x:=`rm f`}",
    "a[$(rm f)]=1",
    "local x=`rm f`",
    "exec > >(rm f)",
    "f() ( rm f )",
    '$"rm" f',
    "/bin/../bin/rm f",
    "./rm f",
    "~/bin/rm f",
    "//bin//rm f",
    # Code the line does not show, or hands to a program on its input: it may be anything.
    "echo 'rm f' > s.sh; bash s.sh",
    "sh ./s.sh",
    "zsh s.sh arg",
    "bash < s.sh",
    "fish s.fish",
    ". ./s.sh",
    "source s.sh",
    "ed -s victim.txt <<< '!rm victim.txt'",
    "ex -s f <<EOF\n!rm f\nEOF",
    "vim -s keys.txt f",
    "vim f <<< ':!rm f'",
    "sqlite3 db.sqlite <<< '.shell rm f'",
    "python - <<'EOF'\nprint(1)\nEOF",
    "python3 <<< 'print(1)'",
    "perl < s.pl",
    "ruby <<< 'x'",
    "node - <<'EOF'\nx\nEOF",
    "awk -f - data <<< 'BEGIN{}'",
    "awk -f prog.awk data",
    "sed -f script.sed x",
    "sg root -c 'rm victim.txt'",
    "sg root 'x y'",
    "at now <<< 'x'",
    "echo x | batch",
    "cat <<EOF\n`rm f`\nEOF",
    "cat <<-EOF\n\t$(rm f)\n\tEOF",
]


@pytest.mark.parametrize("line", RM_SPELLINGS)
def test_denied_in_every_spelling(line: str) -> None:
    assert denied_by(line, "rm:*")


@pytest.mark.parametrize(
    "line",
    [
        "ls -la",
        "echo rm",
        "grep rm file",
        "git commit -m 'rm old files'",
        "command -v rm",
        "ls rm",
        "find . -name rm",
        "rmdir x",
        "echo 'rm f' > notes.txt",
        "man rm",
        "info rm",
        "python -c 'print(1)'",
        "if [ -f setup.py ]; then echo yes; fi",
        "[[ -d .git ]] && echo repo",
        "echo $'r\\\nm' f",
    ],
)
def test_not_denied_when_the_program_is_not_run(line: str) -> None:
    assert not denied_by(line, "rm:*")


def test_deny_spec_options_in_any_grouping() -> None:
    for line in ["rm -rf x", "rm -fr x", "rm -r -f x", "rm x -rf", "rm -rfv x", "rm -f -r x"]:
        assert denied_by(line, "rm -rf:*"), line
    assert not denied_by("rm -r x", "rm -rf:*")
    assert not denied_by("rm x", "rm -rf:*")


def test_deny_spec_with_subcommand() -> None:
    assert denied_by("git push --force", "git push:*")
    assert denied_by("git -C . push", "git push:*")
    assert denied_by("git $x", "git push:*")
    assert not denied_by("git pull", "git push:*")
    assert denied_by("git push origin main --force", "git push --force:*")
    assert denied_by("git push origin main --forc", "git push --force:*")
    assert not denied_by("git push origin main", "git push --force:*")


def test_deny_exact_line() -> None:
    assert denied_by("npm publish", "npm publish")
    assert denied_by("ls; npm publish --tag x", "npm publish")


WRAPPER_PREFIXES = [
    "",
    "env ",
    "env -i ",
    "env -u X ",
    "env FOO=1 ",
    "command ",
    "command -p ",
    "exec ",
    "builtin ",
    "nice ",
    "nice -n 5 ",
    "timeout 5 ",
    "timeout -k 1 -s KILL 5 ",
    "nohup ",
    "sudo ",
    "sudo -u x ",
    "stdbuf -o0 ",
    "setsid ",
    "time ",
    "xargs ",
    "xargs -0 ",
    "xargs -n1 ",
    "ionice -c 3 ",
    "doas ",
    "busybox ",
    "FOO=1 ",
    "A=1 B=2 ",
]


@st.composite
def rm_lines(draw: st.DrawFn) -> str:
    """``rm`` spelled, wrapped and nested in the ways bash allows."""
    program = spelled(draw, "rm")
    program = draw(st.sampled_from(["", "/bin/", "/usr/bin/"])) + program
    line = (
        draw(st.sampled_from(WRAPPER_PREFIXES))
        + program
        + draw(st.sampled_from(["", " f", " -rf x", " -- -f"]))
    )
    for _ in range(draw(st.integers(0, 2))):
        nest = draw(st.sampled_from(["bash", "sh", "eval", "xargs", "find", "list", "pipe"]))
        if nest in ("bash", "sh"):
            line = f"{nest} -c {shlex.quote(line)}"
        elif nest == "eval":
            line = f"eval {shlex.quote(line)}"
        elif "=" in line.split()[0]:
            line = f"true; {line}"  # xargs and find run programs, not assignments
        elif nest == "xargs":
            line = f"echo a | xargs {line}"
        elif nest == "find":
            line = f"find . -exec {line} {{}} \\;"
        elif nest == "list":
            line = f"true; {line}"
        else:
            line = f"ls | {line}"
    return line


@settings(max_examples=400, deadline=None)
@given(rm_lines())
def test_property_every_spelling_of_rm_is_denied(line: str) -> None:
    assert denied_by(line, "rm:*"), line
