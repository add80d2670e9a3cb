package postgres

import (
	"context"
	"fmt"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.ForeignActorStore = (*ContentStore)(nil)
	_ ports.PostStore         = (*ContentStore)(nil)
	_ ports.TombstoneStore    = (*ContentStore)(nil)
	_ ports.PollStore         = (*ContentStore)(nil)
)

// ContentStore keeps cached remote actors (foreign_avatars), posts and
// direct posts (posts, dm_posts), and the tombstones of deleted ones
// (tombstones).
type ContentStore struct{ pool *pgxpool.Pool }

// NewContentStore returns the store on pool.
func NewContentStore(pool *pgxpool.Pool) *ContentStore { return &ContentStore{pool: pool} }

const foreignColumns = `actor_uri, public_key_id, public_key_pem, inbox, shared_inbox, preferred_username, host, fetched_at`

func scanForeign(row pgx.Row) (domain.ForeignAvatar, error) {
	var f domain.ForeignAvatar
	err := row.Scan(&f.ActorURI, &f.PublicKeyID, &f.PublicKeyPEM, &f.Inbox, &f.SharedInbox, &f.PreferredUsername, &f.Host, &f.FetchedAt)
	if err != nil {
		return domain.ForeignAvatar{}, err
	}
	f.FetchedAt = f.FetchedAt.UTC()
	return f, nil
}

