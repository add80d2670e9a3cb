package delivery

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-fed/httpsig"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

var _ application.Fetcher = (*Client)(nil)

// MaxDocumentBytes bounds a fetched document (an actor, a WebFinger
// answer): larger ones are refused rather than cut, since a cut JSON
// document is garbage anyway.
const MaxDocumentBytes = 1 << 20

// maxRedirects is how many redirects a GET follows, each one re-signed for
// its new target and dialled through the same address guard.
const maxRedirects = 3

// FetchSignedHeaders are the headers a signed GET covers (there is no body,
// so no digest), as Mastodon signs its fetches.
var FetchSignedHeaders = []string{httpsig.RequestTarget, "host", "date"}

// Fetch implements application.Fetcher: a GET over the delivery transport
// (same address guard, timeout, connection cap and User-Agent), signed as
// r.KeyID when a key is given, its body bounded by MaxDocumentBytes.
func (c *Client) Fetch(ctx context.Context, r application.FetchRequest) (application.Fetched, error) {
	var key *rsa.PrivateKey
	if r.PrivateKeyPEM != "" {
		k, err := c.key(r.PrivateKeyPEM)
		if err != nil {
			return application.Fetched{}, fmt.Errorf("signing key of %s: %w", r.KeyID, err)
		}
		key = k
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	target := r.URL
	for hop := 0; ; hop++ {
		u, err := url.Parse(target)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return application.Fetched{}, fmt.Errorf("%w: %q is not an http(s) URL", domain.ErrInvalidInput, target)
		}
		if r.CheckHost != nil {
			if err := r.CheckHost(u.Host); err != nil {
				return application.Fetched{}, fmt.Errorf("GET %s: %w", u.Redacted(), err)
			}
		}
		resp, err := c.get(ctx, u, r, key)
		if err != nil {
			return application.Fetched{}, err
		}
		if isRedirect(resp.StatusCode) && hop >= maxRedirects {
			discard(resp, c.cfg.MaxResponseBytes)
			return application.Fetched{}, fmt.Errorf("%w: GET %s: more than %d redirects", domain.ErrForbidden, r.URL, maxRedirects)
		}
		if isRedirect(resp.StatusCode) {
			loc, lerr := resp.Location()
			discard(resp, c.cfg.MaxResponseBytes)
			if lerr != nil {
				return application.Fetched{}, fmt.Errorf("%w: GET %s: redirect without a valid Location", domain.ErrUnavailable, u.Redacted())
			}
			// Location is resolved against the URL that redirected; the
			// next hop is dialled through the same guard.
			target = loc.String()
			continue
		}
		body, err := c.readDocument(u, resp)
		if err != nil {
			return application.Fetched{}, err
		}
		// The URL asked for at this hop, not resp.Request.URL: the same
		// here, since redirects are followed by this loop and not by the
		// http.Client, and it keeps any fragment out (a GET has none).
		return application.Fetched{Body: body, URL: u.String(), ContentType: strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Type")))}, nil
	}
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

func (c *Client) get(ctx context.Context, u *url.URL, r application.FetchRequest, key *rsa.PrivateKey) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", domain.ErrInvalidInput, err)
	}
	accept := r.Accept
	if accept == "" {
		accept = "application/activity+json"
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	req.Header.Set("Date", c.cfg.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("Host", u.Host)
	if key != nil {
		if err := signGet(req, r.KeyID, key); err != nil {
			return nil, err
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, ErrRefusedAddress) {
			return nil, fmt.Errorf("%w: GET %s: %v", domain.ErrForbidden, u.Redacted(), err)
		}
		return nil, fmt.Errorf("%w: GET %s: %v", domain.ErrUnavailable, u.Redacted(), err)
	}
	return resp, nil
}

// readDocument maps the status to the fetcher's errors and reads a 2xx
// body of at most MaxDocumentBytes.
func (c *Client) readDocument(u *url.URL, resp *http.Response) ([]byte, error) {
	where := "GET " + u.Redacted()
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
	case s == http.StatusNotFound || s == http.StatusGone:
		discard(resp, c.cfg.MaxResponseBytes)
		return nil, fmt.Errorf("%w: %s: HTTP %d", domain.ErrNotFound, where, s)
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		discard(resp, c.cfg.MaxResponseBytes)
		return nil, fmt.Errorf("%w: %s: HTTP %d", domain.ErrForbidden, where, s)
	default:
		discard(resp, c.cfg.MaxResponseBytes)
		return nil, fmt.Errorf("%w: %s: HTTP %d", domain.ErrUnavailable, where, s)
	}
	defer resp.Body.Close()
	if resp.ContentLength > MaxDocumentBytes {
		return nil, fmt.Errorf("%w: %s: document of %d bytes is over %d", domain.ErrInvalidInput, where, resp.ContentLength, MaxDocumentBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", domain.ErrUnavailable, where, err)
	}
	if len(body) > MaxDocumentBytes {
		return nil, fmt.Errorf("%w: %s: document over %d bytes", domain.ErrInvalidInput, where, MaxDocumentBytes)
	}
	return body, nil
}

// discard drains a bounded amount so the connection can be reused.
func discard(resp *http.Response, limit int64) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, limit))
	_ = resp.Body.Close()
}

// signGet signs a GET with "(request-target) host date".
func signGet(req *http.Request, keyID string, key *rsa.PrivateKey) error {
	signer, _, err := httpsig.NewSigner([]httpsig.Algorithm{httpsig.RSA_SHA256}, httpsig.DigestSha256, FetchSignedHeaders, httpsig.Signature, 0)
	if err != nil {
		return fmt.Errorf("signer: %w", err)
	}
	if err := signer.SignRequest(key, keyID, req, nil); err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	// As in Sign: name the algorithm the signature really uses.
	req.Header.Set("Signature", strings.Replace(req.Header.Get("Signature"), `algorithm="hs2019"`, `algorithm="rsa-sha256"`, 1))
	return nil
}
