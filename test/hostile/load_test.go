package hostile_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
)

// SPEC §10, Load: inbox POSTs are rate-limited per client address (429
// with Retry-After), and key fetches to a host that failed are not retried
// for a while, so a flood of unknown key ids cannot turn Herald into a
// request reflector.

// retryAfterValid reports whether v is a Retry-After: delta-seconds or an
// HTTP date.
func retryAfterValid(v string) bool {
	if n, err := strconv.Atoi(v); err == nil {
		return n > 0
	}
	_, err := http.ParseTime(v)
	return err == nil
}

// A flood from one address, each POST signed by another actor of the
// attacker's server: past the burst, Herald answers 429 with Retry-After
// before any signature work, so the attacker's server sees no key fetch
// for the refused ones.
func TestInboxFloodFromOneAddressIsRateLimited(t *testing.T) {
	t.Parallel()
	const burst, flood = 3, 10
	for _, store := range selectedStores() {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{}
			for k, v := range storeEnv(t, store, "inbox POSTs are rate-limited per client address") {
				env[k] = v
			}
			env["HERALD_INBOX_RATE_PER_MINUTE"] = "1"
			env["HERALD_INBOX_BURST"] = strconv.Itoa(burst)
			sem := running[store]
			sem <- struct{}{}
			t.Cleanup(func() { <-sem })
			h := startHerald(t, store, env)
			s := newScene(t, h)
			p := s.peer()
			answers := make([]answer, flood)
			senders := make([]*actor, flood)
			for i := range flood {
				senders[i] = p.actor(fmt.Sprintf("sender%d", i))
				_, act := s.noteToAlice(senders[i], "flood")
				answers[i] = senders[i].send(h.base+"/inbox", act)
			}
			for i := range burst {
				if answers[i].status != http.StatusAccepted {
					t.Errorf("POST %d, within the burst of %d: %s, want 202", i+1, burst, answers[i])
				}
			}
			limited := 0
			for i, a := range answers {
				if a.status != http.StatusTooManyRequests {
					continue
				}
				limited++
				if !retryAfterValid(a.retryAfter) {
					t.Errorf("POST %d: 429 with Retry-After %q, want seconds or an HTTP date", i+1, a.retryAfter)
				}
				if n := p.getsOf("/users/" + senders[i].name); n != 0 {
					t.Errorf("POST %d was refused with 429 after Herald fetched its key (%d GETs): the limit comes after signature work", i+1, n)
				}
			}
			// At one POST a minute, the run may earn one more token.
			if limited < flood-burst-1 {
				t.Errorf("%d of %d POSTs past a burst of %d (1 a minute) were answered 429, want at least %d: %v",
					limited, flood, burst, flood-burst-1, answers)
			}
		})
	}
}

// A flood of POSTs signed with distinct unknown key ids on one host whose
// key fetches fail (404, 500): the host sees at most a few fetches, and
// Herald answers the rest without fetching, 503 with Retry-After (a
// legitimate sender whose server was down delivers again later).
func TestUnknownKeyFloodDoesNotReflectFetches(t *testing.T) {
	t.Parallel()
	const flood, fewFetches = 12, 3 // three failed key fetches per host, then one a minute
	for _, failing := range []int{http.StatusNotFound, http.StatusInternalServerError} {
		t.Run(strconv.Itoa(failing), func(t *testing.T) {
			t.Parallel()
			eachStore(t, "a host whose key fetches fail is negatively cached", func(t *testing.T, h *herald) {
				s := newScene(t, h)
				kp, ap := s.peer(), s.peer()
				forger := ap.actor("forger")
				var answers []answer
				for i := range flood {
					ghost := fmt.Sprintf("%s/users/ghost%d", kp.base, i)
					kp.put(fmt.Sprintf("/users/ghost%d", i), failing, "application/activity+json", map[string]string{"error": "no"})
					answers = append(answers, sendWith(t, forger.key, ghost+"#main-key", inboxOf(s.alice),
						createFrom(ghost, ghost+"/statuses/1", "flood", s.toAlice())))
				}
				if n := kp.allGets(); n == 0 || n > fewFetches {
					t.Errorf("the key host answered %d fetches for %d unknown key ids, want 1 to %d", n, flood, fewFetches)
				}
				deferred := 0
				for _, a := range answers {
					if a.status == http.StatusServiceUnavailable && retryAfterValid(a.retryAfter) {
						deferred++
					}
				}
				if deferred < flood-fewFetches {
					t.Errorf("%d of %d POSTs were answered 503 with Retry-After without a fetch, want at least %d: %v", deferred, flood, flood-fewFetches, answers)
				}
			})
		})
	}
}
