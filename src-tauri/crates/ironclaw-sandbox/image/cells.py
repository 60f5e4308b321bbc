"""How approved code reaches an interpreter, and how its completion comes back.

Code never passes through a file: a file in a folder the sandboxed code can write (the old
/run/ironclaw/cell.sh) can be replaced, read or turned into a FIFO by whatever an earlier run
left behind. Python gets the code in its request on a channel only the supervisor and the worker
hold. Bash gets it inside the command line itself, as one ANSI-C quoted word handed to `eval`,
on its stdin, which only the supervisor writes and only bash reads. Both are socket pairs
(interpreters.control_pair), which no process can reopen through /proc/PID/fd: under runc the
interpreters are non-dumpable besides, but gVisor lets a process of the same UID open another's
/proc/PID/fd whatever its dumpability, and a pipe there can be reopened for writing.

Completions carry a nonce the code cannot know in advance:
* bash: the command line ends with `printf 'done RC NONCE'`; the nonce is a literal in the part
  of the line that has not run yet, which no shell feature shows to the code being evaluated.
  When that line is aborted (SIGINT, an expansion error), the next prompt triggers a second line,
  `end NONCE2`, written only then. A completion line without the right nonce, written by the code
  or a program it started through the inherited descriptor, is counted as forged and ignored.
* python: the request carries the nonce and the worker echoes it in its reply.
What is not covered: code that deliberately digs the nonce out of its own interpreter (Python
frame inspection, a loadable bash builtin) can forge the completion of its own run. It cannot
forge another interpreter's, and a leftover that could forge a later run's is reported.
"""

import os

# Every byte that is not plain printable ASCII (and the quote and backslash) becomes \xHH.
_QUOTE = ["\\x%02x" % b for b in range(256)]
for _b in range(0x20, 0x7F):
    if chr(_b) not in "'\\":
        _QUOTE[_b] = chr(_b)
# bash cannot hold NUL in a string (a sourced file's NULs were skipped): drop them the same way.
_QUOTE[0] = ""

PROMPT_HINT = b"prompt"

# Set once when bash starts. PROMPT_COMMAND runs whenever bash is back at its prompt; it says
# only "prompt" (the supervisor then asks for the authenticated end line), and is read-only so
# code cannot silence it. PS1/PS2 stay empty so nothing but the code's output reaches stdout.
BASH_INIT = (
    "PS1=''; PS2=''; set +o history; set +m; unset HISTFILE; "
    "declare -r PROMPT_COMMAND='builtin printf \"prompt\\n\" >&9'\n"
)


def nonce():
    return os.urandom(12).hex()


def ansi_c_quote(code):
    data = code.encode("utf-8", "surrogateescape")
    return "$'" + "".join([_QUOTE[b] for b in data]) + "'"


def bash_run_line(code, done_nonce):
    """The command line that runs `code`: stdin is /dev/null for the code, so it can never eat
    our command stream; the status goes out with the nonce once `eval` returns."""
    return "builtin eval -- %s </dev/null; builtin printf 'done %%d %s\\n' \"$?\" >&9\n" % (
        ansi_c_quote(code),
        done_nonce,
    )


def bash_end_line(end_nonce):
    """Asked for once bash is back at its prompt: what the code left in the shell (read by the
    integrity check), then the authenticated end. Braces are a reserved word, so no function the
    code defined can stand in for the grouping."""
    return (
        "{ builtin alias -p; builtin trap -p; builtin declare -F; builtin enable -n; "
        "builtin printf 'path %%s\\nenv %%s|%%s|%%s\\n' \"$PATH\" \"${BASH_ENV-}\" \"${ENV-}\" "
        "\"${LD_PRELOAD-}\"; builtin printf 'end %s\\n'; } >&9\n" % end_nonce
    )


def parse_bash_line(line):
    """('done', rc, nonce) | ('end', nonce) | ('prompt',) | ('state', line)."""
    if line == PROMPT_HINT:
        return ("prompt",)
    parts = line.split()
    if len(parts) == 3 and parts[0] == b"done":
        try:
            return ("done", int(parts[1]), parts[2].decode("ascii", "replace"))
        except ValueError:
            return ("state", line)
    if len(parts) == 2 and parts[0] == b"end":
        return ("end", parts[1].decode("ascii", "replace"))
    return ("state", line)
