package mastodon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// Search: GET /api/v2/search and GET /api/v1/accounts/search. Herald
// finds what a query names exactly, as GoToSocial does, not text in
// names or posts: "@user@host" or "user@host" (a remote account, by
// WebFinger with resolve), a URL (an actor or a post, fetched with
// resolve), "name" or "@name" (a local persona), "#tag" or "tag" (a
// hashtag Herald holds public posts of). Each kind has at most one
// result.

func (m *Routes) registerSearch(r routeAdder) {
	r.Handle("/api/v2/search", m.public(m.search), http.MethodGet)
	r.Handle("/api/v1/accounts/search", m.authed("read:accounts", true, m.searchAccounts), http.MethodGet)
}

type searchJSON struct {
	Accounts []accountJSON `json:"accounts"`
	Statuses []statusJSON  `json:"statuses"`
	Hashtags []tagJSON     `json:"hashtags"`
}

// search is GET /api/v2/search: public without resolve (what Herald
// holds); resolve needs a user token with read:search, as Mastodon has it.
func (m *Routes) search(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	if p.Token.Hash != "" {
		if err := p.Require("read:search"); err != nil {
			writeError(w, r, m.log, err)
			return
		}
	}
	resolve, _ := in.flag("resolve")
	if resolve && !p.HasUser() {
		writeJSON(w, http.StatusUnauthorized, mastodonError{Error: "Search queries that resolve remote resources are not supported without authentication"})
		return
	}
	q := strings.TrimSpace(in.get("q"))
	if q == "" {
		writeError(w, r, m.log, fmt.Errorf("%w: q is required", errBadParams))
		return
	}
	kind := in.get("type")
	switch kind {
	case "", "accounts", "statuses", "hashtags":
	default:
		writeError(w, r, m.log, fmt.Errorf("%w: type must be accounts, statuses or hashtags", domain.ErrInvalidInput))
		return
	}
	limit, err := in.limit(20, 40)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	out := searchJSON{Accounts: []accountJSON{}, Statuses: []statusJSON{}, Hashtags: []tagJSON{}}
	// Every kind has one result at most: a later offset has none.
	if in.get("offset") != "" && in.get("offset") != "0" {
		writeJSON(w, http.StatusOK, out)
		return
	}
	if kind == "" || kind == "accounts" || kind == "statuses" {
		accts, statuses, err := m.findFollowing(r.Context(), p, q, resolve, in)
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		if kind != "statuses" {
			out.Accounts = append(out.Accounts, accts...)
		}
		if kind != "accounts" {
			out.Statuses = append(out.Statuses, statuses...)
		}
	}
	if kind == "" || kind == "hashtags" {
		tags, err := m.findTag(r.Context(), q)
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		out.Hashtags = append(out.Hashtags, tags...)
	}
	out.Accounts, out.Statuses, out.Hashtags = out.Accounts[:min(limit, len(out.Accounts))], out.Statuses[:min(limit, len(out.Statuses))], out.Hashtags[:min(limit, len(out.Hashtags))]
	writeJSON(w, http.StatusOK, out)
}

// findFollowing is find, its accounts kept to those the persona follows
// when the query says following=true.
func (m *Routes) findFollowing(ctx context.Context, p application.Principal, q string, resolve bool, in params) ([]accountJSON, []statusJSON, error) {
	accts, statuses, err := m.find(ctx, p, q, resolve)
	if err != nil {
		return nil, nil, err
	}
	if following, _ := in.flag("following"); following {
		if accts, err = m.followed(ctx, p, accts); err != nil {
			return nil, nil, err
		}
	}
	return accts, statuses, nil
}

// searchAccounts is GET /api/v1/accounts/search: the accounts of the same
// query.
func (m *Routes) searchAccounts(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	q := strings.TrimSpace(in.get("q"))
	if q == "" {
		writeError(w, r, m.log, fmt.Errorf("%w: q is required", errBadParams))
		return
	}
	if _, err := in.limit(40, 80); err != nil {
		writeError(w, r, m.log, err)
		return
	}
	resolve, _ := in.flag("resolve")
	accts, _, err := m.findFollowing(r.Context(), p, q, resolve, in)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	if in.get("offset") != "" && in.get("offset") != "0" {
		accts = nil
	}
	if accts == nil {
		accts = []accountJSON{}
	}
	writeJSON(w, http.StatusOK, accts)
}

