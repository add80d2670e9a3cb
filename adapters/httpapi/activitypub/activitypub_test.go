package activitypub_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/adapters/httpapi/activitypub"
	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/fake"
)

var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

const (
	domainName = "local.example"
	local      = "https://" + domainName
	alice      = local + "/users/alice"
	bob        = "https://remote.example/users/bob"
	carol      = "https://remote.example/users/carol"
)

var (
	keyOnce sync.Once
	keys    [3]domain.KeyPair
	privs   [3]*rsa.PrivateKey
)

func realKeys(t *testing.T) {
	t.Helper()
	keyOnce.Do(func() {
		for i := range keys {
			kp, err := security.RSAKeys{}.GenerateKeyPair()
			if err != nil {
				panic(err)
			}
			keys[i] = kp
			privs[i], _ = domain.ParsePrivateKey(kp.PrivatePEM)
		}
	})
}

// docFetcher serves documents from a map; unknown URLs are 404.
type docFetcher struct {
	mu    sync.Mutex
	docs  map[string][]byte
	errs  map[string]error
	calls map[string]int
}

func (f *docFetcher) Fetch(_ context.Context, r application.FetchRequest) (application.Fetched, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[r.URL]++
	if err := f.errs[r.URL]; err != nil {
		return application.Fetched{}, err
	}
	if d, ok := f.docs[r.URL]; ok {
		return application.Fetched{Body: d, URL: r.URL, ContentType: application.ActivityJSON}, nil
	}
	return application.Fetched{}, fmt.Errorf("%w: %s", domain.ErrNotFound, r.URL)
}

func (f *docFetcher) set(u string, doc []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.docs[u] = doc
}

func (f *docFetcher) count(u string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[u]
}

func actorDoc(id, pemText string) []byte {
	b, _ := json.Marshal(map[string]any{
		"@context": application.ASContext, "id": id, "type": "Person", "inbox": id + "/inbox",
		"endpoints": map[string]string{"sharedInbox": "https://remote.example/inbox"},
		"publicKey": map[string]string{"id": id + "#main-key", "owner": id, "publicKeyPem": pemText},
	})
	return b
}

type bundle struct {
	t       *testing.T
	srv     *httptest.Server
	clock   *fake.Clock
	follows *memory.FollowerStore
	content *memory.ContentStore
	jobs    *memory.JobStore
	names   *memory.NameRegistry
	fetcher *docFetcher
	app     *application.Application
	fed     *application.Federation
	userID  string
}

func setup(t *testing.T) *bundle {
	t.Helper()
	return setupConfig(t, activitypub.Config{SoftwareVersion: "1.2.3", OpenRegistrations: true})
}

func setupConfig(t *testing.T, cfg activitypub.Config) *bundle {
	t.Helper()
	realKeys(t)
	ctx := context.Background()
	accounts := memory.NewAccountStore()
	b := &bundle{t: t, clock: fake.NewClock(t0), follows: memory.NewFollowerStore(), content: memory.NewContentStore(),
		jobs: memory.NewJobStore(), names: memory.NewNameRegistry(),
		fetcher: &docFetcher{docs: map[string][]byte{}, errs: map[string]error{}, calls: map[string]int{}}}
	urls := application.NewURLs(domainName)
	ids := fake.NewIDs("id")
	policy, _ := domain.NewNamePolicy("instance", nil)
	b.app = application.New(application.Deps{
		Users: accounts, Tokens: accounts, Actors: accounts, Names: b.names, Followers: b.follows, Foreign: b.content,
		Posts: b.content, HTML: sanitizer.NewHTMLSanitizer(), Tombstones: b.content, Jobs: b.jobs, Passwords: fake.Passwords{}, Keys: &fake.Keys{},
		Fetcher: b.fetcher, Clock: b.clock, IDs: ids, URLs: urls, NamePolicy: policy, InstanceActor: "instance",
	})
	b.fed = &b.app.Federation
	if _, err := b.app.InstanceActor.Handle(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "alice", Password: "correct horse"})
	if err != nil {
		t.Fatal(err)
	}
	b.userID = s.User.ID
	if _, err := b.app.CreateGroup.Handle(ctx, application.CreateGroup{UserID: s.User.ID, Name: "club", Locked: new(bool)}); err != nil {
		t.Fatal(err)
	}
	b.fetcher.set(bob, actorDoc(bob, keys[0].PublicPEM))
	b.fetcher.set(carol, actorDoc(carol, keys[1].PublicPEM))
	r := mux.NewRouter()
	activitypub.New(b.app, b.clock, nil, cfg).Register(r)
	b.srv = httptest.NewServer(r)
	t.Cleanup(b.srv.Close)
	return b
}

// sign describes how a test request is signed; zero values sign it as
// Mastodon would, as bob.
type sign struct {
	key       *rsa.PrivateKey
	keyID     string
	alg       string   // "-" omits the parameter
	headers   []string // signed headers
	date      time.Time
	digest    string // "-" omits the header
	target    string // the path signed, when not the one posted to
	authz     bool   // in Authorization rather than Signature
	unsigned  bool
	chunked   bool
	tamperSig bool
	// value, if set, writes the Signature header from the key id and the
	// base64 signature, in place of the usual form.
	value func(keyID, sig string) string
}

