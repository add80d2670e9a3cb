// Package postgres holds Herald's PostgreSQL schema migrations as ordered
// golang-migrate SQL files (NNN_name.up.sql / NNN_name.down.sql), embedded so
// the binary carries its schema. adapters/postgres runs them (MigrateUp) under
// golang-migrate's advisory lock and then ensures the indexes every start.
//
// What each step does, and what its down step can and cannot undo:
//
//   - 001_dedupe_and_reserve_names: creates the legacy tables when absent (so
//     a fresh database and one the old server left behind both work), removes
//     the duplicates races left in them, creates their unique indexes, and
//     fills reserved_names from every avatar, group and the fixed list. Down
//     drops reserved_names and those unique indexes; the deleted duplicates
//     cannot be restored (they were copies of rows that remain).
//   - 002_delivery_queue: jobs and remote_instances. Down drops both (and so
//     the queue: only for a rollback to the old serial worker).
//   - 003_tokens: bearer tokens. Down drops them (every session ends).
//   - 004_move_legacy_deliveries: moves pending rows of the legacy deliveries
//     table into jobs and marks them abandoned. Down gives back to the old
//     worker the moved rows whose job is still queued; what the new engine
//     is sending or has finished stays with it.
//   - 005_host_slots: the per-host slot counts that make the per-host cap
//     hold across processes, filled from the leased jobs. Down drops them;
//     the jobs are untouched.
//   - 006_post_edits_and_reactions: when a post's author last edited it
//     (posts and dm_posts), NULL for one never edited; and reactions, the
//     Likes and Announces of posts. Down drops both; the edited content
//     stays.
//   - 009_bodies: each activity body once in bodies (content address, hex
//     SHA-256), jobs.payload replaced by jobs.body_id. Down puts every body
//     back into its jobs' payload and drops bodies.
//   - 010_fan_outs: the durable fan-out records that make a fan-out to many
//     followers resumable. Down drops them (the jobs stay; an unfinished
//     fan-out is not resumed by an older version).
//   - 015_narrow_jobs: a fan-out's activity id, sender, key id and body id
//     once in job_activities, named by each job's activity (a bigint); the
//     dedupe key as its 32 bytes. Down copies them back into every job and
//     the key back to hex.
//   - 016_short_dedupe_keys: the dedupe key's unique column keeps the first
//     16 bytes of the key; the whole key is derived again from the activity
//     id and the inbox, or kept in dedupe_full where it is not that one.
//     Down puts the 32 bytes back (of a job whose activity row is missing,
//     only the 16 known).
//   - 017_inbox_refs: jobs.inbox becomes jobs.inbox_ref, the inbox's path
//     where it is https:// and the job's host, the whole URL otherwise;
//     herald_inbox(inbox_ref, host) gives it back. Down puts the whole URL
//     back into jobs.inbox.
//   - 018_uuid_job_ids: jobs.id and jobs.dedupe_key become uuid (16 bytes
//     each); an id that is not a UUID (no process made one) becomes the
//     UUID of its MD5. Down turns both back into text and bytea; such an
//     id keeps its MD5's UUID.
//   - 019_lean_queue: jobs.seq goes (the queue's index is on run_at alone,
//     jobs_queue_idx, which B-tree deduplication keeps once per run_at),
//     and an empty lease owner, lease token or last error is NULL. Down
//     numbers the jobs in seq again in their physical order and puts the
//     empty strings back.
//   - 020_key_owners_and_tombstones: trust (SPEC §10): one cached actor
//     per key id (deletes the copies claiming a key on another host, then
//     all but the newest copy of each key id, and makes the key id
//     unique), and the tombstones of deleted remote objects and actors.
//     Down puts the plain index back and drops the tombstones; the deleted
//     copies are fetched again when needed.
//   - 021_moderation: moderation (SPEC §11): an account's status (active
//     or pending, the accounts stored before active) and the reason given
//     with a sign-up; the domain blocks and allows, one per domain; the
//     reports, one per Flag. Down drops them all: a pending sign-up
//     becomes an account that signs in, so approve or reject the pending
//     ones first, and export the blocks to keep them.
//   - 022_deleted_personas: deleted personas (SPEC §3, §11): when an
//     avatar was retired (its Delete going out, its key kept) and when the
//     actor holding a reserved name was deleted (the name stays taken for
//     good). Down drops both marks: a persona still retired comes back
//     live, so let deletions finish first.
//   - 026_ready_hosts: host_slots.ready_at, each host's oldest queued
//     run_at (a lower bound; NULL without queued jobs), indexed where set,
//     so that a lease reads the ready hosts and not the backlog of hosts at
//     their cap (issue 36). Down drops the column and its index.
//   - 028_job_counts: job_counts, the jobs' counts by state and host as
//     signed deltas that statement triggers add with every write to jobs
//     (filled from the jobs there), summed at read and folded by the
//     reaper, so the operator's queue view and the gauge read no jobs
//     (issue 36). Down drops them; the jobs are untouched.
//   - 029_notifications: the client API's notifications (issue 34),
//     unique by (recipient, dedupe key), read by recipient and id (in
//     byte order). Down drops them: every persona's notifications are
//     lost.
//
// Each file runs in one transaction, so a failed step changes nothing.
package postgres

import "embed"

// FS holds the migration files at its root, for golang-migrate's iofs source.
//
//go:embed *.sql
var FS embed.FS
