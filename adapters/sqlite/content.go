package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

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
type ContentStore struct{ db *DB }

// NewContentStore returns the store on db.
func NewContentStore(db *DB) *ContentStore { return &ContentStore{db: db} }

const foreignColumns = `actor_uri, public_key_id, public_key_pem, inbox, shared_inbox, preferred_username, host, fetched_at`

func scanForeign(row scanner) (domain.ForeignAvatar, error) {
	var f domain.ForeignAvatar
	var fetched sql.NullInt64
	err := row.Scan(&f.ActorURI, &f.PublicKeyID, &f.PublicKeyPEM, &f.Inbox, &f.SharedInbox, &f.PreferredUsername, &f.Host, &fetched)
	if err != nil {
		return domain.ForeignAvatar{}, err
	}
	f.FetchedAt = fromNanos(fetched)
	return f, nil
}

// Upsert implements ports.ForeignActorStore: one INSERT ... ON CONFLICT DO
// UPDATE on foreign_avatars_actor_uri_key, so concurrent fetches of one
// actor leave one row, the last written. A key id another actor's row
// holds fails the statement on foreign_avatars_public_key_id_key
// (domain.ErrAlreadyExists), the row unchanged.
func (s *ContentStore) Upsert(ctx context.Context, f domain.ForeignAvatar) error {
	_, err := s.db.w.ExecContext(ctx, `
INSERT INTO foreign_avatars (`+foreignColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (actor_uri) DO UPDATE SET
	public_key_id = excluded.public_key_id, public_key_pem = excluded.public_key_pem,
	inbox = excluded.inbox, shared_inbox = excluded.shared_inbox,
	preferred_username = excluded.preferred_username, host = excluded.host, fetched_at = excluded.fetched_at`,
		f.ActorURI, f.PublicKeyID, f.PublicKeyPEM, f.Inbox, f.SharedInbox, f.PreferredUsername, f.Host, nanos(f.FetchedAt))
	if err != nil {
		return fmt.Errorf("foreign actor %q: %w", f.ActorURI, interpretError(err))
	}
	return nil
}

// ByActorURI implements ports.ForeignActorStore.
func (s *ContentStore) ByActorURI(ctx context.Context, uri string) (domain.ForeignAvatar, error) {
	f, err := scanForeign(s.db.r.QueryRowContext(ctx, `SELECT `+foreignColumns+` FROM foreign_avatars WHERE actor_uri = ?`, uri))
	if err != nil {
		return domain.ForeignAvatar{}, fmt.Errorf("foreign actor %q: %w", uri, interpretError(err))
	}
	return f, nil
}

// ByKeyID implements ports.ForeignActorStore on
// foreign_avatars_public_key_id_key (the query states the index's
// condition, so SQLite may use it).
func (s *ContentStore) ByKeyID(ctx context.Context, keyID string) (domain.ForeignAvatar, error) {
	f, err := scanForeign(s.db.queryRow(ctx, `
SELECT `+foreignColumns+` FROM foreign_avatars WHERE public_key_id = ? AND public_key_id <> ''`, keyID))
	if err != nil {
		return domain.ForeignAvatar{}, fmt.Errorf("foreign key %q: %w", keyID, interpretError(err))
	}
	return f, nil
}

// InboxesOf implements ports.ForeignActorStore in one query of the three
// columns a delivery needs (the URIs travel as one JSON array), returning
// the actors in the order of uris, each once.
func (s *ContentStore) InboxesOf(ctx context.Context, uris []string) ([]domain.ActorInboxes, error) {
	if len(uris) == 0 {
		return []domain.ActorInboxes{}, nil
	}
	list, err := json.Marshal(uris)
	if err != nil {
		return nil, fmt.Errorf("foreign actors' inboxes: %w", err)
	}
	found, err := query(ctx, s.db, func(r scanner) (a domain.ActorInboxes, err error) {
		err = r.Scan(&a.ActorURI, &a.Inbox, &a.SharedInbox)
		return a, err
	}, `
SELECT actor_uri, inbox, shared_inbox FROM foreign_avatars WHERE actor_uri IN (SELECT value FROM json_each(?))`, string(list))
	if err != nil {
		return nil, fmt.Errorf("foreign actors' inboxes: %w", interpretError(err))
	}
	return ports.InURIOrder(uris, found), nil
}

// OnDomain implements ports.ForeignActorStore: the cached actors after
// afterURI along foreign_avatars_actor_uri_key, each host tested by
// herald_domain_covers, domain.DomainCovers itself (registerFunctions).
// A suspension is rare, so the walk of the cache it costs is paid then,
// not by an index every upsert keeps.
func (s *ContentStore) OnDomain(ctx context.Context, d, afterURI string, limit int) ([]string, error) {
	out, err := query(ctx, s.db, scanText, `
SELECT actor_uri FROM foreign_avatars WHERE actor_uri > ?2 AND herald_domain_covers(?1, host)
ORDER BY actor_uri LIMIT ?3`, d, afterURI, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("foreign actors on %s: %w", d, interpretError(err))
	}
	return out, nil
}

// Delete implements ports.ForeignActorStore.
func (s *ContentStore) Delete(ctx context.Context, uri string) error {
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM foreign_avatars WHERE actor_uri = ?`, uri)
	if err != nil {
		return fmt.Errorf("delete foreign actor %q: %w", uri, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("foreign actor %q: %w", uri, domain.ErrNotFound)
	}
	return nil
}

const postColumns = `id, object_uri, author_uri, group_uri, content, visibility, in_reply_to, published, local, updated, extras, poll`

// postSelect reads postColumns, qualified, and the post's mentions as a
// JSON array (post_mentions' primary key serves the subquery).
const postSelect = `posts.id, posts.object_uri, posts.author_uri, posts.group_uri, posts.content, posts.visibility,
  posts.in_reply_to, posts.published, posts.local, posts.updated, posts.extras, posts.poll,
  (SELECT json_group_array(m.actor_uri) FROM post_mentions m WHERE m.object_uri = posts.object_uri)`

func scanPost(row scanner) (domain.Post, error) {
	var p domain.Post
	var vis, mentions, extras, poll string
	var published, updated sql.NullInt64
	err := row.Scan(&p.ID, &p.ObjectURI, &p.AuthorURI, &p.GroupURI, &p.Content, &vis, &p.InReplyTo, &published, &p.Local, &updated,
		&extras, &poll, &mentions)
	if err != nil {
		return domain.Post{}, err
	}
	if p.Extras, err = ports.DecodeExtras([]byte(extras)); err != nil {
		return domain.Post{}, fmt.Errorf("post %q: %w", p.ObjectURI, err)
	}
	if p.Poll, err = ports.DecodePoll([]byte(poll)); err != nil {
		return domain.Post{}, fmt.Errorf("post %q: %w", p.ObjectURI, err)
	}
	var ms []string
	if err := json.Unmarshal([]byte(mentions), &ms); err != nil {
		return domain.Post{}, fmt.Errorf("mentions of %q: %w", p.ObjectURI, err)
	}
	p.Mentions = domain.NormalizeMentions(ms) // json_group_array's order is the scan's: sorted here
	p.Visibility = domain.Visibility(vis)
	p.Published = fromNanos(published)
	p.Updated = fromNanos(updated)
	return p, nil
}

// CreatePost implements ports.PostStore: ON CONFLICT (object_uri) DO
// NOTHING keeps the first copy when an inbox gets the same Create twice;
// SQLite checks that key before the primary key, so a repeat of the same
// post is "not created", while another post with a used id is
// domain.ErrAlreadyExists.
//
// The mentions are written in the same transaction, only with a post it
// inserted.
func (s *ContentStore) CreatePost(ctx context.Context, p domain.Post) (bool, error) {
	extras, err := ports.EncodeExtras(p.Extras)
	if err != nil {
		return false, fmt.Errorf("post %q: %w", p.ObjectURI, err)
	}
	poll, err := ports.EncodePoll(p.Poll)
	if err != nil {
		return false, fmt.Errorf("post %q: %w", p.ObjectURI, err)
	}
	created := false
	err = s.db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
INSERT INTO posts (`+postColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (object_uri) DO NOTHING`,
			p.ID, p.ObjectURI, p.AuthorURI, p.GroupURI, p.Content, string(p.Visibility), p.InReplyTo, stamp(p.Published), p.Local, nullStamp(p.Updated),
			string(extras), string(poll))
		if err != nil {
			return err
		}
		if created = affected(res) == 1; !created {
			return nil
		}
		if err := writeHashtags(ctx, tx, p); err != nil {
			return err
		}
		if p.Local && p.Poll != nil && p.Poll.Closed.IsZero() {
			if _, err := tx.ExecContext(ctx, `INSERT INTO open_polls (object_uri, end_time) VALUES (?, ?)`,
				p.ObjectURI, stamp(p.Poll.EndTime)); err != nil {
				return err
			}
		}
		for _, m := range domain.NormalizeMentions(p.Mentions) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO post_mentions (object_uri, actor_uri, published) VALUES (?, ?, ?)`,
				p.ObjectURI, m, stamp(p.Published)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("post %q: %w", p.ObjectURI, interpretError(err))
	}
	return created, nil
}

// PostByObjectURI implements ports.PostStore.
func (s *ContentStore) PostByObjectURI(ctx context.Context, uri string) (domain.Post, error) {
	p, err := scanPost(s.db.r.QueryRowContext(ctx, `SELECT `+postSelect+` FROM posts WHERE object_uri = ?`, uri))
	if err != nil {
		return domain.Post{}, fmt.Errorf("post %q: %w", uri, interpretError(err))
	}
	return p, nil
}

// PostByID implements ports.PostStore (the id is the primary key).
func (s *ContentStore) PostByID(ctx context.Context, id string) (domain.Post, error) {
	p, err := scanPost(s.db.r.QueryRowContext(ctx, `SELECT `+postSelect+` FROM posts WHERE id = ?`, id))
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
	in := placeholders(len(uris))
	args := make([]any, 0, 2*len(uris)+2)
	args = append(args, actor)
	for _, u := range uris {
		args = append(args, u)
	}
	args = append(args, actor)
	for _, u := range uris {
		args = append(args, u)
	}
	out, err := query(ctx, s.db, func(r scanner) (domain.Reaction, error) {
		var x domain.Reaction
		var kind string
		err := r.Scan(&x.ObjectURI, &kind)
		x.ActorURI, x.Kind = actor, domain.ReactionKind(kind)
		return x, err
	}, `
SELECT object_uri, kind FROM reactions WHERE actor_uri = ? AND object_uri IN (`+in+`)
UNION
SELECT object_uri, 'announce' FROM boosts WHERE actor_uri = ? AND object_uri IN (`+in+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("reactions by %q: %w", actor, interpretError(err))
	}
	return out, nil
}

// writeHashtags indexes a public post's hashtags (PostsTagged); the
// caller removed its earlier ones.
func writeHashtags(ctx context.Context, tx *sql.Tx, p domain.Post) error {
	if p.Visibility != domain.VisibilityPublic {
		return nil
	}
	for _, tag := range p.Hashtags {
		if _, err := tx.ExecContext(ctx, `INSERT INTO post_hashtags (object_uri, tag, published) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
			p.ObjectURI, tag, stamp(p.Published)); err != nil {
			return err
		}
	}
	return nil
}

