"""The UCR benchmark's progress display: one status line on stderr."""

import sys
import time

__all__ = ["Progress"]


class Progress:
    """One status line on stderr: task k/N, settings done, elapsed and ETA."""

    def __init__(self, n_tasks, stream=None, quiet=False):
        self.n_tasks = n_tasks
        self.stream = sys.stderr if stream is None else stream
        self.quiet = quiet
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.task = 0
        self.label = ""
        self._last = 0.0
        self.start = time.perf_counter()

    def begin(self, label):
        self.task += 1
        self.label = label
        self.t0 = time.perf_counter()
        if not self.quiet:
            self.stream.write(f"[{self.task}/{self.n_tasks}] {self.label} ...\n")
            self.stream.flush()

    def update(self, done, total, force=False):
        now = time.perf_counter()
        if self.quiet or (not force and now - self._last < (0.5 if self.tty else 10.0)):
            return
        self._last = now
        el = now - self.t0
        eta = f"{el / done * (total - done):7.1f}s" if done else "      ?"
        bar = "#" * int(20 * done / max(total, 1))
        msg = (f"[{self.task}/{self.n_tasks}] {self.label:<34} |{bar:<20}| {done}/{total} "
               f"settings  {el:7.1f}s  ETA {eta}")
        if self.tty:
            self.stream.write("\r" + msg[:150].ljust(150))
        else:
            self.stream.write(msg + "\n")
        self.stream.flush()

    def end(self, text):
        if self.quiet:
            return
        if self.tty:
            self.stream.write("\r" + " " * 150 + "\r")
        self.stream.write(f"[{self.task}/{self.n_tasks}] {self.label}: {text}\n")
        self.stream.flush()

    def notice(self, text):
        if not self.quiet:
            self._say(f"notice: {text}")

    def warn(self, text):
        """Report a problem the user must see (written even when quiet)."""
        self._say(f"warning: {text}")

    def _say(self, line):
        if self.tty:
            self.stream.write("\r" + " " * 150 + "\r")
        self.stream.write(line + "\n")
        self.stream.flush()
