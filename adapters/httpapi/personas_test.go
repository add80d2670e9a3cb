package httpapi_test

import (
	"context"
	"net/http"
	"testing"
)

// DELETE /api/v1/personas/{name}: 202 for the account's own persona, 404
// for another account's or none, 401 without a token, 410 once deleted;
// the name is then taken for every sign-up.
func TestDeletePersona(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	alice := s.signUp(t, "alice")
	bob := s.signUp(t, "bob")
	if code, _ := s.post(t, "/api/v1/personas", alice, `{"name":"carol"}`); code != 201 {
		t.Fatalf("persona %d", code)
	}
	del := func(token, name string) (int, map[string]any) {
		t.Helper()
		return s.do(t, http.MethodDelete, "/api/v1/personas/"+name, token, "", nil)
	}
	for _, tt := range []struct {
		token, name string
		want        int
	}{
		{"", "carol", 401},
		{bob, "carol", 404},
		{alice, "nobody", 404},
		{alice, "not%20a%20name", 404},
	} {
		if code, _ := del(tt.token, tt.name); code != tt.want {
			t.Fatalf("DELETE %s: %d, want %d", tt.name, code, tt.want)
		}
	}
	code, body := del(alice, "Carol")
	if code != http.StatusAccepted || body["name"] != "carol" || body["uri"] != "https://local.example/users/carol" ||
		body["status"] != "deleting" || body["deleted_at"] == nil {
		t.Fatalf("delete %d %v", code, body)
	}
	if code, _ := del(alice, "carol"); code != http.StatusGone {
		t.Fatalf("delete again: %d, want 410", code)
	}
	if rn, err := s.names.Get(context.Background(), "carol"); err != nil || !rn.Deleted() {
		t.Fatalf("carol's reservation %+v %v", rn, err)
	}
	for path, in := range map[string]string{
		"/api/v1/accounts": `{"username":"carol","password":"correct horse"}`,
		"/api/v1/personas": `{"name":"carol"}`,
		"/api/v1/groups":   `{"name":"carol"}`,
	} {
		if code, _ := s.post(t, path, bob, in); code != http.StatusConflict {
			t.Fatalf("%s with a deleted persona's name: %d, want 409", path, code)
		}
	}
	if code, _ := s.post(t, "/api/v1/posts", alice, `{"as":"carol","content":"still here?"}`); code < 400 {
		t.Fatalf("a deleted persona posted: %d", code)
	}
	// alice's first persona is untouched.
	if code, _ := s.post(t, "/api/v1/posts", alice, `{"as":"alice","content":"still here"}`); code != 201 {
		t.Fatalf("alice posts: %d", code)
	}
}