// PostsTagged implements ports.PostStore on post_hashtags_tag_idx: the
// hashtags carry their post's published time, which never changes.
func (s *ContentStore) PostsTagged(ctx context.Context, tag string, b time.Time, limit int) ([]domain.Post, error) {
	out, err := query(ctx, s.db, scanPost, `
SELECT `+postSelect+` FROM post_hashtags ph JOIN posts ON posts.object_uri = ph.object_uri
WHERE ph.tag = ? AND ph.published < ?
ORDER BY ph.published DESC, ph.object_uri
LIMIT ?`, tag, before(b), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("posts tagged %q: %w", tag, interpretError(err))
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
	out, err := query(ctx, s.db, scanPost, `
SELECT `+postSelect+` FROM post_mentions pm JOIN posts ON posts.object_uri = pm.object_uri
WHERE pm.actor_uri = ? AND pm.published < ?
ORDER BY pm.published DESC, pm.object_uri
LIMIT ?`, actor, before(b), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("posts mentioning %q: %w", actor, interpretError(err))
	}
	return out, nil
}

// listPosts lists newest first; ties (one instant) in object URI order, as
// the memory adapter does. column is one of two constants, never input.
func (s *ContentStore) listPosts(ctx context.Context, column, value string, b time.Time, limit int) ([]domain.Post, error) {
	out, err := query(ctx, s.db, scanPost, `
SELECT `+postSelect+` FROM posts
WHERE `+column+` = ? AND published < ?
ORDER BY published DESC, object_uri
LIMIT ?`, value, before(b), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("posts by %s %q: %w", column, value, interpretError(err))
	}
	return out, nil
}

// PostsByAuthors implements ports.PostStore on posts_author_published_idx
// (one range per author, merged).
func (s *ContentStore) PostsByAuthors(ctx context.Context, authors []string, b time.Time, limit int) ([]domain.Post, error) {
	if len(authors) == 0 {
		return nil, nil
	}
	args := append(anys(authors), before(b), limitArg(limit))
	out, err := query(ctx, s.db, scanPost, `
SELECT `+postSelect+` FROM posts
WHERE author_uri IN (`+placeholders(len(authors))+`) AND published < ?
ORDER BY published DESC, object_uri
LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("posts by %d authors: %w", len(authors), interpretError(err))
	}
	return out, nil
}

// Replies implements ports.PostStore on posts_in_reply_to_idx.
func (s *ContentStore) Replies(ctx context.Context, uri string, limit int) ([]domain.Post, error) {
	if uri == "" {
		return nil, nil
	}
	out, err := query(ctx, s.db, scanPost, `
SELECT `+postSelect+` FROM posts
WHERE in_reply_to = ?
ORDER BY published, object_uri
LIMIT ?`, uri, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("replies to %q: %w", uri, interpretError(err))
	}
	return out, nil
}

// PublicPosts implements ports.PostStore on posts_visibility_published_idx.
func (s *ContentStore) PublicPosts(ctx context.Context, origin ports.Origin, b time.Time, limit int) ([]domain.Post, error) {
	out, err := query(ctx, s.db, scanPost, `
SELECT `+postSelect+` FROM posts
WHERE visibility = 'public' AND published < ? AND (? = '' OR local = (? = 'local'))
ORDER BY published DESC, object_uri
LIMIT ?`, before(b), string(origin), string(origin), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("public posts: %w", interpretError(err))
	}
	return out, nil
}

// BoostsByActors implements ports.PostStore on boosts_actor_created_idx.
func (s *ContentStore) BoostsByActors(ctx context.Context, actors []string, b time.Time, limit int) ([]domain.Boost, error) {
	if len(actors) == 0 {
		return nil, nil
	}
	args := append(anys(actors), before(b), limitArg(limit))
	out, err := query(ctx, s.db, scanBoost, `
SELECT `+boostColumns+` FROM boosts
WHERE actor_uri IN (`+placeholders(len(actors))+`) AND created_at < ?
ORDER BY created_at DESC, object_uri, actor_uri
LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("boosts by %d actors: %w", len(actors), interpretError(err))
	}
	return out, nil
}

// placeholders is n comma-separated "?".
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

// anys returns vs as query arguments, with room for two more.
func anys(vs []string) []any {
	args := make([]any, len(vs), len(vs)+2)
	for i, v := range vs {
		args[i] = v
	}
	return args
}

// DeletePost implements ports.PostStore: both tables, in one transaction.
func (s *ContentStore) DeletePost(ctx context.Context, uri string) error {
	n := 0
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		for _, table := range []string{"posts", "dm_posts"} {
			res, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE object_uri = ?`, uri)
			if err != nil {
				return err
			}
			n += affected(res)
		}
		for _, table := range []string{"reactions", "boosts", "post_mentions", "post_hashtags", "poll_votes", "open_polls"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE object_uri = ?`, uri); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete post %q: %w", uri, interpretError(err))
	}
	if n == 0 {
		return fmt.Errorf("post %q: %w", uri, domain.ErrNotFound)
	}
	return nil
}