func (b *bundle) post(path string, body []byte, s sign) *http.Response {
	b.t.Helper()
	if s.key == nil {
		s.key = privs[0]
	}
	if s.keyID == "" {
		s.keyID = bob + "#main-key"
	}
	if s.alg == "" {
		s.alg = "rsa-sha256"
	}
	if s.headers == nil {
		s.headers = []string{"(request-target)", "host", "date", "digest", "content-type"}
	}
	if s.date.IsZero() {
		s.date = b.clock.Now()
	}
	if s.target == "" {
		s.target = path
	}
	var rd io.Reader = bytes.NewReader(body)
	if s.chunked {
		rd = io.MultiReader(bytes.NewReader(body)) // unknown length: sent chunked
	}
	req, err := http.NewRequest(http.MethodPost, b.srv.URL+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/activity+json")
	req.Header.Set("Date", s.date.UTC().Format(http.TimeFormat))
	sum := sha256.Sum256(body)
	switch s.digest {
	case "":
		req.Header.Set("Digest", "SHA-256="+base64.StdEncoding.EncodeToString(sum[:]))
	case "-":
	default:
		req.Header.Set("Digest", s.digest)
	}
	if !s.unsigned {
		var lines []string
		for _, h := range s.headers {
			switch h {
			case "(request-target)":
				lines = append(lines, "(request-target): post "+s.target)
			case "host":
				lines = append(lines, "host: "+req.URL.Host)
			default:
				lines = append(lines, h+": "+req.Header.Get(h))
			}
		}
		hash := sha256.Sum256([]byte(strings.Join(lines, "\n")))
		sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, hash[:])
		if err != nil {
			b.t.Fatal(err)
		}
		if s.tamperSig {
			sig[10] ^= 0xff
		}
		v := fmt.Sprintf(`keyId="%s",headers="%s",signature="%s"`, s.keyID, strings.Join(s.headers, " "), base64.StdEncoding.EncodeToString(sig))
		if s.alg != "-" {
			v = fmt.Sprintf(`keyId="%s",algorithm="%s",headers="%s",signature="%s"`, s.keyID, s.alg, strings.Join(s.headers, " "), base64.StdEncoding.EncodeToString(sig))
		}
		if s.value != nil {
			v = s.value(s.keyID, base64.StdEncoding.EncodeToString(sig))
		}
		if s.authz {
			req.Header.Set("Authorization", "Signature "+v)
		} else {
			req.Header.Set("Signature", v)
		}
	}
	resp, err := b.srv.Client().Do(req) // its own transport: another parallel test's server Close empties http.DefaultTransport's idle connections
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func followBody(actor string) []byte {
	return []byte(fmt.Sprintf(`{"@context":"https://www.w3.org/ns/activitystreams","id":"%s/follows/1","type":"Follow","actor":"%s","object":"%s"}`, actor, actor, alice))
}

func (b *bundle) followers() int {
	n, _ := b.follows.CountFollowers(context.Background(), alice, domain.FollowAccepted)
	m, _ := b.follows.CountFollowers(context.Background(), alice, domain.FollowPending)
	return n + m
}

func (b *bundle) jobCount() int {
	js, _ := b.jobs.List(context.Background(), ports.JobFilter{})
	return len(js)
}

func TestInboxSignatureRules(t *testing.T) {
	t.Parallel()
	realKeys(t)
	follow := followBody(bob)
	tests := []struct {
		name   string
		path   string
		body   []byte
		sign   sign
		status int
	}{
		{"rsa-sha256 at the personal inbox", "/users/alice/inbox", follow, sign{}, 202},
		{"rsa-sha256 at the shared inbox", "/inbox", follow, sign{}, 202},
		{"hs2019", "/inbox", follow, sign{alg: "hs2019"}, 202},
		{"no algorithm parameter", "/inbox", follow, sign{alg: "-"}, 202},
		{"in the Authorization header", "/inbox", follow, sign{authz: true}, 202},
		{"the instance actor's inbox", "/actor/inbox", follow, sign{}, 202},
		{"date 11 h ago", "/inbox", follow, sign{date: t0.Add(-11 * time.Hour)}, 202},
		{"date 11 h ahead", "/inbox", follow, sign{date: t0.Add(11 * time.Hour)}, 202},
		{"sent chunked", "/inbox", follow, sign{chunked: true}, 202},
		{"SHA-512 digest as well", "/inbox", follow, sign{digest: digests(follow)}, 202},
		{"no signature", "/inbox", follow, sign{unsigned: true}, 401},
		{"signature by another key", "/inbox", follow, sign{key: privs[2]}, 401},
		{"signature tampered", "/inbox", follow, sign{tamperSig: true}, 401},
		{"digest of another body", "/inbox", follow, sign{digest: "SHA-256=" + base64.StdEncoding.EncodeToString(make([]byte, 32))}, 401},
		{"no digest header", "/inbox", follow, sign{digest: "-"}, 401},
		{"digest in an unknown algorithm only", "/inbox", follow, sign{digest: "MD5=abc"}, 401},
		{"digest not signed", "/inbox", follow, sign{headers: []string{"(request-target)", "host", "date"}}, 401},
		{"target not signed", "/inbox", follow, sign{headers: []string{"host", "date", "digest"}}, 401},
		{"date not signed", "/inbox", follow, sign{headers: []string{"(request-target)", "host", "digest"}}, 401},
		{"signed for another inbox", "/inbox", follow, sign{target: "/users/alice/inbox"}, 401},
		{"date 13 h ago", "/inbox", follow, sign{date: t0.Add(-13 * time.Hour)}, 401},
		{"date 13 h ahead", "/inbox", follow, sign{date: t0.Add(13 * time.Hour)}, 401},
		{"unknown algorithm", "/inbox", follow, sign{alg: "ed25519"}, 401},
		{"key of an unknown actor", "/inbox", follow, sign{keyID: "https://remote.example/users/nobody#main-key"}, 401},
		{"key of one of ours", "/inbox", follow, sign{keyID: alice + "#main-key"}, 401},
		{"activity of another actor than the signer", "/inbox", followBody(carol), sign{}, 401},
		{"malformed JSON", "/inbox", []byte(`{"type":"Follow",`), sign{}, 400},
		{"JSON that is not an activity", "/inbox", []byte(`[1,2,3]`), sign{}, 400},
		{"activity without actor", "/inbox", []byte(`{"type":"Follow","object":"` + alice + `"}`), sign{}, 400},
		{"body over 1 MiB", "/inbox", append(append([]byte(`{"type":"Note","content":"`), bytes.Repeat([]byte("x"), 1<<20)...), `"}`...), sign{}, 413},
		{"body over 1 MiB, chunked", "/inbox", bytes.Repeat([]byte(" "), 1<<20+1), sign{chunked: true}, 413},
		{"inbox of nobody", "/users/nobody/inbox", follow, sign{}, 404},
		{"inbox of an invalid name", "/users/No%20Body/inbox", follow, sign{}, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			resp := b.post(tt.path, tt.body, tt.sign)
			if resp.StatusCode != tt.status {
				body, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			wantFollowers, wantJobs := 0, 0
			if tt.status == 202 {
				wantFollowers, wantJobs = 1, 1
			}
			if b.followers() != wantFollowers || b.jobCount() != wantJobs {
				t.Fatalf("%d followers and %d jobs after a %d, want %d and %d", b.followers(), b.jobCount(), tt.status, wantFollowers, wantJobs)
			}
		})
	}
}

func digests(body []byte) string {
	s256 := sha256.Sum256(body)
	h := crypto.SHA512.New()
	h.Write(body)
	return "SHA-256=" + base64.StdEncoding.EncodeToString(s256[:]) + ",SHA-512=" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// A cached key that no longer verifies makes the inbox fetch the signer
// once more (key rotation), at most once a minute: a signature that does
// not verify sooner gets 503, so a sender that rotated delivers again, and
// forged signatures naming bob's key do not make Herald fetch bob each
// time; a key that still does not verify after the refetch is refused.
func TestInboxKeyRotation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := []byte(`{"type":"Like","actor":"` + bob + `","object":"` + alice + `/statuses/1"}`)
	if resp := b.post("/inbox", body, sign{}); resp.StatusCode != 202 {
		t.Fatalf("first: %d", resp.StatusCode)
	}
	if n := b.fetcher.count(bob); n != 1 {
		t.Fatalf("%d fetches", n)
	}
	if resp := b.post("/inbox", body, sign{}); resp.StatusCode != 202 || b.fetcher.count(bob) != 1 {
		t.Fatalf("cached key: %d, %d fetches", resp.StatusCode, b.fetcher.count(bob))
	}
	// bob rotates to key 1, right after we fetched him: asked to retry.
	b.fetcher.set(bob, actorDoc(bob, keys[1].PublicPEM))
	if resp := b.post("/inbox", body, sign{key: privs[1]}); resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || b.fetcher.count(bob) != 1 {
		t.Fatalf("rotation within a minute of the fetch: %d, %d fetches", resp.StatusCode, b.fetcher.count(bob))
	}
	b.clock.Advance(time.Minute)
	if resp := b.post("/inbox", body, sign{key: privs[1]}); resp.StatusCode != 202 {
		t.Fatalf("after rotation: %d", resp.StatusCode)
	}
	if n := b.fetcher.count(bob); n != 2 {
		t.Fatalf("%d fetches, want one refetch", n)
	}
	fa, _ := b.content.ByActorURI(context.Background(), bob)
	if fa.PublicKeyPEM != strings.TrimSpace(keys[1].PublicPEM) {
		t.Fatal("new key not cached")
	}
	// Forged signatures cost one refetch a minute, then 401.
	for range 5 {
		if resp := b.post("/inbox", body, sign{key: privs[2]}); resp.StatusCode != 503 {
			t.Fatalf("forged, within a minute: %d", resp.StatusCode)
		}
	}
	b.clock.Advance(time.Minute)
	if resp := b.post("/inbox", body, sign{key: privs[2]}); resp.StatusCode != 401 {
		t.Fatalf("forged: %d", resp.StatusCode)
	}
	if n := b.fetcher.count(bob); n != 3 {
		t.Fatalf("%d fetches, want exactly one more", n)
	}
}

// TestSignatureHeaderListReadAsTheVerifierReadsIt plays a signature over
// the Date alone whose header claims, in a form the verifier (go-fed)
// reads otherwise, to cover the target, host and digest: the list checked
// must be the list verified, so each is refused.
func TestSignatureHeaderListReadAsTheVerifierReadsIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := []byte(`{"type":"Create","actor":"` + bob + `","to":["` + alice + `"],"object":{"id":"https://remote.example/n/forged","type":"Note","content":"forged"}}`)
	const full = "(request-target) host date digest"
	for name, value := range map[string]func(keyID, sig string) string{
		"re-cased Headers": func(k, sig string) string {
			return `keyId="` + k + `",Headers="` + full + `",signature="` + sig + `"`
		},
		"headers given twice": func(k, sig string) string {
			return `keyId="` + k + `",headers="` + full + `",headers="date",signature="` + sig + `"`
		},
		"a space before headers": func(k, sig string) string {
			return `keyId="` + k + `", headers="` + full + `",signature="` + sig + `"`
		},
	} {
		if resp := b.post("/inbox", body, sign{headers: []string{"date"}, value: value}); resp.StatusCode != 401 {
			t.Errorf("%s: %d, want 401", name, resp.StatusCode)
		}
	}
	if _, err := b.content.DmByObjectURI(context.Background(), "https://remote.example/n/forged"); err == nil {
		t.Fatal("a forged note was stored")
	}
}

