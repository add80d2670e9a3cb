package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
)

func TestBlockEndpoints(t *testing.T) {
	t.Parallel()
	s := setupFollows(t)
	body := `{"as":"alice","target":"bob@remote.example"}`
	tests := []struct {
		name, method, path, token, body string
		want                            int
		check                           func(t *testing.T, m map[string]any)
	}{
		{"no token", "POST", "/api/v1/blocks", "", body, http.StatusUnauthorized, nil},
		{"someone else's persona", "POST", "/api/v1/blocks", s.other, body, http.StatusForbidden, nil},
		{"a local target", "POST", "/api/v1/blocks", s.token, `{"as":"alice","target":"mallory@local.example"}`, http.StatusUnprocessableEntity, nil},
		{"unblock before any block", "DELETE", "/api/v1/blocks", s.token, body, http.StatusNotFound, nil},
		{"block", "POST", "/api/v1/blocks", s.token, body, http.StatusCreated, func(t *testing.T, m map[string]any) {
			if m["target"] != remoteBob || m["created"] != true || m["queued"] != float64(1) {
				t.Fatalf("blocked %v", m)
			}
		}},
		{"block again", "POST", "/api/v1/blocks", s.token, body, http.StatusOK, func(t *testing.T, m map[string]any) {
			if m["created"] != false {
				t.Fatalf("blocked again %v", m)
			}
		}},
		{"list", "GET", "/api/v1/blocks?as=alice", s.token, "", http.StatusOK, func(t *testing.T, m map[string]any) {
			bs, _ := m["blocks"].([]any)
			if len(bs) != 1 || bs[0].(map[string]any)["target"] != remoteBob {
				t.Fatalf("blocks %v", m)
			}
		}},
		{"list someone else's", "GET", "/api/v1/blocks?as=alice", s.other, "", http.StatusForbidden, nil},
		{"unblock by query", "DELETE", "/api/v1/blocks?" + url.Values{"as": {"alice"}, "target": {remoteBob}}.Encode(), s.token, "", http.StatusOK, func(t *testing.T, m map[string]any) {
			if m["target"] != remoteBob || m["activity"] == "" || m["queued"] != float64(1) {
				t.Fatalf("unblocked %v", m)
			}
		}},
		{"mute", "POST", "/api/v1/mutes", s.token, body, http.StatusOK, func(t *testing.T, m map[string]any) {
			if m["muted"] != true || m["changed"] != true {
				t.Fatalf("muted %v", m)
			}
		}},
		{"list mutes", "GET", "/api/v1/mutes?as=alice", s.token, "", http.StatusOK, func(t *testing.T, m map[string]any) {
			if bs, _ := m["blocks"].([]any); len(bs) != 1 {
				t.Fatalf("mutes %v", m)
			}
		}},
		{"unmute", "DELETE", "/api/v1/mutes", s.token, body, http.StatusOK, func(t *testing.T, m map[string]any) {
			if m["muted"] != false || m["changed"] != true {
				t.Fatalf("unmuted %v", m)
			}
		}},
		{"malformed", "POST", "/api/v1/blocks", s.token, `{"as":`, http.StatusBadRequest, nil},
	}
	for _, tt := range tests { // in order: each builds on the one before
		t.Run(tt.name, func(t *testing.T) {
			code, m := s.call(t, tt.method, tt.path, tt.token, tt.body)
			if code != tt.want {
				t.Fatalf("%s %s: %d %v, want %d", tt.method, tt.path, code, m, tt.want)
			}
			if tt.check != nil {
				tt.check(t, m)
			}
		})
	}
}

func TestUnfollowAndRemoveFollowerEndpoints(t *testing.T) {
	t.Parallel()
	s := setupFollows(t)
	ctx := context.Background()
	alice := "https://local.example/users/alice"
	if code, m := s.call(t, "POST", "/api/v1/follows", s.token, `{"as":"alice","target":"bob@remote.example"}`); code != http.StatusCreated {
		t.Fatalf("follow: %d %v", code, m)
	}
	f, _ := domain.NewFollower(remoteBob, alice, "https://remote.example/f/1", domain.FollowAccepted, time.Now())
	if _, err := s.follows.Add(ctx, f); err != nil {
		t.Fatal(err)
	}
	body := `{"as":"alice","target":"` + remoteBob + `"}`
	if code, m := s.call(t, "DELETE", "/api/v1/follows", s.other, body); code != http.StatusForbidden {
		t.Fatalf("unfollow as someone else: %d %v", code, m)
	}
	if code, m := s.call(t, "DELETE", "/api/v1/follows", s.token, body); code != http.StatusOK || m["state"] != "pending" || m["activity"] == "" {
		t.Fatalf("unfollow: %d %v", code, m)
	}
	if code, _ := s.call(t, "DELETE", "/api/v1/follows", s.token, body); code != http.StatusNotFound {
		t.Fatalf("unfollow twice: %d", code)
	}
	if code, m := s.call(t, "POST", "/api/v1/followers/remove", s.token, body); code != http.StatusOK || m["state"] != "removed" {
		t.Fatalf("remove follower: %d %v", code, m)
	}
	if _, err := s.follows.Get(ctx, remoteBob, alice); err == nil {
		t.Fatal("bob still follows alice")
	}
	if code, _ := s.call(t, "POST", "/api/v1/followers/remove", s.token, body); code != http.StatusNotFound {
		t.Fatalf("remove twice: %d", code)
	}
}
