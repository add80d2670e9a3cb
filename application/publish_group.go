package application

import (
	"context"
	"fmt"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// addressedGroups returns the local groups among a post's addressees. A
// local group URI that names no group is an error, so a typo does not
// silently publish to nobody.
func (h PublishHandler) addressedGroups(ctx context.Context, to []string) ([]LocalActor, error) {
	prefix := h.urls.Base() + "/groups/"
	var out []LocalActor
	seen := map[string]bool{}
	for _, uri := range to {
		name, ok := strings.CutPrefix(uri, prefix)
		if !ok || seen[uri] {
			continue
		}
		seen[uri] = true
		g, err := h.deps.Actors.GroupByName(ctx, name)
		if notFound(err) {
			return nil, fmt.Errorf("%w: no group %q", domain.ErrInvalidInput, clip(uri))
		}
		if err != nil {
			return nil, err
		}
		out = append(out, LocalActor{Kind: domain.NameKindGroup, ID: g.ID, Name: g.Name, URI: h.urls.Group(g.Name), OwnerID: g.OwnerID})
	}
	return out, nil
}

// announceInGroups makes each local group a post was addressed to announce
// it to the group's followers.
func (h PublishHandler) announceInGroups(ctx context.Context, groups []LocalActor, act Activity, public bool) error {
	note, ok := act.Object.(Note)
	if !ok {
		return nil
	}
	for _, g := range groups {
		res, err := h.announce(ctx, g, note, public)
		if err != nil {
			return fmt.Errorf("announce in %s: %w", g.URI, err)
		}
		h.deps.Log.InfoContext(ctx, "group announced a post", "group", g.URI, "object", note.ID, "queued", res.Queued)
	}
	return nil
}

// announce sends the group's Announce of a note to every inbox of the
// group's followers (shared inboxes preferred, in batches, like any
// fan-out), signed with the group's key. The Announce's id derives from
// the note's, so announcing twice queues nothing twice.
func (h PublishHandler) announce(ctx context.Context, g LocalActor, note Note, public bool) (EnqueueResult, error) {
	followers := h.urls.Followers(g.URI)
	to, cc := []string{followers}, []string{note.AttributedTo}
	if public {
		to, cc = []string{ASPublic}, []string{followers, note.AttributedTo}
	}
	act := Activity{
		ID: h.urls.Activity(g.URI, "announce-"+shortHash(note.ID)), Type: "Announce", Actor: g.URI,
		Published: asTime(h.deps.Clock.Now()), To: to, CC: cc, Object: note,
	}
	payload, err := act.Marshal()
	if err != nil {
		return EnqueueResult{}, err
	}
	res, err := h.fanOut.Start(ctx, FanOutOf{ActivityID: act.ID, ActorURI: g.URI, SenderID: g.ID, KeyID: h.urls.Key(g.URI), Payload: payload})
	return res.EnqueueResult, err
}

// memberInboxes are the inboxes of a local group's accepted followers,
// read a page at a time into one list. An edit or delete of a post made
// in a group reaches the members with it; the group's own Announce of a
// new post is the streamed fan-out (announce), this list is only for
// those rarer activities, and is bounded by the group's membership.
func (h PublishHandler) memberInboxes(ctx context.Context, group string) ([]string, error) {
	var inboxes []string
	after := ""
	for {
		page, err := h.deps.Followers.Followers(ctx, group, domain.FollowAccepted, after, followerPage)
		if err != nil {
			return nil, err
		}
		uris := make([]string, 0, len(page))
		for _, f := range page {
			if !h.local(f.FollowerURI) {
				uris = append(uris, f.FollowerURI)
			}
		}
		actors, err := h.deps.Foreign.InboxesOf(ctx, uris)
		if err != nil {
			return nil, err
		}
		for _, fa := range actors {
			inboxes = append(inboxes, fa.DeliveryInbox())
		}
		if len(page) < followerPage {
			return distinct(inboxes), nil
		}
		after = page[len(page)-1].FollowerURI
	}
}