// TestInboxRateLimit plays a flood from one client address: past the
// limit every inbox answers 429 with Retry-After before reading the body
// or fetching any key (SPEC §10 "Load").
func TestInboxRateLimit(t *testing.T) {
	t.Parallel()
	lim := httpapi.NewRateLimiter(httpapi.RateLimit{PerMinute: 60, Burst: 3, Now: func() time.Time { return t0 }})
	b := setupConfig(t, activitypub.Config{Limit: lim.Wrap})
	body := []byte(`{"type":"Like","actor":"` + carol + `","object":"` + alice + `/statuses/1"}`)
	var refused int
	for i, path := range []string{"/inbox", "/users/alice/inbox", "/groups/club/inbox", "/actor/inbox", "/inbox", "/users/alice/inbox"} {
		resp := b.post(path, body, sign{keyID: carol + "#main-key", key: privs[1]})
		switch {
		case i < 3 && resp.StatusCode != 202:
			t.Fatalf("%s within the burst: %d", path, resp.StatusCode)
		case i >= 3 && (resp.StatusCode != 429 || resp.Header.Get("Retry-After") == ""):
			t.Fatalf("%s past the burst: %d, Retry-After %q", path, resp.StatusCode, resp.Header.Get("Retry-After"))
		case i >= 3:
			refused++
		}
	}
	if n := b.fetcher.count(carol); n != 1 || refused != 3 {
		t.Fatalf("%d fetches of carol's key, %d refused: want 1 and 3", n, refused)
	}
}

