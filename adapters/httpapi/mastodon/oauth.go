package mastodon

import (
	"embed"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

//go:embed templates/authorize.html
var templatesFS embed.FS

var authorizeTemplate = template.Must(template.ParseFS(templatesFS, "templates/authorize.html"))

// appJSON is Mastodon's Application entity (CredentialApplication when it
// carries the client id and secret, which only registration answers).
type appJSON struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Website      *string  `json:"website"`
	Scopes       []string `json:"scopes"`
	RedirectURI  string   `json:"redirect_uri"`
	RedirectURIs []string `json:"redirect_uris"`
	VapidKey     string   `json:"vapid_key"`
	ClientID     string   `json:"client_id,omitempty"`
	ClientSecret string   `json:"client_secret,omitempty"`
	// ClientSecretExpiresAt is 0: secrets do not expire.
	ClientSecretExpiresAt *int `json:"client_secret_expires_at,omitempty"`
}

func appEntity(a domain.OAuthApp) appJSON {
	out := appJSON{ID: a.ID, Name: a.Name, Scopes: a.Scopes, RedirectURI: strings.Join(a.RedirectURIs, "\n"), RedirectURIs: a.RedirectURIs}
	if out.Scopes == nil {
		out.Scopes = []string{}
	}
	if a.Website != "" {
		w := a.Website
		out.Website = &w
	}
	return out
}

// createApp is POST /api/v1/apps. redirect_uris is one URI, several
// separated by newlines, or an array (Mastodon 4.3).
func (m *Routes) createApp(w http.ResponseWriter, r *http.Request) {
	in, err := readParams(w, r)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	var uris []string
	for _, v := range in["redirect_uris"] {
		uris = append(uris, strings.Split(v, "\n")...)
	}
	res, err := m.api.RegisterApp.Handle(r.Context(), application.RegisterApp{Name: in.get("client_name"), RedirectURIs: uris,
		Scopes: strings.Join(in["scopes"], " "), Website: in.get("website")})
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	out := appEntity(res.App)
	zero := 0
	out.ClientID, out.ClientSecret, out.ClientSecretExpiresAt = res.App.ClientID, res.Secret, &zero
	writeJSON(w, http.StatusOK, out)
}

// verifyApp is GET /api/v1/apps/verify_credentials: the token's
// application, for any valid token.
func (m *Routes) verifyApp(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	writeJSON(w, http.StatusOK, appEntity(p.App))
}

// page is what the authorization page shows.
type page struct {
	Title, Instance, Step, Error string
	AppName                      string
	Scopes                       []string
	Request                      application.AuthorizeRequest
	State                        string
	Consent                      string
	Personas                     []string
	Code                         string
}

func requestOf(in params) application.AuthorizeRequest {
	return application.AuthorizeRequest{ResponseType: in.get("response_type"), ClientID: in.get("client_id"), RedirectURI: in.get("redirect_uri"),
		Scope: in.get("scope"), CodeChallenge: in.get("code_challenge"), ChallengeMethod: in.get("code_challenge_method")}
}