// UpdateContent implements ports.PostStore: both tables in one write
// transaction, the condition on the last edit inside each UPDATE; a
// post's hashtags are indexed again when it changed.
func (s *ContentStore) UpdateContent(ctx context.Context, uri, content string, e domain.Extras, updated time.Time) (bool, error) {
	extras, err := ports.EncodeExtras(e)
	if err != nil {
		return false, fmt.Errorf("update post %q: %w", uri, err)
	}
	changed, exists := 0, 0
	err = s.db.inTx(ctx, func(tx *sql.Tx) error {
		for _, table := range []string{"posts", "dm_posts"} {
			res, err := tx.ExecContext(ctx, `UPDATE `+table+` SET content = ?, extras = ?, updated = ? WHERE object_uri = ? AND COALESCE(updated, published) < ?`,
				content, string(extras), stamp(updated), uri, stamp(updated))
			if err != nil {
				return err
			}
			edited := affected(res)
			changed += edited
			if table == "posts" && edited > 0 {
				if _, err := tx.ExecContext(ctx, `DELETE FROM post_hashtags WHERE object_uri = ?`, uri); err != nil {
					return err
				}
				p, err := scanPost(tx.QueryRowContext(ctx, `SELECT `+postSelect+` FROM posts WHERE object_uri = ?`, uri))
				if err != nil {
					return err
				}
				if err := writeHashtags(ctx, tx, p); err != nil {
					return err
				}
			}
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE object_uri = ?`, uri).Scan(&n); err != nil {
				return err
			}
			exists += n
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("update post %q: %w", uri, interpretError(err))
	}
	if exists == 0 {
		return false, fmt.Errorf("post %q: %w", uri, domain.ErrNotFound)
	}
	return changed > 0, nil
}

// AddReaction implements ports.PostStore: the insert reads the post in
// the same statement, under the write lock.
func (s *ContentStore) AddReaction(ctx context.Context, r domain.Reaction) (bool, error) {
	created, exists := false, false
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
INSERT INTO reactions (object_uri, actor_uri, kind, created_at)
SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM posts WHERE object_uri = ?)
ON CONFLICT (object_uri, actor_uri, kind) DO NOTHING`, r.ObjectURI, r.ActorURI, string(r.Kind), stamp(r.CreatedAt), r.ObjectURI)
		if err != nil {
			return err
		}
		created = affected(res) == 1
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM posts WHERE object_uri = ?`, r.ObjectURI).Scan(&n); err != nil {
			return err
		}
		exists = n > 0
		return nil
	})
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
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM reactions WHERE object_uri = ? AND actor_uri = ? AND kind = ?`, uri, actor, string(kind))
	if err != nil {
		return fmt.Errorf("%s of %q: %w", kind, uri, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("%s of %q by %q: %w", kind, uri, actor, domain.ErrNotFound)
	}
	return nil
}

// CountReactions implements ports.PostStore on the primary key's prefix.
func (s *ContentStore) CountReactions(ctx context.Context, uri string) (map[domain.ReactionKind]int, error) {
	type row struct {
		kind string
		n    int
	}
	rows, err := query(ctx, s.db, func(r scanner) (row, error) {
		var x row
		err := r.Scan(&x.kind, &x.n)
		return x, err
	}, `SELECT kind, count(*) FROM reactions WHERE object_uri = ? GROUP BY kind`, uri)
	if err != nil {
		return nil, fmt.Errorf("reactions of %q: %w", uri, interpretError(err))
	}
	out := map[domain.ReactionKind]int{}
	for _, x := range rows {
		out[domain.ReactionKind(x.kind)] = x.n
	}
	return out, nil
}

// AddBoost implements ports.PostStore: the insert reads the post in the
// same statement, under the write lock, as AddReaction does.
func (s *ContentStore) AddBoost(ctx context.Context, b domain.Boost) (bool, error) {
	created, exists := false, false
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
INSERT INTO boosts (actor_uri, object_uri, activity_uri, created_at)
SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM posts WHERE object_uri = ?)
ON CONFLICT (actor_uri, object_uri) DO NOTHING`, b.ActorURI, b.ObjectURI, b.ActivityURI, stamp(b.CreatedAt), b.ObjectURI)
		if err != nil {
			return err
		}
		created = affected(res) == 1
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM posts WHERE object_uri = ?`, b.ObjectURI).Scan(&n); err != nil {
			return err
		}
		exists = n > 0
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("boost of %q: %w", b.ObjectURI, interpretError(err))
	}
	if !exists {
		return false, fmt.Errorf("post %q: %w", b.ObjectURI, domain.ErrNotFound)
	}
	return created, nil
}