// A Delete of an actor whose server says it is gone cannot be verified and
// leaves nothing to delete: accepted and dropped, not an error the remote
// would retry.
func TestInboxDeleteOfAGoneActor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const gone = "https://remote.example/users/gone"
	b.fetcher.errs[gone] = fmt.Errorf("%w: HTTP 410", domain.ErrNotFound)
	body := []byte(`{"type":"Delete","actor":"` + gone + `","object":"` + gone + `"}`)
	if resp := b.post("/inbox", body, sign{keyID: gone + "#main-key"}); resp.StatusCode != 202 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	// Any other activity of an unknown key stays refused.
	body = []byte(`{"type":"Delete","actor":"` + gone + `","object":"https://remote.example/n/1"}`)
	if resp := b.post("/inbox", body, sign{keyID: gone + "#main-key"}); resp.StatusCode != 401 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// GoToSocial's first contact: its keyId is ".../users/NAME/main-key",
// which serves a minimal Person (id, type, preferredUsername, publicKey; no
// inbox) while the full actor is at ".../users/NAME". A fresh Herald that
// never saw the account must accept its first Follow (a 4xx is final for
// GoToSocial: its user would wait forever).
func TestInboxFirstContactWithGoToSocialKeyDocument(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		key  func(actor, keyURL, pemText string) map[string]any
	}{
		{"minimal Person, one key", func(actor, keyURL, pemText string) map[string]any {
			return map[string]any{"@context": application.ASContext, "id": actor, "type": "Person", "preferredUsername": "gts",
				"publicKey": map[string]string{"id": keyURL, "owner": actor, "publicKeyPem": pemText}}
		}},
		{"minimal Person, key array, no owner", func(actor, keyURL, pemText string) map[string]any {
			return map[string]any{"id": actor, "type": "Person",
				"publicKey": []any{map[string]string{"id": actor + "#other", "publicKeyPem": "x"}, map[string]string{"id": keyURL, "publicKeyPem": pemText}}}
		}},
		{"bare key", func(actor, keyURL, pemText string) map[string]any {
			return map[string]any{"id": keyURL, "type": "Key", "owner": actor, "publicKeyPem": pemText}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			const gts = "https://remote.example/users/gts"
			const keyURL = gts + "/main-key"
			doc, _ := json.Marshal(tt.key(gts, keyURL, keys[0].PublicPEM))
			b.fetcher.set(keyURL, doc)
			full := strings.Replace(string(actorDoc(gts, keys[0].PublicPEM)), gts+"#main-key", keyURL, 1)
			b.fetcher.set(gts, []byte(full))
			resp := b.post("/users/alice/inbox", followBody(gts), sign{keyID: keyURL, alg: "hs2019",
				headers: []string{"(request-target)", "host", "date", "digest"}})
			if resp.StatusCode != 202 {
				body, _ := io.ReadAll(resp.Body)
				t.Fatalf("first Follow: %d %s", resp.StatusCode, body)
			}
			if b.followers() != 1 || b.jobCount() != 1 {
				t.Fatalf("followers %d, jobs %d: want the follow and its Accept", b.followers(), b.jobCount())
			}
			fa, err := b.content.ByActorURI(context.Background(), gts)
			if err != nil || fa.Inbox != gts+"/inbox" || fa.PublicKeyID != keyURL {
				t.Fatalf("cached %+v %v", fa, err)
			}
		})
	}
}

