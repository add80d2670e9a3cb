// Package proof holds the proofs of Herald's concurrency and crash
// guarantees on a real PostgreSQL (issue 5, SPEC §2, §3 and §9), and the
// kill -9 proof on SQLite (issue 16), as tests that fail when a guarantee
// breaks. They start real OS processes: the helper program in ./worker
// (the delivery engine over the PostgreSQL stores, or with -data-dir the
// SQLite ones) and the herald binary itself, both built once per run of the
// package, and they send traffic only to loopback listeners the tests own.
// docs/proofs-postgres.md and docs/storage.md record what they measured.
package proof
