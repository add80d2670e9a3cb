package mongo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.ForeignActorStore = (*ContentStore)(nil)
	_ ports.PostStore         = (*ContentStore)(nil)
	_ ports.TombstoneStore    = (*ContentStore)(nil)
	_ ports.PollStore         = (*ContentStore)(nil)
)

// ContentStore keeps cached remote actors (foreign_avatars), posts (posts)
// and direct posts (dm_posts), and the tombstones of deleted ones
// (tombstones).
type ContentStore struct {
	foreign, posts, dms, boosts, tombstones *mongodrv.Collection
	// votes are the votes of polls (poll_votes), openPolls the polls
	// written here not closed yet (open_polls).
	votes, openPolls *mongodrv.Collection
}

// NewContentStore returns the store of db.
func NewContentStore(db *mongodrv.Database) *ContentStore {
	return &ContentStore{
		foreign: collection(db, collForeignAvatars),
		posts:   collection(db, collPosts),
		dms:     collection(db, collDmPosts),
		boosts:  collection(db, collBoosts),

		tombstones: collection(db, collTombstones),
		votes:      collection(db, collPollVotes),
		openPolls:  collection(db, collOpenPolls),
	}
}

// foreignDoc has no _id: legacy rows have ObjectIds, new rows get one from
// the server, and the key is actorUri (unique).
type foreignDoc struct {
	ActorURI          string    `bson:"actorUri"`
	PublicKeyID       string    `bson:"publicKeyId,omitempty"`
	PublicKeyPEM      string    `bson:"publicKeyPem,omitempty"`
	Inbox             string    `bson:"inbox,omitempty"`
	SharedInbox       string    `bson:"sharedInbox,omitempty"`
	PreferredUsername string    `bson:"preferredUsername,omitempty"`
	Host              string    `bson:"host,omitempty"`
	FetchedAt         time.Time `bson:"fetchedAt,omitempty"`
}

func (d foreignDoc) actor() domain.ForeignAvatar {
	return domain.ForeignAvatar{ActorURI: d.ActorURI, PublicKeyID: d.PublicKeyID, PublicKeyPEM: d.PublicKeyPEM,
		Inbox: d.Inbox, SharedInbox: d.SharedInbox, PreferredUsername: d.PreferredUsername, Host: d.Host, FetchedAt: d.FetchedAt}
}

type postDoc struct {
	ID         string    `bson:"_id"`
	ObjectURI  string    `bson:"objectUri"`
	AuthorURI  string    `bson:"authorUri"`
	GroupURI   string    `bson:"groupUri,omitempty"`
	Content    string    `bson:"content"`
	Visibility string    `bson:"visibility"`
	InReplyTo  string    `bson:"inReplyTo,omitempty"`
	Published  time.Time `bson:"published"`
	Local      bool      `bson:"local"`
	// Updated is absent until the author edits the post.
	Updated *time.Time `bson:"updated,omitempty"`
	// Reactions (Likes and Announces) live in the post's document, one
	// "kind actor" string each: they go with the post, and one conditional
	// update ($ne, then $push) adds one atomically. Plain strings keep the
	// filter to operators FerretDB implements too.
	Reactions []string `bson:"reactions,omitempty"`
	// Mentions are the actors the note mentions, sorted: a multikey
	// index (posts_mentions) lists an actor's mentions.
	Mentions []string `bson:"mentions,omitempty"`
	// Extras are what the post carries beside its text; absent for none.
	// Its hashtags are indexed (posts_hashtags) with the visibility.
	Extras *extrasDoc `bson:"extras,omitempty"`
	// Poll is the Question's poll; only the PollStore methods change it.
	Poll *pollDoc `bson:"poll,omitempty"`
}

func reactionKey(kind domain.ReactionKind, actor string) string { return string(kind) + " " + actor }

func (d postDoc) post() domain.Post {
	return domain.Post{ID: d.ID, ObjectURI: d.ObjectURI, AuthorURI: d.AuthorURI, GroupURI: d.GroupURI, Content: d.Content,
		Visibility: domain.Visibility(d.Visibility), InReplyTo: d.InReplyTo, Published: d.Published, Local: d.Local, Updated: fromPtr(d.Updated),
		Mentions: domain.NormalizeMentions(d.Mentions), Extras: d.Extras.extras(d.Poll)}
}

func fromPtr(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

func toPtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := utc(t)
	return &u
}

