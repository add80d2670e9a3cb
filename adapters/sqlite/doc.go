// Package sqlite implements every repository port on one SQLite file with
// modernc.org/sqlite, a pure-Go SQLite (no cgo: CGO_ENABLED=0 builds stay
// static): Herald's durable embedded store and the default of `herald
// serve`, for an instance on one machine without a database server.
//
// SQLite has one writer at a time, so a DB holds one writer connection,
// through which every write of the process goes (the writes queue in
// database/sql instead of failing with SQLITE_BUSY), and a pool of
// query_only readers that read the last committed state beside it (WAL
// mode). A lease is one UPDATE ... RETURNING over a batch of the oldest due
// jobs within the per-host cap, which SQLite runs atomically under its
// write lock; the host_slots counts the cap reads are kept by triggers in
// the statements that move jobs into and out of leased. A batch of
// settlements is one write transaction, each fenced by its lease token;
// reservations and every other
// uniqueness are arbitrated by unique indexes, whose violations
// interpretError turns into domain sentinels by table and column. Finished
// jobs are removed by Purge, which the engine's retention loop calls.
//
// A data directory belongs to one serving process: Open takes an exclusive
// flock on its herald.lock, so a second `herald serve` on the same
// directory is refused at start with an error naming the holder (the
// engine's in-process wake-ups reach one process only).
// Operators' commands and `herald backup` open it beside the server
// (OpenShared, Backup), as extra SQLite connections.
//
// The schema lives in migrations/sqlite; bootstrap calls Open, MigrateUp
// and EnsureIndexes, in that order, before building the stores. Times are
// INTEGER Unix nanoseconds, returned in UTC.
package sqlite