// A key that cannot be fetched for a reason that is not the sender's fault
// (their 5xx, our network, a timeout) is answered 503 with Retry-After, so
// the sender retries instead of dropping the activity; a key server that
// refuses or has no such key stays 401.
func TestInboxKeyFetchFailureStatus(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		err   error
		want  int
		retry bool
	}{
		{"their 5xx", fmt.Errorf("%w: HTTP 502", domain.ErrUnavailable), 503, true},
		{"timeout", fmt.Errorf("%w: GET: %w", domain.ErrUnavailable, context.DeadlineExceeded), 503, true},
		{"refused by them", fmt.Errorf("%w: HTTP 403", domain.ErrForbidden), 401, false},
		{"gone", fmt.Errorf("%w: HTTP 404", domain.ErrNotFound), 401, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			const dan = "https://remote.example/users/dan"
			b.fetcher.errs[dan] = tt.err
			resp := b.post("/users/alice/inbox", followBody(dan), sign{keyID: dan + "#main-key"})
			if resp.StatusCode != tt.want || (resp.Header.Get("Retry-After") != "") != tt.retry {
				t.Fatalf("status %d Retry-After %q, want %d (retry %v)", resp.StatusCode, resp.Header.Get("Retry-After"), tt.want, tt.retry)
			}
			if b.followers() != 0 {
				t.Fatal("a follow was stored without a verified signature")
			}
		})
	}
}

func TestInboxAnswersOfTheUseCases(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		name   string
		body   string
		status int
	}{
		{"unknown type", `{"type":"Dance","actor":"` + bob + `"}`, 202},
		{"follow of a persona that does not exist", `{"id":"https://remote.example/f/2","type":"Follow","actor":"` + bob + `","object":"` + local + `/users/nobody"}`, 404},
		{"note by someone else", `{"type":"Create","actor":"` + bob + `","to":"as:Public","object":{"id":"https://remote.example/n/1","type":"Note","attributedTo":"` + carol + `","content":"x"}}`, 403},
		{"empty note", `{"type":"Create","actor":"` + bob + `","to":["as:Public","` + alice + `"],"object":{"id":"https://remote.example/n/1","type":"Note","content":""}}`, 422},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if resp := b.post("/inbox", []byte(tt.body), sign{}); resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
		})
	}
	if _, err := b.content.PostByObjectURI(context.Background(), "https://remote.example/n/1"); err == nil {
		t.Fatal("a refused note was stored")
	}
}

func (b *bundle) get(path, accept string) (*http.Response, map[string]any) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := b.srv.Client().Do(req) // its own transport: another parallel test's server Close empties http.DefaultTransport's idle connections
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if strings.Contains(string(raw), "PRIVATE KEY") {
		b.t.Fatalf("%s served a private key", path)
	}
	return resp, m
}