// Upsert implements ports.ForeignActorStore: one INSERT ... ON CONFLICT DO
// UPDATE on foreign_avatars_actor_uri_inboxes_key, so concurrent fetches of one
// actor leave one row, the last written. A key id another actor's row
// holds fails the statement on foreign_avatars_public_key_id_key (23505,
// domain.ErrAlreadyExists), the row unchanged.
func (s *ContentStore) Upsert(ctx context.Context, f domain.ForeignAvatar) error {
	_, err := s.pool.Exec(ctx, `
INSERT INTO foreign_avatars (`+foreignColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (actor_uri) DO UPDATE SET
	public_key_id = EXCLUDED.public_key_id, public_key_pem = EXCLUDED.public_key_pem,
	inbox = EXCLUDED.inbox, shared_inbox = EXCLUDED.shared_inbox,
	preferred_username = EXCLUDED.preferred_username, host = EXCLUDED.host, fetched_at = EXCLUDED.fetched_at`,
		f.ActorURI, f.PublicKeyID, f.PublicKeyPEM, f.Inbox, f.SharedInbox, f.PreferredUsername, f.Host, f.FetchedAt)
	if err != nil {
		return fmt.Errorf("foreign actor %q: %w", f.ActorURI, interpretError(err))
	}
	return nil
}

// ByActorURI implements ports.ForeignActorStore.
func (s *ContentStore) ByActorURI(ctx context.Context, uri string) (domain.ForeignAvatar, error) {
	f, err := scanForeign(s.pool.QueryRow(ctx, `SELECT `+foreignColumns+` FROM foreign_avatars WHERE actor_uri = $1`, uri))
	if err != nil {
		return domain.ForeignAvatar{}, fmt.Errorf("foreign actor %q: %w", uri, interpretError(err))
	}
	return f, nil
}

const byKeyIDSQL = `SELECT ` + foreignColumns + ` FROM foreign_avatars WHERE public_key_id = $1 AND public_key_id <> ''`

// ByKeyID implements ports.ForeignActorStore on
// foreign_avatars_public_key_id_key (the query states the index's
// predicate, so a generic plan may use it too).
func (s *ContentStore) ByKeyID(ctx context.Context, keyID string) (domain.ForeignAvatar, error) {
	f, err := scanForeign(s.pool.QueryRow(ctx, byKeyIDSQL, keyID))
	if err != nil {
		return domain.ForeignAvatar{}, fmt.Errorf("foreign key %q: %w", keyID, interpretError(err))
	}
	return f, nil
}

// InboxesOf implements ports.ForeignActorStore in one query of the three
// columns a delivery needs, returning the actors in the order of uris,
// each once.
func (s *ContentStore) InboxesOf(ctx context.Context, uris []string) ([]domain.ActorInboxes, error) {
	if len(uris) == 0 {
		return []domain.ActorInboxes{}, nil
	}
	found, err := query(ctx, s.pool, func(row pgx.Row) (a domain.ActorInboxes, err error) {
		err = row.Scan(&a.ActorURI, &a.Inbox, &a.SharedInbox)
		return a, err
	}, `SELECT actor_uri, inbox, shared_inbox FROM foreign_avatars WHERE actor_uri = ANY($1::text[])`, uris)
	if err != nil {
		return nil, fmt.Errorf("foreign actors' inboxes: %w", interpretError(err))
	}
	return ports.InURIOrder(uris, found), nil
}

// OnDomain implements ports.ForeignActorStore: the cached actors after
// afterURI in byte order, each host tested by coversSQL. A suspension is
// rare, so the walk of the cache it costs is paid then, not by an index
// every upsert keeps.
func (s *ContentStore) OnDomain(ctx context.Context, d, afterURI string, limit int) ([]string, error) {
	covers, v1, v2 := coversSQL(d, "host", "$1::text", "$2::text")
	out, err := query(ctx, s.pool, scanText, `
SELECT actor_uri FROM foreign_avatars
WHERE actor_uri COLLATE "C" > $3 AND `+covers+`
ORDER BY actor_uri COLLATE "C" LIMIT $4`, v1, v2, afterURI, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("foreign actors on %s: %w", d, interpretError(err))
	}
	return out, nil
}

// Delete implements ports.ForeignActorStore.
func (s *ContentStore) Delete(ctx context.Context, uri string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM foreign_avatars WHERE actor_uri = $1`, uri)
	if err != nil {
		return fmt.Errorf("delete foreign actor %q: %w", uri, interpretError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("foreign actor %q: %w", uri, domain.ErrNotFound)
	}
	return nil
}

const postColumns = `id, object_uri, author_uri, group_uri, content, visibility, in_reply_to, published, local, updated, extras, poll`

// postSelect reads postColumns, qualified, and the post's mentions
// (post_mentions' primary key serves the subquery).
const postSelect = `posts.id, posts.object_uri, posts.author_uri, posts.group_uri, posts.content, posts.visibility,
  posts.in_reply_to, posts.published, posts.local, posts.updated, posts.extras, posts.poll,
  ARRAY(SELECT m.actor_uri FROM post_mentions m WHERE m.object_uri = posts.object_uri ORDER BY m.actor_uri COLLATE "C")`

func scanPost(row pgx.Row) (domain.Post, error) {
	var p domain.Post
	var vis string
	var updated *time.Time
	var extras, poll []byte
	err := row.Scan(&p.ID, &p.ObjectURI, &p.AuthorURI, &p.GroupURI, &p.Content, &vis, &p.InReplyTo, &p.Published, &p.Local, &updated,
		&extras, &poll, &p.Mentions)
	if err != nil {
		return domain.Post{}, err
	}
	if p.Extras, err = ports.DecodeExtras(extras); err != nil {
		return domain.Post{}, fmt.Errorf("post %q: %w", p.ObjectURI, err)
	}
	if p.Poll, err = ports.DecodePoll(poll); err != nil {
		return domain.Post{}, fmt.Errorf("post %q: %w", p.ObjectURI, err)
	}
	if len(p.Mentions) == 0 {
		p.Mentions = nil
	}
	p.Visibility = domain.Visibility(vis)
	p.Published = p.Published.UTC()
	if updated != nil {
		p.Updated = updated.UTC()
	}
	return p, nil
}

// CreatePost implements ports.PostStore: ON CONFLICT (object_uri) DO
// NOTHING keeps the first copy when an inbox gets the same Create twice;
// the mentions, the hashtags of a public post and the open poll of a
// local one are inserted by the same statement, only with a post it
// inserted.
func (s *ContentStore) CreatePost(ctx context.Context, p domain.Post) (bool, error) {
	mentions := domain.NormalizeMentions(p.Mentions)
	if mentions == nil {
		mentions = []string{}
	}
	extras, err := ports.EncodeExtras(p.Extras)
	if err != nil {
		return false, fmt.Errorf("post %q: %w", p.ObjectURI, err)
	}
	poll, err := ports.EncodePoll(p.Poll)
	if err != nil {
		return false, fmt.Errorf("post %q: %w", p.ObjectURI, err)
	}
	tags := []string{}
	if p.Visibility == domain.VisibilityPublic && p.Hashtags != nil {
		tags = p.Hashtags
	}
	var openEnd *time.Time
	if p.Local && p.Poll != nil && p.Poll.Closed.IsZero() {
		end := p.Poll.EndTime.UTC()
		openEnd = &end
	}
	var created bool
	err = s.pool.QueryRow(ctx, `
WITH p AS (
  INSERT INTO posts (`+postColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $12::jsonb, $13::jsonb)
  ON CONFLICT (object_uri) DO NOTHING
  RETURNING object_uri, published
), m AS (
  INSERT INTO post_mentions (object_uri, actor_uri, published)
  SELECT p.object_uri, a, p.published FROM p, unnest($11::text[]) a
), h AS (
  INSERT INTO post_hashtags (object_uri, tag, published)
  SELECT p.object_uri, t, p.published FROM p, unnest($14::text[]) t
  ON CONFLICT DO NOTHING
), o AS (
  INSERT INTO open_polls (object_uri, end_time)
  SELECT p.object_uri, $15::timestamptz FROM p WHERE $15::timestamptz IS NOT NULL
)
SELECT EXISTS (SELECT 1 FROM p)`,
		p.ID, p.ObjectURI, p.AuthorURI, p.GroupURI, p.Content, string(p.Visibility), p.InReplyTo, p.Published, p.Local, nullTime(p.Updated), mentions,
		jsonArg(extras), jsonArg(poll), tags, openEnd).Scan(&created)
	if err != nil {
		return false, fmt.Errorf("post %q: %w", p.ObjectURI, interpretError(err))
	}
	return created, nil
}

// PostByObjectURI implements ports.PostStore.
func (s *ContentStore) PostByObjectURI(ctx context.Context, uri string) (domain.Post, error) {
	p, err := scanPost(s.pool.QueryRow(ctx, `SELECT `+postSelect+` FROM posts WHERE object_uri = $1`, uri))
	if err != nil {
		return domain.Post{}, fmt.Errorf("post %q: %w", uri, interpretError(err))
	}
	return p, nil
}

// PostByID implements ports.PostStore (the id is the primary key).
func (s *ContentStore) PostByID(ctx context.Context, id string) (domain.Post, error) {
	p, err := scanPost(s.pool.QueryRow(ctx, `SELECT `+postSelect+` FROM posts WHERE id = $1`, id))
	if err != nil {
		return domain.Post{}, fmt.Errorf("post id %q: %w", id, interpretError(err))
	}
	return p, nil
}

// ReactedTo implements ports.PostStore: one statement over both tables,
// each read by its primary key.
func (s *ContentStore) ReactedTo(ctx context.Context, actor string, uris []string) ([]domain.Reaction, error) {
	if len(uris) == 0 {
		return nil, nil
	}
	out, err := query(ctx, s.pool, func(row pgx.Row) (domain.Reaction, error) {
		x := domain.Reaction{ActorURI: actor}
		var kind string
		err := row.Scan(&x.ObjectURI, &kind)
		x.Kind = domain.ReactionKind(kind)
		return x, err
	}, `
SELECT object_uri, kind FROM reactions WHERE actor_uri = $1 AND object_uri = ANY($2)
UNION
SELECT object_uri, 'announce' FROM boosts WHERE actor_uri = $1 AND object_uri = ANY($2)`, actor, uris)
	if err != nil {
		return nil, fmt.Errorf("reactions by %q: %w", actor, interpretError(err))
	}
	return out, nil
}

// PostsByAuthor implements ports.PostStore on posts_author_published_idx.
func (s *ContentStore) PostsByAuthor(ctx context.Context, author string, before time.Time, limit int) ([]domain.Post, error) {
	return s.listPosts(ctx, "author_uri", author, before, limit)
}

// PostsByGroup implements ports.PostStore on posts_group_published_idx. An
// empty group matches nothing: it is not a group.
func (s *ContentStore) PostsByGroup(ctx context.Context, group string, before time.Time, limit int) ([]domain.Post, error) {
	if group == "" {
		return nil, nil
	}
	return s.listPosts(ctx, "group_uri", group, before, limit)
}

// PostsMentioning implements ports.PostStore on post_mentions_actor_idx:
// the mentions carry their post's published time, which never changes.
func (s *ContentStore) PostsMentioning(ctx context.Context, actor string, b time.Time, limit int) ([]domain.Post, error) {
	out, err := query(ctx, s.pool, scanPost, `
SELECT `+postSelect+` FROM post_mentions pm JOIN posts ON posts.object_uri = pm.object_uri
WHERE pm.actor_uri = $1 AND pm.published < $2
ORDER BY pm.published DESC, pm.object_uri COLLATE "C"
LIMIT $3`, actor, before(b), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("posts mentioning %q: %w", actor, interpretError(err))
	}
	return out, nil
}

// PostsTagged implements ports.PostStore on post_hashtags_tag_idx: the
// hashtags carry their post's published time, which never changes.
func (s *ContentStore) PostsTagged(ctx context.Context, tag string, b time.Time, limit int) ([]domain.Post, error) {
	out, err := query(ctx, s.pool, scanPost, `
SELECT `+postSelect+` FROM post_hashtags ph JOIN posts ON posts.object_uri = ph.object_uri
WHERE ph.tag = $1 AND ph.published < $2
ORDER BY ph.published DESC, ph.object_uri COLLATE "C"
LIMIT $3`, tag, before(b), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("posts tagged %q: %w", tag, interpretError(err))
	}
	return out, nil
}

// jsonArg passes encoded JSON as a jsonb parameter: NULL for none.
func jsonArg(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// listPosts lists newest first; ties (one instant) in object URI byte order,
// as the memory adapter does. column is one of two constants, never input.
func (s *ContentStore) listPosts(ctx context.Context, column, value string, b time.Time, limit int) ([]domain.Post, error) {
	out, err := query(ctx, s.pool, scanPost, `
SELECT `+postSelect+` FROM posts
WHERE `+column+` = $1 AND published < $2
ORDER BY published DESC, object_uri COLLATE "C"
LIMIT $3`, value, before(b), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("posts by %s %q: %w", column, value, interpretError(err))
	}
	return out, nil
}

// PostsByAuthors implements ports.PostStore on posts_author_published_idx.
func (s *ContentStore) PostsByAuthors(ctx context.Context, authors []string, b time.Time, limit int) ([]domain.Post, error) {
	if len(authors) == 0 {
		return nil, nil
	}
	return s.queryPosts(ctx, "posts by authors", `
SELECT `+postSelect+` FROM posts
WHERE author_uri = ANY($1) AND published < $2
ORDER BY published DESC, object_uri COLLATE "C"
LIMIT $3`, authors, before(b), limitArg(limit))
}

// Replies implements ports.PostStore on posts_in_reply_to_idx.
func (s *ContentStore) Replies(ctx context.Context, uri string, limit int) ([]domain.Post, error) {
	if uri == "" {
		return nil, nil
	}
	return s.queryPosts(ctx, "replies", `
SELECT `+postSelect+` FROM posts
WHERE in_reply_to = $1
ORDER BY published, object_uri COLLATE "C"
LIMIT $2`, uri, limitArg(limit))
}

// PublicPosts implements ports.PostStore on posts_visibility_published_idx.
func (s *ContentStore) PublicPosts(ctx context.Context, origin ports.Origin, b time.Time, limit int) ([]domain.Post, error) {
	return s.queryPosts(ctx, "public posts", `
SELECT `+postSelect+` FROM posts
WHERE visibility = 'public' AND published < $1 AND ($2 = '' OR local = ($2 = 'local'))
ORDER BY published DESC, object_uri COLLATE "C"
LIMIT $3`, before(b), string(origin), limitArg(limit))
}

func (s *ContentStore) queryPosts(ctx context.Context, what, q string, args ...any) ([]domain.Post, error) {
	out, err := query(ctx, s.pool, scanPost, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, interpretError(err))
	}
	return out, nil
}

// BoostsByActors implements ports.PostStore on boosts_actor_created_idx.
func (s *ContentStore) BoostsByActors(ctx context.Context, actors []string, b time.Time, limit int) ([]domain.Boost, error) {
	if len(actors) == 0 {
		return nil, nil
	}
	out, err := query(ctx, s.pool, scanBoost, `
SELECT `+boostColumns+` FROM boosts
WHERE actor_uri = ANY($1) AND created_at < $2
ORDER BY created_at DESC, object_uri COLLATE "C", actor_uri COLLATE "C"
LIMIT $3`, actors, before(b), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("boosts by %d actors: %w", len(actors), interpretError(err))
	}
	return out, nil
}

// DeletePost implements ports.PostStore: one statement over both tables.
func (s *ContentStore) DeletePost(ctx context.Context, uri string) error {
	var n int
	err := s.pool.QueryRow(ctx, `
WITH p AS (DELETE FROM posts WHERE object_uri = $1 RETURNING 1),
     d AS (DELETE FROM dm_posts WHERE object_uri = $1 RETURNING 1),
     r AS (DELETE FROM reactions WHERE object_uri = $1),
     b AS (DELETE FROM boosts WHERE object_uri = $1),
     m AS (DELETE FROM post_mentions WHERE object_uri = $1),
     h AS (DELETE FROM post_hashtags WHERE object_uri = $1),
     v AS (DELETE FROM poll_votes WHERE object_uri = $1),
     o AS (DELETE FROM open_polls WHERE object_uri = $1)
SELECT (SELECT count(*) FROM p) + (SELECT count(*) FROM d)`, uri).Scan(&n)
	if err != nil {
		return fmt.Errorf("delete post %q: %w", uri, interpretError(err))
	}
	if n == 0 {
		return fmt.Errorf("post %q: %w", uri, domain.ErrNotFound)
	}
	return nil
}

// UpdateContent implements ports.PostStore: one statement over both
// tables, the condition on the last edit inside the UPDATE so that two
// Updates at once apply in their order, whichever runs first; an edited
// public post's hashtags are indexed again in the same transaction.
func (s *ContentStore) UpdateContent(ctx context.Context, uri, content string, e domain.Extras, updated time.Time) (bool, error) {
	extras, err := ports.EncodeExtras(e)
	if err != nil {
		return false, fmt.Errorf("update post %q: %w", uri, err)
	}
	tags := e.Hashtags
	if tags == nil {
		tags = []string{}
	}
	var changed, posts int
	var exists bool
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `
WITH p AS (UPDATE posts SET content = $2, updated = $3, extras = $4::jsonb WHERE object_uri = $1 AND COALESCE(updated, published) < $3 RETURNING 1),
     d AS (UPDATE dm_posts SET content = $2, updated = $3, extras = $4::jsonb WHERE object_uri = $1 AND COALESCE(updated, published) < $3 RETURNING 1)
SELECT (SELECT count(*) FROM p) + (SELECT count(*) FROM d), (SELECT count(*) FROM p),
       EXISTS (SELECT 1 FROM posts WHERE object_uri = $1) OR EXISTS (SELECT 1 FROM dm_posts WHERE object_uri = $1)`,
			uri, content, updated.UTC(), jsonArg(extras)).Scan(&changed, &posts, &exists)
		if err != nil || posts == 0 {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM post_hashtags WHERE object_uri = $1`, uri); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
