package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
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

// ContentStore keeps what comes from and goes to the fediverse: cached
// remote actors, posts and direct posts, and the tombstones of deleted
// ones.
type ContentStore struct {
	mu      sync.Mutex
	foreign map[string]domain.ForeignAvatar // by actor URI
	posts   map[string]domain.Post          // by object URI
	dms     map[string]domain.DmPost        // by object URI
	ids     map[string]struct{}             // ids of posts and DMs, which are unique too
	// reactions by post object URI, then by actor and kind.
	reactions map[string]map[reactionKey]domain.Reaction
	// boosts by booster, then by the boosted post's object URI.
	boosts map[string]map[string]domain.Boost
	// keyOwners holds the actor URI of each key id a cached actor holds:
	// one owner per key id (SPEC §10).
	keyOwners map[string]string
	// tombstones by URI.
	tombstones map[string]domain.Tombstone
	// votes by poll object URI, then by (voter, slot): one vote per voter
	// and option, and per voter in a single-choice poll (slot "").
	votes map[string]map[voteKey]vote
	// openPolls are the polls written here not closed yet, by URI.
	openPolls map[string]*openPoll
	voteSeq   int
}

type voteKey struct{ voter, slot string }

type vote struct {
	choice string
	seq    int // the order votes were recorded in
}

type openPoll struct {
	end     time.Time
	changed bool
}

type reactionKey struct {
	actor string
	kind  domain.ReactionKind
}

// NewContentStore returns an empty store.
func NewContentStore() *ContentStore {
	return &ContentStore{
		foreign: make(map[string]domain.ForeignAvatar),
		posts:   make(map[string]domain.Post),
		dms:     make(map[string]domain.DmPost),
		ids:     make(map[string]struct{}),

		reactions:  make(map[string]map[reactionKey]domain.Reaction),
		boosts:     make(map[string]map[string]domain.Boost),
		keyOwners:  make(map[string]string),
		tombstones: make(map[string]domain.Tombstone),
		votes:      make(map[string]map[voteKey]vote),
		openPolls:  make(map[string]*openPoll),
	}
}

// Upsert implements ports.ForeignActorStore: the key id's owner is
// checked and the copy replaced under one hold of the mutex. An empty key
// id claims nothing.
func (s *ContentStore) Upsert(ctx context.Context, f domain.ForeignAvatar) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if owner, held := s.keyOwners[f.PublicKeyID]; held && owner != f.ActorURI {
		return fmt.Errorf("foreign actor %q: key %q is held by %q: %w", f.ActorURI, f.PublicKeyID, owner, domain.ErrAlreadyExists)
	}
	if old, ok := s.foreign[f.ActorURI]; ok {
		delete(s.keyOwners, old.PublicKeyID) // a rotation frees the old key id
	}
	if f.PublicKeyID != "" {
		s.keyOwners[f.PublicKeyID] = f.ActorURI
	}
	s.foreign[f.ActorURI] = f
	return nil
}

// ByActorURI implements ports.ForeignActorStore.
func (s *ContentStore) ByActorURI(ctx context.Context, uri string) (domain.ForeignAvatar, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.foreign[uri]; ok {
		return f, nil
	}
	return domain.ForeignAvatar{}, fmt.Errorf("foreign actor %q: %w", uri, domain.ErrNotFound)
}

// ByKeyID implements ports.ForeignActorStore.
func (s *ContentStore) ByKeyID(ctx context.Context, keyID string) (domain.ForeignAvatar, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if owner, ok := s.keyOwners[keyID]; ok {
		return s.foreign[owner], nil
	}
	return domain.ForeignAvatar{}, fmt.Errorf("foreign key %q: %w", keyID, domain.ErrNotFound)
}

// InboxesOf implements ports.ForeignActorStore.
func (s *ContentStore) InboxesOf(ctx context.Context, uris []string) ([]domain.ActorInboxes, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]domain.ActorInboxes, 0, len(uris))
	seen := make(map[string]bool, len(uris))
	for _, u := range uris {
		if f, ok := s.foreign[u]; ok && !seen[u] {
			seen[u] = true
			out = append(out, f.Inboxes())
		}
	}
	return out, nil
}