func TestActorDocuments(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		path, typ, id, name string
	}{
		{"/users/alice", "Person", alice, "alice"},
		{"/users/ALICE", "Person", alice, "alice"},
		{"/groups/club", "Group", local + "/groups/club", "club"},
		{"/actor", "Application", local + "/actor", "instance"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, doc := b.get(tt.path, "application/activity+json")
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/activity+json" {
				t.Fatalf("status %d type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			pk, _ := doc["publicKey"].(map[string]any)
			ep, _ := doc["endpoints"].(map[string]any)
			if doc["type"] != tt.typ || doc["id"] != tt.id || doc["preferredUsername"] != tt.name ||
				doc["inbox"] != tt.id+"/inbox" || doc["outbox"] != tt.id+"/outbox" || doc["followers"] != tt.id+"/followers" ||
				doc["following"] != tt.id+"/following" || doc["featured"] != tt.id+"/collections/featured" || ep["sharedInbox"] != local+"/inbox" ||
				pk["id"] != tt.id+"#main-key" || pk["owner"] != tt.id || !strings.Contains(fmt.Sprint(pk["publicKeyPem"]), "PUBLIC KEY") {
				t.Fatalf("document %v", doc)
			}
			// The featured collection: an empty OrderedCollection.
			resp, fc := b.get(tt.path+"/collections/featured", "application/activity+json")
			items, isList := fc["orderedItems"].([]any)
			if resp.StatusCode != 200 || fc["type"] != "OrderedCollection" || fc["id"] != tt.id+"/collections/featured" ||
				fc["totalItems"] != float64(0) || !isList || len(items) != 0 {
				t.Fatalf("featured: %d %v", resp.StatusCode, fc)
			}
		})
	}
	for _, path := range []string{"/users/nobody", "/users/instance", "/groups/alice", "/users/club", "/users/a%2Fb"} {
		if resp, _ := b.get(path, ""); resp.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", path, resp.StatusCode)
		}
	}
}

func TestContentNegotiation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const ld = `application/ld+json; profile="https://www.w3.org/ns/activitystreams"`
	tests := []struct {
		accept, want string
		status       int
	}{
		{"application/activity+json", "application/activity+json", 200},
		{ld, ld, 200},
		{"application/ld+json", ld, 200},
		{"text/html;q=0.9, " + ld, ld, 200},
		{"application/activity+json;q=0.5, application/ld+json", ld, 200},
		{"application/json", "application/activity+json", 200},
		{"*/*", "application/activity+json", 200},
		{"", "application/activity+json", 200},
		{"text/html", "", 406},
		{"image/png, text/html;q=0.8", "", 406},
	}
	for _, tt := range tests {
		resp, _ := b.get("/users/alice", tt.accept)
		if resp.StatusCode != tt.status || (tt.want != "" && resp.Header.Get("Content-Type") != tt.want) {
			t.Errorf("Accept %q: %d %q, want %d %q", tt.accept, resp.StatusCode, resp.Header.Get("Content-Type"), tt.status, tt.want)
		}
	}
}

func TestWebFinger(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := func(resource string) string { return "/.well-known/webfinger?resource=" + url.QueryEscape(resource) }
	tests := []struct {
		path   string
		status int
		href   string
	}{
		{q("acct:alice@local.example"), 200, alice},
		{q("acct:Alice@LOCAL.example"), 200, alice},
		{q("acct:@alice@local.example"), 200, alice},
		{q("acct:club@local.example"), 200, local + "/groups/club"},
		{q("acct:instance@local.example"), 200, local + "/actor"},
		{q(alice), 200, alice},
		{q("acct:nobody@local.example"), 404, ""},
		{q("acct:admin@local.example"), 404, ""},
		{q("acct:alice@other.example"), 404, ""},
		{q("https://other.example/users/alice"), 404, ""},
		{q("acct:al ice@local.example"), 404, ""},
		{"/.well-known/webfinger", 400, ""},
		{q("alice"), 400, ""},
		{q("acct:alice"), 400, ""},
		{q("acct:@local.example"), 400, ""},
		{q("acct:a@b@local.example"), 400, ""},
		{q("mailto:alice@local.example"), 400, ""},
	}
	for _, tt := range tests {
		resp, doc := b.get(tt.path, "")
		if resp.StatusCode != tt.status {
			t.Errorf("%s: %d, want %d", tt.path, resp.StatusCode, tt.status)
			continue
		}
		if tt.status != 200 {
			continue
		}
		links, _ := doc["links"].([]any)
		self, _ := links[0].(map[string]any)
		if resp.Header.Get("Content-Type") != "application/jrd+json; charset=utf-8" || self["rel"] != "self" ||
			self["type"] != "application/activity+json" || self["href"] != tt.href || !strings.HasSuffix(fmt.Sprint(doc["subject"]), "@local.example") {
			t.Errorf("%s: %v", tt.path, doc)
		}
	}
}

func TestNodeInfo(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, links := b.get("/.well-known/nodeinfo", "")
	ls, _ := links["links"].([]any)
	if len(ls) != 2 {
		t.Fatalf("links %v", links)
	}
	for _, l := range ls {
		href := fmt.Sprint(l.(map[string]any)["href"])
		path := strings.TrimPrefix(href, local)
		resp, doc := b.get(path, "")
		sw, _ := doc["software"].(map[string]any)
		usage, _ := doc["usage"].(map[string]any)
		users, _ := usage["users"].(map[string]any)
		if resp.StatusCode != 200 || doc["version"] != path[len("/nodeinfo/"):] || sw["name"] != "herald" || sw["version"] != "1.2.3" ||
			fmt.Sprint(doc["protocols"]) != "[activitypub]" || doc["openRegistrations"] != true || users["total"] != 1.0 {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, doc)
		}
	}
	if resp, _ := b.get("/nodeinfo/3.0", ""); resp.StatusCode != 404 {
		t.Fatalf("nodeinfo 3.0: %d", resp.StatusCode)
	}
}

