# Herald. `make run` starts a server on the SQLite store (data in herald-data/); `make test`
# runs every check CI runs.
GO          ?= go
PKGS        := ./...
FERRET_DIR  := test/ferret
DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
export DATABASE_URL
# pipefail: a test run piped into testreport keeps go test's exit status.
SHELL       := /bin/bash
TESTREPORT  := bin/testreport

.PHONY: run screenshots test check fmt-check vet wire-check unit unit-run ferret ferret-run testreport interop generate lint bench bench-go build clean

## run: start Herald at http://127.0.0.1:8080 on the embedded SQLite store (data kept in ./herald-data)
run:
	@echo "make run: building Herald first (the first build compiles every dependency: a few minutes; later builds take seconds)"
	@$(GO) build -o bin/herald ./cmd/herald
	@echo "make run: starting bin/herald serve; it logs \"herald listening\" with its address when ready (http://127.0.0.1:8080 unless HERALD_ADDR says otherwise); Ctrl-C stops it"
	@exec bin/herald serve

## build: build the binary into bin/herald
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/herald ./cmd/herald

## test: formatting, vet, generated code, and every test with the race detector; ends with every
## failed and skipped test and what each skip leaves unverified (full events in bin/test-*.json)
test: fmt-check vet wire-check testreport
	@status=0; \
	$(MAKE) --no-print-directory unit-run || status=1; \
	$(MAKE) --no-print-directory ferret-run || status=1; \
	$(TESTREPORT) -summary bin/test-unit.json bin/test-ferret.json; \
	exit $$status

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^$(FERRET_DIR)/' ) $$(ls $(FERRET_DIR)/*.go 2>/dev/null)); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# wire_gen.go must match wire.go: regenerate with `make generate`.
wire-check:
	@$(GO) tool wire diff ./bootstrap >/dev/null || { echo "bootstrap/wire_gen.go is stale: run make generate"; $(GO) tool wire diff ./bootstrap; exit 1; }

# 45 minutes a package, not go test's 10: the Mongo suite on the
# MongoDB-compatible server .ci/run starts (FerretDB v2 on DocumentDB) takes
# 5 to 10 minutes on a loaded 2-core machine, and test/proof, whose proofs
# wait while their jobs move rather than to a deadline, about 15 to 20.
# go test -json goes through testreport, which prints what go test prints
# without -v and keeps the events for the summary of skips.
unit: testreport
	@status=0; $(MAKE) --no-print-directory unit-run || status=1; $(TESTREPORT) -summary bin/test-unit.json; exit $$status

unit-run:
	@rm -f bin/test-unit.json
	@set -o pipefail; $(GO) test -json -race -count=1 -timeout 45m $(PKGS) 2>&1 | $(TESTREPORT) -save bin/test-unit.json

# The Mongo adapter against embedded FerretDB, in its own module so the
# production binary never links FerretDB.
ferret: testreport
	@status=0; $(MAKE) --no-print-directory ferret-run || status=1; $(TESTREPORT) -summary bin/test-ferret.json; exit $$status

ferret-run:
	@rm -f bin/test-ferret.json
	@if [ -f $(FERRET_DIR)/go.mod ]; then cd $(FERRET_DIR) && $(GO) vet ./... && \
	  set -o pipefail && $(GO) test -json -race -count=1 ./... 2>&1 | $(CURDIR)/$(TESTREPORT) -save $(CURDIR)/bin/test-ferret.json; fi

# testreport (test/testreport) reads go test -json: progress while the
# tests run, the failed and skipped tests at the end.
testreport:
	@$(GO) build -o $(TESTREPORT) ./test/testreport

## interop: federate with a real GoToSocial and a real snac (their directories: HERALD_GOTOSOCIAL, HERALD_SNAC; test/interop/doc.go)
## on the memory, SQLite and PostgreSQL stores; lists every scenario by name (a few minutes; needs curl and jq)
interop:
	HERALD_INTEROP=1 $(GO) test -count=1 -v -timeout 40m ./test/interop/

## screenshots: retake docs/admin.png and docs/admin-moderation.png from the operator page in headless Chromium
screenshots:
	HERALD_UPDATE_SCREENSHOTS=1 $(GO) test -count=1 -run 'TestPageInChromium|TestModerationPageInChromium' ./adapters/httpapi/admin/

## generate: regenerate bootstrap/wire_gen.go
generate:
	$(GO) tool wire gen ./bootstrap

## lint: vet and gofmt
lint: fmt-check vet

## bench: measure and rewrite docs/benchmarks.md and its plots (about 45 min; run on a quiet machine). The inbox
## section builds the baseline revision in a temporary git worktree (-inbox-baseline) and the working tree; the
## soak runs herald serve for 3 minutes under a busy instance's load per store and variant (the issue's 10:
## -soak-duration 10m); one section alone: go run ./test/bench/heraldbench -only inbox -out /tmp/inbox.md
bench:
	$(GO) run ./test/bench/heraldbench -out docs/benchmarks.md -plots docs/bench

## bench-go: the packages' own go test benchmarks (lease and enqueue per store)
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...

clean:
	rm -rf bin