INSERT INTO post_hashtags (object_uri, tag, published)
SELECT object_uri, t, published FROM posts, unnest($2::text[]) t WHERE object_uri = $1 AND visibility = 'public'
ON CONFLICT DO NOTHING`, uri, tags)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("update post %q: %w", uri, interpretError(err))
	}
	if !exists {
		return false, fmt.Errorf("post %q: %w", uri, domain.ErrNotFound)
	}
	return changed > 0, nil
}

// AddReaction implements ports.PostStore: the insert reads the post in
// the same statement, so a reaction to a missing post is no row at all.
func (s *ContentStore) AddReaction(ctx context.Context, r domain.Reaction) (bool, error) {
	var created, exists bool
	err := s.pool.QueryRow(ctx, `
WITH ins AS (
  INSERT INTO reactions (object_uri, actor_uri, kind, created_at)
  SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM posts WHERE object_uri = $1)
  ON CONFLICT (object_uri, actor_uri, kind) DO NOTHING RETURNING 1)
SELECT EXISTS (SELECT 1 FROM ins), EXISTS (SELECT 1 FROM posts WHERE object_uri = $1)`,
		r.ObjectURI, r.ActorURI, string(r.Kind), r.CreatedAt).Scan(&created, &exists)
	if err != nil {
		return false, fmt.Errorf("%s of %q: %w", r.Kind, r.ObjectURI, interpretError(err))
	}
	if !exists {
		return false, fmt.Errorf("post %q: %w", r.ObjectURI, domain.ErrNotFound)
	}
	return created, nil
}

// RemoveReaction implements ports.PostStore.
func (s *ContentStore) RemoveReaction(ctx context.Context, uri, actor string, kind domain.ReactionKind) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM reactions WHERE object_uri = $1 AND actor_uri = $2 AND kind = $3`, uri, actor, string(kind))
	if err != nil {
		return fmt.Errorf("%s of %q: %w", kind, uri, interpretError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s of %q by %q: %w", kind, uri, actor, domain.ErrNotFound)
	}
	return nil
}