// OnDomain implements ports.ForeignActorStore: a walk of the cache under
// the mutex, each host tested by domain.DomainCovers itself.
func (s *ContentStore) OnDomain(ctx context.Context, d, afterURI string, limit int) ([]string, error) {
	s.mu.Lock()
	out := []string{}
	for uri, f := range s.foreign {
		if uri > afterURI && domain.DomainCovers(d, f.Host) {
			out = append(out, uri)
		}
	}
	s.mu.Unlock()
	slices.Sort(out)
	return limitSlice(out, limit), nil
}

// Delete implements ports.ForeignActorStore.
func (s *ContentStore) Delete(ctx context.Context, uri string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.foreign[uri]
	if !ok {
		return fmt.Errorf("foreign actor %q: %w", uri, domain.ErrNotFound)
	}
	delete(s.keyOwners, f.PublicKeyID)
	delete(s.foreign, uri)
	return nil
}

// CreatePost implements ports.PostStore.
func (s *ContentStore) CreatePost(ctx context.Context, p domain.Post) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.posts[p.ObjectURI]; ok {
		return false, nil
	}
	if _, used := s.ids[p.ID]; used {
		return false, fmt.Errorf("post id %q: %w", p.ID, domain.ErrAlreadyExists)
	}
	s.ids[p.ID] = struct{}{}
	p.Mentions = domain.NormalizeMentions(p.Mentions) // a copy, as every store keeps them
	p.Extras = p.Extras.Clone()
	s.posts[p.ObjectURI] = p
	if p.Local && p.Poll != nil && p.Poll.Closed.IsZero() {
		s.openPolls[p.ObjectURI] = &openPoll{end: p.Poll.EndTime}
	}
	return true, nil
}

// copyPost is p as a read returns it: nothing it shares with the store.
func copyPost(p domain.Post) domain.Post {
	p.Mentions = slices.Clone(p.Mentions)
	p.Extras = p.Extras.Clone()
	return p
}

// PostByObjectURI implements ports.PostStore.
func (s *ContentStore) PostByObjectURI(ctx context.Context, uri string) (domain.Post, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.posts[uri]; ok {
		return copyPost(p), nil
	}
	return domain.Post{}, fmt.Errorf("post %q: %w", uri, domain.ErrNotFound)
}

// PostByID implements ports.PostStore: a walk of the posts (the memory
// store keeps no index by id).
func (s *ContentStore) PostByID(ctx context.Context, id string) (domain.Post, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.posts {
		if p.ID == id {
			return copyPost(p), nil
		}
	}
	return domain.Post{}, fmt.Errorf("post id %q: %w", id, domain.ErrNotFound)
}

// ReactedTo implements ports.PostStore.
func (s *ContentStore) ReactedTo(ctx context.Context, actor string, uris []string) ([]domain.Reaction, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Reaction
	for _, uri := range slices.Compact(slices.Sorted(slices.Values(uris))) {
		announced := false
		for _, kind := range []domain.ReactionKind{domain.ReactionLike, domain.ReactionAnnounce} {
			if r, ok := s.reactions[uri][reactionKey{actor, kind}]; ok {
				out = append(out, domain.Reaction{ObjectURI: r.ObjectURI, ActorURI: actor, Kind: kind})
				announced = announced || kind == domain.ReactionAnnounce
			}
		}
		if _, ok := s.boosts[actor][uri]; ok && !announced {
			out = append(out, domain.Reaction{ObjectURI: uri, ActorURI: actor, Kind: domain.ReactionAnnounce})
		}
	}
	return out, nil
}

// PostsByAuthors implements ports.PostStore.
func (s *ContentStore) PostsByAuthors(ctx context.Context, authors []string, before time.Time, limit int) ([]domain.Post, error) {
	return s.listPosts(func(p domain.Post) bool { return slices.Contains(authors, p.AuthorURI) }, before, limit), nil
}

