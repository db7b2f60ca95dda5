# ratebench: `make run` for the default comparison, `make test` for the suite.
GO       ?= go
FUZZTIME ?= 30s
COUNT    ?= 10
BENCHOUT ?= bench.txt
BENCHTIME ?= 200ms

.PHONY: run build test lint bench fuzz results

# The default comparison: every algorithm against constant, Poisson, burst
# and boundary traffic at 1.5x the limit, in virtual time. The first build
# takes half a minute; it says so rather than sit silent.
run:
	@echo "building ./bin/ratebench (the first build takes about half a minute) ..."
	@$(GO) build -buildvcs=auto -o bin/ratebench ./cmd/ratebench
	./bin/ratebench run -scenario default

# The command, into ./bin.
build:
	$(GO) build -buildvcs=auto -o bin/ratebench ./cmd/ratebench

# The suite twice: under the race detector, without the real-time tests
# (live runs, servers and clients, Redis faults, pacers: they measure the
# wall clock, which the race detector slows several-fold, so their files
# build only without -race), then all of it without the race detector,
# the real-time tests and the keyed limiter's bytes-per-key bound among
# them (the race detector changes the heap). The second step runs one
# package at a time (-p 1): its real-time tests judge latencies and rates
# on the wall clock, and another package's tests on the same two cores
# would be measured into them. The first has none, and runs packages side
# by side. cmd/ratebench's probes of real limiters (TestCorpus) take
# longer than go test's default 10 minutes per package.
test: lint
	$(GO) test -race -count=1 ./...
	$(GO) test -count=1 -p 1 -timeout 40m ./...

# vet, gofmt, a tidy go.mod and staticcheck (pinned in go.mod as a tool).
lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) tool staticcheck ./...

# The benchmark matrix (bench/, BenchmarkDecide: algo=X/case=Y) and the
# per-package benchmarks, COUNT samples of BENCHTIME each, summarised by
# benchstat (pinned in go.mod). The matrix builds each keys=1000000 cell
# once (about a second each) and reuses it for every sample. About 6
# minutes on 2 cores with the defaults (bench/ alone: about 4.5); e.g.
# `make bench COUNT=6 BENCHTIME=100ms` for a quick look.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime=$(BENCHTIME) -count=$(COUNT) ./algorithms/... ./bench/... | tee $(BENCHOUT)
	$(GO) tool benchstat $(BENCHOUT)

# Every fuzz target for FUZZTIME each.
fuzz:
	@set -e; for pkg in ./algorithms ./algorithms/httplimit ./algorithms/keyed ./bench/httpexec ./workload; do \
		for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$t"; \
			$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

# The reference runs committed under results/.
results:
	$(GO) run ./cmd/ratebench boundary -out results/boundary
	$(GO) run ./cmd/ratebench run -scenario default -out results/compare
	bench/httpexec/reference.sh
	bench/probe/reference.sh
	rm -rf results/shards
	OUT=results/shards cmd/ratebench/deploy/local.sh -workload poisson -rate 300 -duration 10s -algo gcra -seed 1
	rm -rf results/shards/logs