// CountReactions implements ports.PostStore on the primary key's prefix.
func (s *ContentStore) CountReactions(ctx context.Context, uri string) (map[domain.ReactionKind]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT kind, count(*) FROM reactions WHERE object_uri = $1 GROUP BY kind`, uri)
	if err != nil {
		return nil, fmt.Errorf("reactions of %q: %w", uri, interpretError(err))
	}
	defer rows.Close()
	out := map[domain.ReactionKind]int{}
	for rows.Next() {
		var kind string
		var n int
		if err := rows.Scan(&kind, &n); err != nil {
			return nil, fmt.Errorf("reactions of %q: %w", uri, interpretError(err))
		}
		out[domain.ReactionKind(kind)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reactions of %q: %w", uri, interpretError(err))
	}
	return out, nil
}

// AddBoost implements ports.PostStore: the insert reads the post in the
// same statement, as AddReaction does.
func (s *ContentStore) AddBoost(ctx context.Context, b domain.Boost) (bool, error) {
	var created, exists bool
	err := s.pool.QueryRow(ctx, `
WITH ins AS (
  INSERT INTO boosts (actor_uri, object_uri, activity_uri, created_at)
  SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM posts WHERE object_uri = $2)
  ON CONFLICT (actor_uri, object_uri) DO NOTHING RETURNING 1)
