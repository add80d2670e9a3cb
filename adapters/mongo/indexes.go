package mongo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

// JobRetention is how long succeeded and dead jobs are kept (SPEC §2): the
// TTL of the jobs_finished_at index, and the purge loop's cutoff where the
// server has no TTL indexes.
const JobRetention = 7 * 24 * time.Hour

// Index names. They are stable: EnsureIndexes finds an index by its name,
// migrations 002 and 003 create some of them with exactly these names and
// options, and the lease query hints jobs_lease by name.
const (
	idxPostsObjectURI      = "posts_object_uri"
	idxDmPostsObjectURI    = "dm_posts_object_uri"
	idxForeignActorURI     = "foreign_avatars_actor_uri"
	idxForeignKeyOwner     = "foreign_avatars_public_key_id_key"
	idxFollowersPair       = "followers_pair"
	idxFollowersFollowed   = "followers_followed_state"
	idxAvatarsRootToAvatar = "avatars_root_to_avatar"
	idxAvatarsName         = "avatars_name"
	idxGroupsName          = "groups_name"
	idxRootUsersUserName   = "root_users_user_name"
	idxReservedNamesName   = "reserved_names_name"
	idxJobsDedupeKey       = "jobs_dedupe_key"
	idxJobsLease           = "jobs_lease"
	idxJobsQueuedHost      = "jobs_queued_host"
	idxJobsHostState       = "jobs_host_state" // jobs_queued_host where a server has no partial indexes
	idxJobsFinishedAt      = "jobs_finished_at"
	idxInstancesHost       = "remote_instances_host"
	idxPostsAuthor         = "posts_author_published"
	idxPostsGroup          = "posts_group_published"
	idxPostsVisibility     = "posts_visibility_published"
	idxPostsReplies        = "posts_in_reply_to"
	idxDmPostsParticipants = "dm_posts_participants_key"
	idxTokensUser          = "tokens_user"
	idxBoostsActor         = "boosts_actor_created"
	idxBoostsObjectURI     = "boosts_object_uri"
	idxPostsMentions       = "posts_mentions"
	idxPostsHashtags       = "posts_hashtags"
	idxPollVotes           = "poll_votes_vote"
	idxOpenPollsEnd        = "open_polls_end"
	idxDmPostsAuthor       = "dm_posts_author"
	idxPostsReactions      = "posts_reactions"
	idxRootUsersStatus     = "root_users_status_created"
	idxReportsActivityID   = "reports_activity_id"
	idxReportsCreated      = "reports_created"
	idxAvatarsRetired      = "avatars_retired"
	idxActorBlocksPair     = "actor_blocks_pair"
	idxDeliveriesState     = "deliveries_state" // created by migration 003 for 004
)

// indexSpec is one index EnsureIndexes keeps.
type indexSpec struct {
	coll   string
	name   string
	keys   bson.D
	unique bool
	sparse bool          // documents without the key are not indexed
	ttl    time.Duration // > 0: a TTL index
	// partial, when set, is the index's partialFilterExpression: only the
	// documents it matches are indexed.
	partial bson.D
	// unpartial is what a server without partial indexes gets in its
	// place (FerretDB v1 answers NotImplemented); where the partial index
	// exists, EnsureIndexes drops it.
	unpartial *indexSpec
}

func keys(kv ...any) bson.D {
	d := make(bson.D, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		d = append(d, bson.E{Key: kv[i].(string), Value: kv[i+1]})
	}
	return d
}

// keyOwnerIndex holds one cached actor per key id. Sparse: a copy without
// a key id (the stores leave the field out) claims nothing. Migration 006
// makes it, exactly as EnsureIndexes keeps it.
var keyOwnerIndex = indexSpec{coll: collForeignAvatars, name: idxForeignKeyOwner, keys: keys("publicKeyId", 1), unique: true, sparse: true}

