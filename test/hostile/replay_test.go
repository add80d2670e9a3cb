package hostile_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/httpapi/activitypub"
)

// A signed request is good only while its Date is within the allowed clock
// skew of Herald's clock (SPEC §10; Mastodon allows 12 hours): captured
// and sent again later, it is refused.
func TestReplayedSignedRequestIsRefused(t *testing.T) {
	t.Parallel()
	skew := activitypub.DefaultMaxClockSkew
	eachStore(t, "a signed request is refused once its Date is beyond the clock skew", func(t *testing.T, h *herald) {
		s := newScene(t, h)
		x := s.peer().actor("x")
		s.cache(x)
		body, err := json.Marshal(activity("Follow", x, s.alice))
		if err != nil {
			t.Fatal(err)
		}

		// x follows alice, with a request dated just inside the skew...
		const margin = 6 * time.Second
		date := time.Now().Add(-skew + margin)
		follow := sign(t, x.key, x.keyID, inboxOf(s.alice), body, date)
		mustAccept(t, "x's Follow dated just inside the skew", post(t, follow))
		if st := h.followState(x.uri, s.alice); st != "accepted" {
			t.Fatalf("x follows alice: %q", st)
		}
		// ...and takes it back.
		undo := activity("Undo", x, map[string]any{"type": "Follow", "actor": x.uri, "object": s.alice})
		mustAccept(t, "x's Undo", x.send(inboxOf(s.alice), undo))
		if st := h.followState(x.uri, s.alice); st != "" {
			t.Fatalf("x still follows alice after its Undo: %q", st)
		}

		// Someone who captured the Follow sends it again once its Date has
		// passed the skew.
		time.Sleep(time.Until(date.Add(skew + 2*time.Second)))
		if ans := post(t, follow); ans.status != http.StatusUnauthorized {
			t.Errorf("the Follow replayed after its Date passed the %s skew: %s, want 401", skew, ans)
		}
		if st := h.followState(x.uri, s.alice); st != "" {
			t.Errorf("the replayed Follow made x follow alice again (%s)", st)
		}

		for _, tc := range []struct {
			name string
			date time.Time
		}{
			{"captured an hour beyond the skew", time.Now().Add(-skew - time.Hour)},
			{"dated an hour beyond the skew ahead", time.Now().Add(skew + time.Hour)},
		} {
			if ans := post(t, sign(t, x.key, x.keyID, inboxOf(s.alice), body, tc.date)); ans.status != http.StatusUnauthorized {
				t.Errorf("a Follow %s: %s, want 401", tc.name, ans)
			}
		}
		if st := h.followState(x.uri, s.alice); st != "" {
			t.Errorf("a Follow dated beyond the skew made x follow alice (%s)", st)
		}
	})
}
