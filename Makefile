# Herald. `make run` starts a server on the SQLite store (data in herald-data/); `make test`
# runs every check CI runs.
GO          ?= go
PKGS        := ./...
FERRET_DIR  := test/ferret
DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
export DATABASE_URL

.PHONY: run test check fmt-check vet wire-check unit ferret interop generate lint bench bench-go build clean

## run: start Herald at http://127.0.0.1:8080 on the embedded SQLite store (data kept in ./herald-data)
run:
	$(GO) run ./cmd/herald serve

## build: build the binary into bin/herald
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/herald ./cmd/herald

## test: formatting, vet, generated code, and every test with the race detector
test: fmt-check vet wire-check unit ferret

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^$(FERRET_DIR)/' ) $$(ls $(FERRET_DIR)/*.go 2>/dev/null)); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# wire_gen.go must match wire.go: regenerate with `make generate`.
wire-check:
	@$(GO) tool wire diff ./bootstrap >/dev/null || { echo "bootstrap/wire_gen.go is stale: run make generate"; $(GO) tool wire diff ./bootstrap; exit 1; }

# 30 minutes a package, not go test's 10: the Mongo suite on the
# MongoDB-compatible server .ci/run starts (FerretDB v2 on DocumentDB) takes
# 5 to 10 minutes on a loaded 2-core machine.
unit:
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

# The Mongo adapter against embedded FerretDB, in its own module so the
# production binary never links FerretDB.
ferret:
	@if [ -f $(FERRET_DIR)/go.mod ]; then cd $(FERRET_DIR) && $(GO) vet ./... && $(GO) test -race -count=1 ./...; fi

## interop: federate with a real GoToSocial and a real snac (HERALD_GOTOSOCIAL, HERALD_SNAC, default ../shared/peers/...)
## on the memory, SQLite and PostgreSQL stores; lists every scenario by name (a few minutes; needs curl and jq)
interop:
	HERALD_INTEROP=1 $(GO) test -count=1 -v -timeout 20m ./test/interop/

## generate: regenerate bootstrap/wire_gen.go
generate:
	$(GO) tool wire gen ./bootstrap

## lint: vet and gofmt
lint: fmt-check vet

## bench: measure and rewrite docs/benchmarks.md and its plots (about 14 min; run on a quiet machine). The inbox
## section builds the baseline revision in a temporary git worktree (-inbox-baseline) and the working tree; one
## section alone: go run ./test/bench/heraldbench -only inbox -out /tmp/inbox.md
bench:
	$(GO) run ./test/bench/heraldbench -out docs/benchmarks.md -plots docs/bench

## bench-go: the packages' own go test benchmarks (lease and enqueue per store)
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...

clean:
	rm -rf bin