// indexSpecs is every index of SPEC §4, plus the few the stores' queries
// need to stay index scans. Where a listing sorts by a tie-breaker, the
// tie-breaker is the index's last key so the whole sort comes from the
// index and never from an in-memory sort.
var indexSpecs = []indexSpec{
	// unique (SPEC §4)
	{coll: collPosts, name: idxPostsObjectURI, keys: keys("objectUri", 1), unique: true},
	{coll: collDmPosts, name: idxDmPostsObjectURI, keys: keys("objectUri", 1), unique: true},
	{coll: collForeignAvatars, name: idxForeignActorURI, keys: keys("actorUri", 1), unique: true},
	{coll: collFollowers, name: idxFollowersPair, keys: keys("follower", 1, "followed", 1), unique: true},
	// RootToAvatar: an avatar's link to its root user is its rootUserId
	// field; the unique (rootUserId, name) pair keeps each link once and
	// serves AvatarsOf's listing by name.
	{coll: collAvatars, name: idxAvatarsRootToAvatar, keys: keys("rootUserId", 1, "name", 1), unique: true},
	{coll: collRootUsers, name: idxRootUsersUserName, keys: keys("userName", 1), unique: true},
	{coll: collReservedNames, name: idxReservedNamesName, keys: keys("name", 1), unique: true},
	{coll: collJobs, name: idxJobsDedupeKey, keys: keys("dedupeKey", 1), unique: true},
	{coll: collRemoteInstances, name: idxInstancesHost, keys: keys("host", 1), unique: true},
	// A tombstone's URI (SPEC §10) is its _id: the _id index, which every
	// collection has, keeps it unique. So is a domain block's and a domain
	// allow's domain (SPEC §11).
	// unique, beyond SPEC §4: one report per Flag (SPEC §11; migration 007
	// makes it, as this spec has it)
	{coll: collReports, name: idxReportsActivityID, keys: keys("activityId", 1), unique: true},
	// unique, beyond SPEC §4: one block and one mute per (actor, target)
	// (SPEC §11 "Personas"; migration 009 makes it, as this spec has it);
	// it serves every read of the BlockStore
	{coll: collActorBlocks, name: idxActorBlocksPair, keys: keys("actor", 1, "target", 1, "kind", 1), unique: true},
	// the client API's (migration 013): expired grants are swept by
	// expiry, and a reused authorization code revokes its tokens
	{coll: collOAuthGrants, name: idxOAuthGrantsExpires, keys: keys("expiresAt", 1)},
	{coll: collOAuthTokens, name: idxOAuthTokensGrant, keys: keys("grantHash", 1)},
	{coll: collAccountIDs, name: idxAccountIDsID, keys: keys("id", 1), unique: true},
	// the notifications (migration 015): one per recipient and key (a
	// redelivered activity records nothing new); a persona's read by id;
	// a deleted remote actor's removed
	{coll: collNotifications, name: idxNotificationsKey, keys: keys("recipient", 1, "dedupeKey", 1), unique: true},
	{coll: collNotifications, name: idxNotificationsRecipientID, keys: keys("recipient", 1, "_id", 1)},
	{coll: collNotifications, name: idxNotificationsActor, keys: keys("actorUri", 1)},
	// a persona's conversations (migration 017), listed by last status
	{coll: collConversations, name: idxConversationsPersonaLast, keys: keys("persona", 1, "lastStatusId", 1)},
	// unique, as the memory adapter has it: one avatar, one group per name
	{coll: collAvatars, name: idxAvatarsName, keys: keys("name", 1), unique: true},
	{coll: collGroups, name: idxGroupsName, keys: keys("name", 1), unique: true},
	// unique where SPEC §4 has it plain: a key id belongs to one cached
	// actor (SPEC §10; migration 006)
	keyOwnerIndex,
	// plain (SPEC §4)
	{coll: collPosts, name: idxPostsAuthor, keys: keys("authorUri", 1, "published", -1, "objectUri", 1)},
	{coll: collPosts, name: idxPostsGroup, keys: keys("groupUri", 1, "published", -1, "objectUri", 1)},
	// The public posts newest first (PublicPosts: the client API's public
	// timelines).
	// A post's replies (Replies: a status's context); sparse, as most
	// posts reply to none.
	{coll: collPosts, name: idxPostsReplies, keys: keys("inReplyTo", 1, "published", 1, "objectUri", 1), sparse: true},
	{coll: collPosts, name: idxPostsVisibility, keys: keys("visibility", 1, "published", -1, "objectUri", 1)},
	{coll: collDmPosts, name: idxDmPostsParticipants, keys: keys("participantsKey", 1, "published", -1, "objectUri", 1)},
	// The lease index: equality on state, range on runAt, and the sort
	// (runAt, _id) all from the index, so a lease is one short index scan
	// whatever the queue's size. host comes last (it cannot change the
	// order: _id is unique) so the skipped hosts are filtered on the index
	// keys during the scan, without fetching their documents.
	{coll: collJobs, name: idxJobsLease, keys: keys("state", 1, "runAt", 1, "_id", 1, "host", 1)},
	// One host's queued jobs oldest first (the capped lease's per-host
	// branch, DeferHost, ResumeHost, EndDomainJobs): partial, so a host's
	// range holds its queued jobs only. On DocumentDB (FerretDB v2) a scan
	// of (host, state) intersects the host's entries with every queued
	// job's, so its cost followed the whole backlog; this one's follows the
	// host's (docs/storage.md, "What the lease costs on FerretDB v2").
	{coll: collJobs, name: idxJobsQueuedHost, keys: keys("host", 1, "runAt", 1), partial: bson.D{{Key: "state", Value: "queued"}},
		unpartial: &indexSpec{coll: collJobs, name: idxJobsHostState, keys: keys("host", 1, "state", 1, "runAt", 1)}},
	// The ready hosts of the capped lease (ready.go), oldest first.
	{coll: collReadyHosts, name: idxReadyHostsReadyAt, keys: keys("readyAt", 1, "_id", 1)},
	// The host slots of leased jobs (jobs_batch.go): unique, so one job
	// holds each slot, and sparse, so the jobs holding none (every job
	// that is not leased) are not in it.
	{coll: collJobs, name: idxJobsSlot, keys: keys("slot", 1), unique: true, sparse: true},
	{coll: collJobs, name: idxJobsFinishedAt, keys: keys("finishedAt", 1), ttl: JobRetention},
	// Bodies: Purge's sweep asks whether a job still refers to a body.
	{coll: collJobs, name: idxJobsBodyID, keys: keys("bodyId", 1)},
	// Fan-outs: Claim's unfinished-oldest-first and the operator's listing.
	{coll: collFanOuts, name: idxFanOutsClaim, keys: keys("done", 1, "createdAt", 1, "_id", 1)},
	{coll: collFanOuts, name: idxFanOutsCreated, keys: keys("createdAt", -1, "_id", -1)},
	// plain, for the stores' own queries
	{coll: collFollowers, name: idxFollowersFollowed, keys: keys("followed", 1, "state", 1, "follower", 1)},
	{coll: collTokens, name: idxTokensUser, keys: keys("userId", 1)},
	// the reports newest first (Reports); migration 007 makes it
	{coll: collReports, name: idxReportsCreated, keys: keys("createdAt", -1, "_id", -1)},
	// the accounts of one status oldest first (UsersByStatus: the sign-ups
	// awaiting approval); migration 007 makes it, as this spec has it
	{coll: collRootUsers, name: idxRootUsersStatus, keys: keys("status", 1, "createdAt", 1, "_id", 1)},
	// a booster's boosts newest first (BoostsBy), and a post's boosts,
	// which DeletePost removes with it
	{coll: collBoosts, name: idxBoostsActor, keys: keys("actorUri", 1, "createdAt", -1, "objectUri", 1)},
	{coll: collBoosts, name: idxBoostsObjectURI, keys: keys("objectUri", 1)},
	// an actor's mentions newest first (PostsMentioning): multikey on the
	// post's sorted mentions
	{coll: collPosts, name: idxPostsMentions, keys: keys("mentions", 1, "published", -1, "objectUri", 1)},
	// a hashtag's public posts newest first (PostsTagged): multikey on the
	// post's hashtags, equality on its visibility
	{coll: collPosts, name: idxPostsHashtags, keys: keys("extras.hashtags", 1, "visibility", 1, "published", -1, "objectUri", 1)},
	// one vote per (poll, voter, slot) (migration 011 makes it, as this
	// spec has it), and the open polls by end time (PollsDue)
	{coll: collPollVotes, name: idxPollVotes, keys: keys("objectUri", 1, "voter", 1, "slot", 1), unique: true},
	{coll: collOpenPolls, name: idxOpenPollsEnd, keys: keys("endTime", 1, "_id", 1)},
	// what DeleteActorContent removes of an actor besides its posts
	// (posts_author_published) and boosts (boosts_actor_created): its
	// direct posts, and its reactions, multikey on the posts' "kind actor"
	// strings
	{coll: collDmPosts, name: idxDmPostsAuthor, keys: keys("authorUri", 1)},
	{coll: collPosts, name: idxPostsReactions, keys: keys("reactions", 1)},
	// the deleted personas whose deletion is still to finish
	// (RetiredAvatars): sparse, so the live ones (no deletedAt) are not in
	// it; migration 008 makes it, as this spec has it
	{coll: collAvatars, name: idxAvatarsRetired, keys: keys("deletedAt", 1), sparse: true},
}