type dmDoc struct {
	ID              string     `bson:"_id"`
	ObjectURI       string     `bson:"objectUri"`
	AuthorURI       string     `bson:"authorUri"`
	Participants    []string   `bson:"participants"`
	ParticipantsKey string     `bson:"participantsKey"`
	Content         string     `bson:"content"`
	Published       time.Time  `bson:"published"`
	Local           bool       `bson:"local"`
	Updated         *time.Time `bson:"updated,omitempty"`
	Extras          *extrasDoc `bson:"extras,omitempty"`
}

func (d dmDoc) dm() domain.DmPost {
	return domain.DmPost{ID: d.ID, ObjectURI: d.ObjectURI, AuthorURI: d.AuthorURI, Participants: d.Participants,
		ParticipantsKey: d.ParticipantsKey, Content: d.Content, Published: d.Published, Local: d.Local, Updated: fromPtr(d.Updated),
		Extras: d.Extras.extras(nil)}
}

// Upsert implements ports.ForeignActorStore with a replace-upsert on
// actorUri. Two simultaneous first upserts of one actor can both try to
// insert; the unique index lets one win and the other is retried once,
// when it finds the document and replaces it. A key id another actor's
// document holds is a duplicate in foreign_avatars_public_key_id_key
// (domain.ErrAlreadyExists), which no retry changes: it is not retried
// where the server names the index, and fails again where it does not.
func (s *ContentStore) Upsert(ctx context.Context, f domain.ForeignAvatar) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	doc := foreignDoc{ActorURI: f.ActorURI, PublicKeyID: f.PublicKeyID, PublicKeyPEM: f.PublicKeyPEM, Inbox: f.Inbox,
		SharedInbox: f.SharedInbox, PreferredUsername: f.PreferredUsername, Host: f.Host, FetchedAt: utc(f.FetchedAt)}
	var err error
	for try := 0; try < 2; try++ {
		_, err = s.foreign.ReplaceOne(ctx, bson.D{{Key: "actorUri", Value: f.ActorURI}}, doc, options.Replace().SetUpsert(true))
		if !mongodrv.IsDuplicateKeyError(err) {
			break
		}
		if idx, named := dupIndex(err); named && idx == idxForeignKeyOwner {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("foreign actor %q: %w", f.ActorURI, interpretError(err, nil))
	}
	return nil
}

// ByActorURI implements ports.ForeignActorStore.
func (s *ContentStore) ByActorURI(ctx context.Context, uri string) (domain.ForeignAvatar, error) {
	return s.findForeign(ctx, bson.D{{Key: "actorUri", Value: uri}}, uri)
}

// ByKeyID implements ports.ForeignActorStore, along
// foreign_avatars_public_key_id_key.
func (s *ContentStore) ByKeyID(ctx context.Context, keyID string) (domain.ForeignAvatar, error) {
	if keyID == "" {
		return domain.ForeignAvatar{}, fmt.Errorf("foreign key %q: %w", keyID, domain.ErrNotFound)
	}
	return s.findForeign(ctx, bson.D{{Key: "publicKeyId", Value: keyID}}, keyID)
}

func (s *ContentStore) findForeign(ctx context.Context, filter bson.D, what string) (domain.ForeignAvatar, error) {
	var d foreignDoc
	if err := s.foreign.FindOne(ctx, filter).Decode(&d); err != nil {
		return domain.ForeignAvatar{}, fmt.Errorf("foreign actor %q: %w", what, interpretError(err, nil))
	}
	return d.actor(), nil
}

// InboxesOf implements ports.ForeignActorStore with one $in query that
// projects the three fields a delivery needs; the result follows the
// order of uris, each actor once.
func (s *ContentStore) InboxesOf(ctx context.Context, uris []string) ([]domain.ActorInboxes, error) {
	if len(uris) == 0 {
		return []domain.ActorInboxes{}, nil
	}
	cur, err := s.foreign.Find(ctx, bson.D{{Key: "actorUri", Value: bson.D{{Key: "$in", Value: uris}}}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "actorUri", Value: 1}, {Key: "inbox", Value: 1}, {Key: "sharedInbox", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("foreign actors' inboxes: %w", interpretError(err, nil))
	}
	var docs []foreignDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("foreign actors' inboxes: %w", interpretError(err, nil))
	}
	found := make([]domain.ActorInboxes, len(docs))
	for i, d := range docs {
		found[i] = d.actor().Inboxes()
	}
	return ports.InURIOrder(uris, found), nil
}

