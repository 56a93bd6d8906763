"""The one hand-held UCI driver of scripts/: a process spoken to line by line, for the scripts
that need what python-chess's `chess.engine` hides (raw `info string` lines, `eval`, the
latency of `stop` and `quit`, an engine given as a shell command). Standard library only.

    from uci_engine import Engine
    with Engine(["target/release/ferrite"]) as engine:
        engine.ready("setoption name Hash value 64")
        lines = engine.until("bestmove")
"""
import subprocess


class Engine:
    def __init__(self, command, shell=False):
        """`command`: an argument list, or one string run by the shell when `shell`."""
        self.process = subprocess.Popen(command, shell=shell, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(self, line):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def until(self, prefix):
        """Every line up to and including the first that starts with `prefix`."""
        lines = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"engine exited before '{prefix}': {lines[-5:]}")
            lines.append(line.strip())
            if line.startswith(prefix):
                return lines

    def ready(self, command=None):
        """Sends `command` (if any), then `isready`: the `info string` lines before `readyok`."""
        if command:
            self.send(command)
        self.send("isready")
        return [line for line in self.until("readyok") if line.startswith("info string")]

    def quit(self):
        self.send("quit")
        self.process.wait(timeout=30)

    def __enter__(self):
        return self

    def __exit__(self, *_):
        if self.process.poll() is None:
            self.quit()
