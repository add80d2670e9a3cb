package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// index is one index EnsureIndexes guarantees, under a stable name.
type index struct {
	name, ddl string
}

// indexes is every index of SPEC §4, plus the few this store needs beyond
// it, in one list. The unique ones are also created by the migrations
// (the stores' ON CONFLICT clauses need them), under the same names, so
// here they are a no-op unless someone dropped one.
var indexes = []index{
	// Unique (SPEC §4).
	{"posts_object_uri_key", `CREATE UNIQUE INDEX IF NOT EXISTS posts_object_uri_key ON posts (object_uri)`},
	{"dm_posts_object_uri_key", `CREATE UNIQUE INDEX IF NOT EXISTS dm_posts_object_uri_key ON dm_posts (object_uri)`},
	{"foreign_avatars_actor_uri_key", `CREATE UNIQUE INDEX IF NOT EXISTS foreign_avatars_actor_uri_key ON foreign_avatars (actor_uri)`},
	{"followers_pair_key", `CREATE UNIQUE INDEX IF NOT EXISTS followers_pair_key ON followers (follower_uri, followed_uri)`},
	// RootToAvatar: the link is avatars.root_user_id; the index states the
	// pair's uniqueness and serves AvatarsOf.
	{"avatars_root_to_avatar_key", `CREATE UNIQUE INDEX IF NOT EXISTS avatars_root_to_avatar_key ON avatars (root_user_id, id)`},
	{"root_users_user_name_key", `CREATE UNIQUE INDEX IF NOT EXISTS root_users_user_name_key ON root_users (user_name)`},
	// reserved_names.name and remote_instances.host are their tables'
	// primary keys (SQLite's sqlite_autoindex_*), which no statement can
	// drop, so they need no line here; nor does tombstones.uri, the
	// primary key of a WITHOUT ROWID table (migration 011).
	{"jobs_dedupe_key_key", `CREATE UNIQUE INDEX IF NOT EXISTS jobs_dedupe_key_key ON jobs (dedupe_key)`},
	{"jobs_id_key", `CREATE UNIQUE INDEX IF NOT EXISTS jobs_id_key ON jobs (id)`},
	// Unique, beyond SPEC §4 (SPEC §11; migration 012): one report per
	// Flag. domain_blocks.domain and domain_allows.domain are their
	// WITHOUT ROWID tables' primary keys, as tombstones.uri.
	{"reports_activity_id_key", `CREATE UNIQUE INDEX IF NOT EXISTS reports_activity_id_key ON reports (activity_id)`},
	// Unique, beyond SPEC §4: the ActorStore refuses a second avatar or
	// group of one name (domain.ErrNameTaken) even if a caller skipped the
	// NameRegistry.
	{"avatars_name_key", `CREATE UNIQUE INDEX IF NOT EXISTS avatars_name_key ON avatars (name)`},
	{"groups_name_key", `CREATE UNIQUE INDEX IF NOT EXISTS groups_name_key ON groups (name)`},
	// Unique where SPEC §4 has it plain: a key id belongs to one cached
	// actor (SPEC §10; migration 011); an empty key id claims nothing.
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
	// The queue. Every SQLite index ends with the rowid (seq), so this one
	// yields due jobs in (run_at, seq) order; it serves Reap (state =
	// 'leased'), EndDomainJobs (the queued range) and the admin counts.
	{"jobs_state_run_at_idx", `CREATE INDEX IF NOT EXISTS jobs_state_run_at_idx ON jobs (state, run_at)`},
	// A host's queued jobs in run_at order: the lease's, host by host, and
	// the ready hosts' triggers' (migration 017); and a host's jobs of a
	// state (DeferHost, ResumeHost, RetryDead, the admin view).
	{"jobs_host_state_run_at_idx", `CREATE INDEX IF NOT EXISTS jobs_host_state_run_at_idx ON jobs (host, state, run_at)`},
	// The hosts that are ready, by their oldest queued job (migration
	// 017): the lease reads them first.
	{"host_slots_ready_idx", `CREATE INDEX IF NOT EXISTS host_slots_ready_idx ON host_slots (ready_at) WHERE ready_at IS NOT NULL`},
	// Retention: Purge's range (SQLite has no TTL index).
	{"jobs_finished_at_idx", `CREATE INDEX IF NOT EXISTS jobs_finished_at_idx ON jobs (finished_at)`},
	// Bodies: Purge asks whether any job still refers to a body.
	{"jobs_body_id_idx", `CREATE INDEX IF NOT EXISTS jobs_body_id_idx ON jobs (body_id)`},
	// Plain, beyond SPEC §4: a booster's boosts newest first (BoostsBy),
	// and a post's boosts, which DeletePost removes with it.
	{"boosts_actor_created_idx", `CREATE INDEX IF NOT EXISTS boosts_actor_created_idx ON boosts (actor_uri, created_at DESC, object_uri)`},
	{"boosts_object_uri_idx", `CREATE INDEX IF NOT EXISTS boosts_object_uri_idx ON boosts (object_uri)`},
	// Plain, beyond SPEC §4: an actor's mentions newest first
	// (PostsMentioning); a post's own are post_mentions' primary key.
	{"post_mentions_actor_idx", `CREATE INDEX IF NOT EXISTS post_mentions_actor_idx ON post_mentions (actor_uri, published DESC, object_uri)`},
	// The public posts of a hashtag newest first (PostsTagged); a post's
	// own are post_hashtags' primary key (migration 016).
	{"post_hashtags_tag_idx", `CREATE INDEX IF NOT EXISTS post_hashtags_tag_idx ON post_hashtags (tag, published DESC, object_uri)`},
	// Plain, beyond SPEC §4: what DeleteActorContent removes of an actor
	// besides its posts (posts_author_published_idx) and boosts
	// (boosts_actor_created_idx): its direct posts and its reactions.
	{"dm_posts_author_idx", `CREATE INDEX IF NOT EXISTS dm_posts_author_idx ON dm_posts (author_uri)`},
	{"reactions_actor_idx", `CREATE INDEX IF NOT EXISTS reactions_actor_idx ON reactions (actor_uri)`},
	// Fan-outs (not in SPEC §4): Claim takes the oldest unfinished one, and
	// operators list the newest first.
	{"fan_outs_unfinished_idx", `CREATE INDEX IF NOT EXISTS fan_outs_unfinished_idx ON fan_outs (created_at, id) WHERE done = 0`},
	{"fan_outs_created_at_idx", `CREATE INDEX IF NOT EXISTS fan_outs_created_at_idx ON fan_outs (created_at DESC, id DESC)`},
	// Plain, beyond SPEC §4: the reports newest first (Reports).
	{"reports_created_at_idx", `CREATE INDEX IF NOT EXISTS reports_created_at_idx ON reports (created_at DESC, id DESC)`},
	// Plain, beyond SPEC §4: the accounts of one status oldest first
	// (UsersByStatus: the sign-ups awaiting approval).
	{"root_users_status_created_idx", `CREATE INDEX IF NOT EXISTS root_users_status_created_idx ON root_users (status, created_at, id)`},
	// Plain, beyond SPEC §4: the followers collection, paged by follower URI.
	{"followers_followed_state_idx", `CREATE INDEX IF NOT EXISTS followers_followed_state_idx ON followers (followed_uri, state, follower_uri)`},
	// Partial, beyond SPEC §4 (migration 013): the deleted personas whose
	// deletion is still to finish (RetiredAvatars), without reading every
	// avatar and its key.
	{"avatars_retired_idx", `CREATE INDEX IF NOT EXISTS avatars_retired_idx ON avatars (id) WHERE deleted_at IS NOT NULL`},
	// The client API's (migration 018): expired grants are swept by
	// expiry, and a reused authorization code revokes its tokens.
	{"oauth_grants_expires", `CREATE INDEX IF NOT EXISTS oauth_grants_expires ON oauth_grants (expires_at)`},
	{"oauth_tokens_grant", `CREATE INDEX IF NOT EXISTS oauth_tokens_grant ON oauth_tokens (grant_hash) WHERE grant_hash <> ''`},
	// The notifications (migration 020): a persona's by id, and a deleted
	// remote actor's.
	{"notifications_recipient_idx", `CREATE INDEX IF NOT EXISTS notifications_recipient_idx ON notifications (recipient, id)`},
	{"notifications_actor_idx", `CREATE INDEX IF NOT EXISTS notifications_actor_idx ON notifications (actor_uri)`},
	// The conversations (migration 022): a persona's by last status.
	{"conversations_persona_last_idx", `CREATE INDEX IF NOT EXISTS conversations_persona_last_idx ON conversations (persona, last_status_id)`},
}

