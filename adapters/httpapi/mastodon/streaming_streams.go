package mastodon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// subscription is one stream of a connection and where it stands: the
// id of the newest notification sent, and the newest page of statuses
// read (what is not in it is new).
type subscription struct {
	name, tag     string
	statuses      bool
	notifications bool
	origin        ports.Origin
	notesAfter    string
	window        []windowEntry
}

// windowEntry is a status as the last poll read it.
type windowEntry struct {
	key     string // the post's id, or the boost's booster and note
	postID  string // the post's, for a delete; empty for a boost
	at      time.Time
	updated time.Time
}

// label is the stream as frames name it: ["user"], ["hashtag","fedi"].
func (sub *subscription) label() []string {
	if sub.tag != "" {
		return []string{sub.name, sub.tag}
	}
	return []string{sub.name}
}

// subscribe adds a stream, checking the token may read it, and reads
// where it stands so that only what comes after is sent.
func (s *streamSession) subscribe(ctx context.Context, req streamRequest) error {
	sub := &subscription{name: req.Stream, origin: ports.OriginAll}
	var scope string
	switch req.Stream {
	case "user":
		scope, sub.statuses = "read:statuses", true
		sub.notifications = s.p.Require("read:notifications") == nil
	case "user:notification":
		scope, sub.notifications = "read:notifications", true
	case "public", "public:local", "public:remote", "hashtag", "hashtag:local":
		scope, sub.statuses = "read:statuses", true
		switch req.Stream {
		case "public:local", "hashtag:local":
			sub.origin = ports.OriginLocal
		case "public:remote":
			sub.origin = ports.OriginRemote
		}
		if req.Stream == "hashtag" || req.Stream == "hashtag:local" {
			if sub.tag = domain.NormalizeHashtag(req.Tag); sub.tag == "" {
				return fmt.Errorf("%w: stream %s needs a tag", errBadParams, req.Stream)
			}
		}
	default:
		return fmt.Errorf("%w: unknown stream %q (list, direct and the media streams are not implemented)", errBadParams, req.Stream)
	}
	if err := s.p.Require(scope); err != nil {
		return err
	}
	if (sub.name == "user" || sub.name == "user:notification") && !s.p.HasUser() {
		return fmt.Errorf("%w: stream %s is a persona's", domain.ErrForbidden, sub.name)
	}
	if slices.ContainsFunc(s.subs, func(o *subscription) bool { return o.name == sub.name && o.tag == sub.tag }) {
		return nil
	}
	if len(s.subs) >= streamSubscriptions {
		return fmt.Errorf("%w: at most %d streams on one connection", errBadParams, streamSubscriptions)
	}
	if sub.statuses {
		es, err := sub.read(ctx, s)
		if err != nil {
			return err
		}
		sub.window = windowOf(es)
	}
	if sub.notifications {
		page, err := s.m.api.Notifications.List(ctx, s.p, application.NotificationsQuery{Filter: domain.NotificationFilter{Limit: 1}})
		if err != nil {
			return err
		}
		sub.notesAfter = page.Newest
	}
	s.subs = append(s.subs, sub)
	return nil
}

func (s *streamSession) unsubscribe(req streamRequest) {
	tag := domain.NormalizeHashtag(req.Tag)
	s.subs = slices.DeleteFunc(s.subs, func(o *subscription) bool { return o.name == req.Stream && o.tag == tag })
}

// read is the newest page of the stream's statuses the persona may see.
func (sub *subscription) read(ctx context.Context, s *streamSession) ([]application.TimelineEntry, error) {
	page := application.Page{Limit: streamPage}
	st := s.m.api.Statuses
	switch sub.name {
	case "user":
		return st.Home(ctx, s.p, page)
	case "hashtag", "hashtag:local":
		return st.Tagged(ctx, s.p, sub.tag, sub.origin, page)
	}
	return st.Public(ctx, s.p, sub.origin, page)
}

