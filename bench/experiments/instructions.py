#!/usr/bin/env python3
"""instructions.py: instructions per request of a service build, as bench/README.md counts them.

The server runs under callgrind with instrumentation off; after a warm-up (one user created,
50 requests of the case) it is switched on with `callgrind_control -i on`, N requests of the case
are sent on one keep-alive connection, and it is switched off again. Every thread of the server
is counted (the worker, the database thread, the log writer, the trace exporter), so work moved
off the request's thread still shows. With `--otlp-endpoint sink` the server exports its spans
to an OTLP/HTTP sink run here (it answers 200 and keeps nothing).

With `--cache-sim`, callgrind also simulates the caches (`--cache-sim=yes`) and the report
adds, per request, the level-1 instruction and data misses (I1mr, D1mr + D1mw) and the
last-level misses (ILmr + DLmr + DLmw): the cost instruction counts cannot show.

usage: bench/experiments/instructions.py EXE CASE [N] [--cache-sim] [-- SERVER FLAGS...]
  CASE: health | echo | get-user | post-users
  e.g.  bench/experiments/instructions.py target/users get-user 2000 -- --otlp-endpoint sink
"""
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CASES = {
    "health": ("GET", "/health", None),
    "echo": ("POST", "/echo", '{"id":$I,"name":"Ada","age":36}'),
    "get-user": ("GET", "/users/1", None),
    "post-users": ("POST", "/users", '{"id":$I,"name":"n","age":30}'),
}


class Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that reads each export and answers 200."""

    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def send(conn, method, path, body, i):
    text = body.replace("$I", str(i)) if body else None
    headers = {"content-type": "application/json"} if text else {}
    conn.request(method, path, body=text, headers=headers)
    answer = conn.getresponse()
    answer.read()
    return answer.status


def measure(exe, case, n, flags, cache_sim):
    method, path, body = CASES[case]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        port = 20000 + os.getpid() % 10000
        server = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
            + (["--cache-sim=yes"] if cache_sim else []) + [exe,
             "--listen", f"127.0.0.1:{port}", "--db", os.path.join(tmp, "db.sqlite")] + flags,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    send(conn, "GET", "/health", None, 0)
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                sys.exit("the server did not start")
            assert send(conn, "POST", "/users", '{"id":1,"name":"Ada","age":36}', 0) == 201
            for i in range(50):
                send(conn, method, path, body, 1_000_000 + i)
            subprocess.run(["callgrind_control", "-i", "on", str(server.pid)], check=True, capture_output=True)
            for i in range(n):
                status = send(conn, method, path, body, 10 + i)
                assert status in (200, 201), f"{case}: {status}"
            subprocess.run(["callgrind_control", "-i", "off", str(server.pid)], check=True, capture_output=True)
            conn.close()
        finally:
            server.send_signal(2)
            server.wait()
        with open(out) as f:
            text = f.read()
        events = re.search(r"^events:\s*(.*)$", text, re.M).group(1).split()
        totals = [int(v) for v in re.search(r"^totals:\s*(.*)$", text, re.M).group(1).split()]
    return {event: total / n for event, total in zip(events, totals)}


def main():
    args = sys.argv[1:]
    flags = []
    if "--" in args:
        flags = args[args.index("--") + 1:]
        args = args[:args.index("--")]
    if len(args) < 2 or args[1] not in CASES:
        sys.exit(__doc__)
    exe, case = args[0], args[1]
    cache_sim = "--cache-sim" in args
    args = [a for a in args if a != "--cache-sim"]
    n = int(args[2]) if len(args) > 2 else 2000
    if "sink" in flags:
        sink = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
        threading.Thread(target=sink.serve_forever, daemon=True).start()
        flags[flags.index("sink")] = f"http://127.0.0.1:{sink.server_address[1]}"
    per_request = measure(exe, case, n, flags, cache_sim)
    report = {"exe": exe, "case": case, "requests": n, "flags": flags,
              "instructions_per_request": round(per_request["Ir"])}
    if cache_sim:
        get = lambda *names: round(sum(per_request.get(e, 0) for e in names), 1)
        report["l1_instruction_misses"] = get("I1mr")
        report["l1_data_misses"] = get("D1mr", "D1mw")
        report["last_level_misses"] = get("ILmr", "DLmr", "DLmw")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
