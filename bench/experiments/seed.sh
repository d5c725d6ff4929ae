#!/bin/bash
#! seed.sh: sourced by the experiments that run a service build: `seed PORT [SECONDS]` waits up
#! to SECONDS (10 by default; give a server under valgrind more) for the server on PORT to answer
#! `/health`, then creates users 1-100 as the timed bench seeds them.
seed() {
  local port=$1 tries=$((${2:-10} * 10))
  for _ in $(seq "$tries"); do curl -s -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
  for id in $(seq 1 100); do
    curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
      -d "{\"id\":$id,\"name\":\"user $id\",\"age\":30}" "http://127.0.0.1:$port/users"
  done
}