const boostColumns = `actor_uri, object_uri, activity_uri, created_at`

func scanBoost(row scanner) (domain.Boost, error) {
	var b domain.Boost
	var at sql.NullInt64
	if err := row.Scan(&b.ActorURI, &b.ObjectURI, &b.ActivityURI, &at); err != nil {
		return domain.Boost{}, err
	}
	b.CreatedAt = fromNanos(at)
	return b, nil
}

// RemoveBoost implements ports.PostStore: the boost is found on the
// primary key's prefix (the actor's boosts) and deleted under one write
// lock.
func (s *ContentStore) RemoveBoost(ctx context.Context, actor, uri string) (domain.Boost, error) {
	var b domain.Boost
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		b, err = scanBoost(tx.QueryRowContext(ctx, `
SELECT `+boostColumns+` FROM boosts WHERE actor_uri = ? AND (object_uri = ? OR activity_uri = ?)
ORDER BY object_uri <> ? LIMIT 1`, actor, uri, uri, uri))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM boosts WHERE actor_uri = ? AND object_uri = ?`, b.ActorURI, b.ObjectURI)
		return err
	})
	if err != nil {
		return domain.Boost{}, fmt.Errorf("boost %q by %q: %w", uri, actor, interpretError(err))
	}
	return b, nil
}

// BoostsBy implements ports.PostStore on boosts_actor_created_idx.
func (s *ContentStore) BoostsBy(ctx context.Context, actor string, b time.Time, limit int) ([]domain.Boost, error) {
	out, err := query(ctx, s.db, scanBoost, `
SELECT `+boostColumns+` FROM boosts
WHERE actor_uri = ? AND created_at < ?
ORDER BY created_at DESC, object_uri
LIMIT ?`, actor, before(b), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("boosts by %q: %w", actor, interpretError(err))
	}
	return out, nil
}

// nullStamp is NULL for the zero time (a post never edited).
func nullStamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return stamp(t)
}

const dmColumns = `id, object_uri, author_uri, participants, participants_key, content, published, local, updated, extras`

func scanDm(row scanner) (domain.DmPost, error) {
	var p domain.DmPost
	var parts, extras string
	var published, updated sql.NullInt64
	err := row.Scan(&p.ID, &p.ObjectURI, &p.AuthorURI, &parts, &p.ParticipantsKey, &p.Content, &published, &p.Local, &updated, &extras)
	if err != nil {
		return domain.DmPost{}, err
	}
	if p.Extras, err = ports.DecodeExtras([]byte(extras)); err != nil {
		return domain.DmPost{}, fmt.Errorf("direct post %s: %w", p.ObjectURI, err)
	}
	if err := json.Unmarshal([]byte(parts), &p.Participants); err != nil {
		return domain.DmPost{}, fmt.Errorf("participants of %s: %w", p.ObjectURI, err)
	}
	p.Published = fromNanos(published)
	p.Updated = fromNanos(updated)
	return p, nil
}

// CreateDm implements ports.PostStore.
func (s *ContentStore) CreateDm(ctx context.Context, p domain.DmPost) (bool, error) {
	parts := p.Participants
	if parts == nil {
		parts = []string{}
	}
	list, err := json.Marshal(parts)
	if err != nil {
		return false, fmt.Errorf("direct post %q: %w", p.ObjectURI, err)
	}
	extras, err := ports.EncodeExtras(p.Extras)
	if err != nil {
		return false, fmt.Errorf("direct post %q: %w", p.ObjectURI, err)
	}
	res, err := s.db.w.ExecContext(ctx, `
INSERT INTO dm_posts (`+dmColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (object_uri) DO NOTHING`,
		p.ID, p.ObjectURI, p.AuthorURI, string(list), p.ParticipantsKey, p.Content, stamp(p.Published), p.Local, nullStamp(p.Updated), string(extras))
	if err != nil {
		return false, fmt.Errorf("direct post %q: %w", p.ObjectURI, interpretError(err))
	}
	return affected(res) == 1, nil
}

