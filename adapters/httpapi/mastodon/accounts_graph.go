package mastodon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// The accounts graph: follow, unfollow, block, unblock, mute, unmute an
// account, the relationships of the token's persona, the lists of
// followers, following, follow requests, blocks and mutes. Each action
// is one of the federation's use cases (FollowRemote, Unfollow, Block,
// Unblock, Mute, AnswerFollow), acting as the token's persona.

// registerGraph is called before registerAccounts: its fixed paths
// (/api/v1/accounts/relationships, /search) must be matched before the
// router takes them for an account id.
func (m *Routes) registerGraph(r routeAdder) {
	r.Handle("/api/v1/accounts/relationships", m.authed("read:follows", true, m.relationships), http.MethodGet)
	r.Handle("/api/v1/accounts/{id}/follow", m.authed("write:follows", true, m.follow), http.MethodPost)
	r.Handle("/api/v1/accounts/{id}/unfollow", m.authed("write:follows", true, m.unfollow), http.MethodPost)
	r.Handle("/api/v1/accounts/{id}/block", m.authed("write:blocks", true, m.block(false)), http.MethodPost)
	r.Handle("/api/v1/accounts/{id}/unblock", m.authed("write:blocks", true, m.block(true)), http.MethodPost)
	r.Handle("/api/v1/accounts/{id}/mute", m.authed("write:mutes", true, m.mute(false)), http.MethodPost)
	r.Handle("/api/v1/accounts/{id}/unmute", m.authed("write:mutes", true, m.mute(true)), http.MethodPost)
	r.Handle("/api/v1/accounts/{id}/followers", m.public(m.followers), http.MethodGet)
	r.Handle("/api/v1/accounts/{id}/following", m.public(m.following), http.MethodGet)
	r.Handle("/api/v1/follow_requests", m.authed("read:follows", true, m.followRequests), http.MethodGet)
	r.Handle("/api/v1/follow_requests/{id}/authorize", m.authed("write:follows", true, m.answerRequest(true)), http.MethodPost)
	r.Handle("/api/v1/follow_requests/{id}/reject", m.authed("write:follows", true, m.answerRequest(false)), http.MethodPost)
	r.Handle("/api/v1/blocks", m.authed("read:blocks", true, m.blockList(domain.BlockKindBlock)), http.MethodGet)
	r.Handle("/api/v1/mutes", m.authed("read:mutes", true, m.blockList(domain.BlockKindMute)), http.MethodGet)
}

// relationshipJSON is Mastodon's Relationship entity. Herald keeps no
// notes, endorsements, per-account notifications or languages, nor a
// persona's own domain blocks: those are always empty or false.
type relationshipJSON struct {
	ID                  string   `json:"id"`
	Following           bool     `json:"following"`
	ShowingReblogs      bool     `json:"showing_reblogs"`
	Notifying           bool     `json:"notifying"`
	Languages           []string `json:"languages"`
	FollowedBy          bool     `json:"followed_by"`
	Blocking            bool     `json:"blocking"`
	BlockedBy           bool     `json:"blocked_by"`
	Muting              bool     `json:"muting"`
	MutingNotifications bool     `json:"muting_notifications"`
	Requested           bool     `json:"requested"`
	RequestedBy         bool     `json:"requested_by"`
	DomainBlocking      bool     `json:"domain_blocking"`
	Endorsed            bool     `json:"endorsed"`
	Note                string   `json:"note"`
}

func relationshipOf(id string, r application.Relationship) relationshipJSON {
	return relationshipJSON{ID: id, Following: r.Following, ShowingReblogs: r.Following || r.Requested, FollowedBy: r.FollowedBy,
		Blocking: r.Blocking, BlockedBy: r.BlockedBy, Muting: r.Muting, MutingNotifications: r.Muting, Requested: r.Requested,
		RequestedBy: r.RequestedBy}
}

