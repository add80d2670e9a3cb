package activitypub_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/heraldfed/herald/application"
)

// A deleted persona's actor URL answers 410 Gone with a Tombstone (as
// Mastodon's), and so do WebFinger, its collections and its inbox; a
// Follow of it through the shared inbox is refused (410), never a 500;
// NodeInfo no longer counts it.
func TestDeletedPersona(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if _, err := b.app.CreatePersona.Handle(ctx, application.CreatePersona{UserID: b.userID, Name: "dora"}); err != nil {
		t.Fatal(err)
	}
	dora := local + "/users/dora"
	if resp, _ := b.get("/users/dora", ""); resp.StatusCode != 200 {
		t.Fatalf("dora before: %d", resp.StatusCode)
	}
	b.clock.Advance(time.Hour)
	if _, err := b.app.DeletePersona.Handle(ctx, application.DeletePersona{UserID: b.userID, Name: "dora"}); err != nil {
		t.Fatal(err)
	}
	for _, accept := range []string{"application/activity+json", "text/html", ""} {
		resp, doc := b.get("/users/DORA", accept)
		if resp.StatusCode != http.StatusGone || resp.Header.Get("Content-Type") != "application/activity+json" ||
			doc["type"] != "Tombstone" || doc["id"] != dora || doc["formerType"] != "Person" ||
			doc["deleted"] != t0.Add(time.Hour).Format(time.RFC3339) || doc["@context"] != application.ASContext {
			t.Fatalf("Accept %q: %d %q %v", accept, resp.StatusCode, resp.Header.Get("Content-Type"), doc)
		}
	}
	for _, path := range []string{
		"/.well-known/webfinger?resource=" + url.QueryEscape("acct:dora@"+domainName),
		"/.well-known/webfinger?resource=" + url.QueryEscape(dora),
		"/users/dora/followers", "/users/dora/outbox",
	} {
		if resp, _ := b.get(path, ""); resp.StatusCode != http.StatusGone {
			t.Errorf("%s: %d, want 410", path, resp.StatusCode)
		}
	}
	follow := []byte(fmt.Sprintf(`{"id":"%[1]s/follows/dora","type":"Follow","actor":"%[1]s","object":"%[2]s"}`, bob, dora))
	for _, inbox := range []string{"/users/dora/inbox", "/inbox"} {
		if resp := b.post(inbox, follow, sign{}); resp.StatusCode != http.StatusGone {
			t.Errorf("Follow of dora at %s: %d, want 410", inbox, resp.StatusCode)
		}
	}
	// A note that mentions the deleted persona (and no one else here) is
	// accepted and dropped, as one that concerns no one.
	note := []byte(fmt.Sprintf(`{"id":"%[1]s/activities/d1","type":"Create","actor":"%[1]s","to":["%[2]s"],`+
		`"object":{"id":"%[1]s/notes/d1","type":"Note","attributedTo":"%[1]s","content":"hi dora","to":["%[2]s"],`+
		`"tag":[{"type":"Mention","href":"%[2]s"}]}}`, bob, dora))
	if resp := b.post("/inbox", note, sign{}); resp.StatusCode != http.StatusAccepted {
		t.Errorf("a note to dora at the shared inbox: %d, want 202", resp.StatusCode)
	}
	if n, _ := b.follows.CountFollowers(ctx, dora, "pending"); n != 0 {
		t.Fatal("a follow of a deleted persona was kept")
	}
	// Other actors are untouched; an unknown one is still 404.
	if resp, _ := b.get("/users/alice", ""); resp.StatusCode != 200 {
		t.Fatalf("alice: %d", resp.StatusCode)
	}
	if resp, _ := b.get("/users/nobody", ""); resp.StatusCode != 404 {
		t.Fatalf("nobody: %d", resp.StatusCode)
	}
	_, doc := b.get("/nodeinfo/2.1", "")
	usage, _ := doc["usage"].(map[string]any)
	if users, _ := usage["users"].(map[string]any); users["total"] != 1.0 {
		t.Fatalf("nodeinfo users %v, want alice alone", users)
	}
}