// OnDomain implements ports.ForeignActorStore: the cached actors after
// afterURI along foreign_avatars_actor_uri, each host tested by
// coversFilter. A suspension is rare, so the walk of the cache it costs is
// paid then, not by an index every upsert keeps.
func (s *ContentStore) OnDomain(ctx context.Context, d, afterURI string, limit int) ([]string, error) {
	filter := append(bson.D{{Key: "actorUri", Value: bson.D{{Key: "$gt", Value: afterURI}}}}, coversFilter("host", d)...)
	opts := options.Find().SetSort(bson.D{{Key: "actorUri", Value: 1}}).SetProjection(bson.D{{Key: "actorUri", Value: 1}})
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	type uriDoc struct {
		ActorURI string `bson:"actorUri"`
	}
	return findAll(ctx, s.foreign, filter, "foreign actors on "+d, func(u uriDoc) string { return u.ActorURI }, opts)
}

// Delete implements ports.ForeignActorStore.
func (s *ContentStore) Delete(ctx context.Context, uri string) error {
	res, err := s.foreign.DeleteOne(ctx, bson.D{{Key: "actorUri", Value: uri}})
	if err != nil {
		return fmt.Errorf("foreign actor %q: %w", uri, interpretError(err, nil))
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("foreign actor %q: %w", uri, domain.ErrNotFound)
	}
	return nil
}

// postDups: a duplicate objectUri is the idempotent "already stored"; a
// duplicate id with a new objectUri is a real conflict. Unnamed duplicates
// are settled by looking the objectUri up.
var postDups = &dupRules{byIndex: map[string]error{"_id_": errDupUnnamed}, other: errDupUnnamed}

// createOnce inserts doc; a duplicate objectUri (the same Create received
// twice, maybe at once) is created=false and no error.
func createOnce(ctx context.Context, c *mongodrv.Collection, doc any, objectURI string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	err := insertOne(ctx, c, doc)
	if err == nil {
		return true, nil
	}
	err = settleDup(ctx, interpretError(err, postDups), c,
		bson.D{{Key: "objectUri", Value: objectURI}}, errAlreadyStored, domain.ErrAlreadyExists)
	if errors.Is(err, errAlreadyStored) {
		return false, nil
	}
	return false, fmt.Errorf("post %q: %w", objectURI, err)
}

// errAlreadyStored marks the idempotent duplicate inside createOnce.
var errAlreadyStored = errors.New("post already stored")

// CreatePost implements ports.PostStore.
//
// A local post's open poll is recorded (open_polls) after the post: a
// crash between the two leaves a poll no maintenance pass closes, which
// a repeat of the insert does not mend; the post's author sees it open.
func (s *ContentStore) CreatePost(ctx context.Context, p domain.Post) (bool, error) {
	created, err := createOnce(ctx, s.posts, postDoc{ID: p.ID, ObjectURI: p.ObjectURI, AuthorURI: p.AuthorURI, GroupURI: p.GroupURI,
		Content: p.Content, Visibility: string(p.Visibility), InReplyTo: p.InReplyTo, Published: utc(p.Published), Local: p.Local, Updated: toPtr(p.Updated),
		Mentions: domain.NormalizeMentions(p.Mentions), Extras: newExtrasDoc(p.Extras), Poll: newPollDoc(p.Poll)}, p.ObjectURI)
	if err != nil || !created || !p.Local || p.Poll == nil || !p.Poll.Closed.IsZero() {
		return created, err
	}
	if err := insertOne(ctx, s.openPolls, openPollDoc{ObjectURI: p.ObjectURI, EndTime: utc(p.Poll.EndTime)}); err != nil && !mongodrv.IsDuplicateKeyError(err) {
		return true, fmt.Errorf("open poll %q: %w", p.ObjectURI, interpretError(err, nil))
	}
	return true, nil
}

// PostByObjectURI implements ports.PostStore.
func (s *ContentStore) PostByObjectURI(ctx context.Context, uri string) (domain.Post, error) {
	var d postDoc
	if err := s.posts.FindOne(ctx, bson.D{{Key: "objectUri", Value: uri}}).Decode(&d); err != nil {
		return domain.Post{}, fmt.Errorf("post %q: %w", uri, interpretError(err, nil))
	}
	return d.post(), nil
}

// PostByID implements ports.PostStore (the id is the document's _id).
func (s *ContentStore) PostByID(ctx context.Context, id string) (domain.Post, error) {
	var d postDoc
	if err := s.posts.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		return domain.Post{}, fmt.Errorf("post id %q: %w", id, interpretError(err, nil))
	}
	return d.post(), nil
}

