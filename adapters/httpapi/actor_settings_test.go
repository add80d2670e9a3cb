package httpapi_test

import (
	"net/http"
	"testing"
)

// TestActorSettingsEndpoints: personas and groups are created locked or
// open ("locked"; a group is locked unless asked otherwise), locked and
// unlocked by PATCH, and get a new key by POST .../rotate-key; only their
// owner may.
func TestActorSettingsEndpoints(t *testing.T) {
	t.Parallel()
	s := setupFollows(t)
	created := []struct {
		path, body string
		locked     bool
	}{
		{"/api/v1/personas", `{"name":"shy","locked":true}`, true},
		{"/api/v1/personas", `{"name":"open_one"}`, false},
		{"/api/v1/groups", `{"name":"club"}`, true},
		{"/api/v1/groups", `{"name":"agora","locked":false}`, false},
	}
	for _, c := range created {
		if code, out := s.call(t, http.MethodPost, c.path, s.token, c.body); code != http.StatusCreated || out["locked"] != c.locked {
			t.Fatalf("POST %s %s: %d %v, want locked %v", c.path, c.body, code, out, c.locked)
		}
	}
	calls := []struct {
		name, method, path, token, body string
		code                            int
		check                           func(map[string]any) bool
	}{
		{"lock a persona", http.MethodPatch, "/api/v1/personas/alice", s.token, `{"locked":true}`, http.StatusOK,
			func(o map[string]any) bool {
				return o["locked"] == true && o["changed"] == true && o["kind"] == "persona"
			}},
		{"lock it again", http.MethodPatch, "/api/v1/personas/alice", s.token, `{"locked":true}`, http.StatusOK,
			func(o map[string]any) bool { return o["locked"] == true && o["changed"] == false }},
		{"open a group", http.MethodPatch, "/api/v1/groups/club", s.token, `{"locked":false}`, http.StatusOK,
			func(o map[string]any) bool {
				return o["locked"] == false && o["changed"] == true && o["kind"] == "group"
			}},
		{"no locked field", http.MethodPatch, "/api/v1/personas/alice", s.token, `{}`, http.StatusUnprocessableEntity, nil},
		{"someone else's persona", http.MethodPatch, "/api/v1/personas/alice", s.other, `{"locked":false}`, http.StatusForbidden, nil},
		{"an unknown persona", http.MethodPatch, "/api/v1/personas/nobody", s.token, `{"locked":false}`, http.StatusNotFound, nil},
		{"a group by the personas path", http.MethodPatch, "/api/v1/personas/club", s.token, `{"locked":false}`, http.StatusNotFound, nil},
		{"without a token", http.MethodPatch, "/api/v1/personas/alice", "", `{"locked":false}`, http.StatusUnauthorized, nil},
		{"rotate a persona's key", http.MethodPost, "/api/v1/personas/alice/rotate-key", s.token, "", http.StatusOK,
			func(o map[string]any) bool { return o["key_id"] == "https://local.example/users/alice#main-key" }},
		{"rotate a group's key", http.MethodPost, "/api/v1/groups/club/rotate-key", s.token, "", http.StatusOK,
			func(o map[string]any) bool { return o["key_id"] == "https://local.example/groups/club#main-key" }},
		{"rotate someone else's key", http.MethodPost, "/api/v1/personas/alice/rotate-key", s.other, "", http.StatusForbidden, nil},
		{"a group's requests", http.MethodGet, "/api/v1/groups/club/followers?state=pending", s.token, "", http.StatusOK,
			func(o map[string]any) bool { return o["total"] == 0.0 }},
		{"someone else's group's requests", http.MethodGet, "/api/v1/groups/club/followers?state=pending", s.other, "", http.StatusForbidden, nil},
	}
	for _, c := range calls {
		code, out := s.call(t, c.method, c.path, c.token, c.body)
		if code != c.code || (c.check != nil && !c.check(out)) {
			t.Fatalf("%s: %s %s: %d %v, want %d", c.name, c.method, c.path, code, out, c.code)
		}
	}
}