// retiredIndexes are indexes an earlier version made that indexSpecs
// replace under another name and with the same keys (which a server
// refuses to have twice): EnsureIndexes drops them before it makes their
// replacements. A rollback to an earlier version makes them again at its
// start.
var retiredIndexes = []struct{ coll, name string }{
	// the plain index on key ids, replaced by idxForeignKeyOwner
	{collForeignAvatars, idxForeignPublicKeyIDPlain},
}

// idxForeignPublicKeyIDPlain is the plain index on key ids of versions
// before migration 006, which its down step makes again.
const idxForeignPublicKeyIDPlain = "foreign_avatars_public_key_id"

// Server answers that mean "this server has no TTL indexes" (FerretDB).
const (
	codeCommandNotFound     = 59
	codeCommandNotSupported = 115
	codeNotImplemented      = 238
)

// EnsureIndexes creates every index that is missing, on every start after
// the migrations (SPEC §4 step 3); it is idempotent. An index that exists
// under one of these names with other keys or options is an error naming
// it, so a hand-made or older index never silently changes what the stores
// rely on.
//
// ttl reports whether jobs_finished_at expires finished jobs. A server that
// answers NotImplemented or CommandNotSupported to the TTL option (FerretDB)
// gets the index without it, one warning is logged, and ttl is false: the
// caller then runs the purge loop with JobRetention instead.
func EnsureIndexes(ctx context.Context, db *mongodrv.Database, log *slog.Logger) (ttl bool, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ttl = true
	// noteTTL records a server that refused the TTL option of spec.
	noteTTL := func(supported bool, spec indexSpec) {
		if !supported {
			ttl = false
			log.Warn("mongo: the server has no TTL indexes; finished jobs are purged by the purge loop instead",
				slog.String("index", spec.coll+"."+spec.name))
		}
	}
	if err := dropRetired(ctx, db); err != nil {
		return false, err
	}
	existing := make(map[string]map[string]indexInfo)
	for _, spec := range indexSpecs {
		have, ok := existing[spec.coll]
		if !ok {
			if have, err = listIndexes(ctx, collection(db, spec.coll)); err != nil {
				return false, err
			}
			existing[spec.coll] = have
		}
		got, ok := have[spec.name]
		if !ok {
			if other, clash := sameKeys(have, spec.keys); clash {
				return false, fmt.Errorf("index %s.%s: an index with the same keys exists as %q; drop it so %s can be created",
					spec.coll, spec.name, other, spec.name)
			}
			if spec.partial != nil {
				made, err := createPartial(ctx, db, spec, have)
				if err != nil {
					return false, err
				}
				if !made {
					log.Warn("mongo: the server has no partial indexes; a plain index stands in",
						slog.String("index", spec.coll+"."+spec.name), slog.String("instead", spec.unpartial.name))
					continue
				}
				if err := dropUnpartial(ctx, db, spec, have); err != nil {
					return false, err
				}
				continue
			}
			supported, err := createIndex(ctx, db, spec)
			if err != nil {
				return false, err
			}
			noteTTL(supported, spec)
			continue
		}
		if spec.sparse && !got.Sparse && got.Unique == spec.unique && isFerretDB(ctx, db) {
			// FerretDB v1 takes the sparse option and lists the index
			// without it; its unique indexes (SQLite's) never collide on
			// documents without the key, which is what sparse is for here
			// (the contract suite's enqueues of slotless jobs show it).
			got.Sparse = true
		}
		if diff := got.differs(spec); diff != "" {
			if diff == "no TTL" && spec.ttl > 0 {
				// Present without the TTL option: either this server has
				// none (FerretDB, second start), or the index was made on
				// one that had none. Try to add it; an unsupporting server
				// keeps the plain index and the purge loop.
				supported, err := addTTL(ctx, db, spec)
				if err != nil {
					return false, err
				}
				noteTTL(supported, spec)
				continue
			}
			return false, optionsDiffer(spec, diff)
		}
		if err := dropUnpartial(ctx, db, spec, have); err != nil {
			return false, err
		}
	}
	return ttl, nil
}

