package application

import (
	"context"
	"fmt"
	"strings"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// What the block and follow use cases share: finding the actor a client
// names, and the one question every path asks of the BlockStore.

// namedActor is an actor a client named as a target: a remote one (Remote
// set) or one of ours (only URI set).
type namedActor struct {
	URI    string
	Remote *domain.ForeignAvatar
}

// actorName is a target as a client names it, checked for form: an
// http(s) URI, or user@host (with or without acct: or a leading @).
type actorName struct {
	text       string // as given, trimmed: what errors name
	uri        string // set for a URI
	user, host string // set for user@host
}

// parseActorName checks the form of a target a client names; it looks
// nothing up.
func parseActorName(target string) (actorName, error) {
	target = strings.TrimSpace(target)
	switch {
	case target == "":
		return actorName{}, fmt.Errorf("%w: no target", domain.ErrInvalidInput)
	case strings.Contains(target, "://"):
		if !httpURL(target) {
			return actorName{}, fmt.Errorf("%w: target %q is not an http(s) URI", domain.ErrInvalidInput, clip(target))
		}
		return actorName{text: target, uri: target}, nil
	}
	user, host, ok := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(target, "acct:"), "@"), "@")
	if !ok || user == "" || host == "" || strings.Contains(host, "@") {
		return actorName{}, fmt.Errorf("%w: target %q is neither a URI nor user@host", domain.ErrInvalidInput, clip(target))
	}
	return actorName{text: target, user: user, host: host}, nil
}

// localName reports whether n names an actor of this server (whether or
// not there is one).
func (c *fedCore) localName(n actorName) bool {
	if n.uri != "" {
		return c.local(n.uri)
	}
	return strings.EqualFold(n.host, c.deps.URLs.Domain)
}

// resolveName finds the remote actor n names: from the cache, fetched
// (by WebFinger for user@host) when it is not cached.
func (c *fedCore) resolveName(ctx context.Context, n actorName) (domain.ForeignAvatar, error) {
	var fa domain.ForeignAvatar
	var err error
	if n.uri != "" {
		fa, err = c.resolver.Resolve(ctx, n.uri)
	} else {
		fa, err = c.resolver.Account(ctx, n.user, strings.ToLower(n.host))
	}
	if err != nil {
		return domain.ForeignAvatar{}, targetError(n.text, err)
	}
	return fa, nil
}

// actorNamed finds the actor a client names by URI or as user@host, as
// FollowRemote does: a remote one by resolveName; one of ours by its URI
// alone.
func (c *fedCore) actorNamed(ctx context.Context, target string) (namedActor, error) {
	n, err := parseActorName(target)
	if err != nil {
		return namedActor{}, err
	}
	if c.localName(n) {
		if n.uri != "" {
			return namedActor{URI: n.uri}, nil
		}
		la, err := (LocalActorsHandler{core: c}).ByAccount(ctx, n.user)
		if err != nil {
			return namedActor{}, err
		}
		return namedActor{URI: la.URI}, nil
	}
	fa, err := c.resolveName(ctx, n)
	if err != nil {
		return namedActor{}, err
	}
	return namedActor{URI: fa.ActorURI, Remote: &fa}, nil
}

// remoteNamed is actorNamed for the use cases that act on remote actors
// only (a block goes to another server).
func (c *fedCore) remoteNamed(ctx context.Context, target, what string) (domain.ForeignAvatar, error) {
	a, err := c.actorNamed(ctx, target)
	if err != nil {
		return domain.ForeignAvatar{}, err
	}
	if a.Remote == nil {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: %s is on this server: only a remote actor can be %s", domain.ErrInvalidInput, clip(a.URI), what)
	}
	return *a.Remote, nil
}

// parties is the user's persona named as and the actor target names: the
// two sides of a relation the persona changes.
func (c *fedCore) parties(ctx context.Context, userID, as, target string) (LocalActor, namedActor, error) {
	me, err := c.ownPersona(ctx, userID, as)
	if err != nil {
		return LocalActor{}, namedActor{}, err
	}
	a, err := c.actorNamed(ctx, target)
	return me, a, err
}

