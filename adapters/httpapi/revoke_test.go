package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/heraldfed/herald/adapters/httpapi"
)

func TestRevokeSession(t *testing.T) {
	t.Parallel()
	h, _, _ := newLimited(t, httpapi.RateLimit{PerMinute: 600, Burst: 100})
	token := func(path, body string) string {
		rec := hit(h, "POST", path, "192.0.2.1:1", "", body)
		var out map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		tok, _ := out["token"].(string)
		if rec.Code != 201 || tok == "" {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		return tok
	}
	alice := token("/api/v1/accounts", `{"username":"alice","password":"correct horse"}`)
	alice2 := token("/api/v1/sessions", `{"username":"alice","password":"correct horse"}`)
	mallory := token("/api/v1/accounts", `{"username":"mallory","password":"correct horse"}`)
	uses := func(tok string) int {
		return hit(h, "POST", "/api/v1/personas", "192.0.2.1:1", tok, `{"name":"p_`+tok[:6]+`"}`).Code
	}

	tests := []struct {
		name  string
		token string
		want  int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"forged token", "forged", http.StatusUnauthorized},
		{"mallory revokes her own", mallory, http.StatusNoContent},
		{"alice revokes one session", alice, http.StatusNoContent},
		{"the same token twice", alice, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		if rec := hit(h, "DELETE", "/api/v1/sessions", "192.0.2.1:1", tt.token, ""); rec.Code != tt.want {
			t.Errorf("%s: %d %s, want %d", tt.name, rec.Code, rec.Body, tt.want)
		}
	}
	if code := uses(alice); code != http.StatusUnauthorized {
		t.Fatalf("revoked token still works: %d", code)
	}
	if code := uses(mallory); code != http.StatusUnauthorized {
		t.Fatalf("mallory's revoked token still works: %d", code)
	}
	// Revoking is per token: alice's other session, untouched by her own
	// logout and by mallory's, still works.
	if code := uses(alice2); code != http.StatusCreated {
		t.Fatalf("alice's other session: %d", code)
	}
}