// ReactedTo implements ports.PostStore: the posts' reactions (read by
// their unique objectUri index, only those holding the actor's) and the
// actor's boosts (by the boosts' actor index), two finds.
func (s *ContentStore) ReactedTo(ctx context.Context, actor string, uris []string) ([]domain.Reaction, error) {
	if len(uris) == 0 {
		return nil, nil
	}
	like, announce := reactionKey(domain.ReactionLike, actor), reactionKey(domain.ReactionAnnounce, actor)
	type reacted struct {
		ObjectURI string   `bson:"objectUri"`
		Reactions []string `bson:"reactions"`
	}
	posts, err := findAll(ctx, s.posts, bson.D{{Key: "objectUri", Value: bson.D{{Key: "$in", Value: uris}}},
		{Key: "reactions", Value: bson.D{{Key: "$in", Value: bson.A{like, announce}}}}}, "reactions by",
		func(d reacted) reacted { return d }, options.Find().SetProjection(bson.D{{Key: "objectUri", Value: 1}, {Key: "reactions", Value: 1}}))
	if err != nil {
		return nil, err
	}
	var out []domain.Reaction
	announced := map[string]bool{}
	for _, p := range posts {
		for _, r := range p.Reactions {
			switch r {
			case like:
				out = append(out, domain.Reaction{ObjectURI: p.ObjectURI, ActorURI: actor, Kind: domain.ReactionLike})
			case announce:
				announced[p.ObjectURI] = true
				out = append(out, domain.Reaction{ObjectURI: p.ObjectURI, ActorURI: actor, Kind: domain.ReactionAnnounce})
			}
		}
	}
	boosts, err := findAll(ctx, s.boosts, bson.D{{Key: "actorUri", Value: actor}, {Key: "objectUri", Value: bson.D{{Key: "$in", Value: uris}}}},
		"boosts by", boostDoc.boost)
	if err != nil {
		return nil, err
	}
	for _, b := range boosts {
		if !announced[b.ObjectURI] {
			announced[b.ObjectURI] = true
			out = append(out, domain.Reaction{ObjectURI: b.ObjectURI, ActorURI: actor, Kind: domain.ReactionAnnounce})
		}
	}
	return out, nil
}

// PostsByAuthor implements ports.PostStore along posts_author_published.
func (s *ContentStore) PostsByAuthor(ctx context.Context, author string, before time.Time, limit int) ([]domain.Post, error) {
	return s.listPosts(ctx, bson.D{{Key: "authorUri", Value: author}}, before, limit)
}

// PostsByGroup implements ports.PostStore along posts_group_published.
func (s *ContentStore) PostsByGroup(ctx context.Context, group string, before time.Time, limit int) ([]domain.Post, error) {
	if group == "" {
		return nil, nil
	}
	return s.listPosts(ctx, bson.D{{Key: "groupUri", Value: group}}, before, limit)
}

// PostsMentioning implements ports.PostStore along posts_mentions.
func (s *ContentStore) PostsMentioning(ctx context.Context, actor string, before time.Time, limit int) ([]domain.Post, error) {
	return s.listPosts(ctx, bson.D{{Key: "mentions", Value: actor}}, before, limit)
}

// PostsTagged implements ports.PostStore along posts_hashtags.
func (s *ContentStore) PostsTagged(ctx context.Context, tag string, before time.Time, limit int) ([]domain.Post, error) {
	return s.listPosts(ctx, bson.D{{Key: "extras.hashtags", Value: tag}, {Key: "visibility", Value: string(domain.VisibilityPublic)}}, before, limit)
}

// newestFirst is the listing order of the memory adapter: published
// descending, then object URI ascending.
var newestFirst = bson.D{{Key: "published", Value: -1}, {Key: "objectUri", Value: 1}}

func listOptions(limit int) *options.FindOptions {
	opts := options.Find().SetSort(newestFirst)
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return opts
}

func withBefore(filter bson.D, before time.Time) bson.D {
	if !before.IsZero() {
		filter = append(filter, bson.E{Key: "published", Value: bson.D{{Key: "$lt", Value: before.UTC()}}})
	}
	return filter
}

func (s *ContentStore) listPosts(ctx context.Context, filter bson.D, before time.Time, limit int) ([]domain.Post, error) {
	return findAll(ctx, s.posts, withBefore(filter, before), "list posts", postDoc.post, listOptions(limit))
}