SELECT EXISTS (SELECT 1 FROM ins), EXISTS (SELECT 1 FROM posts WHERE object_uri = $2)`,
		b.ActorURI, b.ObjectURI, b.ActivityURI, b.CreatedAt.UTC()).Scan(&created, &exists)
	if err != nil {
		return false, fmt.Errorf("boost of %q: %w", b.ObjectURI, interpretError(err))
	}
	if !exists {
		return false, fmt.Errorf("post %q: %w", b.ObjectURI, domain.ErrNotFound)
	}
	return created, nil
}

const boostColumns = `actor_uri, object_uri, activity_uri, created_at`

func scanBoost(row pgx.Row) (domain.Boost, error) {
	var b domain.Boost
	if err := row.Scan(&b.ActorURI, &b.ObjectURI, &b.ActivityURI, &b.CreatedAt); err != nil {
		return domain.Boost{}, err
	}
	b.CreatedAt = b.CreatedAt.UTC()
	return b, nil
}

// RemoveBoost implements ports.PostStore: one DELETE on the primary key's
// prefix (an actor's boosts).
func (s *ContentStore) RemoveBoost(ctx context.Context, actor, uri string) (domain.Boost, error) {
	b, err := scanBoost(s.pool.QueryRow(ctx, `
DELETE FROM boosts WHERE ctid = (
  SELECT ctid FROM boosts WHERE actor_uri = $1 AND (object_uri = $2 OR activity_uri = $2)
  ORDER BY object_uri <> $2 LIMIT 1)
