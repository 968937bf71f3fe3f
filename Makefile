# Ladder's build and test entry points. `make test` is the whole test suite:
# the README and .ci/run call exactly it.
GO ?= go

# LAB=0 leaves out the lab tests (a real control plane; see docs/lab.md).
LAB ?= 1

.PHONY: test build bench vet fmt-check fuzz lab-build lab-test browser-test browser-screenshots

build:
	$(GO) build -o bin/ladder ./cmd/ladder

# The whole test suite: formatting, vet, every unit and scenario test, one
# quick pass of each benchmark so they cannot rot, and the lab tests.
test: fmt-check vet
	$(GO) test ./...
	$(GO) test -run '^$$' -bench 'AllowedByReason|Changes|RehearseDrift200Nodes|RehearseMix200Nodes|Scan100kObjects$$' -benchtime 1x ./...
	@$(MAKE) --no-print-directory fuzz
	@$(MAKE) --no-print-directory browser-test
	@if [ "$(LAB)" != 0 ]; then $(MAKE) --no-print-directory lab-test; fi

# The tests behind the `browser` build tag: headless Chromium (Debian's
# chromium package, which scripts/ensure-chromium.sh installs when it is
# missing) loads the HTML report (ladder rehearse --report) from 127.0.0.1
# and checks what it shows (docs/report-html.md), and the live view (ladder
# view, docs/view.md) replaying a rehearsal. They skip, saying why,
# only when Chromium cannot be installed.
browser-test:
	@sh scripts/ensure-chromium.sh
	$(GO) test -tags browser -run '^TestBrowser' -count=1 -timeout 20m ./internal/htmlreport/ ./internal/liveview/

# The README's screenshots of the workshop's HTML report and of the live
# view, into docs/img.
browser-screenshots:
	@sh scripts/ensure-chromium.sh
	LADDER_SCREENSHOTS=$(CURDIR)/docs/img $(GO) test -tags browser -run '^TestBrowser(Workshop|Upgrade|PDB)Report$$' -count=1 ./internal/htmlreport/
	LADDER_SCREENSHOTS=$(CURDIR)/docs/img $(GO) test -tags browser -run '^TestBrowserViewReplay$$' -count=1 ./internal/liveview/

# The lab's binaries (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok) in the user cache: about 15 minutes on 2 cores the
# first time, nothing when they are there. 1.36 too, for the control-plane
# upgrade test: it adds only its kube-apiserver, kube-controller-manager and
# kube-scheduler (etcd and kwok are shared).
lab-build:
	$(GO) run ./cmd/ladder lab build
	$(GO) run ./cmd/ladder lab build --kubernetes 1.36

# The tests behind the `lab` build tag, in the packages that have some, one
# package at a time (each starts its own lab). Their labs live under a
# temporary LADDER_LABTEST_DIR; whatever happens to the tests (failure,
# timeout panic, Ctrl-C), every lab found there is stopped with `ladder lab
# down` before the target ends.
lab-test: lab-build
	@set -u; \
	work=$$(mktemp -d); \
	cleanup() { \
		for d in "$$work"/labs/lab-*; do \
			[ -d "$$d" ] && "$$work/ladder" lab down --dir "$$d" >/dev/null; \
		done; \
		rm -rf "$$work"; \
	}; \
	trap cleanup EXIT; trap 'exit 130' INT TERM; \
	$(GO) build -o "$$work/ladder" ./cmd/ladder || exit 1; \
	pkgs=$$(grep -rl --include='*_test.go' '^//go:build.*\blab\b' . | xargs -n1 dirname | sort -u); \
	echo "lab tests in: $$(echo $$pkgs)"; \
	LADDER_LABTEST_DIR="$$work/labs" $(GO) test -tags lab -p 1 -timeout 60m $$pkgs

# The fuzz targets, each run for FUZZTIME: the input paths (an input that
# panics or hangs fails the step) and the rehearsal's PDB accounting (a
# seeded scenario variant whose report miscounts a drop fails it); the
# fuzzer keeps a failing input under the package's testdata/fuzz/ to become
# a regression case. One PACKAGE:TARGET
# per line; add new targets here. Inputs are not minimised: the fuzzer
# minimises every input that reaches new code — most inputs, early in a
# run — for up to FUZZMINIMIZETIME each, so that a few seconds of it spent
# a 5 s run on its first two inputs. To minimise a failing input, run its
# target again with FUZZMINIMIZETIME=60s. 10 s, not 5: the cli package's
# instrumented test binary (it holds Karpenter's controllers and the lab) can
# take more than 5 s to gather its baseline on a loaded 2-core machine, and
# the fuzzer then fails with "context deadline exceeded".
FUZZTIME ?= 10s
FUZZMINIMIZETIME ?= 0
FUZZ_TARGETS = \
	./internal/scenario:FuzzScenarioFile \
	./internal/scenario:FuzzScenarioManifests \
	./internal/cli:FuzzNodePoolBudgets \
	./internal/insights:FuzzReadManifests \
	./internal/manifest:FuzzFastYAML \
	./internal/awsserve/twinserve:FuzzAWSServe \
	./internal/liveview:FuzzViewHandler \
	./internal/rehearse:FuzzPDBFloorAccounting

# The fuzz cache (GOCACHE/fuzz) is cleared first: the fuzzer adds every
# interesting input to it and replays them all before it fuzzes, so on a
# machine that runs `make fuzz` again and again the replay alone outgrows
# FUZZTIME (aws-serve's 11 seeds had become 75 inputs, 9 s of replay).
fuzz:
	$(GO) clean -fuzzcache
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; target=$${t##*:}; \
		echo "fuzz $$target in $$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) -parallel 1 $$pkg; \
	done

vet:
	$(GO) vet ./...
	$(GO) vet -tags lab ./...
	$(GO) vet -tags browser ./internal/htmlreport/ ./internal/liveview/ ./internal/browsertest/

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# The performance figures of the README (minutes on 2 cores).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m ./internal/rehearse/
	$(GO) test -run '^$$' -bench . ./internal/disruption/
	$(GO) test -run '^$$' -bench . -benchtime 3x ./internal/insights/