// PostsByAuthors implements ports.PostStore along posts_author_published.
func (s *ContentStore) PostsByAuthors(ctx context.Context, authors []string, before time.Time, limit int) ([]domain.Post, error) {
	if len(authors) == 0 {
		return nil, nil
	}
	return s.listPosts(ctx, bson.D{{Key: "authorUri", Value: bson.D{{Key: "$in", Value: authors}}}}, before, limit)
}

// Replies implements ports.PostStore along posts_in_reply_to.
func (s *ContentStore) Replies(ctx context.Context, uri string, limit int) ([]domain.Post, error) {
	if uri == "" {
		return nil, nil
	}
	opts := options.Find().SetSort(bson.D{{Key: "published", Value: 1}, {Key: "objectUri", Value: 1}})
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return findAll(ctx, s.posts, bson.D{{Key: "inReplyTo", Value: uri}}, "replies", postDoc.post, opts)
}

// PublicPosts implements ports.PostStore along posts_visibility_published.
func (s *ContentStore) PublicPosts(ctx context.Context, origin ports.Origin, before time.Time, limit int) ([]domain.Post, error) {
	filter := bson.D{{Key: "visibility", Value: string(domain.VisibilityPublic)}}
	if origin != ports.OriginAll {
		filter = append(filter, bson.E{Key: "local", Value: origin == ports.OriginLocal})
	}
	return s.listPosts(ctx, filter, before, limit)
}

// BoostsByActors implements ports.PostStore along boosts_actor_created.
func (s *ContentStore) BoostsByActors(ctx context.Context, actors []string, before time.Time, limit int) ([]domain.Boost, error) {
	if len(actors) == 0 {
		return nil, nil
	}
	filter := bson.D{{Key: "actorUri", Value: bson.D{{Key: "$in", Value: actors}}}}
	if !before.IsZero() {
		filter = append(filter, bson.E{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: before.UTC()}}})
	}
	opts := options.Find().SetSort(bson.D{{Key: "createdAt", Value: -1}, {Key: "objectUri", Value: 1}, {Key: "actorUri", Value: 1}})
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return findAll(ctx, s.boosts, filter, "boosts by actors", boostDoc.boost, opts)
}

// DeletePost implements ports.PostStore.
func (s *ContentStore) DeletePost(ctx context.Context, uri string) error {
	filter := bson.D{{Key: "objectUri", Value: uri}}
	p, err := s.posts.DeleteOne(ctx, filter)
	if err != nil {
		return fmt.Errorf("post %q: %w", uri, interpretError(err, nil))
	}
	d, err := s.dms.DeleteOne(ctx, filter)
	if err != nil {
		return fmt.Errorf("direct post %q: %w", uri, interpretError(err, nil))
	}
	// After the post: a boost AddBoost inserts while the post goes is
	// removed here, or (if it lands later still) skipped by readers, who
	// find no post for it.
	if _, err := s.boosts.DeleteMany(ctx, filter); err != nil {
		return fmt.Errorf("boosts of %q: %w", uri, interpretError(err, nil))
	}
	if _, err := s.votes.DeleteMany(ctx, filter); err != nil {
		return fmt.Errorf("votes in %q: %w", uri, interpretError(err, nil))
	}
	if _, err := s.openPolls.DeleteOne(ctx, bson.D{{Key: "_id", Value: uri}}); err != nil {
		return fmt.Errorf("open poll %q: %w", uri, interpretError(err, nil))
	}
	if p.DeletedCount+d.DeletedCount == 0 {
		return fmt.Errorf("post %q: %w", uri, domain.ErrNotFound)
	}
	return nil
}

type boostDoc struct {
	ID          string    `bson:"_id"`
	ActorURI    string    `bson:"actorUri"`
	ObjectURI   string    `bson:"objectUri"`
	ActivityURI string    `bson:"activityUri"`
	CreatedAt   time.Time `bson:"createdAt"`
}

func (d boostDoc) boost() domain.Boost {
	return domain.Boost{ActorURI: d.ActorURI, ObjectURI: d.ObjectURI, ActivityURI: d.ActivityURI, CreatedAt: d.CreatedAt.UTC()}
}