// Replies implements ports.PostStore.
func (s *ContentStore) Replies(ctx context.Context, uri string, limit int) ([]domain.Post, error) {
	if uri == "" {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Post
	for _, p := range s.posts {
		if p.InReplyTo == uri {
			out = append(out, copyPost(p))
		}
	}
	slices.SortFunc(out, func(a, b domain.Post) int {
		if c := a.Published.Compare(b.Published); c != 0 {
			return c
		}
		return strings.Compare(a.ObjectURI, b.ObjectURI)
	})
	return limitSlice(out, limit), nil
}

// PublicPosts implements ports.PostStore.
func (s *ContentStore) PublicPosts(ctx context.Context, origin ports.Origin, before time.Time, limit int) ([]domain.Post, error) {
	return s.listPosts(func(p domain.Post) bool {
		return p.Visibility == domain.VisibilityPublic && (origin == ports.OriginAll || p.Local == (origin == ports.OriginLocal))
	}, before, limit), nil
}

// BoostsByActors implements ports.PostStore.
func (s *ContentStore) BoostsByActors(ctx context.Context, actors []string, before time.Time, limit int) ([]domain.Boost, error) {
	var out []domain.Boost
	for _, a := range slices.Compact(slices.Sorted(slices.Values(actors))) {
		page, err := s.BoostsBy(ctx, a, before, limit)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
	}
	slices.SortFunc(out, func(a, b domain.Boost) int { return newestFirst(a.CreatedAt, b.CreatedAt, a.ObjectURI, b.ObjectURI) })
	return limitSlice(out, limit), nil
}

// PostsByAuthor implements ports.PostStore.
func (s *ContentStore) PostsByAuthor(ctx context.Context, author string, before time.Time, limit int) ([]domain.Post, error) {
	return s.listPosts(func(p domain.Post) bool { return p.AuthorURI == author }, before, limit), nil
}

// PostsByGroup implements ports.PostStore.
func (s *ContentStore) PostsByGroup(ctx context.Context, group string, before time.Time, limit int) ([]domain.Post, error) {
	return s.listPosts(func(p domain.Post) bool { return p.GroupURI == group && group != "" }, before, limit), nil
}

// PostsMentioning implements ports.PostStore.
func (s *ContentStore) PostsMentioning(ctx context.Context, actor string, before time.Time, limit int) ([]domain.Post, error) {
	return s.listPosts(func(p domain.Post) bool { return slices.Contains(p.Mentions, actor) }, before, limit), nil
}

// PostsTagged implements ports.PostStore.
func (s *ContentStore) PostsTagged(ctx context.Context, tag string, before time.Time, limit int) ([]domain.Post, error) {
	return s.listPosts(func(p domain.Post) bool {
		return p.Visibility == domain.VisibilityPublic && slices.Contains(p.Hashtags, tag)
	}, before, limit), nil
}

func (s *ContentStore) listPosts(match func(domain.Post) bool, before time.Time, limit int) []domain.Post {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Post
	for _, p := range s.posts {
		if match(p) && (before.IsZero() || p.Published.Before(before)) {
			out = append(out, copyPost(p))
		}
	}
	slices.SortFunc(out, func(a, b domain.Post) int { return newestFirst(a.Published, b.Published, a.ObjectURI, b.ObjectURI) })
	return limitSlice(out, limit)
}

// DeletePost implements ports.PostStore.
func (s *ContentStore) DeletePost(ctx context.Context, uri string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, isPost := s.posts[uri]
	d, isDm := s.dms[uri]
	if !isPost && !isDm {
		return fmt.Errorf("post %q: %w", uri, domain.ErrNotFound)
	}
	if isPost {
		delete(s.ids, p.ID)
	}
	if isDm {
		delete(s.ids, d.ID)
	}
	delete(s.posts, uri)
	delete(s.dms, uri)
	delete(s.reactions, uri)
	delete(s.votes, uri)
	delete(s.openPolls, uri)
	for _, byObject := range s.boosts {
		delete(byObject, uri)
	}
	return nil
}

// AddBoost implements ports.PostStore.
func (s *ContentStore) AddBoost(ctx context.Context, b domain.Boost) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.posts[b.ObjectURI]; !ok {
		return false, fmt.Errorf("post %q: %w", b.ObjectURI, domain.ErrNotFound)
	}
	byObject := s.boosts[b.ActorURI]
	if byObject == nil {
		byObject = make(map[string]domain.Boost)
		s.boosts[b.ActorURI] = byObject
	}
	if _, ok := byObject[b.ObjectURI]; ok {
		return false, nil
	}
	b.CreatedAt = b.CreatedAt.UTC()
	byObject[b.ObjectURI] = b
	return true, nil
}

