"""Reading a run's end from its interpreter's control channel.

A run ends only on a completion carrying its own nonce (see cells.py for how each interpreter
sends one). A line with a nonce handed out earlier (`issued`) is stale, an interrupted run's,
and ignored; anything else is counted on the run as forged, never trusted.
"""

import json

import cells


def finished_status(ex, issued):
    """Handles every complete line on the running interpreter's control channel; the run's
    status once it has finished, else None."""
    while True:
        line = ex.worker.pop_done()
        if line is None:
            return None
        if ex.worker.lang == "python":
            rc = python_line(ex, line, issued)
        else:
            rc = bash_line(ex, line, issued)
        if rc is not None:
            return rc


def python_line(ex, line, issued):
    try:
        reply = json.loads(line)
        nonce = reply.get("nonce")
    except (ValueError, AttributeError):
        ex.forged += 1
        return None
    if not isinstance(reply, dict) or nonce != ex.nonce:
        if not (isinstance(reply, dict) and nonce in issued):
            ex.forged += 1  # stale replies carry an earlier run's nonce; forged ones none
        return None
    try:
        rc = int(reply["rc"])
    except (KeyError, TypeError, ValueError):
        ex.forged += 1
        return None
    state = reply.get("state")
    ex.py_state = [tuple(x[:2]) for x in state if isinstance(x, list)] if isinstance(state, list) else []
    return rc


def bash_line(ex, line, issued):
    kind = cells.parse_bash_line(line)
    if kind[0] == "done":
        if kind[2] == ex.nonce:
            ex.rc = kind[1]
            ask_end(ex, issued)
        elif kind[2] not in issued:
            ex.forged += 1
    elif kind[0] == "prompt":
        # Unauthenticated: bash is back at its prompt, or the code says so. Either way the
        # end line only runs once bash really reads its next command.
        ask_end(ex, issued)
    elif kind[0] == "end":
        if kind[1] == ex.end_nonce:
            if ex.rc is None and not ex.interrupted:
                # The line was aborted without a status (an expansion error such as
                # ${x?}, which an interactive shell answers by discarding the line).
                ex.rc = 1
            return ex.rc if ex.rc is not None else -1
        if kind[1] not in issued:
            ex.forged += 1
    elif ex.end_nonce is not None:
        ex.state_lines.append(kind[1])
    else:
        ex.forged += 1
    return None


def ask_end(ex, issued):
    if ex.end_nonce is None:
        ex.end_nonce = cells.nonce()
        issued.append(ex.end_nonce)
        ex.worker.write(cells.bash_end_line(ex.end_nonce))