// DmByObjectURI implements ports.PostStore.
func (s *ContentStore) DmByObjectURI(ctx context.Context, uri string) (domain.DmPost, error) {
	p, err := scanDm(s.db.r.QueryRowContext(ctx, `SELECT `+dmColumns+` FROM dm_posts WHERE object_uri = ?`, uri))
	if err != nil {
		return domain.DmPost{}, fmt.Errorf("direct post %q: %w", uri, interpretError(err))
	}
	return p, nil
}

// DmByID implements ports.PostStore (the id is the primary key).
func (s *ContentStore) DmByID(ctx context.Context, id string) (domain.DmPost, error) {
	p, err := scanDm(s.db.r.QueryRowContext(ctx, `SELECT `+dmColumns+` FROM dm_posts WHERE id = ?`, id))
	if err != nil {
		return domain.DmPost{}, fmt.Errorf("direct post id %q: %w", id, interpretError(err))
	}
	return p, nil
}

// DmThread implements ports.PostStore on dm_posts_participants_key_idx.
func (s *ContentStore) DmThread(ctx context.Context, key string, b time.Time, limit int) ([]domain.DmPost, error) {
	out, err := query(ctx, s.db, scanDm, `
SELECT `+dmColumns+` FROM dm_posts
WHERE participants_key = ? AND published < ?
ORDER BY published DESC, object_uri
LIMIT ?`, key, before(b), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("direct thread %q: %w", key, interpretError(err))
	}
	return out, nil
}