// relationships is GET /api/v1/accounts/relationships?id[]=: ids Herald
// does not know are left out, as Mastodon does.
func (m *Routes) relationships(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	ids := in["id"]
	if len(ids) > application.MaxRelationships {
		writeError(w, r, m.log, fmt.Errorf("%w: at most %d ids", domain.ErrInvalidInput, application.MaxRelationships))
		return
	}
	var known, uris []string
	for _, id := range ids {
		uri, err := m.api.Accounts.URIOf(r.Context(), id)
		if errors.Is(err, domain.ErrNotFound) {
			continue
		}
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		known, uris = append(known, id), append(uris, uri)
	}
	rels, err := m.fed.Relationships.Handle(r.Context(), application.Relationships{UserID: p.User.ID, As: p.Avatar.Name, Targets: uris})
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	out := make([]relationshipJSON, 0, len(rels))
	for i, rel := range rels {
		out = append(out, relationshipOf(known[i], rel))
	}
	writeJSON(w, http.StatusOK, out)
}

// writeRelationship answers the persona's relationship with the account
// id (at uri), as every action of the graph does.
func (m *Routes) writeRelationship(w http.ResponseWriter, r *http.Request, p application.Principal, id, uri string) {
	rels, err := m.fed.Relationships.Handle(r.Context(), application.Relationships{UserID: p.User.ID, As: p.Avatar.Name, Targets: []string{uri}})
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	writeJSON(w, http.StatusOK, relationshipOf(id, rels[0]))
}

// target reads the account id of the path as an actor URI; the
// persona's own is refused (Mastodon: 403).
func (m *Routes) target(r *http.Request, p application.Principal) (id, uri string, err error) {
	id = mux.Vars(r)["id"]
	uri, err = m.api.Accounts.URIOf(r.Context(), id)
	if err != nil {
		return "", "", err
	}
	if uri == m.app.URLs.Persona(p.Avatar.Name) {
		return "", "", fmt.Errorf("%w: an account cannot do that to itself", domain.ErrForbidden)
	}
	return id, uri, nil
}

// follow is POST /api/v1/accounts/:id/follow: a local persona is followed
// at once (or the request waits, if it is locked); a remote actor gets a
// Follow, and the relationship says requested until its Accept arrives.
// reblogs, notify and languages are accepted and not kept.
func (m *Routes) follow(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	id, uri, err := m.target(r, p)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	if _, err := m.fed.FollowRemote.Handle(r.Context(), application.FollowRemote{UserID: p.User.ID, As: p.Avatar.Name, Target: uri}); err != nil {
		writeError(w, r, m.log, err)
		return
	}
	m.writeRelationship(w, r, p, id, uri)
}

// unfollow is POST /api/v1/accounts/:id/unfollow; unfollowing an account
// the persona does not follow changes nothing and answers as Mastodon
// does, with the relationship.
func (m *Routes) unfollow(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	id, uri, err := m.target(r, p)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	_, err = m.fed.Unfollow.Handle(r.Context(), application.Unfollow{UserID: p.User.ID, As: p.Avatar.Name, Target: uri})
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		writeError(w, r, m.log, err)
		return
	}
	m.writeRelationship(w, r, p, id, uri)
}

// block is POST /api/v1/accounts/:id/block and /unblock. Herald blocks
// remote actors only (a local persona is 422); unblocking one not
// blocked changes nothing.
func (m *Routes) block(undo bool) handler {
	return func(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
		id, uri, err := m.target(r, p)
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		if undo {
			_, err = m.fed.Unblock.Handle(r.Context(), application.UnblockActor{UserID: p.User.ID, As: p.Avatar.Name, Target: uri})
			if errors.Is(err, domain.ErrNotFound) {
				err = nil
			}
		} else {
			_, err = m.fed.Block.Handle(r.Context(), application.BlockActor{UserID: p.User.ID, As: p.Avatar.Name, Target: uri})
		}
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		m.writeRelationship(w, r, p, id, uri)
	}
}

