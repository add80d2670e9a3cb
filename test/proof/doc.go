// Package proof holds the proofs of Herald's concurrency and crash
// guarantees on a real PostgreSQL (issue 5, SPEC §2, §3 and §9), the same
// proofs on the Mongo store (issue 18: MONGODB_URI, in CI FerretDB v2 on
// DocumentDB), and the kill -9 proof on SQLite (issue 16), as tests that
// fail when a guarantee breaks. They start real OS processes: the helper
// program in ./worker (the delivery engine over the stores -store names)
// and the herald binary itself, both built once per run of the package,
// and they send traffic only to loopback listeners the tests own. The
// checks read the store through a small per-store inspector (proofStore).
// docs/proofs-postgres.md, docs/proofs-mongo.md and docs/storage.md record
// what they measured.
package proof
