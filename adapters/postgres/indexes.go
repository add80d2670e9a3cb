package postgres

import (
	"context"
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
	{"foreign_avatars_actor_uri_key", `CREATE UNIQUE INDEX IF NOT EXISTS foreign_avatars_actor_uri_key ON foreign_avatars (actor_uri)`},
	{"followers_pair_key", `CREATE UNIQUE INDEX IF NOT EXISTS followers_pair_key ON followers (follower_uri, followed_uri)`},
	// RootToAvatar: the link is avatars.root_user_id, so one avatar has one
	// owner by construction; the index states the pair's uniqueness and
	// serves AvatarsOf.
	{"avatars_root_to_avatar_key", `CREATE UNIQUE INDEX IF NOT EXISTS avatars_root_to_avatar_key ON avatars (root_user_id, id)`},
	{"root_users_user_name_key", `CREATE UNIQUE INDEX IF NOT EXISTS root_users_user_name_key ON root_users (user_name)`},
	{"reserved_names_pkey", `CREATE UNIQUE INDEX IF NOT EXISTS reserved_names_pkey ON reserved_names (name)`},
	{"jobs_dedupe_key_key", `CREATE UNIQUE INDEX IF NOT EXISTS jobs_dedupe_key_key ON jobs (dedupe_key)`},
	{"remote_instances_pkey", `CREATE UNIQUE INDEX IF NOT EXISTS remote_instances_pkey ON remote_instances (host)`},
	// Unique, beyond SPEC §4: the ActorStore refuses a second avatar or
	// group of one name (domain.ErrNameTaken) even if a caller skipped the
	// NameRegistry.
	{"avatars_name_key", `CREATE UNIQUE INDEX IF NOT EXISTS avatars_name_key ON avatars (name)`},
	{"groups_name_key", `CREATE UNIQUE INDEX IF NOT EXISTS groups_name_key ON groups (name)`},

	// Plain (SPEC §4).
	{"foreign_avatars_public_key_id_idx", `CREATE INDEX IF NOT EXISTS foreign_avatars_public_key_id_idx ON foreign_avatars (public_key_id)`},
	{"posts_author_published_idx", `CREATE INDEX IF NOT EXISTS posts_author_published_idx ON posts (author_uri, published DESC)`},
	{"posts_group_published_idx", `CREATE INDEX IF NOT EXISTS posts_group_published_idx ON posts (group_uri, published DESC)`},
	{"dm_posts_participants_key_idx", `CREATE INDEX IF NOT EXISTS dm_posts_participants_key_idx ON dm_posts (participants_key, published DESC)`},
	// The queue: seq after run_at so the lease reads rows in its exact order
	// (see leaseSQL).
	{"jobs_state_run_at_idx", `CREATE INDEX IF NOT EXISTS jobs_state_run_at_idx ON jobs (state, run_at, seq)`},
	{"jobs_host_state_idx", `CREATE INDEX IF NOT EXISTS jobs_host_state_idx ON jobs (host, state)`},
	// Retention: Purge's range (PostgreSQL has no TTL index).
	{"jobs_finished_at_idx", `CREATE INDEX IF NOT EXISTS jobs_finished_at_idx ON jobs (finished_at)`},
	// Bodies: Purge asks whether any job still refers to a body. A
	// fan-out's jobs share one body_id, which B-tree deduplication keeps as
	// one key with a list of row pointers: a few bytes per job.
	{"jobs_body_id_idx", `CREATE INDEX IF NOT EXISTS jobs_body_id_idx ON jobs (body_id)`},
	// Plain, beyond SPEC §4: the followers collection, paged by follower URI
	// in byte order.
	{"followers_followed_state_idx", `CREATE INDEX IF NOT EXISTS followers_followed_state_idx ON followers (followed_uri, state, follower_uri COLLATE "C")`},
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
// alone; run it on every start, after MigrateUp. It holds a transaction-level
// advisory lock so two processes starting together do not race on one name,
// and creates only what the catalog lacks, so a normal start takes no lock on
// any table. A unique index that the data violates fails, naming the index
// and the duplicate key (an operator must remove the duplicates first; 001
// did that for the keys races duplicated).
func EnsureIndexes(ctx context.Context, pool *pgxpool.Pool) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.herald_ensure_indexes'))`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind = 'i'`)
		if err != nil {
			return err
		}
		have, err := pgx.CollectRows(rows, pgx.RowTo[string])
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
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: ensure indexes: %w", interpretError(err))
	}
	return nil
}