// mute is POST /api/v1/accounts/:id/mute and /unmute. A mute is for good:
// a duration is refused rather than ignored.
func (m *Routes) mute(undo bool) handler {
	return func(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
		if d := in.get("duration"); d != "" && d != "0" {
			writeError(w, r, m.log, fmt.Errorf("%w: Herald does not keep mutes with a duration", domain.ErrInvalidInput))
			return
		}
		id, uri, err := m.target(r, p)
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		if _, err := m.fed.Mute.Handle(r.Context(), application.MuteActor{UserID: p.User.ID, As: p.Avatar.Name, Target: uri, Unmute: undo}); err != nil {
			writeError(w, r, m.log, err)
			return
		}
		m.writeRelationship(w, r, p, id, uri)
	}
}

// answerRequest is POST /api/v1/follow_requests/:id/authorize and
// /reject: the Accept or Reject goes to the follower.
func (m *Routes) answerRequest(accept bool) handler {
	return func(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
		id := mux.Vars(r)["id"]
		uri, err := m.api.Accounts.URIOf(r.Context(), id)
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		if _, err := m.fed.AnswerFollow.Handle(r.Context(), application.AnswerFollowRequest{UserID: p.User.ID, As: p.Avatar.Name, Follower: uri, Accept: accept}); err != nil {
			writeError(w, r, m.log, err)
			return
		}
		m.writeRelationship(w, r, p, id, uri)
	}
}

// followers is GET /api/v1/accounts/:id/followers: the accepted
// followers Herald holds (of a remote account, the local personas that
// follow it).
func (m *Routes) followers(w http.ResponseWriter, r *http.Request, _ application.Principal, in params) {
	m.writeGraphOf(w, r, in, m.api.Accounts.FollowersOf)
}

// following is GET /api/v1/accounts/:id/following: accepted follows only.
func (m *Routes) following(w http.ResponseWriter, r *http.Request, _ application.Principal, in params) {
	m.writeGraphOf(w, r, in, m.api.Accounts.FollowingOf)
}