// NodeInfo's usage counts personas (not the group, not the instance
// actor), those active in 30 and 180 days (signed in, posted, or made by
// a signed-in account) and the posts written here.
func TestNodeInfoUsage(t *testing.T) {
	t.Parallel()
	b := setup(t) // alice signs up at t0, with the group club and the instance actor
	ctx := context.Background()
	day := 24 * time.Hour
	usage := func() (users map[string]any, posts any) {
		t.Helper()
		resp, doc := b.get("/nodeinfo/2.1", "")
		u, _ := doc["usage"].(map[string]any)
		users, _ = u["users"].(map[string]any)
		if resp.StatusCode != 200 || users == nil {
			t.Fatalf("nodeinfo: %d %v", resp.StatusCode, doc)
		}
		return users, u["localPosts"]
	}
	if _, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "dave", Password: "correct horse"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.app.CreatePersona.Handle(ctx, application.CreatePersona{UserID: b.userID, Name: "alt"}); err != nil {
		t.Fatal(err)
	}
	users, posts := usage()
	if users["total"] != 3.0 || users["activeMonth"] != 3.0 || users["activeHalfyear"] != 3.0 || posts != 0.0 {
		t.Fatalf("after three sign-ups and persona creations: users %v, local posts %v", users, posts)
	}
	// 40 days on, alice posts as alt (alt alone is active again) and dave
	// signs in; alice's persona alice has done nothing since.
	b.clock.Advance(40 * day)
	if _, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alt", Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.app.Login.Handle(ctx, application.Login{UserName: "dave", Password: "correct horse"}); err != nil {
		t.Fatal(err)
	}
	// A remote post received in an inbox is not a local post.
	note := fmt.Sprintf(`{"id":"%[1]s/activities/9","type":"Create","actor":"%[1]s","to":["https://www.w3.org/ns/activitystreams#Public"],`+
		`"object":{"id":"%[1]s/notes/9","type":"Note","attributedTo":"%[1]s","content":"hi","to":["https://www.w3.org/ns/activitystreams#Public"]}}`, bob)
	if resp := b.post("/inbox", []byte(note), sign{}); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("remote Create: %d", resp.StatusCode)
	}
	users, posts = usage()
	if users["total"] != 3.0 || users["activeMonth"] != 2.0 || users["activeHalfyear"] != 3.0 || posts != 1.0 {
		t.Fatalf("40 days on: users %v, local posts %v; want 3 total, 2 a month, 3 a half year, 1 post", users, posts)
	}
	// 200 days on, only what happened since counts: nothing.
	b.clock.Advance(200 * day)
	if users, _ = usage(); users["total"] != 3.0 || users["activeMonth"] != 0.0 || users["activeHalfyear"] != 0.0 {
		t.Fatalf("200 idle days on: users %v", users)
	}
}

