package mastodon

import (
	"testing"
	"time"
)

// A boost's status id is a UUIDv7 holding the boost's time (to the
// millisecond), the same for the same boost, another for another booster
// or post, and ids sort by time.
func TestBoostIDs(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 6, 16, 30, 1, 234_567_890, time.UTC)
	id := boostID("https://a.example/users/a", "https://b.example/notes/1", at)
	for _, c := range []struct {
		name string
		id   string
		same bool
	}{
		{"the same boost", boostID("https://a.example/users/a", "https://b.example/notes/1", at), true},
		{"another booster", boostID("https://a.example/users/b", "https://b.example/notes/1", at), false},
		{"another post", boostID("https://a.example/users/a", "https://b.example/notes/2", at), false},
	} {
		if (c.id == id) != c.same {
			t.Errorf("%s: %s against %s", c.name, c.id, id)
		}
	}
	got, ok := idTime(id)
	if !ok || !got.Equal(at.Truncate(time.Millisecond)) {
		t.Fatalf("idTime(%s) = %v %v, want %v", id, got, ok, at.Truncate(time.Millisecond))
	}
	if later := boostID("https://a.example/users/a", "https://b.example/notes/1", at.Add(time.Millisecond)); later <= id {
		t.Fatalf("a later boost's id %s does not sort after %s", later, id)
	}
	for _, bad := range []string{"", "not-a-uuid", "01a24c2d-b5ea-43cd-9f79-3e817f4699fe", "zz a24c2d-b5ea-73cd-9f79-3e817f4699fe"} {
		if _, ok := idTime(bad); ok {
			t.Errorf("idTime(%q) read a time", bad)
		}
	}
}
