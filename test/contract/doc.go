// Package contract holds one exported suite per repository port. Every
// adapter's tests call each suite with a factory for a fresh, empty store;
// a behaviour that one adapter has and another lacks fails here. A suite
// runs each case as a named subtest; an adapter that cannot run a case on the
// server at hand (FerretDB has no atomic findAndModify under concurrency, for
// one) passes Skip with the case name and the reason, and the case is
// reported as skipped with that reason, naming what stayed unverified.
package contract