RETURNING `+boostColumns, actor, uri))
	if err != nil {
		return domain.Boost{}, fmt.Errorf("boost %q by %q: %w", uri, actor, interpretError(err))
	}
	return b, nil
}

// BoostsBy implements ports.PostStore on boosts_actor_created_idx.
func (s *ContentStore) BoostsBy(ctx context.Context, actor string, b time.Time, limit int) ([]domain.Boost, error) {
	out, err := query(ctx, s.pool, scanBoost, `
SELECT `+boostColumns+` FROM boosts
WHERE actor_uri = $1 AND created_at < $2
ORDER BY created_at DESC, object_uri COLLATE "C"
LIMIT $3`, actor, before(b), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("boosts by %q: %w", actor, interpretError(err))
	}
	return out, nil
}

// nullTime is NULL for the zero time (a post never edited).
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

const dmColumns = `id, object_uri, author_uri, participants, participants_key, content, published, local, updated, extras`

func scanDm(row pgx.Row) (domain.DmPost, error) {
	var p domain.DmPost
	var updated *time.Time
	var extras []byte
	err := row.Scan(&p.ID, &p.ObjectURI, &p.AuthorURI, &p.Participants, &p.ParticipantsKey, &p.Content, &p.Published, &p.Local, &updated, &extras)
	if err != nil {
		return domain.DmPost{}, err
	}
	if p.Extras, err = ports.DecodeExtras(extras); err != nil {
		return domain.DmPost{}, fmt.Errorf("direct post %q: %w", p.ObjectURI, err)
	}
	p.Published = p.Published.UTC()
	if updated != nil {
		p.Updated = updated.UTC()
	}
	return p, nil
}

// CreateDm implements ports.PostStore.
func (s *ContentStore) CreateDm(ctx context.Context, p domain.DmPost) (bool, error) {
	parts := p.Participants
	if parts == nil {
		parts = []string{}
	}
	extras, err := ports.EncodeExtras(p.Extras)
	if err != nil {
		return false, fmt.Errorf("direct post %q: %w", p.ObjectURI, err)
	}
	tag, err := s.pool.Exec(ctx, `