// find resolves the query to the account and status it names.
func (m *Routes) find(ctx context.Context, p application.Principal, q string, resolve bool) ([]accountJSON, []statusJSON, error) {
	var found application.Found
	var err error
	switch {
	case strings.Contains(q, "://"):
		found, err = m.fed.Search.URL(ctx, q, resolve)
	case strings.Contains(strings.TrimPrefix(q, "@"), "@"):
		user, host, _ := strings.Cut(strings.TrimPrefix(q, "@"), "@")
		if strings.EqualFold(host, m.app.URLs.Domain) {
			return m.findLocal(ctx, user)
		}
		found, err = m.fed.Search.Account(ctx, user, host, resolve)
	default:
		return m.findLocal(ctx, strings.TrimPrefix(q, "@"))
	}
	if err != nil {
		return nil, nil, err
	}
	var accts []accountJSON
	var statuses []statusJSON
	if found.Actor != nil {
		a, err := m.accountByURI(ctx, found.Actor.ActorURI)
		if err != nil {
			return nil, nil, err
		}
		accts = append(accts, a)
	}
	if found.Post != nil {
		s, ok, err := m.foundStatus(ctx, p, *found.Post)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			statuses = append(statuses, s)
		}
	}
	if found.Actor == nil && found.Post == nil {
		// A local persona's URL names the persona.
		if name, ok := strings.CutPrefix(q, m.app.URLs.Persona("")); ok && !strings.Contains(name, "/") {
			return m.findLocal(ctx, name)
		}
	}
	return accts, statuses, nil
}

// findLocal is the local persona of that name, if there is one.
func (m *Routes) findLocal(ctx context.Context, name string) ([]accountJSON, []statusJSON, error) {
	a, err := m.api.Accounts.Lookup(ctx, name)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	acct, err := m.localAccount(ctx, a)
	if err != nil {
		return nil, nil, err
	}
	return []accountJSON{acct}, nil, nil
}

// foundStatus renders a post a search found, if the persona may see it
// (as GET /api/v1/statuses/:id decides).
func (m *Routes) foundStatus(ctx context.Context, p application.Principal, post domain.Post) (statusJSON, bool, error) {
	ok, err := m.api.Statuses.CanSee(ctx, p, post)
	if err != nil || !ok {
		return statusJSON{}, false, err
	}
	s, err := m.statusOf(ctx, p, post)
	return s, err == nil, err
}

// findTag is the hashtag the query names, when Herald holds a public post
// that carries it.
func (m *Routes) findTag(ctx context.Context, q string) ([]tagJSON, error) {
	tag := domain.NormalizeHashtag(q)
	if tag == "" {
		return nil, nil
	}
	posts, err := m.fed.Collections.Tagged(ctx, tag, time.Time{}, 1)
	if err != nil || len(posts) == 0 {
		return nil, err
	}
	return []tagJSON{{Name: tag, URL: m.app.URLs.Tag(tag), History: []any{}}}, nil
}

// followed keeps the accounts the persona follows (search's following).
func (m *Routes) followed(ctx context.Context, p application.Principal, accts []accountJSON) ([]accountJSON, error) {
	if !p.HasUser() || len(accts) == 0 {
		return nil, nil
	}
	uris := make([]string, 0, len(accts))
	for _, a := range accts {
		uris = append(uris, a.URI)
	}
	rels, err := m.fed.Relationships.Handle(ctx, application.Relationships{UserID: p.User.ID, As: p.Avatar.Name, Targets: uris})
	if err != nil {
		return nil, err
	}
	var out []accountJSON
	for i, rel := range rels {
		if rel.Following {
			out = append(out, accts[i])
		}
	}
	return out, nil
}