// CountLocalPosts implements ports.PostStore.
func (s *ContentStore) CountLocalPosts(ctx context.Context) (int, error) {
	var n int
	err := s.db.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM posts WHERE local = 1) + (SELECT count(*) FROM dm_posts WHERE local = 1)`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count local posts: %w", interpretError(err))
	}
	return n, nil
}

// DeleteActorContent implements ports.PostStore in one write transaction:
// first what hangs on the actor's posts and direct posts (found by
// posts_author_published_idx and dm_posts_author_idx) and the actor's own
// reactions (reactions_actor_idx) and boosts (boosts_actor_created_idx),
// then the posts themselves.
func (s *ContentStore) DeleteActorContent(ctx context.Context, actor string) (int, error) {
	n := 0
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		const theirs = `SELECT object_uri FROM posts WHERE author_uri = ?1 UNION ALL SELECT object_uri FROM dm_posts WHERE author_uri = ?1`
		for _, q := range []string{
			`DELETE FROM reactions WHERE actor_uri = ?1 OR object_uri IN (` + theirs + `)`,
			`DELETE FROM boosts WHERE actor_uri = ?1 OR object_uri IN (` + theirs + `)`,
			`DELETE FROM post_mentions WHERE object_uri IN (` + theirs + `)`,
			`DELETE FROM post_hashtags WHERE object_uri IN (` + theirs + `)`,
			`DELETE FROM poll_votes WHERE object_uri IN (` + theirs + `)`,
			`DELETE FROM open_polls WHERE object_uri IN (` + theirs + `)`,
		} {
			if _, err := tx.ExecContext(ctx, q, actor); err != nil {
				return err
			}
		}
		for _, table := range []string{"posts", "dm_posts"} {
			res, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE author_uri = ?`, actor)
			if err != nil {
				return err
			}
			n += affected(res)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("delete content of %q: %w", actor, interpretError(err))
	}
	return n, nil
}

