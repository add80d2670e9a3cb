package mastodon

import (
	"context"
	"errors"
	"net/url"
	"path"
	"strings"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// remoteAccount is the entity of a cached remote actor. Its counts and
// profile are not fetched yet (docs/api.md): they are zero and empty.
func remoteAccount(r application.RemoteAccount) accountJSON {
	f := r.Actor
	user := f.PreferredUsername
	if user == "" {
		user = path.Base(f.ActorURI)
	}
	host := f.Host
	if host == "" {
		if u, err := url.Parse(f.ActorURI); err == nil {
			host = u.Host
		}
	}
	return accountJSON{ID: r.ID, Username: user, Acct: user + "@" + host, DisplayName: user, CreatedAt: mastodonTime(f.FetchedAt),
		URL: f.ActorURI, URI: f.ActorURI, Emojis: []any{}, Fields: []any{}}
}

// mentionJSON is Mastodon's Status::Mention.
type mentionJSON struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	URL      string `json:"url"`
	Acct     string `json:"acct"`
}

// mention is the entity of a mentioned actor: a local persona by its id,
// a remote actor by the account id Herald gives it.
func (m *Routes) mention(ctx context.Context, uri string) (mentionJSON, error) {
	if local := m.app.URLs.Persona(""); strings.HasPrefix(uri, local) {
		a, err := m.api.Accounts.Lookup(ctx, strings.TrimPrefix(uri, local))
		if err == nil {
			return mentionJSON{ID: a.ID, Username: a.Name, URL: uri, Acct: a.Name}, nil
		}
		if !errors.Is(err, domain.ErrNotFound) {
			return mentionJSON{}, err
		}
	}
	id, err := m.api.Accounts.RemoteID(ctx, uri)
	if err != nil {
		return mentionJSON{}, err
	}
	acct := remoteAccount(application.RemoteAccount{ID: id, Actor: domain.ForeignAvatar{ActorURI: uri}})
	if r, err := m.api.Accounts.Remote(ctx, id); err == nil {
		acct = remoteAccount(r)
	}
	return mentionJSON{ID: id, Username: acct.Username, URL: uri, Acct: acct.Acct}, nil
}
