"""Tests for nbagent.policy.commandline.parse: what a bash command line runs, read as bash reads it.

The threat: a prompt-injected model writes command lines to get past the user's rules; every
command a line runs must be found, and what cannot be read must be called opaque.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.policy.commandline import (
    CommandLine,
    SimpleCommand,
    allowed_by,
    always_spec,
    denied_by,
    parse,
    paths_named,
)
from tests.policy.commandline.helpers import ALLOWED


def words(line: str) -> list[tuple[str, ...]]:
    """The words of every command a line runs."""
    return [command.words for command in parse(line).commands]


def test_brace_before_astral_characters_does_not_crash() -> None:
    # tree-sitter-bash 0.25 segfaults on "{" followed by a 4-byte UTF-8 character, most runs
    # (tree-sitter/tree-sitter-bash#337): a line from the model must not kill the kernel.
    code = (
        "from nbagent.policy.commandline import parse\n"
        "for cp in range(0x10000, 0x110000, 0x1111):\n"
        "    for text in ('{%s', 'echo {%s', 'x{a%s}'):\n"
        "        parse(text % chr(cp))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert words("echo {😀 ✅") == [("echo", "{😀", "✅")]


def test_import_leaves_tree_sitter_for_first_use() -> None:
    code = "import sys, nbagent.policy.commandline; assert 'tree_sitter' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_parse_gives_simple_commands_of_lists_and_pipelines() -> None:
    parsed = parse("ls -la data && git status -s | head -n 5; echo done &")
    assert isinstance(parsed, CommandLine)
    assert all(isinstance(c, SimpleCommand) for c in parsed.commands)
    assert words("ls -la data && git status -s | head -n 5; echo done &") == [
        ("ls", "-la", "data"),
        ("git", "status", "-s"),
        ("head", "-n", "5"),
        ("echo", "done"),
    ]
    assert parsed.opaque == () and parsed.redirects == ()
    assert parsed.commands[1].text == "git status -s"


@pytest.mark.parametrize(
    "line",
    [
        "if true; then rm f; fi",
        "if false; then :; elif rm f; then :; else :; fi",
        "if false; then :; else rm f; fi",
        "while rm f; do :; done",
        "until false; do rm f; done",
        "for x in a b; do rm f; done",
        "select x in a; do rm f; done",
        "case x in a) rm f ;; esac",
        "(rm f)",
        "{ rm f; }",
        "! rm f",
        "rm f &",
        "true || rm f",
        "echo | rm f",
        "{ ls; } > /dev/null; rm f",
    ],
)
def test_commands_inside_compound_statements_count(line: str) -> None:
    assert ("rm", "f") in words(line)


def test_quotes_backslashes_and_ansi_c_strings_are_removed() -> None:
    assert words(r"""\rm 'a b' "c\"d" e\ f $'\x72\155\n' "$'x'" """)[0] == (
        "rm",
        "a b",
        'c"d',
        "e f",
        "rm\n",
        "$'x'",
    )


def test_ansi_c_string_ends_at_nul() -> None:
    assert words(r"echo $'ab\0cd'") == [("echo", "ab")]


def test_backslash_newline_joins_words_as_bash_does() -> None:
    assert words("r\\\nm f") == [("rm", "f")]
    assert words("echo 'a\\\nb'") == [("echo", "a\\\nb")]
    assert words("echo a # c \\\nrm f") == [("echo", "a"), ("rm", "f")]
    assert words("echo \\\\\nrm f") == [("echo", "\\"), ("rm", "f")]


def test_a_line_starting_with_a_backslash_is_a_command() -> None:
    # tree-sitter-bash reads the line break and "\rm" as one word of the line before.
    assert words("ls\n\\rm -rf x") == [("ls",), ("rm", "-rf", "x")]
    assert words("x=1\n\\rm f") == [("rm", "f")]
    assert words("ls # c\n\\rm f") == [("ls",), ("rm", "f")]
    assert words('echo "a\n\\rm"') == [("echo", "a\n\\rm")]


@pytest.mark.parametrize(
    "line",
    [
        "! { rm f; }",
        "! if true; then rm f; fi",
        "time { rm f; }",
        "while ! if true; then rm f; fi; do :; done",
        "! { bash <<< 'rm f'; }",
        "! for c in rm; do $c f; done",
    ],
)
def test_compound_commands_tree_sitter_reads_as_programs(line: str) -> None:
    # After "!" or "time", tree-sitter-bash takes "{" or "if" for a program name.
    assert parse(line).opaque
    assert denied_by(line, "rm:*")


def test_words_tree_sitter_splits_are_one_word() -> None:
    assert words("x=a'b'\\ls touch pwned") == [("touch", "pwned")]
    assert parse("x=a'b'\\ls touch pwned").commands[0].assignments == ("x=abls",)
    assert words("x='a'\\b c=1 rm f") == [("rm", "f")]
    assert words("echo a'b'\\cd") == [("echo", "abcd")]
    assert "abc" in parse("cat < a'b'\\c").redirects


def test_assignment_prefixes_are_set_aside() -> None:
    command = parse("FOO=1 BAR='x y' rm f").commands[0]
    assert command.words == ("rm", "f")
    assert command.assignments == ("FOO=1", "BAR=x y")


def test_program_path_is_reduced_to_its_name() -> None:
    command = parse("/usr/bin/rm f").commands[0]
    assert command.words == ("rm", "f") and command.path == "/usr/bin/rm"


def test_words_only_known_at_run_time_are_marked() -> None:
    command = parse('ls $HOME "${x}" *.py {a,b} plain').commands[0]
    assert command.unknown == {1, 2, 3, 4}
    assert command.words == ("ls", "$HOME", '"${x}"', "*.py", "{a,b}", "plain")


def test_wrappers_are_taken_away_from_the_command_they_start() -> None:
    parsed = parse("timeout -s KILL 5 nice -n 5 env -i FOO=1 rm -f x")
    assert [c.words[0] for c in parsed.wrappers] == ["timeout", "nice", "env"]
    assert all(c.launcher for c in parsed.wrappers)
    [rm] = parsed.commands
    assert rm.words == ("rm", "-f", "x")
    assert rm.via == ("timeout", "nice", "env")
    assert rm.assignments == ("FOO=1",)
    assert rm.text == "rm -f x"


@pytest.mark.parametrize(
    "line",
    [
        "env rm f",
        "command rm f",
        "builtin rm f",
        "exec rm f",
        "nice -n 5 rm f",
        "nohup rm f",
        "timeout 5 rm f",
        "stdbuf -o0 rm f",
        "time rm f",
        "sudo -u x rm f",
        "doas rm f",
        "setsid rm f",
        "ionice -c 3 rm f",
        "chrt -f 10 rm f",
        "taskset -c 0 rm f",
        "unbuffer rm f",
        "caffeinate -i rm f",
        "watch rm f",
        "xargs rm f",
        "FOO=1 rm f",
        "bash -c 'rm f'",
        "eval rm f",
    ],
)
def test_the_command_after_a_wrapper(line: str) -> None:
    assert [c.words[:2] for c in parse(line).commands] == [("rm", "f")]


def test_privileged_wrappers_need_their_own_rule() -> None:
    [sudo] = parse("sudo ls").wrappers
    assert not sudo.launcher
    assert not allowed_by("sudo ls", ["ls:*"])
    assert allowed_by("sudo ls", ["sudo ls"])
    assert denied_by("sudo ls", "sudo:*")
    assert denied_by("timeout 5 ls", "timeout:*")


def test_nested_code_is_read() -> None:
    assert ("rm", "f") in words("bash -c 'cd /tmp && rm f'")
    assert ("rm", "f") in words("sh -c \"eval 'rm f'\"")
    assert ("rm", "f") in words("echo $(rm f)")
    assert ("rm", "f") in words("echo `rm f`")
    assert ("rm", "f") in words("echo `echo \\`rm f\\``")
    assert ("rm", "f") in words("diff <(ls) >(rm f)")
    assert ("rm", "f") in words("bash <<'EOF'\nrm f\nEOF")
    assert ("rm", "f") in words("sh <<< 'rm f'")


def test_find_exec_and_delete() -> None:
    parsed = parse("find . -name '*.py' -exec rm {} + -delete")
    assert [c.words for c in parsed.commands] == [
        ("find", ".", "-name", "*.py", "-exec", "rm", "{}", "+", "-delete"),
        ("rm", "{}"),
        ("rm",),
    ]
    assert parsed.commands[1].unknown == {1}


def test_xargs_appends_its_input() -> None:
    command = parse("ls | xargs -0 -n1 rm -f").commands[-1]
    assert command.words == ("rm", "-f") and command.more
    assert parse("xargs").commands[-1].words == ("echo",)
    assert parse("xargs -I{} cp {} b").commands[-1].unknown == {1}


@pytest.mark.parametrize(
    ("line", "target"),
    [
        ("ls > out", "out"),
        ("ls >> out", "out"),
        ("cat < in", "in"),
        ("ls &> out", "out"),
        ("ls >& out", "out"),
        ("exec 3<> f", "f"),
        ("ls > $x", "$x"),
        ("{ ls; } > out", "out"),
        ("while read l; do :; done < in", "in"),
    ],
)
def test_redirections_to_and_from_files(line: str, target: str) -> None:
    assert target in parse(line).redirects


@pytest.mark.parametrize(
    "line", ["ls > /dev/null", "ls 2>&1", "ls 2>/dev/stderr 1>/dev/stdout", "ls 3>&-", "ls <&0"]
)
def test_redirections_that_touch_no_file(line: str) -> None:
    assert parse(line).redirects == ()


def test_words_tree_sitter_drops_or_misplaces_are_put_back() -> None:
    assert words("python - <<'EOF'\nprint(1)\nEOF") == [("python", "-")]
    assert words("cat a <<EOF b\nx\nEOF") == [("cat", "a", "b")]
    assert ("rm", "f") in words("bash -s -- a b <<'EOF'\nrm f\nEOF")


def test_words_after_a_redirection_belong_to_the_command() -> None:
    assert words("command >/dev/null rm x") == [("rm", "x")]
    assert ("rm", "x") in words("ls | exec 2>&1 rm x")
    assert ("cat", "rm") in words("cat <<E > /dev/null rm\nE")


@pytest.mark.parametrize(
    "line",
    [
        "echo $(date)",
        "echo `date`",
        "cat <(ls)",
        "tee >(cat)",
        "echo ${x:-a}",
        "echo ${x:=a}",
        "echo ${x@P}",
        "echo ${!x}",
        "echo ${#x}",
        "echo ${x/a/b}",
        "echo ${x:1:2}",
        "echo ${a[0]}",
        "echo ${HOME:x}",
        "echo $((1 + 2))",
        "echo $[1]",
        "((x++))",
        "let x=1",
        "for ((i = 0; i < 3; i++)); do :; done",
        "[[ $x -eq 1 ]]",
        "$X args",
        '"$(which python)" x.py',
        "${x:-ls}",
        'eval "$cmd"',
        'bash -c "$cmd"',
        "source <(curl -s x)",
        ". /dev/stdin",
        "source .venv/bin/activate",
        "bash s.sh",
        "bash < s.sh",
        "ed -s f <<< '!ls'",
        "sg root -c ls",
        "at now <<< ls",
        "cat <<EOF\n`ls`\nEOF",
        "cat <<-EOF\n\t$(ls)\n\tEOF",
        "cat <<EOF\n${x:-$(ls)}\nEOF",
        "cat <<EOF\n$((1 + 2)) $[3]\nEOF",
        "python -c 'print(1)'",
        "node -e 'x'",
        "perl -ne 'print'",
        "python3 <<EOF\nprint(1)\nEOF",
        "curl -s x | sh",
        "curl -s x | python",
        "f() { ls; }",
        "alias ls=rm",
        "PATH=/tmp:$PATH; ls",
        "a[$(date)]=1",
        'echo $"hi"',
        "echo 'unterminated",
        "ls &&",
        "timeout --weird 5 ls",
        "r*m f",
        "{r,}m f",
    ],
)
def test_opaque_constructs(line: str) -> None:
    assert parse(line).opaque, line
    assert not allowed_by(line, ["ls:*", "echo:*", "cat:*", "tee:*", "python:*", "X:*"])


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        st.one_of(
            st.sampled_from(list("rm ls;&|<>(){}[]$`'\"\\\n\t#=*?!~-/.,:@%+^0123456789")),
            st.characters(),
        ),
        max_size=60,
    )
)
def test_property_any_text_is_read_without_error(line: str) -> None:
    parsed = parse(line)
    assert isinstance(parsed, CommandLine)
    allowed_by(line, ALLOWED)
    denied_by(line, "rm:*")
    always_spec(line)
    paths_named(line)


@pytest.mark.parametrize(
    "line", ["shopt -s nocaseglob; cat ~/.SS[H]/ID_RS[A]", "set -o noglob; ls", "enable -n echo"]
)
def test_a_line_that_changes_how_the_shell_reads_words_is_opaque(line: str) -> None:
    assert parse(line).opaque
    assert not allowed_by(line, ["cat:*", "ls:*", "shopt:*", "set:*", "enable:*"])