// RemoveBoost implements ports.PostStore.
func (s *ContentStore) RemoveBoost(ctx context.Context, actor, uri string) (domain.Boost, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byObject := s.boosts[actor]
	if b, ok := byObject[uri]; ok {
		delete(byObject, uri)
		return b, nil
	}
	for object, b := range byObject {
		if b.ActivityURI == uri {
			delete(byObject, object)
			return b, nil
		}
	}
	return domain.Boost{}, fmt.Errorf("boost %q by %q: %w", uri, actor, domain.ErrNotFound)
}

// BoostsBy implements ports.PostStore.
func (s *ContentStore) BoostsBy(ctx context.Context, actor string, before time.Time, limit int) ([]domain.Boost, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Boost
	for _, b := range s.boosts[actor] {
		if before.IsZero() || b.CreatedAt.Before(before) {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b domain.Boost) int { return newestFirst(a.CreatedAt, b.CreatedAt, a.ObjectURI, b.ObjectURI) })
	return limitSlice(out, limit), nil
}

// AddReaction implements ports.PostStore.
func (s *ContentStore) AddReaction(ctx context.Context, r domain.Reaction) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.posts[r.ObjectURI]; !ok {
		return false, fmt.Errorf("post %q: %w", r.ObjectURI, domain.ErrNotFound)
	}
	byActor := s.reactions[r.ObjectURI]
	if byActor == nil {
		byActor = make(map[reactionKey]domain.Reaction)
		s.reactions[r.ObjectURI] = byActor
	}
	k := reactionKey{r.ActorURI, r.Kind}
	if _, ok := byActor[k]; ok {
		return false, nil
	}
	byActor[k] = r
	return true, nil
}

// RemoveReaction implements ports.PostStore.
func (s *ContentStore) RemoveReaction(ctx context.Context, uri, actor string, kind domain.ReactionKind) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := reactionKey{actor, kind}
	if _, ok := s.reactions[uri][k]; !ok {
		return fmt.Errorf("%s of %q by %q: %w", kind, uri, actor, domain.ErrNotFound)
	}
	delete(s.reactions[uri], k)
	return nil
}

// CountReactions implements ports.PostStore.
func (s *ContentStore) CountReactions(ctx context.Context, uri string) (map[domain.ReactionKind]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[domain.ReactionKind]int{}
	for k := range s.reactions[uri] {
		out[k.kind]++
	}
	return out, nil
}

// UpdateContent implements ports.PostStore.
func (s *ContentStore) UpdateContent(ctx context.Context, uri, content string, e domain.Extras, updated time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	updated = updated.UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.posts[uri]; ok {
		if !updated.After(lastEdit(p.Published, p.Updated)) {
			return false, nil
		}
		poll := p.Poll
		p.Content, p.Updated, p.Extras = content, updated, e.Clone()
		p.Poll = poll
		s.posts[uri] = p
		return true, nil
	}
	if d, ok := s.dms[uri]; ok {
		if !updated.After(lastEdit(d.Published, d.Updated)) {
			return false, nil
		}
		d.Content, d.Updated, d.Extras = content, updated, e.Clone()
		d.Poll = nil
		s.dms[uri] = d
		return true, nil
	}
	return false, fmt.Errorf("post %q: %w", uri, domain.ErrNotFound)
}

func lastEdit(published, updated time.Time) time.Time {
	if updated.IsZero() {
		return published
	}
	return updated
}