// optionsDiffer is the error for an index of spec's name that exists
// with other options (diff says which): EnsureIndexes does not drop an
// operator's index, the operator does.
func optionsDiffer(spec indexSpec, diff string) error {
	return fmt.Errorf("index %s.%s exists with different options (%s); drop it and restart so it is rebuilt as Herald needs it",
		spec.coll, spec.name, diff)
}

// createPartial makes spec's partial index and reports true, or, on a
// server that refuses partial indexes, makes spec.unpartial where it is
// missing and reports false: such a server is asked again at every start,
// and keeps its stand-in until it answers.
func createPartial(ctx context.Context, db *mongodrv.Database, spec indexSpec, have map[string]indexInfo) (bool, error) {
	c := collection(db, spec.coll)
	opts := options.Index().SetName(spec.name).SetPartialFilterExpression(spec.partial)
	_, err := c.Indexes().CreateOne(ctx, mongodrv.IndexModel{Keys: spec.keys, Options: opts})
	if err == nil {
		return true, nil
	}
	if !optionUnsupported(err) || spec.unpartial == nil {
		return false, fmt.Errorf("create index %s.%s: %w", spec.coll, spec.name, interpretError(err, nil))
	}
	u := *spec.unpartial
	if got, ok := have[u.name]; ok {
		if diff := got.differs(u); diff != "" {
			return false, optionsDiffer(u, diff)
		}
		return false, nil
	}
	if _, err := createIndex(ctx, db, u); err != nil {
		return false, err
	}
	return false, nil
}