// render writes the page with headers that keep it out of frames and
// caches, and its referrer (the query carries the request) to itself.
func (m *Routes) render(w http.ResponseWriter, status int, p page) {
	p.Instance = m.app.URLs.Domain
	if p.Title == "" {
		p.Title = "Sign in"
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	if err := authorizeTemplate.Execute(w, p); err != nil {
		m.log.Warn("authorization page", "err", err)
	}
}

// refuse answers a request the page cannot honour: shown to the person
// when the client or its redirect URI is in doubt, sent back to the
// application otherwise (RFC 6749 §4.1.2.1).
func (m *Routes) refuse(w http.ResponseWriter, r *http.Request, redirectURI, state string, err error) {
	var ae *application.AuthorizeError
	if errors.As(err, &ae) && redirectURI != "" && redirectURI != domain.OutOfBand {
		q := url.Values{"error": {ae.Code}, "error_description": {ae.Description}}
		if state != "" {
			q.Set("state", state)
		}
		http.Redirect(w, r, withQuery(redirectURI, q), http.StatusFound)
		return
	}
	status, msg := statusTable.Classify(err)
	if status >= 500 {
		m.log.Error("authorization failed", "err", err)
	}
	m.render(w, status, page{Title: "Authorization failed", Step: "error", Error: msg})
}

func withQuery(uri string, q url.Values) string {
	sep := "?"
	if strings.Contains(uri, "?") {
		sep = "&"
	}
	return uri + sep + q.Encode()
}

// authorizePage is GET /oauth/authorize: the sign-in form, once the
// request is found valid.
func (m *Routes) authorizePage(w http.ResponseWriter, r *http.Request) {
	in, err := readParams(w, r)
	if err != nil {
		m.refuse(w, r, "", "", err)
		return
	}
	req := requestOf(in)
	c, err := m.api.Authorize.Check(r.Context(), req)
	if err != nil {
		m.refuse(w, r, c.RedirectURI, in.get("state"), err)
		return
	}
	req.RedirectURI = c.RedirectURI
	m.render(w, http.StatusOK, page{Step: "signin", AppName: c.App.Name, Scopes: c.Scopes, Request: req, State: in.get("state")})
}

// authorizeSubmit is POST /oauth/authorize: step "signin" checks the
// password and shows the personas; step "consent" issues the code for
// the persona chosen and redirects to the application (or shows the
// code, for the out-of-band URI).
func (m *Routes) authorizeSubmit(w http.ResponseWriter, r *http.Request) {
	in, err := readParams(w, r)
	if err != nil {
		m.refuse(w, r, "", "", err)
		return
	}
	state := in.get("state")
	if in.get("step") == "consent" {
		res, err := m.api.Authorize.Consent(r.Context(), in.get("consent"), in.get("persona"), in.get("decision") == "approve")
		if err != nil {
			m.refuse(w, r, res.RedirectURI, state, err)
			return
		}
		if res.RedirectURI == domain.OutOfBand {
			m.render(w, http.StatusOK, page{Title: "Authorization code", Step: "code", Code: res.Code})
			return
		}
		q := url.Values{"code": {res.Code}}
		if state != "" {
			q.Set("state", state)
		}
		http.Redirect(w, r, withQuery(res.RedirectURI, q), http.StatusFound)
		return
	}
	req := requestOf(in)
	c, err := m.api.Authorize.Check(r.Context(), req)
	if err != nil {
		m.refuse(w, r, c.RedirectURI, state, err)
		return
	}
	signed, err := m.api.Authorize.SignIn(r.Context(), req, in.get("username"), in.get("password"))
	switch {
	case errors.Is(err, domain.ErrUnauthorized):
		m.render(w, http.StatusUnauthorized, page{Step: "signin", Error: "Wrong user name or password.", AppName: c.App.Name, Scopes: c.Scopes, Request: req, State: state})
		return
	case errors.Is(err, application.ErrAwaitingApproval) || errors.Is(err, domain.ErrForbidden):
		_, msg := statusTable.Classify(err)
		m.render(w, http.StatusForbidden, page{Step: "signin", Error: msg, AppName: c.App.Name, Scopes: c.Scopes, Request: req, State: state})
		return
	case err != nil:
		m.refuse(w, r, c.RedirectURI, state, err)
		return
	}
	names := make([]string, 0, len(signed.Personas))
	for _, a := range signed.Personas {
		names = append(names, a.Name)
	}
	m.render(w, http.StatusOK, page{Title: "Authorize " + c.App.Name, Step: "consent", AppName: c.App.Name, Scopes: c.Scopes,
		Consent: signed.Consent, Personas: names, State: state})
}

// tokenJSON is Mastodon's Token entity.
type tokenJSON struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	Scope       string `json:"scope"`
	CreatedAt   int64  `json:"created_at"`
}

// token is POST /oauth/token. The client may authenticate in the body or
// with HTTP Basic (RFC 6749 §2.3.1).
func (m *Routes) token(w http.ResponseWriter, r *http.Request) {
	in, err := readParams(w, r)
	if err != nil {
		writeOAuthError(w, r, m.log, err)
		return
	}
	id, secret := clientCredentials(r, in)
	res, err := m.api.IssueToken.Handle(r.Context(), application.IssueToken{GrantType: in.get("grant_type"), ClientID: id, ClientSecret: secret,
		Code: in.get("code"), RedirectURI: in.get("redirect_uri"), CodeVerifier: in.get("code_verifier"), Scope: in.get("scope")})
	if err != nil {
		writeOAuthError(w, r, m.log, err)
		return
	}
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, tokenJSON{AccessToken: res.Token, TokenType: "Bearer", Scope: res.Scopes.String(), CreatedAt: res.CreatedAt.Unix()})
}

// revoke is POST /oauth/revoke: {} once the token is gone.
func (m *Routes) revoke(w http.ResponseWriter, r *http.Request) {
	in, err := readParams(w, r)
	if err != nil {
		writeOAuthError(w, r, m.log, err)
		return
	}
	id, secret := clientCredentials(r, in)
	if err := m.api.RevokeToken.Handle(r.Context(), application.RevokeToken{ClientID: id, ClientSecret: secret, Token: in.get("token")}); err != nil {
		writeOAuthError(w, r, m.log, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

func clientCredentials(r *http.Request, in params) (id, secret string) {
	if u, p, ok := r.BasicAuth(); ok {
		return u, p
	}
	return in.get("client_id"), in.get("client_secret")
}