// blockParties is parties for a block or its undoing: blocks must be kept
// here, and the target must be remote.
func (c *fedCore) blockParties(ctx context.Context, userID, as, target string) (LocalActor, domain.ForeignAvatar, error) {
	if c.deps.Blocks == nil {
		return LocalActor{}, domain.ForeignAvatar{}, fmt.Errorf("%w: blocks are not kept by this server", domain.ErrUnavailable)
	}
	me, err := c.ownPersona(ctx, userID, as)
	if err != nil {
		return LocalActor{}, domain.ForeignAvatar{}, err
	}
	fa, err := c.remoteNamed(ctx, target, "blocked")
	return me, fa, err
}

// endFollow removes the follow of followed by follower and returns it as
// it was: domain.ErrNotFound, naming both, when there is none.
func (c *fedCore) endFollow(ctx context.Context, follower, followed, followerName, followedName string) (domain.Follower, error) {
	f, err := c.deps.Followers.Get(ctx, follower, followed)
	if err != nil {
		return domain.Follower{}, fmt.Errorf("follow of %s by %s: %w", followedName, followerName, err)
	}
	if err := c.deps.Followers.Remove(ctx, follower, followed); err != nil && !notFound(err) {
		return domain.Follower{}, err
	}
	return f, nil
}

// blocked reports whether a and b block each other either way (a block,
// not a mute): one lookup of the BlockStore's primary key. Without a
// BlockStore nothing is blocked.
func (c *fedCore) blocked(ctx context.Context, a, b string) (bool, error) {
	return blockedBetween(ctx, c.deps.Blocks, a, b)
}

func blockedBetween(ctx context.Context, store ports.BlockStore, a, b string) (bool, error) {
	if store == nil {
		return false, nil
	}
	bs, err := store.Between(ctx, a, b)
	if err != nil {
		return false, err
	}
	for _, bl := range bs {
		if bl.Kind == domain.BlockKindBlock {
			return true, nil
		}
	}
	return false, nil
}

// blocks reports whether local blocks remote (one way: what refuses the
// remote's activities to local).
func (c *fedCore) blocks(ctx context.Context, local, remote string) (bool, error) {
	if c.deps.Blocks == nil {
		return false, nil
	}
	bs, err := c.deps.Blocks.Between(ctx, local, remote)
	if err != nil {
		return false, err
	}
	for _, bl := range bs {
		if bl.Kind == domain.BlockKindBlock && bl.ActorURI == local {
			return true, nil
		}
	}
	return false, nil
}

// undoFollowOf queues the Undo of a follow of ours (object: the Follow we
// sent, whose id the relation keeps) to the followed actor's inbox.
func (c *fedCore) undoFollowOf(ctx context.Context, me LocalActor, f domain.Follower, fa domain.ForeignAvatar) (string, EnqueueResult, error) {
	followID := f.ActivityID
	if followID == "" {
		// A follow stored before ids were kept: Mastodon and GoToSocial
		// match an Undo by its Follow's actor and object too.
		followID = c.deps.URLs.Activity(me.URI, "follow-"+shortHash(fa.ActorURI))
	}
	undo := Activity{
		ID: c.deps.URLs.Activity(me.URI, c.deps.IDs.NewID()), Type: "Undo", Actor: me.URI,
		To: []string{fa.ActorURI}, Object: FollowObject{ID: followID, Type: "Follow", Actor: me.URI, Object: fa.ActorURI},
	}
	res, err := c.send(ctx, me, undo, []string{personalInbox(fa)})
	return undo.ID, res, err
}

// personalInbox is the actor's own inbox (a Block, an Undo and the answer
// to a Follow name one actor), its shared one if it has no other.
func personalInbox(fa domain.ForeignAvatar) string {
	if fa.Inbox != "" {
		return fa.Inbox
	}
	return fa.DeliveryInbox()
}
