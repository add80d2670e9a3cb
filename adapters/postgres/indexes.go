package postgres

import (
	"context"
	"errors"
	"fmt"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// index is one index EnsureIndexes guarantees, under a stable name.
type index struct {
	name, ddl string
}

// indexes is every index of SPEC §4, plus the few PostgreSQL needs beyond
// it, in one list. Names are stable: the migrations create some of the same
// (the unique keys their ON CONFLICT clauses need) and 001's down step drops
// some by name.
var indexes = []index{
	// Unique (SPEC §4).
	{"posts_object_uri_key", `CREATE UNIQUE INDEX IF NOT EXISTS posts_object_uri_key ON posts (object_uri)`},
	{"dm_posts_object_uri_key", `CREATE UNIQUE INDEX IF NOT EXISTS dm_posts_object_uri_key ON dm_posts (object_uri)`},
	// A foreign actor's URI, with its inboxes beside it: a fan-out reads
	// the inboxes of a thousand followers a page (InboxesOf), and with them
	// in the index that is an index-only scan, not a thousand random reads
	// of rows that each carry a public key (about 500 bytes). Measured with
	// 1,000,000 cached actors: 1.4 instead of 4.2 ms of server time a
	// page; the index is 100 instead of 56 MB. It replaces the plain unique
	// index of migration 001 (retired below), which ON CONFLICT (actor_uri)
	// used the same way.
	{"foreign_avatars_actor_uri_inboxes_key", `CREATE UNIQUE INDEX IF NOT EXISTS foreign_avatars_actor_uri_inboxes_key ON foreign_avatars (actor_uri) INCLUDE (inbox, shared_inbox)`},
	{"followers_pair_key", `CREATE UNIQUE INDEX IF NOT EXISTS followers_pair_key ON followers (follower_uri, followed_uri)`},
	// RootToAvatar: the link is avatars.root_user_id, so one avatar has one
	// owner by construction; the index states the pair's uniqueness and
	// serves AvatarsOf.
	{"avatars_root_to_avatar_key", `CREATE UNIQUE INDEX IF NOT EXISTS avatars_root_to_avatar_key ON avatars (root_user_id, id)`},
	{"root_users_user_name_key", `CREATE UNIQUE INDEX IF NOT EXISTS root_users_user_name_key ON root_users (user_name)`},
	{"reserved_names_pkey", `CREATE UNIQUE INDEX IF NOT EXISTS reserved_names_pkey ON reserved_names (name)`},
	{"jobs_dedupe_key_key", `CREATE UNIQUE INDEX IF NOT EXISTS jobs_dedupe_key_key ON jobs (dedupe_key)`},
	{"remote_instances_pkey", `CREATE UNIQUE INDEX IF NOT EXISTS remote_instances_pkey ON remote_instances (host)`},
	// A tombstone's URI (SPEC §10; migration 020): the table's primary key.
	{"tombstones_pkey", `CREATE UNIQUE INDEX IF NOT EXISTS tombstones_pkey ON tombstones (uri)`},
	// Unique, beyond SPEC §4 (SPEC §11; migration 021): one block and one
	// allow per domain (the tables' primary keys), one report per Flag.
	{"domain_blocks_pkey", `CREATE UNIQUE INDEX IF NOT EXISTS domain_blocks_pkey ON domain_blocks (domain)`},
	{"domain_allows_pkey", `CREATE UNIQUE INDEX IF NOT EXISTS domain_allows_pkey ON domain_allows (domain)`},
	{"reports_activity_id_key", `CREATE UNIQUE INDEX IF NOT EXISTS reports_activity_id_key ON reports (activity_id)`},
	// Unique, beyond SPEC §4 (SPEC §11 "Personas"; migration 023): one
	// block and one mute per (actor, target), the table's primary key.
	{"actor_blocks_pkey", `CREATE UNIQUE INDEX IF NOT EXISTS actor_blocks_pkey ON actor_blocks (actor_uri, target_uri, kind)`},
	// Unique, beyond SPEC §4: the ActorStore refuses a second avatar or
	// group of one name (domain.ErrNameTaken) even if a caller skipped the
	// NameRegistry.
	{"avatars_name_key", `CREATE UNIQUE INDEX IF NOT EXISTS avatars_name_key ON avatars (name)`},
	{"groups_name_key", `CREATE UNIQUE INDEX IF NOT EXISTS groups_name_key ON groups (name)`},
	// Unique where SPEC §4 has it plain: a key id belongs to one cached
	// actor (SPEC §10; migration 020); an empty key id claims nothing.
	{"foreign_avatars_public_key_id_key", `CREATE UNIQUE INDEX IF NOT EXISTS foreign_avatars_public_key_id_key ON foreign_avatars (public_key_id) WHERE public_key_id <> ''`},

	// Plain (SPEC §4).
	{"posts_author_published_idx", `CREATE INDEX IF NOT EXISTS posts_author_published_idx ON posts (author_uri, published DESC)`},
	{"posts_group_published_idx", `CREATE INDEX IF NOT EXISTS posts_group_published_idx ON posts (group_uri, published DESC)`},
	// The public posts newest first (PostStore.PublicPosts: the client
	// API's public timelines).
	// A post's replies (PostStore.Replies: a status's context).
	{"posts_in_reply_to_idx", `CREATE INDEX IF NOT EXISTS posts_in_reply_to_idx ON posts (in_reply_to, published) WHERE in_reply_to <> ''`},
	{"posts_visibility_published_idx", `CREATE INDEX IF NOT EXISTS posts_visibility_published_idx ON posts (visibility, published DESC)`},
	{"dm_posts_participants_key_idx", `CREATE INDEX IF NOT EXISTS dm_posts_participants_key_idx ON dm_posts (participants_key, published DESC)`},
	// The queue's (state, RunAt) and (host, state) indexes of SPEC §4, and
	// FinishedAt's, as partial indexes, each holding only the rows its
	// queries read. Every lease and every settlement moves a job to a state
	// another index covers, and PostgreSQL adds an entry to every index whose
	// predicate the new row version meets (the update cannot be HOT: state
	// is indexed). With full indexes that was 5 entries per write, 10 per
	// job; with these, the lease adds 3 (jobs_pkey, jobs_dedupe_key_key,
	// jobs_lease_until_idx) and a success 3 (the keys, jobs_finished_idx).
	// A week of finished jobs no longer sits in the queue's indexes either.
	//
	// The queued jobs in run_at order: a suspension's range
	// (EndDomainJobs; the lease's until migration 026). The jobs of a
	// fan-out's page share a run_at, which B-tree deduplication
	// keeps once with a list of row pointers, about 8 bytes a job where a
	// distinct tie-break column cost 32 (migration 019); within a run_at
	// the scan goes in the rows' physical order.
	{"jobs_queue_idx", `CREATE INDEX IF NOT EXISTS jobs_queue_idx ON jobs (run_at) WHERE state = 'queued'`},
	// The reaper's range: leases by their end. The predicate is on
	// lease_until, not state = 'leased', so that the settlement's
	// "state = 'leased'" (a lookup by id) never looks like a reason to scan
	// it; lease_until is set exactly while a job is leased (jobs_lease_check
	// and every statement that ends a lease).
	{"jobs_lease_until_idx", `CREATE INDEX IF NOT EXISTS jobs_lease_until_idx ON jobs (lease_until) WHERE lease_until IS NOT NULL`},
	// A host's queued jobs: the lease's range, host by host (leaseSQL),
	// and DeferHost and ResumeHost (a quarantine).
	{"jobs_queued_host_idx", `CREATE INDEX IF NOT EXISTS jobs_queued_host_idx ON jobs (host, run_at) WHERE state = 'queued'`},
	// The hosts that are ready, by their oldest queued job (migration
	// 026): the lease reads them first (readyFrom), one entry per host.
	{"host_slots_ready_idx", `CREATE INDEX IF NOT EXISTS host_slots_ready_idx ON host_slots (ready_at) WHERE ready_at IS NOT NULL`},
	// Retention: Purge's range (PostgreSQL has no TTL index).
	{"jobs_finished_idx", `CREATE INDEX IF NOT EXISTS jobs_finished_idx ON jobs (finished_at) WHERE finished_at IS NOT NULL`},
	// Activities and bodies: Purge asks whether any job still refers to an
	// activity, and any activity to a body; CountsOfBody reads both. A
	// fan-out's jobs share one activity, which B-tree deduplication keeps
	// as one key with a list of row pointers: a few bytes per job.
	{"jobs_activity_idx", `CREATE INDEX IF NOT EXISTS jobs_activity_idx ON jobs (activity)`},
	{"job_activities_body_id_idx", `CREATE INDEX IF NOT EXISTS job_activities_body_id_idx ON job_activities (body_id)`},
	// Plain, beyond SPEC §4: a booster's boosts newest first (BoostsBy),
	// and a post's boosts, which DeletePost removes with it.
	{"boosts_actor_created_idx", `CREATE INDEX IF NOT EXISTS boosts_actor_created_idx ON boosts (actor_uri, created_at DESC, object_uri COLLATE "C")`},
	{"boosts_object_uri_idx", `CREATE INDEX IF NOT EXISTS boosts_object_uri_idx ON boosts (object_uri)`},
	// Plain, beyond SPEC §4: an actor's mentions newest first
	// (PostsMentioning); a post's own are post_mentions' primary key.
	{"post_mentions_actor_idx", `CREATE INDEX IF NOT EXISTS post_mentions_actor_idx ON post_mentions (actor_uri, published DESC, object_uri COLLATE "C")`},
	// The public posts of a hashtag newest first (PostsTagged); a post's
	// own are post_hashtags' primary key (migration 025).
	{"post_hashtags_tag_idx", `CREATE INDEX IF NOT EXISTS post_hashtags_tag_idx ON post_hashtags (tag, published DESC, object_uri COLLATE "C")`},
	// Plain, beyond SPEC §4: what DeleteActorContent removes of an actor
	// besides its posts (posts_author_published_idx) and boosts
	// (boosts_actor_created_idx): its direct posts and its reactions.
	{"dm_posts_author_idx", `CREATE INDEX IF NOT EXISTS dm_posts_author_idx ON dm_posts (author_uri)`},
	{"reactions_actor_idx", `CREATE INDEX IF NOT EXISTS reactions_actor_idx ON reactions (actor_uri)`},
	// Fan-outs (not in SPEC §4): Claim takes the oldest unfinished one, and
	// operators list the newest first.
	{"fan_outs_unfinished_idx", `CREATE INDEX IF NOT EXISTS fan_outs_unfinished_idx ON fan_outs (created_at, id) WHERE NOT done`},
	{"fan_outs_created_at_idx", `CREATE INDEX IF NOT EXISTS fan_outs_created_at_idx ON fan_outs (created_at DESC, id DESC)`},
	// Plain, beyond SPEC §4: the reports newest first (Reports).
	{"reports_created_at_idx", `CREATE INDEX IF NOT EXISTS reports_created_at_idx ON reports (created_at DESC, id DESC)`},
	// Plain, beyond SPEC §4: the accounts of one status oldest first
	// (UsersByStatus: the sign-ups awaiting approval).
	{"root_users_status_created_idx", `CREATE INDEX IF NOT EXISTS root_users_status_created_idx ON root_users (status, created_at, id COLLATE "C")`},
	// Plain, beyond SPEC §4: the followers collection, paged by follower URI
	// in byte order.
	{"followers_followed_state_idx", `CREATE INDEX IF NOT EXISTS followers_followed_state_idx ON followers (followed_uri, state, follower_uri COLLATE "C")`},
	// Partial, beyond SPEC §4 (migration 022): the deleted personas whose
	// deletion is still to finish (RetiredAvatars), without reading every
	// avatar and its key.
	{"avatars_retired_idx", `CREATE INDEX IF NOT EXISTS avatars_retired_idx ON avatars (id COLLATE "C") WHERE deleted_at IS NOT NULL`},
	// The client API's (migration 027): expired grants are swept by
	// expiry, and a reused authorization code revokes its tokens.
	{"oauth_grants_expires", `CREATE INDEX IF NOT EXISTS oauth_grants_expires ON oauth_grants (expires_at)`},
	{"oauth_tokens_grant", `CREATE INDEX IF NOT EXISTS oauth_tokens_grant ON oauth_tokens (grant_hash) WHERE grant_hash <> ''`},
	// The notifications (migration 029): a persona's by id, and a deleted
	// remote actor's.
	{"notifications_recipient_idx", `CREATE INDEX IF NOT EXISTS notifications_recipient_idx ON notifications (recipient, id)`},
	{"notifications_actor_idx", `CREATE INDEX IF NOT EXISTS notifications_actor_idx ON notifications (actor_uri)`},
	// The conversations (migration 031): a persona's by last status.
	{"conversations_persona_last_idx", `CREATE INDEX IF NOT EXISTS conversations_persona_last_idx ON conversations (persona, last_status_id)`},
}

// retired are indexes an earlier version made that the ones above replace
// (full indexes on the queue, issue 13; the foreign actors' plain unique
// index, issue 15; the plain index on key ids, by the unique one of
// migration 020): EnsureIndexes drops them, after it made their
// replacements, so that nothing maintains them any more. A rollback to an
// earlier version makes them again at its start.
var retired = []string{"jobs_state_run_at_idx", "jobs_host_state_idx", "jobs_finished_at_idx", "foreign_avatars_actor_uri_key",
	"foreign_avatars_public_key_id_idx"}

// resetJobsFillfactor gives jobs back PostgreSQL's default fillfactor
// (100) where an earlier version set 70. The room it left in each page let
// a row's next version (a job is written three times: enqueued, leased,
// settled; none of them HOT, state is indexed) stay in its page, which
// halved the WAL while the row carried its activity (1,700 bytes a drained
// job instead of 3,400). Since the narrow row (migration 015) it no longer
// pays: on the 20,000-job drain, fillfactor 100 against 70, three pairs of
// runs, the machine's CPU per job 258/259/266 against 270/310/265 µs at 8
// workers and 197/198/199 against 202/192/202 at 32, and 1% more WAL
// (2,469 against 2,441 bytes a job); a queued job takes about 90 bytes
// less on disk (issue 15). The brief SHARE UPDATE EXCLUSIVE lock is taken
// only when the option is set; the pages already written keep their room
// until they are rewritten.
func resetJobsFillfactor(ctx context.Context, tx pgx.Tx) error {
	var set bool
	err := tx.QueryRow(ctx, `
SELECT COALESCE(EXISTS (SELECT 1 FROM unnest(c.reloptions) o WHERE o LIKE 'fillfactor=%'), false)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relname = 'jobs' AND c.relkind = 'r'`).Scan(&set)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // no jobs table (migrations not run): nothing to reset
	}
	if err != nil {
		return fmt.Errorf("jobs fillfactor: %w", err)
	}
	if !set {
		return nil
	}
	if _, err := tx.Exec(ctx, `ALTER TABLE jobs RESET (fillfactor)`); err != nil {
		return fmt.Errorf("jobs fillfactor: %w", err)
	}
	return nil
}

