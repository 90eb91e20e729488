# Times a whole process RUNS times and prints one JSON line: each run's wall
# time (from the spawn to the child's exit) and CPU time (user + system, from
# the child's own resource usage) in microseconds. Standard output goes to
# /dev/null; a run that exits non-zero stops the timing with its status.
#   python3 tests/bench/proc_time.py RUNS CMD [ARG...]
# Timing in one process keeps a shell's `date` and a wrapper's exec out of
# the figure: started from a shell, `date` before and after a 25 ms command
# adds some 2-3 ms to it. Run it under `taskset` to pin the child.
import json
import os
import subprocess
import sys
import time


def main():
    runs = int(sys.argv[1])
    cmd = sys.argv[2:]
    wall = []
    cpu = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        t1 = time.perf_counter_ns()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            sys.exit(f"proc_time: {cmd[0]} exited {proc.returncode}")
        wall.append((t1 - t0) // 1000)
        cpu.append(round((usage.ru_utime + usage.ru_stime) * 1e6))
    print(json.dumps({"wall_us": wall, "cpu_us": cpu}))


if __name__ == "__main__":
    main()
