#!/usr/bin/env python3
"""Benchmark python-sb against bare python and strace in one run.

Each workload runs bare, under `python-sb` (enforce mode, a policy that allows
the workload), and under `strace -f --seccomp-bpf` tracing the same system
calls; runs alternate between the three so that machine noise hits them alike.
The table gives medians and ratios; nothing here asserts timings (make check
never runs this).

    python3 bench/run.py [--python-sb PATH] [--python PATH] [--runs N] [--write-results]
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

WORKLOADS: dict[str, str] = {
    "start (-c pass)": "pass",
    "import-heavy start": textwrap.dedent("""
        import json, email.parser, http.client, asyncio, ssl, sqlite3, decimal
        try:
            import numpy
        except ImportError:
            pass
        """),
    "20000 opens": textwrap.dedent("""
        import os
        for _ in range(20000):
            os.close(os.open("data.txt", os.O_RDONLY))
        """),
    "2000 connects (loopback)": textwrap.dedent("""
        import os, socket
        port = int(os.environ["BENCH_PORT"])
        for _ in range(2000):
            s = socket.socket()
            s.connect(("127.0.0.1", port))
            s.close()
        """),
    "200 spawns": textwrap.dedent("""
        import subprocess
        for _ in range(200):
            subprocess.run(["/bin/true"], check=True)
        """),
    "8 threads x 2500 opens": textwrap.dedent("""
        import os, threading
        def work():
            for _ in range(2500):
                os.close(os.open("data.txt", os.O_RDONLY))
        ts = [threading.Thread(target=work) for _ in range(8)]
        for t in ts: t.start()
        for t in ts: t.join()
        """),
}

POLICY = """\
expose-ro=.
net=ALLOW|TCP|127.0.0.1|*|OUT
python-import=*
python-api=ALLOW:process-exec, threads
exec=/bin/true
exec=/usr/bin/true
os-sandbox=${OS_SANDBOX:-auto}
env=BENCH_PORT=${BENCH_PORT}
env=PATH=${PATH}
"""

LEARN_WORKLOADS = ("start (-c pass)", "import-heavy start")
# Also run under bench/unotify-floor --run: every openat and newfstatat
# trapped and CONTINUEd at once, the part of python-sb's cost no decision
# can remove; and under --run-walk, which also reads each path and opens it
# O_PATH before the CONTINUE, the least a supervisor deciding on resolved
# paths does.
TRAP_WORKLOADS = LEARN_WORKLOADS

STRACE_CALLS = ("open,openat,openat2,creat,newfstatat,statx,access,faccessat,faccessat2,readlink,"
                "readlinkat,execve,execveat,connect,bind,sendto,sendmsg,unlink,unlinkat,rename,"
                "renameat,renameat2,mkdir,mkdirat")


def accept_forever(srv: socket.socket) -> None:
    while True:
        try:
            c, _ = srv.accept()
        except OSError:
            return
        c.close()


class Ratio(float):
    """The median of the rounds' own ratios, printed with the middle half of
    them: on a shared 2-core VM one series' median moves by several hundredths
    from hour to hour, and a target of 1.05 is read against that spread."""

    def __new__(cls, rounds: list[float]) -> "Ratio":
        r = super().__new__(cls, statistics.median(rounds))
        q = statistics.quantiles(rounds, n=4) if len(rounds) > 1 else [rounds[0]] * 3
        r.q1, r.q3 = q[0], q[2]
        return r

    def __format__(self, spec: str) -> str:
        return f"{float(self):{spec}} ({self.q1:{spec}}–{self.q3:{spec}})"


def dentry_cache() -> str:
    """The dentry cache's size, and its hash table's when the kernel command
    line sets it.  Every path lookup walks one hash chain per component: with
    131 072 buckets (this VM's dhash_entries=) and two million dentries left by
    days of test runs, most of them negative, the chains are ~15 long and the
    supervisor's cold lookups at an interpreter's start take twice as long
    (doc/supervisor.md §6)."""
    try:
        nr, _unused, _age, _want, negative = Path("/proc/sys/fs/dentry-state").read_text().split()[:5]
        text = f"dentry cache {int(nr):,} entries ({int(negative):,} negative)"
    except (OSError, ValueError):
        return "dentry cache: unknown"
    try:
        for arg in Path("/proc/cmdline").read_text().split():
            if arg.startswith("dhash_entries="):
                text += f" in a hash of {int(arg.split('=', 1)[1]):,} buckets"
    except (OSError, ValueError):
        pass
    return text


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{cmd[:3]}... failed ({r.returncode}): {r.stderr.decode()[-400:]}")
    return dt


def supervisor_rss(sb: str, python: str, work: Path, env: dict[str, str]) -> int:
    """Peak RSS (KiB) of the python-sb process itself during the open loop."""
    prog = WORKLOADS["20000 opens"] + "\nimport time; time.sleep(0.5)\n"
    (work / "rss.py").write_text(prog)
    p = subprocess.Popen([sb, f"--python={python}", "rss.py"], cwd=work, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while p.poll() is None:
        try:
            for line in Path(f"/proc/{p.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            break
        time.sleep(0.05)
    return peak


def syscall_names() -> dict[int, str]:
    """x86_64 system call numbers to names, from the kernel headers."""
    names: dict[int, str] = {}
    for hdr in ("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"):
        try:
            for line in Path(hdr).read_text().splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[0] == "#define" and parts[1].startswith("__NR_"):
                    names[int(parts[2])] = parts[1][5:]
        except (OSError, ValueError):
            continue
        break
    return names


def decisions(sb: str, python: str, f: str, work: Path, env: dict[str, str],
              runs: int) -> tuple[int, float, float, float, str]:
    """Notifications per run, the median and 90th percentile of the
    supervisor's answer time (RECV to answer, µs) from python-sb-latency, the
    median of the decision alone (without the emulated call's own time where
    it may block: a connect, a FIFO open), and the most notified calls."""
    hist: dict[int, int] = {}
    dhist: dict[int, int] = {}
    by_nr: dict[int, int] = {}
    ns_nr: dict[int, int] = {}
    step = 100
    lat = work / "latency.txt"
    for _ in range(runs):
        lat.unlink(missing_ok=True)
        timed([sb, f"--python={python}", f], work, dict(env, SB_BENCH_LATENCY_FILE=str(lat)))
        lines = lat.read_text().splitlines()
        step = int(lines[0].split()[1])
        for line in lines[1:]:
            parts = line.split()
            if parts[0] == "nr":  # nr, notifications, ns of decisions (blocking calls left out)
                nr, n, ns = (int(x) for x in parts[1:4])
                by_nr[nr] = by_nr.get(nr, 0) + n
                ns_nr[nr] = ns_nr.get(nr, 0) + ns
                continue
            h = dhist if parts[0] == "d" else hist
            b, n = (int(x) for x in parts[-2:])
            h[b] = h.get(b, 0) + n

    def pct(h: dict[int, int], q: float) -> float:
        total, acc = sum(h.values()), 0
        for b in sorted(h):
            acc += h[b]
            if acc >= q * total:
                return (b + 0.5) * step / 1000
        return float("nan")
    names = syscall_names()
    top = sorted(by_nr.items(), key=lambda kv: -kv[1])[:3]
    calls = ", ".join(f"{names.get(nr, nr)} {n // max(runs, 1)} ({ns_nr[nr] / n / 1000:.1f} µs)" for nr, n in top)
    return sum(hist.values()) // max(runs, 1), pct(hist, 0.5), pct(hist, 0.9), pct(dhist, 0.5), calls


def kernel_floor(prog: str, runs: int) -> dict[str, tuple[float, float]]:
    """Medians per setup of bench/unotify-floor's µs per open+close and per stat."""
    if not os.access(prog, os.X_OK):
        return {}
    got: dict[str, list[tuple[float, float]]] = {}
    for _ in range(max(runs, 1)):
        out = subprocess.run([prog, "20000"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            what, o, st = line.split("\t")
            got.setdefault(what, []).append((float(o.split()[1]), float(st.split()[1])))
    return {k: (statistics.median(o for o, _ in v), statistics.median(st for _, st in v))
            for k, v in got.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python-sb", default=str(HERE.parent / "python-sb"))
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--latency-sb", default=str(HERE / "python-sb-latency"),
                    help="python-sb built with SB_BENCH_LATENCY (make bench builds it); skipped when missing")
    ap.add_argument("--floor", default=str(HERE / "unotify-floor"),
                    help="the kernel's floor (make bench builds it); skipped when missing")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--only", help="substring of the workload names to run")
    ap.add_argument("--write-results", action="store_true", help="write bench/RESULTS.md")
    args = ap.parse_args()

    dcache_before = dentry_cache()
    strace = shutil.which("strace")
    work = Path(tempfile.mkdtemp(prefix="sb-bench-"))
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(512)
    threading.Thread(target=accept_forever, args=(srv,), daemon=True).start()
    env = dict(os.environ, BENCH_PORT=str(srv.getsockname()[1]), OS_SANDBOX=os.environ.get("OS_SANDBOX", "auto"))
    (work / "data.txt").write_text("x\n")
    (work / ".py-sandboxes").write_text(POLICY)

    modes = {"bare": lambda f: [args.python, f],
             "python-sb": lambda f: [args.python_sb, f"--python={args.python}", f]}
    if strace:
        modes["strace"] = lambda f: [strace, "-f", "-qq", "--seccomp-bpf", "-e", f"trace={STRACE_CALLS}",
                                     "-o", "/dev/null", args.python, f]

    # Learning (SPEC §9: ≤ 15 % over bare) on the start-up workloads: each run
    # learns from scratch into a file of its own, as a first learning run does.
    learned = iter(range(1 << 30))
    learn_mode = lambda f: [args.python_sb, f"--python={args.python}",
                            f"--learn={work / f'learned-{next(learned)}.txt'}", f]

    rows = []
    lat_rows = []
    lat_sb = args.latency_sb if os.access(args.latency_sb, os.X_OK) else None
    for name, code in WORKLOADS.items():
        if args.only and args.only not in name:
            continue
        f = f"w{len(rows)}.py"
        (work / f).write_text(code)
        run_modes = dict(modes, learn=learn_mode) if name in LEARN_WORKLOADS else dict(modes)
        if name in TRAP_WORKLOADS and os.access(args.floor, os.X_OK):
            run_modes["trap"] = lambda f: [args.floor, "--run", args.python, f]
            run_modes["walk"] = lambda f: [args.floor, "--run-walk", args.python, f]
        times: dict[str, list[float]] = {m: [] for m in run_modes}
        for m in run_modes:  # warm-up
            timed(run_modes[m](f), work, env)
        for _ in range(args.runs):
            for m in run_modes:
                times[m].append(timed(run_modes[m](f), work, env))
        med = {m: statistics.median(v) for m, v in times.items()}
        # Ratios: the median of each round's own ratio.  Runs of one round
        # are seconds apart, so a slow spell of the machine (this one is a
        # VM with noisy neighbours) weighs on both sides of the ratio.
        ratio = {m: Ratio([x / y for x, y in zip(v, times["bare"])]) for m, v in times.items()}
        rows.append((name, med, ratio))
        if lat_sb:
            lat_rows.append((name, *decisions(lat_sb, args.python, f, work, env, min(args.runs, 3))))
        print(f"{name:28s} " + "  ".join(f"{m} {med[m] * 1000:8.1f} ms ({float(ratio[m]):.2f})" for m in run_modes),
              flush=True)

    # The in-interpreter agent's own start-up cost: -c pass with and without
    # it (py-sandbox=false), alternating.
    (work / "pass.py").write_text("pass\n")
    agent_on, agent_off = [], []
    for _ in range(args.runs * 2):
        agent_on.append(timed([args.python_sb, f"--python={args.python}", "pass.py"], work, env))
        agent_off.append(timed([args.python_sb, f"--python={args.python}", "--py-sandbox=false", "pass.py"],
                               work, env))
    agent_cost = statistics.median(agent_on) - statistics.median(agent_off)

    rss = supervisor_rss(args.python_sb, args.python, work, env)
    floor = kernel_floor(args.floor, args.runs)
    srv.close()
    shutil.rmtree(work, ignore_errors=True)

    out = [f"# python-sb benchmark ({time.strftime('%Y-%m-%d')})", "",
           f"Machine: {platform.machine()}, {os.cpu_count()} cores, kernel {platform.release()}, "
           f"python {args.python} ({subprocess.run([args.python, '-V'], capture_output=True, text=True).stdout.strip()}); "
           f"times: median of {args.runs} alternating rounds; ratios: median of the rounds' own ratios "
           f"(in brackets the middle half of them, first to third quartile); "
           f"OS_SANDBOX={env['OS_SANDBOX']}; {dcache_before} at the start, {dentry_cache()} at the end.", "",
           "| workload | bare | python-sb | ratio | strace | ratio | python-sb added / strace added |",
           "|---|---|---|---|---|---|---|"]
    for name, med, ratio in rows:
        b, s = med["bare"], med["python-sb"]
        t = med.get("strace")
        tcol = f"{t * 1000:.1f} ms | {ratio['strace']:.2f}" if t else "n/a | n/a"
        added = f"{(float(ratio['python-sb']) - 1) / (float(ratio['strace']) - 1):.2f}" if t and ratio["strace"] > 1 else "n/a"
        out.append(f"| {name} | {b * 1000:.1f} ms | {s * 1000:.1f} ms | {ratio['python-sb']:.2f} | {tcol} | {added} |")
    trap_rows = [(name, med, ratio) for name, med, ratio in rows if "trap" in med]
    if trap_rows:
        out += ["", "The trap alone (bench/unotify-floor --run: the same program with every openat and newfstatat "
                "trapped and CONTINUEd at once, nothing read or decided; python-sb traps a few more calls, and its "
                "agent makes fewer: see the most notified calls below), and the trap with the walk "
                "(--run-walk: each path also read from the program and opened O_PATH without following "
                "symlinks before the CONTINUE, as any supervisor deciding on resolved paths must)", "",
                "| workload | bare | trap alone | ratio | trap + walk | ratio | python-sb | ratio |",
                "|---|---|---|---|---|---|---|---|"]
        out += [f"| {n} | {m['bare'] * 1000:.1f} ms | {m['trap'] * 1000:.1f} ms | {r['trap']:.2f} | "
                f"{m['walk'] * 1000:.1f} ms | {r['walk']:.2f} | "
                f"{m['python-sb'] * 1000:.1f} ms | {r['python-sb']:.2f} |" for n, m, r in trap_rows]
    learn_rows = [(name, med, ratio) for name, med, ratio in rows if "learn" in med]
    if learn_rows:
        out += ["", "Learn mode (`--learn=FILE`, a fresh file each run; SPEC §9 target: ≤ 1.15× bare)", "",
                "| workload | bare | learn | ratio |", "|---|---|---|---|"]
        out += [f"| {n} | {m['bare'] * 1000:.1f} ms | {m['learn'] * 1000:.1f} ms | {r['learn']:.2f} |"
                for n, m, r in learn_rows]
    if lat_rows:
        out += ["", "Supervisor decisions (bench/python-sb-latency: RECV to SEND or ADDFD, SPEC §9 target: median ≤ 5 µs; "
                "the last column leaves out the emulated call's own time where it may block, e.g. the connect itself)", "",
                "| workload | notifications per run | most notified (mean decision alone) | median | 90th percentile | median, decision alone |",
                "|---|---|---|---|---|---|"]
        out += [f"| {n} | {c} | {calls} | {m:.1f} µs | {p:.1f} µs | {d:.1f} µs |" for n, c, m, p, d, calls in lat_rows]
    if floor:
        out += ["", "The kernel's floor (bench/unotify-floor: a supervisor that CONTINUEs at once; C loop of "
                "20 000 calls, median of the runs, µs per call; python-sb's added time per call is "
                "(python-sb - bare) / 20 000 in the tables above)", "",
                "| setup | open+close | stat |", "|---|---|---|"]
        out += [f"| {k} | {o:.2f} µs | {st:.2f} µs |" for k, (o, st) in floor.items()]
    out += ["", f"python-sb supervisor peak RSS during the open loop: {rss / 1024:.1f} MiB",
            f"The agent's start-up cost (-c pass, py-sandbox=true minus false): {agent_cost * 1000:.1f} ms", ""]
    text = "\n".join(out)
    print()
    print(text)
    if args.write_results:
        write_results(HERE / "RESULTS.md", text)
    return 0


def write_results(path: Path, table: str) -> None:
    """The new tables replace the old ones; the notes below them (the
    file's `## ` sections, written by hand) are kept."""
    old = path.read_text() if path.exists() else ""
    cut = old.find("\n## ")
    notes = old[cut:] if cut >= 0 else ""
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(table + notes)
    tmp.replace(path)


if __name__ == "__main__":
    sys.exit(main())
