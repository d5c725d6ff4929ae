#!/usr/bin/env python3
"""postgres.py: the users service on PostgreSQL against SQLite, and the queue on PostgreSQL with
1, 2 and 4 processes, as bench/README.md ("PostgreSQL") reports them.

A throwaway PostgreSQL cluster is made and started here (initdb + postgres in a temporary
directory on a free loopback port, as the `postgres` user when run as root, with the settings
of a durable server: fsync and synchronous_commit on). Then:

- HTTP: the users service (one build, given as EXE) is run on SQLite (a fresh file) and on
  PostgreSQL (a fresh database), with 1 and 2 workers, each pinned to CPU 0 (the 2-worker runs
  to CPUs 0-1, sharing them with the database server), and wrk (-t2 -c64, pinned with the
  server) sends GET /users/1 or POST /users for ROUNDS rounds of SECS seconds, the engines
  interleaved in each round. Medians of the rounds are printed.
- Queue: QUEUE_EXE (bench/queue/queue.nagi built with `workers 8`) runs as 1, 2 and 4
  processes on one fresh PostgreSQL database; JOBS jobs of no wait are pushed in one request
  and the time until every job has written its row is measured: jobs per second, median of
  ROUNDS.

usage: bench/experiments/postgres.py EXE QUEUE_EXE [ROUNDS] [SECS] [JOBS]
  e.g. bench/experiments/postgres.py target/users target/queue8 3 5 5000
"""
import os
import pwd
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = sorted(
    (os.path.join("/usr/lib/postgresql", v, "bin") for v in os.listdir("/usr/lib/postgresql")),
    key=lambda d: int(os.path.basename(os.path.dirname(d))),
)[-1]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_cluster_user():
    if os.geteuid() != 0:
        return {}
    user = pwd.getpwnam("postgres")
    return {"user": user.pw_uid, "group": user.pw_gid}


def start_cluster(tmp):
    data = os.path.join(tmp, "data")
    who = as_cluster_user()
    if who:
        os.chown(tmp, who["user"], who["group"])
    subprocess.run(
        [f"{BIN}/initdb", "-D", data, "-U", "nagi", "-A", "trust", "-E", "UTF8", "--locale=C"],
        check=True, capture_output=True, **who,
    )
    port = free_port()
    server = subprocess.Popen(
        [f"{BIN}/postgres", "-D", data, "-p", str(port), "-k", tmp,
         "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "postgres.err"), "w"), **who,
    )
    for _ in range(200):
        if subprocess.run([f"{BIN}/pg_isready", "-h", "127.0.0.1", "-p", str(port)],
                          capture_output=True).returncode == 0:
            return server, port
        time.sleep(0.05)
    raise SystemExit("the cluster did not start")


def psql(port, db, sql):
    out = subprocess.run([f"{BIN}/psql", "-h", "127.0.0.1", "-p", str(port), "-U", "nagi", "-d", db, "-At", "-c", sql],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def fresh_database(port, name):
    psql(port, "postgres", f"DROP DATABASE IF EXISTS {name}")
    psql(port, "postgres", f"CREATE DATABASE {name}")
    return f"postgres://nagi@127.0.0.1:{port}/{name}"


def serve(exe, db, workers, cpus, log):
    port = free_port()
    proc = subprocess.Popen(
        ["taskset", "-c", cpus, exe, "--listen", f"127.0.0.1:{port}", "--db", db,
         "--workers", str(workers), "--log", "warn"],
        stdout=open(log, "a"), stderr=subprocess.STDOUT,
    )
    for _ in range(400):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return proc, port
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"{exe} did not start; see {log}")


def post(port, path, body):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body.encode(),
                                     headers={"content-type": "application/json"}, method="POST")
    return urllib.request.urlopen(request, timeout=60).read()


WRK_POST = """
local threads = 0
function setup(thread)
  thread:set("base", 1000000 + threads * 100000000)
  threads = threads + 1
end
function init(args)
  counter = base
end
request = function()
  counter = counter + 1
  local body = string.format('{"id":%d,"name":"n","age":30}', counter)
  return wrk.format("POST", "/users", {["Content-Type"] = "application/json"}, body)
end
"""


def wrk(port, case, secs, cpus, tmp):
    args = ["taskset", "-c", cpus, "wrk", "-t2", "-c64", f"-d{secs}s"]
    if case == "post-users":
        script = os.path.join(tmp, "post.lua")
        with open(script, "w") as f:
            f.write(WRK_POST)
        args += ["-s", script, f"http://127.0.0.1:{port}"]
    else:
        args.append(f"http://127.0.0.1:{port}/users/1")
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rate, int(errors.group(1)) if errors else 0


def http_bench(exe, port, rounds, secs, tmp):
    results = {}
    for workers, cpus in [(1, "0"), (2, "0-1")]:
        for case in ["get-user", "post-users"]:
            for round_ in range(rounds):
                for engine in ["sqlite", "postgres"]:
                    name = f"users_{workers}_{case.replace('-', '_')}_{round_}"
                    db = (os.path.join(tmp, f"{name}.db") if engine == "sqlite" else fresh_database(port, name))
                    proc, http_port = serve(exe, db, workers, cpus, os.path.join(tmp, "http.log"))
                    post(http_port, "/users", '{"id":1,"name":"Ada","age":36}')
                    rate, errors = wrk(http_port, case, secs, cpus, tmp)
                    proc.terminate()
                    proc.wait()
                    results.setdefault((workers, case, engine), []).append(rate)
                    if errors:
                        print(f"  ({workers} workers, {case}, {engine}: {errors} non-2xx answers)")
    print("\nHTTP, req/s (median of rounds), wrk -t2 -c64:")
    print(f"{'workers':>8} {'case':<11} {'SQLite':>9} {'PostgreSQL':>11} {'PG/SQLite':>10}")
    for workers in [1, 2]:
        for case in ["get-user", "post-users"]:
            s = statistics.median(results[(workers, case, "sqlite")])
            p = statistics.median(results[(workers, case, "postgres")])
            print(f"{workers:>8} {case:<11} {s:>9.0f} {p:>11.0f} {p / s:>10.2f}")


def queue_bench(exe, port, rounds, jobs, tmp):
    print(f"\nQueue on PostgreSQL, {jobs} jobs of no wait, workers 8 per process, jobs/s (median):")
    for processes in [1, 2, 4]:
        rates = []
        for r in range(rounds):
            db = fresh_database(port, f"queue_{processes}_{r}")
            procs = [serve(exe, db, 1, "0-1", os.path.join(tmp, "queue.log")) for _ in range(processes)]
            started = time.monotonic()
            post(procs[0][1], f"/push?first=1&count={jobs}&wait_ms=0", "")
            while int(psql(port, db.rsplit("/", 1)[1], "SELECT count(*) FROM starts")) < jobs:
                time.sleep(0.02)
            rates.append(jobs / (time.monotonic() - started))
            for proc, _ in procs:
                proc.terminate()
                proc.wait()
        print(f"  {processes} process(es): {statistics.median(rates):.0f} jobs/s  (rounds: "
              + ", ".join(f"{x:.0f}" for x in rates) + ")")


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    exe, queue_exe = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    secs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    jobs = int(sys.argv[5]) if len(sys.argv) > 5 else 5000
    tmp = tempfile.mkdtemp(prefix="nagi-bench-postgres-")
    os.chmod(tmp, 0o777)
    server, port = start_cluster(tmp)
    try:
        http_bench(exe, port, rounds, secs, tmp)
        queue_bench(queue_exe, port, rounds, jobs, tmp)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