func TestCollections(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for i := range 3 {
		f, _ := domain.NewFollower(fmt.Sprintf("https://r%d.example/u", i), alice, "", domain.FollowAccepted, t0)
		_, _ = b.follows.Add(ctx, f)
	}
	pending, _ := domain.NewFollower("https://p.example/u", alice, "", domain.FollowPending, t0)
	_, _ = b.follows.Add(ctx, pending)
	var uris []string
	for i := range 25 {
		vis := domain.VisibilityPublic
		if i == 0 {
			vis = domain.VisibilityFollowers
		}
		res, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alice", Content: fmt.Sprint("post ", i), Visibility: vis})
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, res.ObjectURI)
		b.clock.Advance(time.Second)
	}

	_, coll := b.get("/users/alice/followers", "")
	if coll["type"] != "OrderedCollection" || coll["totalItems"] != 3.0 || coll["first"] != alice+"/followers?page=true" {
		t.Fatalf("followers %v", coll)
	}
	_, page := b.get("/users/alice/followers?page=true", "")
	if items, _ := page["orderedItems"].([]any); len(items) != 3 || items[0] != "https://r0.example/u" {
		t.Fatalf("followers page %v", page)
	}

	_, ob := b.get("/users/alice/outbox", "")
	if ob["type"] != "OrderedCollection" || ob["first"] != alice+"/outbox?page=true" {
		t.Fatalf("outbox %v", ob)
	}
	var seen []string
	next := "/users/alice/outbox?page=true"
	for pages := 0; next != ""; pages++ {
		resp, p := b.get(next, "")
		if resp.StatusCode != 200 || p["type"] != "OrderedCollectionPage" || pages > 2 {
			t.Fatalf("page %d %v", resp.StatusCode, p)
		}
		items, _ := p["orderedItems"].([]any)
		for _, it := range items {
			m := it.(map[string]any)
			o := m["object"].(map[string]any)
			if m["type"] != "Create" || m["actor"] != alice {
				t.Fatalf("item %v", m)
			}
			seen = append(seen, fmt.Sprint(o["id"]))
		}
		next = strings.TrimPrefix(fmt.Sprint(p["next"]), local)
		if p["next"] == nil {
			next = ""
		}
	}
	if len(seen) != 24 || seen[0] != uris[24] || seen[23] != uris[1] {
		t.Fatalf("outbox %d items (first %s), want 24 public newest first", len(seen), seen[0])
	}
	if resp, _ := b.get("/users/alice/outbox?page=true&before=yesterday", ""); resp.StatusCode != 400 {
		t.Fatalf("bad cursor: %d", resp.StatusCode)
	}

	id := uris[1][strings.LastIndex(uris[1], "/")+1:]
	if resp, n := b.get("/users/alice/statuses/"+id, ""); resp.StatusCode != 200 || n["id"] != uris[1] || n["type"] != "Note" {
		t.Fatalf("note %d %v", resp.StatusCode, n)
	}
	fid := uris[0][strings.LastIndex(uris[0], "/")+1:]
	if resp, _ := b.get("/users/alice/statuses/"+fid, ""); resp.StatusCode != 404 {
		t.Fatalf("followers-only note served: %d", resp.StatusCode)
	}
	if resp, f := b.get("/users/alice/following", ""); resp.StatusCode != 200 || f["type"] != "OrderedCollection" {
		t.Fatalf("following %d %v", resp.StatusCode, f)
	}
	for _, p := range []string{"/groups/club/outbox", "/groups/club/followers", "/actor/outbox", "/actor/followers"} {
		if resp, _ := b.get(p, ""); resp.StatusCode != 200 {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want int
	}{
		{domain.ErrUnauthorized, 401},
		{fmt.Errorf("x: %w", domain.ErrForbidden), 403},
		{domain.ErrInvalidInput, 422},
		{domain.ErrInvalidName, 404},
		{domain.ErrNotFound, 404},
		{domain.ErrAlreadyExists, 409},
		{domain.ErrUnavailable, 503},
		{context.DeadlineExceeded, 503},
		{errors.New("boom"), 500},
	}
	for _, tt := range tests {
		if got := activitypub.Status(tt.err); got != tt.want {
			t.Errorf("Status(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// FuzzInbox posts arbitrary bodies with arbitrary Signature headers: the
// inbox never panics, never answers 5xx, and stores nothing unsigned.
func FuzzInbox(f *testing.F) {
	f.Add([]byte(`{"type":"Follow","actor":"`+bob+`","object":"`+alice+`"}`), `keyId="`+bob+`#main-key",headers="(request-target) host date digest",signature="AAAA"`)
	f.Add([]byte(`{}`), `keyId="x",algorithm="hs2019",headers="",signature=""`)
	f.Add([]byte(`null`), `keyId=",,,",headers="(request-target)"`)
	f.Add([]byte(""), `garbage`)
	f.Fuzz(func(t *testing.T, body []byte, signature string) {
		b := fuzzBundle(t)
		req := httptest.NewRequest(http.MethodPost, "http://"+domainName+"/inbox", bytes.NewReader(body))
		req.Header.Set("Signature", signature)
		req.Header.Set("Date", t0.Format(http.TimeFormat))
		sum := sha256.Sum256(body)
		req.Header.Set("Digest", "SHA-256="+base64.StdEncoding.EncodeToString(sum[:]))
		rec := httptest.NewRecorder()
		b.ServeHTTP(rec, req)
		if rec.Code >= 500 || rec.Code == 202 {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	})
}

var (
	fuzzOnce   sync.Once
	fuzzRouter *mux.Router
)

// fuzzBundle is one shared router over memory stores (the fuzz function
// runs many times; building stores and keys each time would be the cost).
func fuzzBundle(t *testing.T) *mux.Router {
	realKeys(t)
	fuzzOnce.Do(func() {
		accounts, names := memory.NewAccountStore(), memory.NewNameRegistry()
		content, follows, jobs := memory.NewContentStore(), memory.NewFollowerStore(), memory.NewJobStore()
		clock, ids, urls := fake.NewClock(t0), fake.NewIDs("f"), application.NewURLs(domainName)
		policy, _ := domain.NewNamePolicy("instance", nil)
		fetcher := &docFetcher{docs: map[string][]byte{bob: actorDoc(bob, keys[0].PublicPEM)}, errs: map[string]error{}, calls: map[string]int{}}
		app := application.New(application.Deps{
			Users: accounts, Tokens: accounts, Actors: accounts, Names: names, Followers: follows, Foreign: content,
			Posts: content, HTML: sanitizer.NewHTMLSanitizer(), Tombstones: content, Jobs: jobs, Passwords: fake.Passwords{}, Keys: &fake.Keys{},
			Fetcher: fetcher, Clock: clock, IDs: ids, URLs: urls, NamePolicy: policy, InstanceActor: "instance",
		})
		_, _ = app.InstanceActor.Handle(context.Background())
		fuzzRouter = mux.NewRouter()
		activitypub.New(app, clock, nil, activitypub.Config{}).Register(fuzzRouter)
	})
	return fuzzRouter
}