// AddBoost implements ports.PostStore: the _id (actor and post) makes a
// second boost of one post by one actor a duplicate key, however many
// arrive at once.
func (s *ContentStore) AddBoost(ctx context.Context, b domain.Boost) (bool, error) {
	n, err := s.posts.CountDocuments(ctx, bson.D{{Key: "objectUri", Value: b.ObjectURI}})
	if err != nil {
		return false, fmt.Errorf("boost of %q: %w", b.ObjectURI, interpretError(err, nil))
	}
	if n == 0 {
		return false, fmt.Errorf("post %q: %w", b.ObjectURI, domain.ErrNotFound)
	}
	err = insertOne(ctx, s.boosts, boostDoc{ID: b.ActorURI + "\n" + b.ObjectURI, ActorURI: b.ActorURI, ObjectURI: b.ObjectURI,
		ActivityURI: b.ActivityURI, CreatedAt: utc(b.CreatedAt)})
	if mongodrv.IsDuplicateKeyError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("boost of %q: %w", b.ObjectURI, interpretError(err, nil))
	}
	return true, nil
}

// RemoveBoost implements ports.PostStore: one FindOneAndDelete along
// boosts_actor_created (the actor's boosts), the boost of the post itself
// first.
func (s *ContentStore) RemoveBoost(ctx context.Context, actor, uri string) (domain.Boost, error) {
	for _, field := range []string{"objectUri", "activityUri"} {
		var d boostDoc
		err := s.boosts.FindOneAndDelete(ctx, bson.D{{Key: "actorUri", Value: actor}, {Key: field, Value: uri}}).Decode(&d)
		if errors.Is(err, mongodrv.ErrNoDocuments) {
			continue
		}
		if err != nil {
			return domain.Boost{}, fmt.Errorf("boost %q by %q: %w", uri, actor, interpretError(err, nil))
		}
		return d.boost(), nil
	}
	return domain.Boost{}, fmt.Errorf("boost %q by %q: %w", uri, actor, domain.ErrNotFound)
}

// BoostsBy implements ports.PostStore along boosts_actor_created.
func (s *ContentStore) BoostsBy(ctx context.Context, actor string, before time.Time, limit int) ([]domain.Boost, error) {
	filter := bson.D{{Key: "actorUri", Value: actor}}
	if !before.IsZero() {
		filter = append(filter, bson.E{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: before.UTC()}}})
	}
	opts := options.Find().SetSort(bson.D{{Key: "createdAt", Value: -1}, {Key: "objectUri", Value: 1}})
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return findAll(ctx, s.boosts, filter, "boosts by", boostDoc.boost, opts)
}

// UpdateContent implements ports.PostStore: one conditional UpdateOne per
// collection (the condition on the last edit is in the filter, so it is
// atomic per document), then a count to tell an old Update from a missing
// post.
func (s *ContentStore) UpdateContent(ctx context.Context, uri, content string, e domain.Extras, updated time.Time) (bool, error) {
	t := utc(updated)
	filter := bson.D{{Key: "objectUri", Value: uri}, {Key: "$or", Value: bson.A{
		bson.D{{Key: "updated", Value: bson.D{{Key: "$lt", Value: t}}}},
		bson.D{{Key: "updated", Value: bson.D{{Key: "$exists", Value: false}}}, {Key: "published", Value: bson.D{{Key: "$lt", Value: t}}}},
	}}}
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "content", Value: content}, {Key: "updated", Value: t}}}}
	if x := newExtrasDoc(e); x != nil {
		set[0].Value = append(set[0].Value.(bson.D), bson.E{Key: "extras", Value: x})
	} else {
		set = append(set, bson.E{Key: "$unset", Value: bson.D{{Key: "extras", Value: ""}}})
	}
	for _, c := range []*mongodrv.Collection{s.posts, s.dms} {
		res, err := c.UpdateOne(ctx, filter, set)
		if err != nil {
			return false, fmt.Errorf("update post %q: %w", uri, interpretError(err, nil))
		}
		if res.ModifiedCount > 0 {
			return true, nil
		}
	}
	for _, c := range []*mongodrv.Collection{s.posts, s.dms} {
		n, err := c.CountDocuments(ctx, bson.D{{Key: "objectUri", Value: uri}})
		if err != nil {
			return false, fmt.Errorf("update post %q: %w", uri, interpretError(err, nil))
		}
		if n > 0 {
			return false, nil
		}
	}
	return false, fmt.Errorf("post %q: %w", uri, domain.ErrNotFound)
}

