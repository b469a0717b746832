# fixvenue — the two commands a new machine needs are `make run` and `make test`.
GO        ?= go
BIN       := bin/fixvenue
# PKGS and RACE_PKGS name the longest test binaries first: go test starts them in the order given
# (two at a time), so listed in place they started late and ran alone at the end. The server
# package runs its tests in the race pass, all but those the detector cannot run (load runs,
# allocation counts), which alone run in the first pass (scripts/test.sh).
PKGS      := ./cmd/fixvenue ./...
# Packages with goroutines, rings or sockets run under the race detector. The matcher (core)
# and core/decimal are single-threaded, code and tests: under the detector their property
# tests ran ten times as long (about 300 s of a CI run) and could find no race. In cmd/fixvenue
# the tests whose venues are child processes only (three-node clusters, kill loops) skip
# themselves in this pass (skipUnderRace): the detector instruments the test process alone.
RACE_PKGS := ./server/... ./cmd/... ./core/ring/... ./core/pipeline/... ./journal/... ./cluster/... ./gateway/... ./marketdata/... ./fixtests/... ./bench/... ./ops/... ./console/... ./latency/...
FUZZTIME  ?= 2m
FUZZMINIMIZETIME ?= 5s
BENCHCOUNT ?= 6
BENCHTIME ?= 1s
# A test binary's bound. cmd/fixvenue runs real venues, clusters and browsers one test after
# another for minutes: go test's default of 10 minutes a package failed it on a loaded machine.
TESTTIMEOUT ?= 30m

.PHONY: console-screenshots all build run test test-short lint vet fmt generate check-generated fuzz bench bench-ab bench-instr bench-latency bench-fix bench-fix-ladder bench-matcher-thread bench-export conformance crash cluster cluster-crash interop clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/fixvenue

run: build
	./$(BIN) serve

# vet, then every test once and the concurrent packages again under the race detector: side by
# side with 4 or more CPUs, one after the other below (scripts/test.sh; TESTPASSES=serial or
# parallel chooses), each test binary running up to TESTPARALLEL (4, or the CPU count where
# more) parallel tests at once.
test: vet
	@GO="$(GO)" TESTTIMEOUT="$(TESTTIMEOUT)" PKGS="$(PKGS)" RACE_PKGS="$(RACE_PKGS)" ./scripts/test.sh

test-short: vet
	$(GO) test -count=1 -timeout $(TESTTIMEOUT) -short $(PKGS)

vet:
	$(GO) vet $(PKGS)

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

fmt:
	gofmt -w $$(git ls-files '*.go')

generate:
	$(GO) generate ./sbe/...

# Fails when the committed generated code differs from what the generator writes now.
check-generated: generate
	git diff --exit-code -- sbe/

# Runs every fuzz target for FUZZTIME each (make fuzz FUZZTIME=60s), minimising each new input for
# at most FUZZMINIMIZETIME. New crashers land in testdata/fuzz.
fuzz:
	@./scripts/fuzz.sh $(FUZZTIME) $(FUZZMINIMIZETIME)

bench:
	@./scripts/bench.sh $(BENCHCOUNT) $(BENCHTIME)

# make bench's packages at REV against this tree in one run, each benchmark's two builds back to
# back, BENCHCOUNT rounds (make bench-ab REV=2541f54); benchstat old → new in docs/bench/ab/.
bench-ab:
	@./scripts/bench-ab.sh $(REV) $(BENCHCOUNT) $(BENCHTIME)

# The matcher benchmarks' instructions per iteration, by callgrind (needs valgrind):
# a count, unlike ns/op, does not move with the machine's load. BENCH='Name/sub:A:B ...' picks.
bench-instr:
	@./scripts/bench-instr.sh $(BENCH)

bench-latency: build
	@./scripts/bench-latency.sh

# The venue and its durable floor (fixvenue bench echo --journal) alternated over FIX; prints the ratios.
bench-fix: build
	@./scripts/bench-fix-floor.sh

# The venue alone up a rate ladder (1, 4, 16 sessions; fsync batch and none), with .hgrm/SVG per run.
bench-fix-ladder: build
	@./scripts/bench-fix.sh

# Locked/unlocked matcher thread x wait strategy over FIX, interleaved rounds (docs/benchmarks.md, "Locked matcher thread").
bench-matcher-thread: build
	@./scripts/bench-matcher-thread.sh

# ExecutionReport latency with the NATS event export on against off, interleaved pairs (needs a quiet machine).
bench-export: build
	@./scripts/bench-export.sh

conformance: build
	@./scripts/conformance.sh

interop: build
	@./scripts/interop.sh

crash: build
	FIXVENUE_CRASH_CYCLES=1000 $(GO) test -count=1 -run 'TestCrash' -timeout 120m -v ./cmd/fixvenue/

# Screenshots of the console's pages (headless Chromium, a venue with a little
# trading) into docs/img/, shown in README.
console-screenshots:
	mkdir -p docs/img
	FIXVENUE_SCREENSHOTS=$(CURDIR)/docs/img $(GO) test -count=1 -run 'TestConsoleScreenshots' -v ./server/ | grep -E '^(---|ok|FAIL)'

# Three cluster nodes on 127.0.0.1 (deploy/cluster/, with a demo operator token:
# README "Cluster: three replicas"); Ctrl-C stops them.
cluster: build
	@./scripts/cluster.sh

# kill -9 of the cluster's leader under load, 200 times (make test runs 20).
# FIXVENUE_CLUSTER_ENTRIES_IN_MEMORY=64 makes the restarted nodes start from checkpoints
# and move segments to the archive.
cluster-crash: build
	FIXVENUE_CLUSTER_CYCLES=200 $(GO) test -count=1 -run 'TestClusterKill9Leader' -timeout 120m -v ./cmd/fixvenue/

clean:
	rm -rf bin
