"""Runs a command in a real terminal (a new pty, the command its session leader), as a user's shell would.

usage: pty_run.py COMMAND [ARGS...]
stdout: everything the command writes to its terminal.
stderr: one JSON line per event: {"pid": N} at start, {"exit": code, "signal": sig} at the end.
stdin:  the line "hangup" closes the terminal (the kernel hangs it up, as when a terminal window closes);
        the line "ctrl-c" types Ctrl-C (the terminal sends SIGINT to its foreground process group).
"""
import json
import os
import pty
import select
import sys


def report(event):
    sys.stderr.write(json.dumps(event) + "\n")
    sys.stderr.flush()


def main():
    pid, master = pty.fork()
    if pid == 0:
        os.execvp(sys.argv[1], sys.argv[1:])
    report({"pid": pid})
    stdin_open = True
    while master is not None:
        watched = [master] + ([sys.stdin.fileno()] if stdin_open else [])
        ready, _, _ = select.select(watched, [], [])
        if master in ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every process left the terminal
                data = b""
            if not data:
                os.close(master)
                master = None
                break
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        if stdin_open and sys.stdin.fileno() in ready:
            line = sys.stdin.readline()
            if not line:
                stdin_open = False
            elif line.strip() == "hangup":
                os.close(master)
                master = None
            elif line.strip() == "ctrl-c":
                os.write(master, b"\x03")
    _, status = os.waitpid(pid, 0)
    report({"exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None})


main()