// dropUnpartial drops spec's stand-in where spec's partial index exists:
// an index every write of the collection keeps up for no reader.
func dropUnpartial(ctx context.Context, db *mongodrv.Database, spec indexSpec, have map[string]indexInfo) error {
	if spec.unpartial == nil {
		return nil
	}
	if _, ok := have[spec.unpartial.name]; !ok {
		return nil
	}
	if _, err := collection(db, spec.coll).Indexes().DropOne(ctx, spec.unpartial.name); err != nil {
		return fmt.Errorf("drop index %s.%s, which %s replaces: %w", spec.coll, spec.unpartial.name, spec.name, interpretError(err, nil))
	}
	delete(have, spec.unpartial.name)
	return nil
}

// dropRetired drops the retiredIndexes a collection still has.
func dropRetired(ctx context.Context, db *mongodrv.Database) error {
	for _, r := range retiredIndexes {
		if err := dropIndexIfPresent(ctx, db, r.coll, r.name); err != nil {
			return fmt.Errorf("retired index %s.%s: %w", r.coll, r.name, err)
		}
	}
	return nil
}

// dropIndexIfPresent drops the index name of coll if coll has it.
func dropIndexIfPresent(ctx context.Context, db *mongodrv.Database, coll, name string) error {
	c := collection(db, coll)
	have, err := listIndexes(ctx, c)
	if err != nil {
		return err
	}
	if _, ok := have[name]; !ok {
		return nil
	}
	if _, err := c.Indexes().DropOne(ctx, name); err != nil {
		return fmt.Errorf("drop index %s.%s: %w", coll, name, interpretError(err, nil))
	}
	return nil
}

