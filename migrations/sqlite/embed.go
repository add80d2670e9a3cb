// Package sqlite holds Herald's SQLite schema migrations as ordered
// golang-migrate SQL files (NNN_name.up.sql / NNN_name.down.sql), embedded so
// the binary carries its schema. adapters/sqlite runs them (MigrateUp) with
// golang-migrate's sqlite driver, each file in one transaction, while its
// process holds the data directory's lock, and then ensures the indexes on
// every start.
//
//   - 001_identity_and_names: users, local actors (with their keys), cached
//     remote actors, posts, direct posts, follows and reserved_names, seeded
//     with the fixed system names. Down drops them all.
//   - 002_delivery_queue: jobs and remote_instances. Down drops both, and
//     with them the queue.
//   - 003_tokens: bearer tokens. Down drops them (every session ends).
//   - 004_host_slots: the per-host slot counts the lease reads to keep the
//     per-host cap (PostgreSQL's 005), filled from the leased jobs and kept
//     by triggers on jobs. Down drops the table and the triggers; the jobs
//     are untouched.
//   - 005_post_edits_and_reactions: PostgreSQL's 006, when a post was last
//     edited, and the Likes and Announces of posts. Down drops both; the
//     edited content stays.
//   - 007_bodies: each activity body once in bodies (content address,
//     herald_sha256_hex, registered by adapters/sqlite), jobs.payload
//     replaced by jobs.body_id. Down puts every body back into its jobs'
//     payload and drops bodies.
//   - 008_fan_outs: PostgreSQL's 010, the durable fan-out records that make
//     a fan-out to many followers resumable. Down drops them; the jobs stay.
//   - 011_key_owners_and_tombstones: PostgreSQL's 020, trust (SPEC §10):
//     one cached actor per key id (deletes the copies claiming a key on
//     another host, then all but the newest copy of each key id, and makes
//     the key id unique), and the tombstones of deleted remote objects and
//     actors. Down puts the plain index back and drops the tombstones; the
//     deleted copies are fetched again when needed.
//   - 012_moderation: PostgreSQL's 021, moderation (SPEC §11): an
//     account's status (active or pending, the accounts stored before
//     active) and the reason given with a sign-up; the domain blocks and
//     allows, one per domain; the reports, one per Flag. Down drops them
//     all: a pending sign-up becomes an account that signs in, so approve
//     or reject the pending ones first, and export the blocks to keep
//     them.
//   - 013_deleted_personas: PostgreSQL's 022, deleted personas (SPEC §3,
//     §11): when an avatar was retired (its Delete going out, its key
//     kept) and when the actor holding a reserved name was deleted (the
//     name stays taken for good). Down drops both marks: a persona still
//     retired comes back live, so let deletions finish first.
//   - 019_job_counts: the queue's counts by state and host (job_counts),
//     filled from the jobs and kept by triggers on jobs, which the
//     operator's queue view and the metrics read instead of the jobs
//     (issue 36). No counterpart on the other stores. Down drops the table
//     and the triggers; the jobs are untouched.
//   - 020_notifications: PostgreSQL's 029, the client API's notifications
//     (issue 34), unique by (recipient, dedupe key), read by recipient and
//     id. Down drops them: every persona's notifications are lost.
//
// 001 to 003 hold what PostgreSQL's 001 to 003 hold. PostgreSQL's and
// Mongo's 004 (moving the old serial worker's deliveries into jobs) has no
// counterpart: no old server ever wrote to SQLite. A later migration takes
// the next free number here, whatever its number on the other stores (so
// PostgreSQL's 005 is 004 here).
package sqlite

import "embed"

// FS holds the migration files at its root, for golang-migrate's iofs source.
//
//go:embed *.sql
var FS embed.FS