// AddReaction implements ports.PostStore: one UpdateOne whose filter
// requires that the actor has no reaction of that kind yet, so two at once
// add one.
func (s *ContentStore) AddReaction(ctx context.Context, r domain.Reaction) (bool, error) {
	key := reactionKey(r.Kind, r.ActorURI)
	res, err := s.posts.UpdateOne(ctx,
		bson.D{{Key: "objectUri", Value: r.ObjectURI}, {Key: "reactions", Value: bson.D{{Key: "$ne", Value: key}}}},
		bson.D{{Key: "$push", Value: bson.D{{Key: "reactions", Value: key}}}})
	if err != nil {
		return false, fmt.Errorf("%s of %q: %w", r.Kind, r.ObjectURI, interpretError(err, nil))
	}
	if res.ModifiedCount > 0 {
		return true, nil
	}
	n, err := s.posts.CountDocuments(ctx, bson.D{{Key: "objectUri", Value: r.ObjectURI}})
	if err != nil {
		return false, fmt.Errorf("%s of %q: %w", r.Kind, r.ObjectURI, interpretError(err, nil))
	}
	if n == 0 {
		return false, fmt.Errorf("post %q: %w", r.ObjectURI, domain.ErrNotFound)
	}
	return false, nil
}

// RemoveReaction implements ports.PostStore.
func (s *ContentStore) RemoveReaction(ctx context.Context, uri, actor string, kind domain.ReactionKind) error {
	key := reactionKey(kind, actor)
	res, err := s.posts.UpdateOne(ctx,
		bson.D{{Key: "objectUri", Value: uri}, {Key: "reactions", Value: key}},
		bson.D{{Key: "$pull", Value: bson.D{{Key: "reactions", Value: key}}}})
	if err != nil {
		return fmt.Errorf("%s of %q: %w", kind, uri, interpretError(err, nil))
	}
	if res.ModifiedCount == 0 {
		return fmt.Errorf("%s of %q by %q: %w", kind, uri, actor, domain.ErrNotFound)
	}
	return nil
}

// CountReactions implements ports.PostStore from the post's document.
func (s *ContentStore) CountReactions(ctx context.Context, uri string) (map[domain.ReactionKind]int, error) {
	var d postDoc
	err := s.posts.FindOne(ctx, bson.D{{Key: "objectUri", Value: uri}}).Decode(&d)
	out := map[domain.ReactionKind]int{}
	if errors.Is(err, mongodrv.ErrNoDocuments) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reactions of %q: %w", uri, interpretError(err, nil))
	}
	for _, r := range d.Reactions {
		kind, _, _ := strings.Cut(r, " ")
		out[domain.ReactionKind(kind)]++
	}
	return out, nil
}

// CreateDm implements ports.PostStore.
func (s *ContentStore) CreateDm(ctx context.Context, p domain.DmPost) (bool, error) {
	parts := p.Participants
	if parts == nil {
		parts = []string{}
	}
	e := p.Extras
	e.Poll = nil
	return createOnce(ctx, s.dms, dmDoc{ID: p.ID, ObjectURI: p.ObjectURI, AuthorURI: p.AuthorURI, Participants: parts,
		ParticipantsKey: p.ParticipantsKey, Content: p.Content, Published: utc(p.Published), Local: p.Local, Updated: toPtr(p.Updated),
		Extras: newExtrasDoc(e)}, p.ObjectURI)
}

// DmByObjectURI implements ports.PostStore.
func (s *ContentStore) DmByObjectURI(ctx context.Context, uri string) (domain.DmPost, error) {
	var d dmDoc
	if err := s.dms.FindOne(ctx, bson.D{{Key: "objectUri", Value: uri}}).Decode(&d); err != nil {
		return domain.DmPost{}, fmt.Errorf("direct post %q: %w", uri, interpretError(err, nil))
	}
	return d.dm(), nil
}

// DmByID implements ports.PostStore (the id is _id).
func (s *ContentStore) DmByID(ctx context.Context, id string) (domain.DmPost, error) {
	var d dmDoc
	if err := s.dms.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		return domain.DmPost{}, fmt.Errorf("direct post id %q: %w", id, interpretError(err, nil))
	}
	return d.dm(), nil
}

// DmThread implements ports.PostStore along dm_posts_participants_key.
func (s *ContentStore) DmThread(ctx context.Context, key string, before time.Time, limit int) ([]domain.DmPost, error) {
	return findAll(ctx, s.dms, withBefore(bson.D{{Key: "participantsKey", Value: key}}, before), "direct thread", dmDoc.dm, listOptions(limit))
}

// CountLocalPosts implements ports.PostStore: posts and direct posts with
// local set.
func (s *ContentStore) CountLocalPosts(ctx context.Context) (int, error) {
	total := 0
	for _, c := range []*mongodrv.Collection{s.posts, s.dms} {
		n, err := c.CountDocuments(ctx, bson.D{{Key: "local", Value: true}})
		if err != nil {
			return 0, fmt.Errorf("count local posts: %w", interpretError(err, nil))
		}
		total += int(n)
	}
	return total, nil
}