// indexInfo is what listIndexes tells of one index.
type indexInfo struct {
	Name               string   `bson:"name"`
	Key                bson.Raw `bson:"key"`
	Unique             bool     `bson:"unique"`
	Sparse             bool     `bson:"sparse"`
	Partial            bson.Raw `bson:"partialFilterExpression"`
	ExpireAfterSeconds *int64   `bson:"-"`
}

func listIndexes(ctx context.Context, c *mongodrv.Collection) (map[string]indexInfo, error) {
	cur, err := c.Indexes().List(ctx)
	if err != nil {
		// A collection that does not exist has no indexes; servers answer
		// NamespaceNotFound (26) for it.
		var ce mongodrv.CommandError
		if errors.As(err, &ce) && ce.Code == 26 {
			return map[string]indexInfo{}, nil
		}
		return nil, fmt.Errorf("list indexes of %s: %w", c.Name(), interpretError(err, nil))
	}
	var raw []bson.Raw
	if err := cur.All(ctx, &raw); err != nil {
		return nil, fmt.Errorf("list indexes of %s: %w", c.Name(), interpretError(err, nil))
	}
	out := make(map[string]indexInfo, len(raw))
	for _, r := range raw {
		var info indexInfo
		if err := bson.Unmarshal(r, &info); err != nil {
			return nil, fmt.Errorf("list indexes of %s: %w", c.Name(), err)
		}
		// expireAfterSeconds may come back as int32, int64 or double.
		if v, err := r.LookupErr("expireAfterSeconds"); err == nil {
			if n, ok := numberOf(v); ok {
				info.ExpireAfterSeconds = &n
			}
		}
		out[info.Name] = info
	}
	return out, nil
}

// differs describes how the stored index differs from spec, or "" if it
// does not.
func (i indexInfo) differs(spec indexSpec) string {
	var diffs []string
	if !sameKeyDoc(i.Key, spec.keys) {
		diffs = append(diffs, fmt.Sprintf("keys %s, want %s", i.Key, describeKeys(spec.keys)))
	}
	if i.Unique != spec.unique {
		diffs = append(diffs, fmt.Sprintf("unique %v, want %v", i.Unique, spec.unique))
	}
	if i.Sparse != spec.sparse {
		diffs = append(diffs, fmt.Sprintf("sparse %v, want %v", i.Sparse, spec.sparse))
	}
	switch {
	case i.Partial == nil && spec.partial != nil:
		diffs = append(diffs, fmt.Sprintf("no partialFilterExpression, want %s", describeKeys(spec.partial)))
	case i.Partial != nil && !samePartial(i.Partial, spec.partial):
		diffs = append(diffs, fmt.Sprintf("partialFilterExpression %s, want %s", i.Partial, describePartial(spec.partial)))
	}
	want := int64(spec.ttl / time.Second)
	switch {
	case spec.ttl > 0 && i.ExpireAfterSeconds == nil && len(diffs) == 0:
		return "no TTL"
	case spec.ttl > 0 && i.ExpireAfterSeconds == nil:
		diffs = append(diffs, fmt.Sprintf("no TTL, want expireAfterSeconds %d", want))
	case spec.ttl > 0 && *i.ExpireAfterSeconds != want:
		diffs = append(diffs, fmt.Sprintf("expireAfterSeconds %d, want %d", *i.ExpireAfterSeconds, want))
	case spec.ttl == 0 && i.ExpireAfterSeconds != nil:
		diffs = append(diffs, fmt.Sprintf("expireAfterSeconds %d, want none", *i.ExpireAfterSeconds))
	}
	return strings.Join(diffs, "; ")
}

// samePartial compares a stored partialFilterExpression with want's
// (nil: none) byte for byte: the filters here are one field equal to a
// string, which a server lists back as it was given.
func samePartial(got bson.Raw, want bson.D) bool {
	b, err := bson.Marshal(want)
	return want != nil && err == nil && bytes.Equal(got, b)
}