INSERT INTO dm_posts (`+dmColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)
ON CONFLICT (object_uri) DO NOTHING`,
		p.ID, p.ObjectURI, p.AuthorURI, parts, p.ParticipantsKey, p.Content, p.Published, p.Local, nullTime(p.Updated), jsonArg(extras))
	if err != nil {
		return false, fmt.Errorf("direct post %q: %w", p.ObjectURI, interpretError(err))
	}
	return tag.RowsAffected() == 1, nil
}

// DmByObjectURI implements ports.PostStore.
func (s *ContentStore) DmByObjectURI(ctx context.Context, uri string) (domain.DmPost, error) {
	p, err := scanDm(s.pool.QueryRow(ctx, `SELECT `+dmColumns+` FROM dm_posts WHERE object_uri = $1`, uri))
	if err != nil {
		return domain.DmPost{}, fmt.Errorf("direct post %q: %w", uri, interpretError(err))
	}
	return p, nil
}

// DmByID implements ports.PostStore (the id is the primary key).
func (s *ContentStore) DmByID(ctx context.Context, id string) (domain.DmPost, error) {
	p, err := scanDm(s.pool.QueryRow(ctx, `SELECT `+dmColumns+` FROM dm_posts WHERE id = $1`, id))
	if err != nil {
		return domain.DmPost{}, fmt.Errorf("direct post id %q: %w", id, interpretError(err))
	}
	return p, nil
}

