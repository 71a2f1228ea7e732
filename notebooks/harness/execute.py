"""Execute one notebook with the GoNB kernel through nbclient (run by the Python that owns jupyter).

usage: python3 execute.py SRC DST KERNEL_CWD CELL_TIMEOUT_S STARTUP_TIMEOUT_S [PROVENANCE_JSON]

The kernel runs in KERNEL_CWD, which GoNB exports to cells as GONB_DIR. PROVENANCE_JSON, if given, is stored as
the notebook's metadata "agentrl" (what computed the outputs). Errors are kept as outputs
(allow_errors) so every cell runs; the Go harness judges the result. Per-cell progress goes to stderr as
"nbexec: cell I/N [line] S.Ss". Exit status: 0 executed (whatever the cells did), 2 the run could not finish
(kernel did not start, died, a cell timed out, or SIGTERM or SIGINT stopped the script, which then shuts the
kernel down first); DST then holds what was executed so far.
"""
import json
import os
import signal
import sys
import time

import nbformat
from nbclient import NotebookClient


def main():
    src, dst, cwd, cell_timeout, startup_timeout = sys.argv[1:6]
    nb = nbformat.read(src, as_version=4)
    if len(sys.argv) > 6:
        nb.metadata["agentrl"] = json.loads(sys.argv[6])
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip()]
    started = {}

    def on_start(cell, cell_index, **_):
        started[cell_index] = time.monotonic()

    def on_executed(cell, cell_index, **_):
        first = cell.source.strip().splitlines()[0][:60]
        took = time.monotonic() - started.get(cell_index, time.monotonic())
        print(f"nbexec: cell {code.index(cell_index) + 1}/{len(code)} [{first}] {took:.1f}s",
              file=sys.stderr, flush=True)

    client = NotebookClient(
        nb,
        timeout=int(cell_timeout),
        startup_timeout=int(startup_timeout),
        kernel_name="gonb",
        allow_errors=True,
        record_timing=False,
        resources={"metadata": {"path": cwd}},
        on_cell_start=on_start,
        on_cell_executed=on_executed,
    )
    stopped = []

    def on_signal(signum, _frame):
        # Asked to stop (the harness timed out or died): stop the kernel, the running cell program included.
        # While the kernel runs, nbclient's own SIGINT and SIGTERM handlers replace this one; they shut the kernel
        # down gracefully as well (shutdown request, then SIGTERM and SIGKILL to its process group).
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second signal must not cut the shutdown short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stopped.append(signal.Signals(signum).name)
        stop_kernel(client.km)
        raise KeyboardInterrupt(stopped[0])

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    status = 0
    try:
        client.execute()
    except BaseException as e:  # timeout, dead kernel, kernel that never started, signal
        why = f"stopped by {stopped[0]}" if stopped else f"{type(e).__name__}: {str(e).strip()[:300]}"
        print(f"nbexec: {why}", file=sys.stderr, flush=True)
        status = 2
    nbformat.write(nb, dst)
    return status


def stop_kernel(km, wait=10.0):
    """Stops a kernel from a signal handler, outside nbclient's event loop. SIGTERM asks GoNB to shut down: it
    interrupts the running cell, removes its temporary folder and stops gopls. What is left of the kernel's process
    group after wait seconds (a cell program that ignores the interrupt) is killed."""
    proc = getattr(getattr(km, "provisioner", None), "process", None)
    if proc is None:
        return
    try:
        proc.terminate()
        proc.wait(timeout=wait)
    except Exception:  # subprocess.TimeoutExpired, or the kernel is already gone
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the kernel leads its own session
    except OSError:  # nothing left
        pass


if __name__ == "__main__":
    sys.exit(main())
