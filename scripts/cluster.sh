#!/usr/bin/env bash
# Starts a three-node cluster on 127.0.0.1 (deploy/cluster/node1..3.toml),
# prints its status, and stops the three nodes on Ctrl-C. Logs go to
# data/cluster/nodeN.log. FIX clients list the three FIX addresses
# (127.0.0.1:9881, :9882, :9883); followers refuse a logon with a Logout
# that names the leader's. The files hold a demo operator token
# (cluster-demo-operator-token) for `fixvenue cluster transfer` and
# `fixvenue admin`.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/fixvenue
mkdir -p data/cluster
pids=()
stop() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait || true
}
trap stop EXIT INT TERM
for i in 1 2 3; do
	"$bin" serve --config "deploy/cluster/node$i.toml" >"data/cluster/node$i.log" 2>&1 &
	pids+=($!)
done
for _ in $(seq 1 50); do
	if "$bin" cluster status --config deploy/cluster/node1.toml 2>/dev/null | grep -q ' true '; then
		break
	fi
	sleep 0.2
done
"$bin" cluster status --config deploy/cluster/node1.toml || true
echo
echo "three nodes running (logs in data/cluster/); fixvenue cluster status --config deploy/cluster/node1.toml; Ctrl-C stops them"
echo "a transfer, with the files' demo operator token (README, \"Cluster: three replicas\"):"
echo "  fixvenue cluster transfer --config deploy/cluster/node1.toml --to 2 --token cluster-demo-operator-token"
wait