func describePartial(d bson.D) string {
	if d == nil {
		return "none"
	}
	return describeKeys(d)
}

func describeKeys(d bson.D) string {
	b, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		return fmt.Sprint(d)
	}
	return string(b)
}

// sameKeyDoc compares key patterns field by field, in order, with 1, 1.0
// and int64(1) all equal.
func sameKeyDoc(raw bson.Raw, want bson.D) bool {
	elems, err := raw.Elements()
	if err != nil || len(elems) != len(want) {
		return false
	}
	for i, e := range elems {
		if e.Key() != want[i].Key {
			return false
		}
		got, ok := numberOf(e.Value())
		w, _ := want[i].Value.(int)
		if !ok || got != int64(w) {
			return false
		}
	}
	return true
}

func sameKeys(have map[string]indexInfo, want bson.D) (string, bool) {
	for name, info := range have {
		if sameKeyDoc(info.Key, want) {
			return name, true
		}
	}
	return "", false
}

func numberOf(v bson.RawValue) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true
	case bson.TypeInt64:
		return v.Int64(), true
	case bson.TypeDouble:
		return int64(v.Double()), true
	}
	return 0, false
}

// createIndex creates spec. For a TTL index on a server without TTL it
// creates the plain index instead and reports supported=false.
func createIndex(ctx context.Context, db *mongodrv.Database, spec indexSpec) (supported bool, err error) {
	opts := options.Index().SetName(spec.name)
	if spec.unique {
		opts.SetUnique(true)
	}
	if spec.sparse {
		opts.SetSparse(true)
	}
	if spec.ttl > 0 {
		opts.SetExpireAfterSeconds(int32(spec.ttl / time.Second))
	}
	c := collection(db, spec.coll)
	_, err = c.Indexes().CreateOne(ctx, mongodrv.IndexModel{Keys: spec.keys, Options: opts})
	if err != nil && spec.ttl > 0 && optionUnsupported(err) {
		plain := options.Index().SetName(spec.name)
		if _, err := c.Indexes().CreateOne(ctx, mongodrv.IndexModel{Keys: spec.keys, Options: plain}); err != nil {
			return false, fmt.Errorf("create index %s.%s: %w", spec.coll, spec.name, interpretError(err, nil))
		}
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create index %s.%s (does existing data violate it?): %w", spec.coll, spec.name, interpretError(err, nil))
	}
	return true, nil
}

// addTTL turns an existing plain index into the TTL index spec asks for.
func addTTL(ctx context.Context, db *mongodrv.Database, spec indexSpec) (supported bool, err error) {
	cmd := bson.D{
		{Key: "collMod", Value: spec.coll},
		{Key: "index", Value: bson.D{
			{Key: "name", Value: spec.name},
			{Key: "expireAfterSeconds", Value: int64(spec.ttl / time.Second)},
		}},
	}
	err = db.RunCommand(ctx, cmd).Err()
	if err != nil && optionUnsupported(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("index %s.%s exists without the TTL option and collMod could not add it; drop it and restart: %w",
			spec.coll, spec.name, interpretError(err, nil))
	}
	return true, nil
}

// optionUnsupported reports whether err is a server refusing an index
// option it does not have (TTL, partial filters: FerretDB v1).
func optionUnsupported(err error) bool {
	var se mongodrv.ServerError
	if !errors.As(err, &se) {
		return false
	}
	return se.HasErrorCode(codeNotImplemented) || se.HasErrorCode(codeCommandNotSupported) || se.HasErrorCode(codeCommandNotFound)
}

// isFerretDB reports whether db's server is FerretDB: buildInfo carries
// ferretdbVersion (v1) or a ferretdb section (v2) there.
func isFerretDB(ctx context.Context, db *mongodrv.Database) bool {
	var info struct {
		V1 string   `bson:"ferretdbVersion"`
		V2 bson.Raw `bson:"ferretdb"`
	}
	err := db.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info)
	return err == nil && (info.V1 != "" || info.V2 != nil)
}
