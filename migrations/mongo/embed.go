// Package mongo holds Herald's MongoDB migrations: golang-migrate JSON
// command files (NNN_name.up.json / NNN_name.down.json), each an array of
// database commands that golang-migrate's mongodb driver runs one by one
// with db.runCommand. They are embedded in the binary; adapters/mongo runs
// them (MigrateUp, MigrateDown) under golang-migrate's advisory lock.
//
//	001 dedupe_and_reserve  removes the duplicates races left, then fills
//	                        reserved_names (SPEC §5)
//	002 unique_indexes      the unique indexes 001 made possible
//	003 jobs_queue          the job queue's and breaker's unique indexes, and
//	                        an index on the legacy deliveries' state for 004
//	004 move_deliveries     the legacy deliveries → jobs move; Go code, see below
//	005 bodies_and_fan_outs each activity body once in bodies, jobs naming it
//	                        in bodyId, and the fan-out records (issue 15). Up
//	                        is a marker: older jobs keep their payload field,
//	                        which the stores still read. Down is Go code
//	                        (adapters/mongo.MigrateDown): each job gets its
//	                        body back in payload, then bodies, fan_outs and
//	                        the jobs_body_id index are dropped.
//	006 key_owners          one cached actor per key id (SPEC §10): a unique
//	                        index on publicKeyId in place of the plain one,
//	                        after deleting the copies it refuses. Up and down
//	                        are markers; the work is Go code, see below.
//	007 moderation          moderation (SPEC §11): the index of the accounts by
//	                        status (root_users_status_created; an account
//	                        without a status field is active, so none is
//	                        written) and the reports' indexes (one report per
//	                        Flag, newest first). Down drops them, unsets status
//	                        and reason, and drops reports, domain_allows and
//	                        domain_blocks: a pending sign-up becomes an account
//	                        that signs in, so approve or reject them first,
//	                        and export the blocks to keep them.
//	008 deleted_personas    deleted personas (SPEC §3, §11): the sparse index
//	                        avatars_retired on the avatars' deletedAt (the
//	                        deletions still to finish); the marks themselves
//	                        are fields (avatars and reserved_names deletedAt)
//	                        written by the stores. Down drops the index and
//	                        unsets both fields: a persona still retired comes
//	                        back live, so let deletions finish first.
//	009 actor_blocks        blocks and mutes of actors by actors (SPEC §11
//	                        "Personas"): the unique (actor, target, kind)
//	                        index of actor_blocks, which serves every read.
//	                        Down drops the collection.
//	010 locked_actors       a persona or group may approve its followers by
//	                        hand (locked), and keeps its key pair before the
//	                        last rotation (previousPublicKeyPem,
//	                        previousPrivateKeyPem, keysRotatedAt) in avatars
//	                        and groups. Missing fields read as false or empty,
//	                        so up is a marker; down unsets them.
//	011 post_extras         what a post carries beside its text (SPEC §12):
//	                        fields extras and poll of posts (their hashtags
//	                        indexed by EnsureIndexes' posts_hashtags), extras
//	                        of dm_posts; the unique (objectUri,
//	                        voter, slot) index of poll_votes, one vote per
//	                        voter and option (slot "" in a single-choice
//	                        poll: one per voter), and the open_polls by end
//	                        time. Down drops both collections and unsets the
//	                        fields: media, content warnings, hashtags and
//	                        polls are lost.
//	013 client_api          the Mastodon-compatible client API (issue 34):
//	                        oauth_apps (_id the client id), oauth_grants and
//	                        oauth_tokens (_id the hex SHA-256 of the secret),
//	                        with the grants' expiry index and the tokens' index
//	                        by grant; account_ids (_id the actor URI) with the
//	                        unique index on id. Down drops the four
//	                        collections: every application must register and
//	                        sign in again, remote accounts get new ids.
//	015 notifications       the client API's notifications (issue 34): the
//	                        unique index on (recipient, dedupeKey), the
//	                        index by recipient and _id (the notification
//	                        id) the client API pages along, and the one by
//	                        actorUri. Down drops the collection: every
//	                        persona's notifications are lost.
//	016 persona_bio         a persona's bio, plain text, in the avatars' note
//	                        field (issue 34). A missing field reads as no
//	                        bio, so up is a marker; down unsets it.
//
// The field names are those of adapters/mongo's package documentation.
//
// 001 keeps the newest foreign_avatars row per actorUri (by fetchedAt, then
// _id), the oldest posts and dm_posts row per objectUri (by published, then
// _id) and per (follower, followed) pair the accepted followers row, else
// the oldest (by createdAt, then _id). A JSON command cannot feed its result
// to the next one, so each dedupe is an aggregate that marks the losers
// ($sort, $group with $first, $merge back into the same collection with
// _dup001: true) followed by a delete of the marked rows; it runs on data
// that violates the unique indexes 002 then creates. reserved_names is
// filled by aggregates that $merge every avatar (kind persona, or instance
// for the avatar without rootUserId) and group (kind group), lower-cased,
// the oldest holder winning a contested name, then by upserts of the
// system names: the valid names of domain.FixedReservedNames() copied here
// by hand ("no-reply" is left out, as NamePolicy.Names does, because it is
// not a valid name), kind system, owner "". The instance actor's own name
// and operator-configured names are not known to a migration: bootstrap
// reserves them at start. $merge (MongoDB 4.4+ for merging into the
// aggregated collection) and $group's $first are NotImplemented in
// FerretDB, so 001 is verified only on real MongoDB.
//
// 004 cannot be a JSON command file: the dedupe key is the hex SHA-256 of
// activity id, NUL, inbox (domain.DedupeKey), and MongoDB has no SHA-256
// aggregation operator (a server-side $function would need JavaScript,
// which production servers often disable and 8.0 deprecates). So
// 004_move_deliveries.up.json is a no-op marker ({"ping": 1}) that records
// the schema version, and adapters/mongo.MigrateUp moves the rows in Go,
// under the migration lock, every time it finds the database at version 4
// or later. The move is idempotent: it takes only rows in state "pending",
// inserts their jobs (the unique jobs_dedupe_key index, created by 003,
// makes a repeat a no-op) and then marks the rows "abandoned", so a crash
// between the two steps, or two processes moving at once, moves nothing
// twice; and running it on every start costs one indexed query once the
// legacy queue is empty. Its down step is Go code as well
// (adapters/mongo.MigrateDown, before golang-migrate leaves version 4).
//
// 006 cannot be JSON commands either: it compares the host of each cached
// actor's key id with its actor's (a claim of another host's key is
// deleted) and keeps the newest copy of each key id, which would need
// $expr, $merge and $group on servers (FerretDB) that lack some of them.
// So adapters/mongo.MigrateUp does it in Go (ownKeyIDs), under the lock,
// at every start from version 6 on until the unique index is there: it
// unsets empty key ids, deletes the copies whose key id is not on their
// actor's host (hosts compared as SQLite's 011 and PostgreSQL's 020 do),
// then of each key id all but the copy fetched last (then the greatest
// actorUri), and swaps the plain index for the unique one. Its down step
// (adapters/mongo.MigrateDown, before golang-migrate leaves version 6)
// puts the plain index back; the deleted copies are fetched again when
// needed.
//
// Down steps: 001's deletes the reserved_names rows it seeded (seededBy
// "001"); the duplicates it removed cannot come back, they were copies of
// kept rows. 002 and 003 drop their indexes (data stays). 004's gives every
// moved job the new engine has not started (still queued) back to its
// legacy row as "pending" with its attempts, and deletes the job; jobs that
// were leased, sent or are dead stay, and so do their rows' "abandoned", so
// a rollback cannot send anything twice.
package mongo

import "embed"

// FS holds the migration files, at its root.
//
//go:embed *.json
var FS embed.FS