// AddTombstone implements ports.TombstoneStore: ON CONFLICT (uri) DO
// NOTHING keeps the first tombstone of a URI.
func (s *ContentStore) AddTombstone(ctx context.Context, t domain.Tombstone) error {
	_, err := s.db.w.ExecContext(ctx, `INSERT INTO tombstones (uri, actor_uri, deleted_at) VALUES (?, ?, ?) ON CONFLICT (uri) DO NOTHING`,
		t.URI, t.ActorURI, stamp(t.DeletedAt))
	if err != nil {
		return fmt.Errorf("tombstone %q: %w", t.URI, interpretError(err))
	}
	return nil
}

// Tombstoned implements ports.TombstoneStore on the primary key.
func (s *ContentStore) Tombstoned(ctx context.Context, uri string) (domain.Tombstone, error) {
	var t domain.Tombstone
	var at sql.NullInt64
	err := s.db.queryRow(ctx, `SELECT uri, actor_uri, deleted_at FROM tombstones WHERE uri = ?`, uri).Scan(&t.URI, &t.ActorURI, &at)
	if err != nil {
		return domain.Tombstone{}, fmt.Errorf("tombstone %q: %w", uri, interpretError(err))
	}
	t.DeletedAt = fromNanos(at)
	return t, nil
}
