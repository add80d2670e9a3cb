package hostile_test

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A signature over the Date alone is no signature of a POST: it says
// nothing of the body, the inbox or the host. An attacker who holds one
// made by the victim's key (the victim's server signed a GET to the
// attacker's with headers="date", as draft-cavage's default allows) must
// not be able to pass it off as covering (request-target) host date digest
// by bending the Signature header so that Herald's check of the headers
// list and the verifier read different lists: "Headers" re-cased (read by
// Herald, ignored by go-fed/httpsig, which then verifies over its default,
// the date), or "headers" given twice (Herald reads the first, httpsig the
// last). SPEC §6: inboxes verify HTTP Signatures; §10: every remote byte is
// hostile until its origin vouches for it.
func TestSignatureOverTheDateAloneIsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, header string }{
		{"Headers re-cased", `keyId="KEY",algorithm="rsa-sha256",Headers="(request-target) host date digest",signature="SIG"`},
		{"headers given twice", `keyId="KEY",algorithm="rsa-sha256",headers="(request-target) host date digest",headers="date",signature="SIG"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eachStore(t, "a signature must cover (request-target) host date digest as verified", func(t *testing.T, h *herald) {
				s := newScene(t, h)
				victim := s.peer().actor("victim")
				s.cache(victim)

				date := time.Now().UTC().Format(http.TimeFormat)
				sum := sha256.Sum256([]byte("date: " + date))
				captured, err := victim.key.Sign(rand.Reader, sum[:], crypto.SHA256)
				if err != nil {
					t.Fatal(err)
				}
				id, act := s.noteToAlice(victim, "forged over a date-only signature")
				body, _ := json.Marshal(act)
				digest := sha256.Sum256(body)
				sp := signedPost{url: inboxOf(s.alice), body: body, header: http.Header{}}
				sp.header.Set("Content-Type", "application/activity+json")
				sp.header.Set("Date", date)
				sp.header.Set("Digest", "SHA-256="+base64.StdEncoding.EncodeToString(digest[:]))
				sp.header.Set("Signature", strings.NewReplacer("KEY", victim.keyID, "SIG", base64.StdEncoding.EncodeToString(captured)).Replace(tc.header))
				if ans := post(t, sp); ans.status != http.StatusUnauthorized {
					t.Errorf("a POST whose signature covers the Date alone (%s): %s, want 401", tc.name, ans)
				}
				if h.stored(id) {
					t.Errorf("the note forged over a date-only signature was stored")
				}
			})
		})
	}
}