// CreateDm implements ports.PostStore.
func (s *ContentStore) CreateDm(ctx context.Context, p domain.DmPost) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.dms[p.ObjectURI]; ok {
		return false, nil
	}
	if _, used := s.ids[p.ID]; used {
		return false, fmt.Errorf("direct post id %q: %w", p.ID, domain.ErrAlreadyExists)
	}
	s.ids[p.ID] = struct{}{}
	p.Participants = slices.Clone(p.Participants)
	p.Extras = p.Extras.Clone()
	p.Poll = nil
	s.dms[p.ObjectURI] = p
	return true, nil
}

// DmByObjectURI implements ports.PostStore.
func (s *ContentStore) DmByObjectURI(ctx context.Context, uri string) (domain.DmPost, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.dms[uri]; ok {
		p.Participants = slices.Clone(p.Participants)
		p.Extras = p.Extras.Clone()
		return p, nil
	}
	return domain.DmPost{}, fmt.Errorf("direct post %q: %w", uri, domain.ErrNotFound)
}

// DmByID implements ports.PostStore.
func (s *ContentStore) DmByID(ctx context.Context, id string) (domain.DmPost, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.dms {
		if p.ID == id {
			p.Participants = slices.Clone(p.Participants)
			p.Extras = p.Extras.Clone()
			return p, nil
		}
	}
	return domain.DmPost{}, fmt.Errorf("direct post id %q: %w", id, domain.ErrNotFound)
}

// DmThread implements ports.PostStore.
func (s *ContentStore) DmThread(ctx context.Context, key string, before time.Time, limit int) ([]domain.DmPost, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.DmPost
	for _, p := range s.dms {
		if p.ParticipantsKey == key && (before.IsZero() || p.Published.Before(before)) {
			p.Participants = slices.Clone(p.Participants)
			p.Extras = p.Extras.Clone()
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b domain.DmPost) int { return newestFirst(a.Published, b.Published, a.ObjectURI, b.ObjectURI) })
	return limitSlice(out, limit), nil
}

func newestFirst(a, b time.Time, au, bu string) int {
	if c := b.Compare(a); c != 0 {
		return c
	}
	if au < bu {
		return -1
	}
	if au > bu {
		return 1
	}
	return 0
}

// limitSlice keeps the first limit elements of s: the ports' "limit <= 0
// means no limit".
func limitSlice[T any](s []T, limit int) []T {
	if limit > 0 && len(s) > limit {
		return s[:limit]
	}
	return s
}

// CountLocalPosts implements ports.PostStore.
func (s *ContentStore) CountLocalPosts(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.posts {
		if p.Local {
			n++
		}
	}
	for _, d := range s.dms {
		if d.Local {
			n++
		}
	}
	return n, nil
}

// DeleteActorContent implements ports.PostStore under one hold of the
// mutex.
func (s *ContentStore) DeleteActorContent(ctx context.Context, actor string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []string
	for uri, p := range s.posts {
		if p.AuthorURI == actor {
			delete(s.ids, p.ID)
			delete(s.posts, uri)
			gone = append(gone, uri)
		}
	}
	for uri, d := range s.dms {
		if d.AuthorURI == actor {
			delete(s.ids, d.ID)
			delete(s.dms, uri)
			gone = append(gone, uri)
		}
	}
	for _, uri := range gone {
		delete(s.reactions, uri)
		delete(s.votes, uri)
		delete(s.openPolls, uri)
		for _, byObject := range s.boosts {
			delete(byObject, uri)
		}
	}
	delete(s.boosts, actor)
	for _, byActor := range s.reactions {
		for k := range byActor {
			if k.actor == actor {
				delete(byActor, k)
			}
		}
	}
	return len(gone), nil
}

// AddTombstone implements ports.TombstoneStore: the first tombstone of a
// URI stays.
func (s *ContentStore) AddTombstone(ctx context.Context, t domain.Tombstone) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tombstones[t.URI]; !ok {
		t.DeletedAt = t.DeletedAt.UTC()
		s.tombstones[t.URI] = t
	}
	return nil
}

// Tombstoned implements ports.TombstoneStore.
func (s *ContentStore) Tombstoned(ctx context.Context, uri string) (domain.Tombstone, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tombstones[uri]; ok {
		return t, nil
	}
	return domain.Tombstone{}, fmt.Errorf("tombstone %q: %w", uri, domain.ErrNotFound)
}
