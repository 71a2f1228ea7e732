"""Interrupt a running GoNB cell as Jupyter's "interrupt the kernel" does, run by the Python that owns jupyter.

usage: python3 interrupt.py KERNEL_CWD STARTUP_TIMEOUT_S CELL_TIMEOUT_S DELAY_S SETUP_CELL CELL MARKER...

Runs SETUP_CELL, then CELL once per MARKER: each time it waits until the cell's output contains that marker,
waits DELAY_S more, interrupts the kernel, and waits for the cell to end. Prints a JSON list with the text output
(streams, the text of displays and of their updates, errors) of every execution. Exit status 2 when the kernel does
not start, a marker never appears, a cell does not end within CELL_TIMEOUT_S, or the script is stopped by SIGTERM or SIGINT. The kernel is always shut down
gracefully, so that GoNB removes its temporary folder and stops gopls: a shutdown request, then SIGTERM and SIGKILL
if it has not exited within the manager's shutdown_wait_time.
"""
import json
import signal
import sys
import time

from jupyter_client.manager import KernelManager


class Stopped(BaseException):  # not an Exception: the polling loop below must not swallow it
    pass


def on_signal(signum, _frame):
    raise Stopped(f"stopped by {signal.Signals(signum).name}")


def main():
    cwd, startup_timeout, cell_timeout, delay, setup, cell, *markers = sys.argv[1:]
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    km = KernelManager(kernel_name="gonb", shutdown_wait_time=10.0)
    km.start_kernel(cwd=cwd)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=float(startup_timeout))
        outputs = [execute(km, kc, setup, None, 0, float(cell_timeout))]
        for marker in markers:
            outputs.append(execute(km, kc, cell, marker, float(delay), float(cell_timeout)))
    except (TimeoutError, RuntimeError, Stopped) as e:  # wait_for_ready raises RuntimeError on a dead kernel
        print(f"interrupt.py: {e}", file=sys.stderr)
        sys.exit(2)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second signal must not cut the shutdown short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    print(json.dumps(outputs))


def execute(km, kc, code, marker, delay, timeout):
    """Runs code; delay seconds after marker shows in its output, interrupts the kernel. Returns the output."""
    msg_id = kc.execute(code)
    deadline = time.monotonic() + timeout
    text, interrupted, seen = "", marker is None, None
    while time.monotonic() < deadline:
        if not interrupted and seen is None and marker in text:
            seen = time.monotonic()
        if not interrupted and seen is not None and time.monotonic() >= seen + delay:
            km.interrupt_kernel()
            interrupted = True
        try:
            msg = kc.get_iopub_msg(timeout=0.5)
        except Exception:  # queue.Empty: nothing yet
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            text += content["text"]
        elif kind in ("display_data", "update_display_data"):  # the status display, redrawn in place
            text += content["data"].get("text/plain", "") + "\n"
        elif kind == "error":
            text += f"{content['ename']}: {content['evalue']}\n"
        elif kind == "status" and content["execution_state"] == "idle":
            if not interrupted:
                raise TimeoutError(f"the cell ended before {marker!r} appeared:\n{text[-2000:]}")
            return text
    raise TimeoutError(f"the cell did not end within {timeout:.0f}s (waiting for {marker!r}):\n{text[-2000:]}")


if __name__ == "__main__":
    main()
