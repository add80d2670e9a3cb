package activitypub_test

import (
	"context"
	"testing"

	"github.com/heraldfed/herald/application"
)

// The actor document served at a persona's URI carries its display name
// (name, plain text) and its bio (summary, sanitized HTML: hostile markup
// is escaped text); a persona without a bio has no summary.
func TestActorDocumentCarriesProfile(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, doc := b.get("/users/alice", "application/activity+json"); doc["name"] != "alice" || doc["summary"] != nil {
		t.Fatalf("before: name %v, summary %v", doc["name"], doc["summary"])
	}
	name, note := "Alice <i>L.</i>", "Writes.\n<script>alert(1)</script>"
	if _, err := b.fed.UpdateProfile.Handle(context.Background(), application.UpdateProfile{UserID: b.userID, Persona: "alice", DisplayName: &name, Note: &note}); err != nil {
		t.Fatal(err)
	}
	resp, doc := b.get("/users/alice", "application/activity+json")
	if resp.StatusCode != 200 || doc["name"] != "Alice L." || doc["summary"] != "<p>Writes.<br>&lt;script&gt;alert(1)&lt;/script&gt;</p>" {
		t.Fatalf("after: %d name %q, summary %q", resp.StatusCode, doc["name"], doc["summary"])
	}
}
