# Ladder's build and test entry points. `make test` is the whole test suite:
# the README and .ci/run call exactly it.
GO ?= go

.PHONY: test build bench vet fmt-check

build:
	$(GO) build -o bin/ladder ./cmd/ladder

# The whole test suite: formatting, vet, every unit and scenario test, and
# one quick pass of each benchmark so they cannot rot.
test: fmt-check vet
	$(GO) test ./...
	$(GO) test -run '^$$' -bench 'AllowedByReason|Changes|RehearseDrift200Nodes|RehearseMix200Nodes' -benchtime 1x ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# The performance figures of the README (minutes on 2 cores).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m ./internal/rehearse/
	$(GO) test -run '^$$' -bench . ./internal/disruption/
