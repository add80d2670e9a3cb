package contract

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/ports/checked"
)

// OAuthStore runs the contract of ports.OAuthStore.
func OAuthStore(t *testing.T, newStore func(t *testing.T) ports.OAuthStore, opts ...Option) {
	newStore = behindChecks(newStore, checked.NewOAuth)
	app := func(t *testing.T, clientID string) domain.OAuthApp {
		t.Helper()
		scopes, err := domain.ParseScopes("read write:statuses follow", "")
		mustNil(t, err, "scopes")
		a, err := domain.NewOAuthApp("app-"+clientID, clientID, domain.HashToken("secret-"+clientID), "Tusky", "https://tusky.app",
			[]string{"https://client.example/cb", domain.OutOfBand}, scopes, base)
		mustNil(t, err, "app")
		return a
	}
	grant := func(hash string, kind domain.GrantKind) domain.OAuthGrant {
		g := domain.OAuthGrant{Hash: hash, Kind: kind, ClientID: "client-1", UserID: "user-1", RedirectURI: "https://client.example/cb",
			Scopes: domain.Scopes{"read", "write:statuses"}, Challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", ChallengeMethod: domain.PKCES256,
			CreatedAt: base, ExpiresAt: base.Add(domain.OAuthCodeTTL)}
		if kind == domain.GrantCode {
			g.AvatarID = "avatar-1"
		}
		return g
	}
	token := func(hash, grantHash string) domain.OAuthToken {
		return domain.OAuthToken{Hash: hash, ClientID: "client-1", UserID: "user-1", AvatarID: "avatar-1",
			Scopes: domain.Scopes{"read", "write:statuses"}, GrantHash: grantHash, CreatedAt: base}
	}
	notFound := func(t *testing.T, err error, what string) {
		t.Helper()
		if !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("%s: got %v, want domain.ErrNotFound", what, err)
		}
	}
	runCases(t, newStore, opts, []testCase[ports.OAuthStore]{
		{"AppRoundTrip", func(t *testing.T, s ports.OAuthStore) {
			want := app(t, "client-1")
			mustNil(t, s.CreateApp(ctx(t), want), "create app")
			got, err := s.AppByClientID(ctx(t), "client-1")
			mustNil(t, err, "app by client id")
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("app read back\n got %+v\nwant %+v", got, want)
			}
			_, err = s.AppByClientID(ctx(t), "client-2")
			notFound(t, err, "unknown client id")
		}},
		{"AppClientIDIsUnique", func(t *testing.T, s ports.OAuthStore) {
			mustNil(t, s.CreateApp(ctx(t), app(t, "client-1")), "create app")
			other := app(t, "client-1")
			other.ID, other.Name = "app-other", "Other"
			if err := s.CreateApp(ctx(t), other); !errors.Is(err, domain.ErrAlreadyExists) {
				t.Fatalf("second app with the client id: got %v, want domain.ErrAlreadyExists", err)
			}
			got, err := s.AppByClientID(ctx(t), "client-1")
			mustNil(t, err, "app")
			if got.Name != "Tusky" {
				t.Fatalf("the first app must stay, got %q", got.Name)
			}
		}},
		{"GrantIsUsedOnce", func(t *testing.T, s ports.OAuthStore) {
			want := grant("code-hash", domain.GrantCode)
			mustNil(t, s.CreateGrant(ctx(t), want), "create grant")
			at := base.Add(time.Minute)
			got, first, err := s.UseGrant(ctx(t), "code-hash", at)
			mustNil(t, err, "first use")
			if !first {
				t.Fatal("first use: first = false")
			}
			want.UsedAt = at
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("grant read back\n got %+v\nwant %+v", got, want)
			}
			again, first, err := s.UseGrant(ctx(t), "code-hash", at.Add(time.Minute))
			mustNil(t, err, "second use")
			if first {
				t.Fatal("second use: first = true, a code must be single use")
			}
			if !again.UsedAt.Equal(at) {
				t.Fatalf("second use moved UsedAt to %v, want the first %v", again.UsedAt, at)
			}
			_, _, err = s.UseGrant(ctx(t), "other-hash", at)
			notFound(t, err, "unknown grant")
		}},
		{"ConsentGrantWithoutPersona", func(t *testing.T, s ports.OAuthStore) {
			want := grant("consent-hash", domain.GrantConsent)
			want.Challenge, want.ChallengeMethod = "", ""
			mustNil(t, s.CreateGrant(ctx(t), want), "create consent")
			got, first, err := s.UseGrant(ctx(t), "consent-hash", base)
			mustNil(t, err, "use consent")
			want.UsedAt = base
			if !first || !reflect.DeepEqual(got, want) {
				t.Fatalf("consent read back (first %v)\n got %+v\nwant %+v", first, got, want)
			}
		}},
		{"GrantHashIsUnique", func(t *testing.T, s ports.OAuthStore) {
			mustNil(t, s.CreateGrant(ctx(t), grant("h", domain.GrantCode)), "create grant")
			if err := s.CreateGrant(ctx(t), grant("h", domain.GrantConsent)); !errors.Is(err, domain.ErrAlreadyExists) {
				t.Fatalf("second grant with the hash: got %v, want domain.ErrAlreadyExists", err)
			}
		}},
		{"InvalidGrantIsRefused", func(t *testing.T, s ports.OAuthStore) {
			g := grant("h", domain.GrantCode)
			g.AvatarID = ""
			if err := s.CreateGrant(ctx(t), g); !errors.Is(err, domain.ErrInvalidInput) {
				t.Fatalf("code without persona: got %v, want domain.ErrInvalidInput", err)
			}
			_, _, err := s.UseGrant(ctx(t), "h", base)
			notFound(t, err, "refused grant")
		}},
		{"ConcurrentUsesHaveOneFirst", func(t *testing.T, s ports.OAuthStore) {
			mustNil(t, s.CreateGrant(ctx(t), grant("raced", domain.GrantCode)), "create grant")
			const n = 12
			var wg sync.WaitGroup
			var mu sync.Mutex
			firsts, errs := 0, []error{}
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, first, err := s.UseGrant(ctx(t), "raced", base.Add(time.Duration(i)*time.Second))
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						errs = append(errs, err)
					}
					if first {
						firsts++
					}
				}()
			}
			wg.Wait()
			if len(errs) > 0 || firsts != 1 {
				t.Fatalf("%d concurrent uses: %d were first (want 1), errors %v", n, firsts, errs)
			}
		}},
		{"DeleteExpiredGrants", func(t *testing.T, s ports.OAuthStore) {
			old := grant("old", domain.GrantCode)
			fresh := grant("fresh", domain.GrantCode)
			fresh.CreatedAt, fresh.ExpiresAt = base.Add(time.Hour), base.Add(time.Hour+domain.OAuthCodeTTL)
			mustNil(t, s.CreateGrant(ctx(t), old), "old")
			mustNil(t, s.CreateGrant(ctx(t), fresh), "fresh")
			n, err := s.DeleteExpiredGrants(ctx(t), base.Add(30*time.Minute))
			mustNil(t, err, "delete expired")
			if n != 1 {
				t.Fatalf("deleted %d grants, want 1", n)
			}
			_, _, err = s.UseGrant(ctx(t), "old", base)
			notFound(t, err, "expired grant")
			_, first, err := s.UseGrant(ctx(t), "fresh", base.Add(time.Hour))
			mustNil(t, err, "fresh grant")
			if !first {
				t.Fatal("the fresh grant was used already")
			}
		}},
		{"TokenRoundTripAndRevoke", func(t *testing.T, s ports.OAuthStore) {
			want := token("tok", "code-hash")
			mustNil(t, s.CreateToken(ctx(t), want), "create token")
			got, err := s.TokenByHash(ctx(t), "tok")
			mustNil(t, err, "token by hash")
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("token read back\n got %+v\nwant %+v", got, want)
			}
			if err := s.CreateToken(ctx(t), want); !errors.Is(err, domain.ErrAlreadyExists) {
				t.Fatalf("second token with the hash: got %v, want domain.ErrAlreadyExists", err)
			}
			mustNil(t, s.RevokeToken(ctx(t), "tok"), "revoke")
			_, err = s.TokenByHash(ctx(t), "tok")
			notFound(t, err, "revoked token")
			notFound(t, s.RevokeToken(ctx(t), "tok"), "revoking it again")
		}},
		{"ClientCredentialsToken", func(t *testing.T, s ports.OAuthStore) {
			want := domain.OAuthToken{Hash: "app-tok", ClientID: "client-1", Scopes: domain.Scopes{"read"}, CreatedAt: base}
			mustNil(t, s.CreateToken(ctx(t), want), "create app token")
			got, err := s.TokenByHash(ctx(t), "app-tok")
			mustNil(t, err, "token")
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("app token read back\n got %+v\nwant %+v", got, want)
			}
			half := want
			half.Hash, half.UserID = "half", "user-1"
			if err := s.CreateToken(ctx(t), half); !errors.Is(err, domain.ErrInvalidInput) {
				t.Fatalf("a user token without a persona: got %v, want domain.ErrInvalidInput", err)
			}
		}},
		{"RevokeGrantTokens", func(t *testing.T, s ports.OAuthStore) {
			for i, g := range []string{"A", "A", "B", ""} {
				mustNil(t, s.CreateToken(ctx(t), token(fmt.Sprintf("tok-%d", i), g)), "create token")
			}
			n, err := s.RevokeGrantTokens(ctx(t), "A")
			mustNil(t, err, "revoke A's")
			if n != 2 {
				t.Fatalf("revoked %d tokens of grant A, want 2", n)
			}
			n, err = s.RevokeGrantTokens(ctx(t), "")
			mustNil(t, err, "revoke none")
			if n != 0 {
				t.Fatalf("an empty grant hash revoked %d tokens, want 0", n)
			}
			for i, alive := range []bool{false, false, true, true} {
				_, err := s.TokenByHash(ctx(t), fmt.Sprintf("tok-%d", i))
				if alive && err != nil || !alive && !errors.Is(err, domain.ErrNotFound) {
					t.Fatalf("token %d: alive %v, got %v", i, alive, err)
				}
			}
		}},
	})
}