// ensureLeaseFunc creates the lease function (leaseFunc in jobs.go) when
// it is missing or its source differs from this build's. It touches no
// table.
func ensureLeaseFunc(ctx context.Context, tx pgx.Tx) error {
	var src string
	err := tx.QueryRow(ctx, `
SELECT p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = current_schema() AND p.proname = $1`, leaseFunc).Scan(&src)
	if err == nil && src == leaseFuncBody {
		return nil
	}
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("lease function: %w", err)
	}
	if _, err := tx.Exec(ctx, leaseFuncDDL); err != nil {
		return fmt.Errorf("lease function: %w", err)
	}
	return nil
}

// IndexNames lists the indexes EnsureIndexes guarantees, for tests and
// operators.
func IndexNames() []string {
	out := make([]string, len(indexes))
	for i, ix := range indexes {
		out[i] = ix.name
	}
	return out
}

// EnsureIndexes creates every index that is missing, and leaves the others
// alone, resets the jobs table's fillfactor where an earlier version set
// one (resetJobsFillfactor) and creates the lease function (leaseFunc);
// run it on every start, after MigrateUp. It holds a transaction-level
// advisory lock so two processes starting together do not race on one name,
// and creates only what the catalog lacks (and drops only the retired
// indexes it still has), so a normal start takes no lock on any table. A
// unique index that the data violates fails, naming the index and the
// duplicate key (an operator must remove the duplicates first; 001
// did that for the keys races duplicated).
func EnsureIndexes(ctx context.Context, pool *pgxpool.Pool) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.herald_ensure_indexes'))`); err != nil {
			return err
		}
		have, err := query(ctx, tx, scanText, `
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind = 'i'`)
		if err != nil {
			return err
		}
		exists := make(map[string]bool, len(have))
		for _, n := range have {
			exists[n] = true
		}
		for _, ix := range indexes {
			if exists[ix.name] {
				continue
			}
			if _, err := tx.Exec(ctx, ix.ddl); err != nil {
				return fmt.Errorf("index %s: %w", ix.name, err)
			}
		}
		if err := resetJobsFillfactor(ctx, tx); err != nil {
			return err
		}
		if err := ensureLeaseFunc(ctx, tx); err != nil {
			return err
		}
		for _, name := range retired {
			if !exists[name] {
				continue
			}
			if _, err := tx.Exec(ctx, `DROP INDEX `+pgx.Identifier{name}.Sanitize()); err != nil {
				return fmt.Errorf("retired index %s: %w", name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: ensure indexes: %w", interpretError(err))
	}
	return nil
}