// DmThread implements ports.PostStore on dm_posts_participants_key_idx.
func (s *ContentStore) DmThread(ctx context.Context, key string, b time.Time, limit int) ([]domain.DmPost, error) {
	out, err := query(ctx, s.pool, scanDm, `
SELECT `+dmColumns+` FROM dm_posts
WHERE participants_key = $1 AND published < $2
ORDER BY published DESC, object_uri COLLATE "C"
LIMIT $3`, key, before(b), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("direct thread %q: %w", key, interpretError(err))
	}
	return out, nil
}

// CountLocalPosts implements ports.PostStore.
func (s *ContentStore) CountLocalPosts(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM posts WHERE local) + (SELECT count(*) FROM dm_posts WHERE local)`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count local posts: %w", interpretError(err))
	}
	return n, nil
}

// DeleteActorContent implements ports.PostStore in one statement: the
// actor's posts and direct posts (posts_author_published_idx,
// dm_posts_author_idx), what hangs on them, and the actor's own reactions
// (reactions_actor_idx) and boosts (boosts_actor_created_idx).
func (s *ContentStore) DeleteActorContent(ctx context.Context, actor string) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `
WITH p AS (DELETE FROM posts WHERE author_uri = $1 RETURNING object_uri),
     d AS (DELETE FROM dm_posts WHERE author_uri = $1 RETURNING object_uri),
     gone AS (SELECT object_uri FROM p UNION ALL SELECT object_uri FROM d),
     r AS (DELETE FROM reactions WHERE actor_uri = $1 OR object_uri IN (SELECT object_uri FROM gone)),
     b AS (DELETE FROM boosts WHERE actor_uri = $1 OR object_uri IN (SELECT object_uri FROM gone)),
     m AS (DELETE FROM post_mentions WHERE object_uri IN (SELECT object_uri FROM gone)),
     h AS (DELETE FROM post_hashtags WHERE object_uri IN (SELECT object_uri FROM gone)),
     v AS (DELETE FROM poll_votes WHERE object_uri IN (SELECT object_uri FROM gone)),
     o AS (DELETE FROM open_polls WHERE object_uri IN (SELECT object_uri FROM gone))
SELECT count(*) FROM gone`, actor).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("delete content of %q: %w", actor, interpretError(err))
	}
	return n, nil
}

// AddTombstone implements ports.TombstoneStore: ON CONFLICT (uri) DO
// NOTHING keeps the first tombstone of a URI.
func (s *ContentStore) AddTombstone(ctx context.Context, t domain.Tombstone) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO tombstones (uri, actor_uri, deleted_at) VALUES ($1, $2, $3) ON CONFLICT (uri) DO NOTHING`,
		t.URI, t.ActorURI, t.DeletedAt.UTC())
	if err != nil {
		return fmt.Errorf("tombstone %q: %w", t.URI, interpretError(err))
	}
	return nil
}

// Tombstoned implements ports.TombstoneStore on tombstones_pkey.
func (s *ContentStore) Tombstoned(ctx context.Context, uri string) (domain.Tombstone, error) {
	var t domain.Tombstone
	err := s.pool.QueryRow(ctx, `SELECT uri, actor_uri, deleted_at FROM tombstones WHERE uri = $1`, uri).Scan(&t.URI, &t.ActorURI, &t.DeletedAt)
	if err != nil {
		return domain.Tombstone{}, fmt.Errorf("tombstone %q: %w", uri, interpretError(err))
	}
	t.DeletedAt = t.DeletedAt.UTC()
	return t, nil
}