// deleteChunk is how many of an actor's posts DeleteActorContent removes
// per round of deleteMany calls.
const deleteChunk = 500

// DeleteActorContent implements ports.PostStore without a transaction (the
// adapter uses none), as deleteMany calls that a repeat completes: the
// actor's posts go a chunk at a time, each chunk's boosts before the
// chunk itself (so a crash between the two leaves posts, which a repeat
// finds again, never boosts of posts gone); reactions and mentions live in
// the posts' documents and go with them. Then its direct posts
// (dm_posts_author), its own boosts (boosts_actor_created) and its
// reactions to other posts, one $pull per kind along posts_reactions.
func (s *ContentStore) DeleteActorContent(ctx context.Context, actor string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	fail := func(what string, err error) (int, error) {
		return 0, fmt.Errorf("delete content of %q: %s: %w", actor, what, interpretError(err, nil))
	}
	byActor := bson.D{{Key: "authorUri", Value: actor}}
	n := 0
	for {
		cur, err := s.posts.Find(ctx, byActor, options.Find().SetProjection(bson.D{{Key: "objectUri", Value: 1}}).SetLimit(deleteChunk))
		if err != nil {
			return fail("posts", err)
		}
		var docs []struct {
			ObjectURI string `bson:"objectUri"`
		}
		if err := cur.All(ctx, &docs); err != nil {
			return fail("posts", err)
		}
		if len(docs) == 0 {
			break
		}
		uris := make(bson.A, len(docs))
		for i, d := range docs {
			uris[i] = d.ObjectURI
		}
		chunk := bson.D{{Key: "objectUri", Value: bson.D{{Key: "$in", Value: uris}}}}
		if _, err := s.boosts.DeleteMany(ctx, chunk); err != nil {
			return fail("boosts of its posts", err)
		}
		if _, err := s.votes.DeleteMany(ctx, chunk); err != nil {
			return fail("votes in its polls", err)
		}
		if _, err := s.openPolls.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: uris}}}}); err != nil {
			return fail("its open polls", err)
		}
		res, err := s.posts.DeleteMany(ctx, append(chunk, byActor...))
		if err != nil {
			return fail("posts", err)
		}
		n += int(res.DeletedCount)
	}
	res, err := s.dms.DeleteMany(ctx, byActor)
	if err != nil {
		return fail("direct posts", err)
	}
	n += int(res.DeletedCount)
	if _, err := s.boosts.DeleteMany(ctx, bson.D{{Key: "actorUri", Value: actor}}); err != nil {
		return fail("boosts", err)
	}
	for _, kind := range []domain.ReactionKind{domain.ReactionLike, domain.ReactionAnnounce} {
		key := reactionKey(kind, actor)
		if _, err := s.posts.UpdateMany(ctx, bson.D{{Key: "reactions", Value: key}},
			bson.D{{Key: "$pull", Value: bson.D{{Key: "reactions", Value: key}}}}); err != nil {
			return fail("reactions", err)
		}
	}
	return n, nil
}

// tombstoneDoc is keyed by the URI, so the _id index keeps one per URI.
type tombstoneDoc struct {
	URI       string    `bson:"_id"`
	ActorURI  string    `bson:"actorUri"`
	DeletedAt time.Time `bson:"deletedAt"`
}

// AddTombstone implements ports.TombstoneStore: an insert whose duplicate
// _id is the first tombstone of the URI, kept as it is.
func (s *ContentStore) AddTombstone(ctx context.Context, t domain.Tombstone) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := insertOne(ctx, s.tombstones, tombstoneDoc{URI: t.URI, ActorURI: t.ActorURI, DeletedAt: utc(t.DeletedAt)})
	if err != nil && !mongodrv.IsDuplicateKeyError(err) {
		return fmt.Errorf("tombstone %q: %w", t.URI, interpretError(err, nil))
	}
	return nil
}

// Tombstoned implements ports.TombstoneStore along _id.
func (s *ContentStore) Tombstoned(ctx context.Context, uri string) (domain.Tombstone, error) {
	var d tombstoneDoc
	if err := s.tombstones.FindOne(ctx, bson.D{{Key: "_id", Value: uri}}).Decode(&d); err != nil {
		return domain.Tombstone{}, fmt.Errorf("tombstone %q: %w", uri, interpretError(err, nil))
	}
	return domain.Tombstone{URI: d.URI, ActorURI: d.ActorURI, DeletedAt: d.DeletedAt.UTC()}, nil
}
