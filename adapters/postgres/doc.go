// Package postgres implements every repository port on PostgreSQL with
// jackc/pgx/v5 (pgxpool): the second production store, which proves the
// ports are swappable on a real database.
//
// Leasing is one UPDATE over a FOR UPDATE SKIP LOCKED sub-select, fenced by
// the lease token; reservations and every other uniqueness are arbitrated by
// unique indexes, whose violations interpretError turns into domain
// sentinels by constraint name; finished jobs are removed by Purge, which
// the engine's retention loop calls (PostgreSQL has no TTL index). Enqueue
// sends NOTIFY herald_jobs in the same transaction, and Waker listens for it
// on a dedicated connection so idle workers of every process wake at once.
//
// The schema lives in migrations/postgres; bootstrap calls Connect,
// MigrateUp and EnsureIndexes, in that order, before building the stores.
// Every store keeps times as timestamptz (microseconds) and returns them in
// UTC; an optional time that is zero is stored as NULL.
package postgres
