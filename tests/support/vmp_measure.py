# SPDX-License-Identifier: MIT
"""Run a command with its output in files and measure it: the tests that
bound a tool's memory and time (tests/seek, tests/hostile) share this."""
import os
import time


def run_measured(args, stdout_path, stderr_path):
    """Run `args` (args[0] a path) with standard output and error written to
    the two files; return (wait status, peak RSS in MB from wait4, wall
    seconds)."""
    with open(stdout_path, "wb") as o, open(stderr_path, "wb") as e:
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:
            os.dup2(o.fileno(), 1)
            os.dup2(e.fileno(), 2)
            try:
                os.execv(args[0], args)
            finally:
                os._exit(127)
        _, status, ru = os.wait4(pid, 0)
        return status, ru.ru_maxrss / 1024.0, time.monotonic() - t0