// retired are indexes an earlier version made that the ones above
// replace (the plain index on key ids, by the unique one of migration
// 011; a host's jobs by state, by jobs_host_state_run_at_idx):
// EnsureIndexes drops them, after it made their replacements. A rollback
// to an earlier version makes them again at its start.
var retired = []string{"foreign_avatars_public_key_id_idx", "jobs_host_state_idx"}

// IndexNames lists the indexes EnsureIndexes guarantees, for tests and
// operators.
func IndexNames() []string {
	out := make([]string, len(indexes))
	for i, ix := range indexes {
		out[i] = ix.name
	}
	return out
}

// EnsureIndexes creates every index that is missing and leaves the others
// alone, then drops the retired ones, in one transaction; run it on every
// start, after MigrateUp. A unique index the data violates fails, naming
// the index.
func EnsureIndexes(ctx context.Context, db *DB) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for _, ix := range indexes {
			if _, err := tx.ExecContext(ctx, ix.ddl); err != nil {
				return fmt.Errorf("index %s: %w", ix.name, err)
			}
		}
		for _, name := range retired {
			if _, err := tx.ExecContext(ctx, `DROP INDEX IF EXISTS `+name); err != nil {
				return fmt.Errorf("retired index %s: %w", name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: ensure indexes: %w", interpretError(err))
	}
	return nil
}