// writeGraphOf writes the page of accounts that list reads of the
// account :id (its followers or its following).
func (m *Routes) writeGraphOf(w http.ResponseWriter, r *http.Request, in params,
	list func(ctx context.Context, actorURI, after string, limit int) ([]string, error)) {
	uri, err := m.api.Accounts.URIOf(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	m.writeAccountPage(w, r, in, func(ctx context.Context, after string, limit int) ([]string, error) {
		return list(ctx, uri, after, limit)
	})
}

// followRequests is GET /api/v1/follow_requests: the follows of the
// token's persona that wait for its approval.
func (m *Routes) followRequests(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	me := m.app.URLs.Persona(p.Avatar.Name)
	m.writeAccountPage(w, r, in, func(ctx context.Context, after string, limit int) ([]string, error) {
		return m.api.Accounts.RequestsOf(ctx, me, after, limit)
	})
}

// blockList is GET /api/v1/blocks and /api/v1/mutes of the token's
// persona. (Herald's own API answers these paths with ?as=.)
func (m *Routes) blockList(kind domain.BlockKind) handler {
	return func(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
		m.writeAccountPage(w, r, in, func(ctx context.Context, after string, limit int) ([]string, error) {
			page, err := m.fed.Blocks.Handle(ctx, application.ListBlocks{UserID: p.User.ID, As: p.Avatar.Name, Kind: kind, After: after, Limit: limit})
			if err != nil {
				return nil, err
			}
			uris := make([]string, 0, len(page.Blocks))
			for _, b := range page.Blocks {
				uris = append(uris, b.TargetURI)
			}
			return uris, nil
		})
	}
}

// lister reads a list of actors ordered by URI: at most limit after the
// URI after ("" from the start).
type lister func(ctx context.Context, after string, limit int) ([]string, error)

// Paging of account lists: Mastodon's default and maximum, the page a
// walk for since_id and min_id reads at a time, and how far it walks.
const (
	accountPage    = 40
	maxAccountPage = 80
	walkPage       = application.MaxFollowerPage
	maxWalk        = 10 * walkPage
)

// pageOf reads the page of list that in asks for. Herald's lists are
// ordered by actor URI and read forward only, and their cursors are the
// account ids of their entries (opaque to clients, as Mastodon's are):
// max_id pages forward, after that account; since_id and min_id ask for
// the entries before it (since_id the first of them, min_id those just
// before it), which are found by reading the list from its start, at most
// maxWalk entries.
func (m *Routes) pageOf(ctx context.Context, in params, list lister, limit int) ([]string, error) {
	if id := in.get("max_id"); id != "" {
		after, err := m.api.Accounts.URIOf(ctx, id)
		if errors.Is(err, domain.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return list(ctx, after, limit)
	}
	cursor, first := in.get("min_id"), false
	if cursor == "" {
		cursor, first = in.get("since_id"), true
	}
	if cursor == "" {
		return list(ctx, "", limit)
	}
	stop, err := m.api.Accounts.URIOf(ctx, cursor)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var before []string
	for after := ""; len(before) < maxWalk; {
		page, err := list(ctx, after, walkPage)
		if err != nil {
			return nil, err
		}
		for _, uri := range page {
			if uri == stop {
				if first {
					return before[:min(limit, len(before))], nil
				}
				return before[max(0, len(before)-limit):], nil
			}
			before = append(before, uri)
		}
		if len(page) < walkPage {
			return nil, nil // the cursor left the list: nothing is before it
		}
		after = page[len(page)-1]
	}
	return nil, fmt.Errorf("%w: since_id and min_id reach the first %d entries of a list; page on with max_id", domain.ErrInvalidInput, maxWalk)
}

// writeAccountPage answers a page of a list as accounts, with Mastodon's
// Link header: next (max_id, the last entry) when the page is full, prev
// (min_id, the first) when it has entries.
func (m *Routes) writeAccountPage(w http.ResponseWriter, r *http.Request, in params, list lister) {
	limit, err := in.limit(accountPage, maxAccountPage)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	uris, err := m.pageOf(r.Context(), in, list, limit)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	out := make([]accountJSON, 0, len(uris))
	for _, uri := range uris {
		a, err := m.accountByURI(r.Context(), uri)
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		out = append(out, a)
	}
	var links []string
	link := func(rel, key, id string) {
		q := url.Values{key: {id}, "limit": {fmt.Sprint(limit)}}
		links = append(links, fmt.Sprintf(`<%s%s?%s>; rel="%s"`, m.app.URLs.Base(), r.URL.Path, q.Encode(), rel))
	}
	if len(out) == limit {
		link("next", "max_id", out[len(out)-1].ID)
	}
	if len(out) > 0 {
		link("prev", "min_id", out[0].ID)
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	writeJSON(w, http.StatusOK, out)
}

// accountByURI is the account entity of an actor: a local persona, or a
// remote actor by the id Herald gives it (its profile as cached; only
// its URI when it is no longer cached).
func (m *Routes) accountByURI(ctx context.Context, uri string) (accountJSON, error) {
	if local := m.app.URLs.Persona(""); strings.HasPrefix(uri, local) {
		a, err := m.api.Accounts.Lookup(ctx, strings.TrimPrefix(uri, local))
		if err == nil {
			return m.localAccount(ctx, a)
		}
		if !errors.Is(err, domain.ErrNotFound) {
			return accountJSON{}, err
		}
	}
	id, err := m.api.Accounts.RemoteID(ctx, uri)
	if err != nil {
		return accountJSON{}, err
	}
	ra, err := m.api.Accounts.Remote(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return remoteAccount(application.RemoteAccount{ID: id, Actor: domain.ForeignAvatar{ActorURI: uri}}), nil
	}
	if err != nil {
		return accountJSON{}, err
	}
	return remoteAccount(ra), nil
}
