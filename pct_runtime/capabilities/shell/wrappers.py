"""Programs that run another program: where, in their words, the real command starts.

`sudo -u root git push` runs `git push`; `timeout 5 sh -c 'git push'` runs a script. The
command policy must judge the program that ends up running, so each wrapper's options are
read as the wrapper reads them (options that take a value, positional operands before the
command). An option pct does not know could hide where the command starts, so it makes
the command unknown instead of being guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

#: Shells whose `-c STRING`, here-documents and piped scripts are read as scripts.
SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish", "csh"}
    # `source FILE` and `. FILE` run a script like a shell given FILE.
    | {"tcsh", "source", "."}
)

#: Script names that are the shell's own input, not a file anyone can read beforehand.
_INPUT_FILES = ("/dev/stdin", "/dev/fd/", "/proc/self/fd/")

_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


@dataclass(frozen=True)
class _Spec:
    #: Short options (letters) and long options that take no value.
    flags: str = ""
    long_flags: frozenset[str] = frozenset()
    #: Short and long options that take a value (attached or as the next word).
    values: str = ""
    long_values: frozenset[str] = frozenset()
    #: Operands before the command (`timeout DURATION`, `chroot DIR`).
    operands: int = 0
    #: `NAME=VALUE` words before the command are settings, not the command (`env`, `sudo`).
    assignments: bool = False
    #: Options after which no command runs (`command -v git` only looks `git` up).
    no_command: str = ""
    #: A short option whose value is a shell script (`su -c STRING`, `flock -c STRING`).
    script: str = ""
    long_script: frozenset[str] = frozenset()
    #: A numeric option such as `nice -10`.
    numeric: bool = False


def _long(*names: str) -> frozenset[str]:
    return frozenset(names)


WRAPPERS: dict[str, _Spec] = {
    "env": _Spec(
        flags="i0v",
        long_flags=_long("--ignore-environment", "--null", "--debug"),
        values="uCS",
        long_values=_long("--unset", "--chdir", "--split-string"),
        assignments=True,
        script="S",
        long_script=_long("--split-string"),
    ),
    "nohup": _Spec(),
    # `coproc CMD` runs CMD in the background (a named coprocess needs a compound command).
    "coproc": _Spec(),
    # Programs that run the command after their options; an option not listed here makes
    # the command unknown (asked), never guessed.
    **{
        name: _Spec()
        for name in (
            "unshare",
            "nsenter",
            "firejail",
            "systemd-run",
            "ltrace",
            "valgrind",
            "catchsegv",
            "proxychains",
            "proxychains4",
            "torsocks",
            "tsocks",
            "pkexec",
            "setpriv",
            "numactl",
            "prlimit",
            "cgexec",
            "eatmydata",
            "fakeroot",
            "ccache",
        )
    },
    "chrt": _Spec(operands=1),
    "faketime": _Spec(operands=1),
    "script": _Spec(
        flags="qeaf",
        values="c",
        long_values=_long("--command"),
        script="c",
        long_script=_long("--command"),
    ),
    "sg": _Spec(operands=1, values="c", script="c"),
    "screen": _Spec(flags="dmDRrL", values="S"),
    "time": _Spec(
        flags="pva",
        long_flags=_long("--portability", "--verbose", "--append"),
        values="fo",
        long_values=_long("--format", "--output"),
    ),
    "timeout": _Spec(
        flags="v",
        long_flags=_long("--preserve-status", "--foreground", "--verbose"),
        values="sk",
        long_values=_long("--signal", "--kill-after"),
        operands=1,
    ),
    "nice": _Spec(values="n", long_values=_long("--adjustment"), numeric=True),
    "ionice": _Spec(flags="t", values="cn", long_values=_long("--class", "--classdata")),
    "command": _Spec(flags="p", no_command="vV"),
    "builtin": _Spec(),
    "exec": _Spec(flags="cl", values="a"),
    "nocorrect": _Spec(),
    "noglob": _Spec(),
    "busybox": _Spec(),
    "sudo": _Spec(
        flags="AbEHKknPSsBN",
        long_flags=_long(
            "--askpass",
            "--background",
            "--preserve-env",
            "--set-home",
            "--non-interactive",
            "--preserve-groups",
            "--stdin",
            "--shell",
            "--login",
            "--bell",
            "--no-update",
        ),
        values="ughpCDrtTU",
        long_values=_long(
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--close-from",
            "--chdir",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
        ),
        assignments=True,
        no_command="eilvVK",
    ),
    "doas": _Spec(flags="nsL", values="uC"),
    "stdbuf": _Spec(values="ioe", long_values=_long("--input", "--output", "--error")),
    "setsid": _Spec(flags="cfw", long_flags=_long("--ctty", "--fork", "--wait")),
    "taskset": _Spec(flags="ac", long_flags=_long("--all-tasks", "--cpu-list"), operands=1),
    "chroot": _Spec(long_values=_long("--userspec", "--groups", "--skip-chdir"), operands=1),
    "unbuffer": _Spec(flags="p"),
    "flock": _Spec(
        flags="sxnuoFe",
        long_flags=_long("--shared", "--exclusive", "--nonblock", "--unlock", "--close"),
        values="wEc",
        long_values=_long("--timeout", "--conflict-exit-code", "--command"),
        operands=1,
        script="c",
        long_script=_long("--command"),
    ),
    "su": _Spec(
        flags="lmpfP",
        long_flags=_long("--login", "--preserve-environment", "--pty"),
        values="cgGsw",
        long_values=_long("--command", "--group", "--shell", "--whitelist-environment"),
        operands=1,
        script="c",
        long_script=_long("--command"),
    ),
    "runuser": _Spec(
        flags="lmpfP",
        long_flags=_long("--login", "--preserve-environment", "--pty"),
        values="cgGsuw",
        long_values=_long("--command", "--group", "--shell", "--user"),
        operands=1,
        script="c",
        long_script=_long("--command"),
    ),
    "strace": _Spec(
        flags="fFcCdDhiqrtTvVwxyzZk",
        values="aeEIoOpPsSuXb",
        long_values=_long("--output", "--trace", "--signal", "--user"),
    ),
    "xargs": _Spec(
        flags="0rtpxo",
        long_flags=_long(
            "--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit", "--open-tty"
        ),
        values="IinLlPdEesa",
        long_values=_long(
            "--replace",
            "--max-args",
            "--max-lines",
            "--max-procs",
            "--delimiter",
            "--eof",
            "--max-chars",
            "--arg-file",
            "--process-slot-var",
        ),
    ),
}


@dataclass
class Unwrapped:
    """Where the command in a word list starts, and what else the words run.

    `layers` are the start of each wrapper (`sudo git push`: the `sudo ...` words are
    judged as well as `git push`); `scripts` are strings the words hand to a shell, with the
    index of the word they came from; `commands` are further word lists run as commands
    (`find -exec`); `reason` is set when the command cannot be known; `reads_stdin` when
    the command is a shell reading its script from standard input.
    """

    start: int = 0
    layers: list[int] = field(default_factory=list)
    scripts: list[tuple[str, int]] = field(default_factory=list)
    commands: list[list[int]] = field(default_factory=list)
    reason: str = ""
    reads_stdin: bool = False


def base_name(word: str) -> str:
    """`/usr/bin/git` -> `git`: a command is matched by its base name."""
    return word.rstrip("/").rsplit("/", 1)[-1] or word


_NO_COMMAND = -1


def _long_option(
    name: str, spec: _Spec, words: Sequence[str | None], i: int, out: Unwrapped
) -> int | None:
    """The index after the long option at `i`; None (with `out.reason`) when unknown."""
    key, eq, value = (words[i] or "").partition("=")
    if key in spec.long_flags:
        return i + 1
    if key in spec.long_values:
        if not eq:
            i += 1
            value = (words[i] or "") if i < len(words) else ""
        if key in spec.long_script:
            out.scripts.append((value, i))
        return i + 1
    out.reason = f"{name} has an option pct does not know ({key})"
    return None


def _short_options(
    name: str, spec: _Spec, words: Sequence[str | None], i: int, out: Unwrapped
) -> int | None:
    """The index after the cluster of short options at `i` (`-u root`, `-uroot`, `-nE`);
    `_NO_COMMAND` after a lookup option; None (with `out.reason`) when unreadable."""
    word = words[i] or ""
    if spec.numeric and word[1:].isdigit():
        return i + 1
    for j in range(1, len(word)):
        letter = word[j]
        if letter in spec.no_command:
            return _NO_COMMAND
        if letter in spec.values:
            value: str | None = word[j + 1 :]
            if not value:
                i += 1
                value = words[i] if i < len(words) else ""
            if value is None:
                out.reason = f"an argument of {name} is built at run time"
                return None
            if letter in spec.script:
                out.scripts.append((value, i))
            return i + 1
        if letter not in spec.flags:
            out.reason = f"{name} has an option pct does not know (-{letter})"
            return None
    return i + 1


def _skip_options(
    name: str, spec: _Spec, words: Sequence[str | None], at: int, out: Unwrapped
) -> int | None:
    """The index after the wrapper's options and operands; None when no command follows
    (a lookup like `command -v`), with `out.reason` set when the words cannot be read."""
    i = at
    operands = spec.operands
    while i < len(words):
        word = words[i]
        if word is None:
            out.reason = f"an argument of {name} is built at run time"
            return None
        if spec.assignments and "=" in word and not word.startswith("-"):
            i += 1
        elif word == "--":
            return i + 1
        elif word.startswith("-") and len(word) > 1:
            step = (
                _long_option(name, spec, words, i, out)
                if word.startswith("--")
                else _short_options(name, spec, words, i, out)
            )
            if step is None or step == _NO_COMMAND:
                return None
            i = step
        elif operands:
            operands -= 1
            i += 1
        else:
            break
    return i


def _shell(words: Sequence[str | None], at: int, out: Unwrapped, from_input: bool) -> None:
    """A shell at `at`: its `-c` script, or whether it reads its script from stdin."""
    i = at + 1
    command_string = False
    from_stdin = False
    while i < len(words):
        word = words[i]
        if word is None:
            break
        if word == "--":
            i += 1
            break
        if word in _SHELL_VALUE_OPTIONS:
            i += 2
            continue
        if word[:1] in "-+" and len(word) > 1:
            if not word.startswith("--"):
                command_string = command_string or "c" in word[1:]
                from_stdin = from_stdin or "s" in word[1:]
            i += 1
            continue
        break
    if command_string:
        if i >= len(words):
            return
        script = words[i]
        if script is None:
            out.reason = "the script handed to a shell is built at run time"
        else:
            out.scripts.append((script, i))
        return
    if from_input and i >= len(words):
        out.reason = "a shell runs a script named by its input"
    elif from_stdin or i >= len(words):
        out.reads_stdin = True
    elif words[i] is None:
        out.reason = "a shell runs a script whose name is built at run time"
    elif (words[i] or "").startswith(_INPUT_FILES):
        out.reads_stdin = True


def _find(words: Sequence[str | None], at: int, out: Unwrapped) -> None:
    """`find ... -exec CMD ... ;`: each `-exec`/`-execdir`/`-ok`/`-okdir` runs a command."""
    i = at + 1
    while i < len(words):
        if words[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(words) and words[j] not in (";", "+"):
                j += 1
            if j > i + 1:
                out.commands.append(list(range(i + 1, j)))
            i = j
        i += 1


def _special(name: str, words: Sequence[str | None], at: int, out: Unwrapped) -> None:
    """Builtins and programs that run strings: `trap`, `alias`, `watch`, `find -exec`."""
    rest = words[at + 1 :]
    if name == "find":
        _find(words, at, out)
    elif name == "trap" and rest and rest[0] not in ("-p", "-l", "--", None):
        out.scripts.append((rest[0] or "", at + 1))
    elif name == "alias":
        for offset, word in enumerate(rest):
            if word is not None and "=" in word:
                out.scripts.append((word.partition("=")[2], at + 1 + offset))
    elif name == "watch":
        i = at + 1
        while i < len(words) and (words[i] or "").startswith("-"):
            i += 2 if words[i] in ("-n", "-d", "-q", "--interval") else 1
        if i < len(words):
            if any(w is None for w in words[i:]):
                out.reason = "watch runs a command built at run time"
            else:
                out.scripts.append((" ".join(w or "" for w in words[i:]), i))


def unwrap(words: Sequence[str | None]) -> Unwrapped:
    """Read `words` (None for a word an expansion builds) down to the command that runs."""
    out = Unwrapped()
    i = 0
    from_input = False
    while i < len(words):
        word = words[i]
        if word is None:
            break
        name = base_name(word)
        spec = WRAPPERS.get(name)
        if spec is None:
            if name in SHELLS:
                _shell(words, i, out, from_input)
            else:
                _special(name, words, i, out)
            break
        nxt = _skip_options(name, spec, words, i + 1, out)
        if out.reason or nxt is None or nxt >= len(words) or out.scripts:
            break  # the wrapper alone, a lookup, or a script option: the wrapper runs it
        if name == "xargs":
            replace = _replace_string(words, i + 1, nxt)
            if replace and replace in (words[nxt] or ""):
                out.reason = "xargs takes the command name from its input"
                break
            from_input = True
        out.layers.append(i)
        i = nxt
    out.start = i
    return out


def _replace_string(words: Sequence[str | None], start: int, end: int) -> str:
    """The replace string of `xargs -I R` / `-i` / `--replace=R` among its options."""
    for index in range(start, end):
        word = words[index] or ""
        if word == "-I" and index + 1 < end:
            return words[index + 1] or ""
        if word.startswith("-I") and len(word) > 2:
            return word[2:]
        if word in ("-i", "--replace"):
            return "{}"
        if word.startswith("--replace="):
            return word.partition("=")[2]
        if word.startswith("-i") and len(word) > 2:
            return word[2:]
    return ""