func windowOf(es []application.TimelineEntry) []windowEntry {
	w := make([]windowEntry, 0, len(es))
	for _, e := range es {
		we := windowEntry{at: e.At(), updated: e.Post.Updated}
		if e.Boost != nil {
			we.key = "boost\n" + e.Boost.ActorURI + "\n" + e.Boost.ObjectURI
		} else {
			we.key, we.postID = e.Post.ID, e.Post.ID
		}
		w = append(w, we)
	}
	return w
}

// poll is the events of what is new since the last poll, oldest first.
func (sub *subscription) poll(ctx context.Context, s *streamSession) ([]streamEvent, error) {
	var out []streamEvent
	if sub.statuses {
		evs, err := sub.pollStatuses(ctx, s)
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	if sub.notifications {
		evs, err := sub.pollNotifications(ctx, s)
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	return out, nil
}

// pollStatuses compares the newest page with the last one: an entry not
// in it, and newer than its oldest when it was full (so one pushed back
// in by a delete is not sent again), is an update; one in it edited
// since is a status.update; a post of it no longer read and gone from
// the store is a delete. What the persona stopped seeing otherwise (an
// unfollow, a block) is not told.
func (sub *subscription) pollStatuses(ctx context.Context, s *streamSession) ([]streamEvent, error) {
	es, err := sub.read(ctx, s)
	if err != nil {
		return nil, err
	}
	now := windowOf(es)
	prev := make(map[string]windowEntry, len(sub.window))
	for _, we := range sub.window {
		prev[we.key] = we
	}
	var floor time.Time
	if len(sub.window) >= streamPage {
		floor = sub.window[len(sub.window)-1].at
	}
	var out []streamEvent
	for i := len(es) - 1; i >= 0; i-- {
		old, seen := prev[now[i].key]
		event := ""
		switch {
		case !seen && (floor.IsZero() || now[i].at.After(floor)):
			event = "update"
		case seen && now[i].updated.After(old.updated):
			event = "status.update"
		}
		if event == "" {
			continue
		}
		st, err := s.m.entryOf(ctx, s.p, es[i])
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(st)
		if err != nil {
			return nil, err
		}
		out = append(out, streamEvent{Stream: sub.label(), Event: event, Payload: string(b)})
	}
	keys := make(map[string]bool, len(now))
	for _, we := range now {
		keys[we.key] = true
	}
	var oldest time.Time
	if len(now) >= streamPage {
		oldest = now[len(now)-1].at
	}
	for _, we := range sub.window {
		if keys[we.key] || we.postID == "" || !oldest.IsZero() && !we.at.After(oldest) {
			continue
		}
		_, err := s.m.api.Statuses.Published(ctx, we.postID)
		if isNotFound(err) {
			out = append(out, streamEvent{Stream: sub.label(), Event: "delete", Payload: we.postID})
		} else if err != nil {
			return nil, err
		}
	}
	sub.window = now
	return out, nil
}

// pollNotifications sends the persona's notifications after the last
// one sent, at most a page, oldest first.
func (sub *subscription) pollNotifications(ctx context.Context, s *streamSession) ([]streamEvent, error) {
	page, err := s.m.api.Notifications.List(ctx, s.p, application.NotificationsQuery{Filter: domain.NotificationFilter{
		MinID: sub.notesAfter, Limit: streamPage}})
	if err != nil {
		return nil, err
	}
	if page.Newest == "" {
		return nil, nil
	}
	sub.notesAfter = page.Newest
	var out []streamEvent
	for i := len(page.Items) - 1; i >= 0; i-- {
		n, err := s.m.notificationIn(ctx, s.p, page.Items[i])
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(n)
		if err != nil {
			return nil, err
		}
		out = append(out, streamEvent{Stream: sub.label(), Event: "notification", Payload: string(b)})
	}
	return out, nil
}

// notificationIn is a notification's entity, read within ctx (a stream
// has no request of its own).
func (m *Routes) notificationIn(ctx context.Context, p application.Principal, it application.NotificationItem) (notificationJSON, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, "/api/v1/notifications/"+it.ID, nil)
	if err != nil {
		return notificationJSON{}, err
	}
	return m.notificationOf(r, p, it)
}
