"""Kill what a driver's local Ray leaves behind once the driver is gone, even after kill -9.

Started by runners.ray.connect as `python reaper.py DRIVER_PID RAY_PACKAGE_DIR` with a pipe on
stdin that only the driver holds, so end of file on it means the driver has exited, however it
ended. Until then, every 2 s, it notes the Ray processes descending from the driver (GCS, raylet,
dashboard, agents, workers: their command line runs from the Ray package or reads `ray::`) with
their start times. After end of file and a short grace (a clean ray.shutdown needs no help) it
SIGKILLs those still alive with the same start time. Ray's own fate sharing ends GCS and raylet
with their driver, but raylet's dashboard and runtime-env agents were reparented to init and
lived on for minutes. Standalone: imports nothing of the project.
"""

import os
import select
import signal
import sys
import time

GRACE_S = 1.0


def _processes() -> dict[int, tuple[int, bytes, bytes, bytes]]:
    """pid -> (ppid, start time, state, command line), from /proc."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                command = fh.read().replace(b"\0", b" ")
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2:].split()
        found[int(name)] = (int(fields[1]), fields[19], fields[0], command)
    return found


def _ray_descendants(root: int, ray_dir: bytes, processes) -> dict[int, bytes]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, *_rest) in processes.items():
        children.setdefault(ppid, []).append(pid)
    found, stack = {}, [root]
    while stack:
        for child in children.get(stack.pop(), []):
            stack.append(child)
            command = processes[child][3]
            if child != os.getpid() and (ray_dir in command or command.startswith(b"ray::")):  # not itself
                found[child] = processes[child][1]
    return found


def main() -> None:
    driver, ray_dir = int(sys.argv[1]), os.fsencode(sys.argv[2])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C of the driver's terminal is the driver's
    tracked: dict[int, bytes] = {}
    while True:
        tracked.update(_ray_descendants(driver, ray_dir, _processes()))
        ready, _, _ = select.select([0], [], [], 2.0)
        if ready and not os.read(0, 4096):
            break
    time.sleep(GRACE_S)
    processes = _processes()
    for pid, started in tracked.items():
        if pid in processes and processes[pid][1] == started and processes[pid][2] != b"Z":
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


if __name__ == "__main__":
    main()
