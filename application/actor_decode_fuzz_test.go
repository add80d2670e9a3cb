package application_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// DecodeActor reads documents other servers (and attackers) serve. It
// never panics; it refuses with ErrInvalidInput or ErrUnauthorized; what it
// accepts has an http(s) id and inbox, an actor type, a key that parses
// and is owned by the actor (the one asked for, when a key id is given),
// and caches under the id's host.
func FuzzDecodeActor(f *testing.F) {
	kp, err := security.RSAKeys{}.GenerateKeyPair()
	if err != nil {
		f.Fatal(err)
	}
	doc := func(v map[string]any) []byte {
		b, _ := json.Marshal(v)
		return b
	}
	id := "https://r.example/users/bob"
	key := map[string]any{"id": id + "#main-key", "owner": id, "publicKeyPem": kp.PublicPEM}
	seeds := []struct {
		doc   []byte
		keyID string
	}{
		{doc(map[string]any{"id": id, "type": "Person", "inbox": id + "/inbox", "publicKey": key}), id + "#main-key"},
		{doc(map[string]any{"id": id, "type": "Person", "inbox": id + "/inbox", "publicKey": key, "endpoints": map[string]any{"sharedInbox": "https://r.example/inbox"}}), ""},
		{doc(map[string]any{"id": id, "type": []string{"Service"}, "inbox": id + "/inbox", "publicKey": []any{map[string]any{"id": "x"}, key}}), id + "#main-key"},
		{doc(map[string]any{"id": id, "type": "Person", "inbox": "javascript:alert(1)", "publicKey": key}), ""},
		{doc(map[string]any{"id": "javascript:alert(1)", "type": "Person", "inbox": id + "/inbox", "publicKey": key}), ""},
		{doc(map[string]any{"id": id, "type": "Person", "inbox": id + "/inbox", "publicKey": map[string]any{"id": id + "#main-key", "owner": "https://evil.example/users/m", "publicKeyPem": kp.PublicPEM}}), ""},
		{doc(map[string]any{"id": id, "type": "Person", "inbox": id + "/inbox", "publicKey": map[string]any{"id": "https://victim.example/users/v#main-key", "publicKeyPem": kp.PublicPEM}}), ""},
		{doc(map[string]any{"id": id, "type": "Person", "inbox": id + "/inbox", "publicKey": map[string]any{"id": id + "#main-key", "publicKeyPem": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"}}), ""},
		{doc(map[string]any{"id": id, "type": "Note", "inbox": id + "/inbox", "publicKey": key}), ""},
		{doc(map[string]any{"id": map[string]any{"id": id}, "type": "Person", "inbox": []string{id + "/inbox"}, "publicKey": key}), ""},
		{[]byte(`{"id":"https://r.example/users/bob","owner":"https://r.example/users/bob","publicKeyPem":"x"}`), ""},
		{[]byte(`{}`), ""}, {[]byte(`[]`), ""}, {[]byte(`null`), ""}, {[]byte("\xff"), "k"},
	}
	for _, s := range seeds {
		f.Add(s.doc, s.keyID)
	}
	actorTypes := map[string]bool{"Person": true, "Service": true, "Application": true, "Group": true, "Organization": true}
	f.Fuzz(func(t *testing.T, data []byte, keyID string) {
		a, err := application.DecodeActor(data, keyID)
		if err != nil {
			if !errors.Is(err, domain.ErrInvalidInput) && !errors.Is(err, domain.ErrUnauthorized) {
				t.Fatalf("refusal %v is neither ErrInvalidInput nor ErrUnauthorized", err)
			}
			return
		}
		if !httpURL(a.ID) || !httpURL(a.Inbox) || (a.SharedInbox != "" && !httpURL(a.SharedInbox)) {
			t.Fatalf("accepted id %q, inbox %q, shared inbox %q: not all http(s)", a.ID, a.Inbox, a.SharedInbox)
		}
		if !actorTypes[a.Type] {
			t.Fatalf("accepted type %q", a.Type)
		}
		if _, err := domain.ParsePublicKey(a.PublicKeyPEM); err != nil {
			t.Fatalf("accepted a key that does not parse: %v", err)
		}
		if a.KeyID == "" || (keyID != "" && a.KeyID != keyID) {
			t.Fatalf("asked for key %q, got %q", keyID, a.KeyID)
		}
		if a.KeyOwner != "" && a.KeyOwner != a.ID {
			t.Fatalf("key owned by %q accepted for actor %q", a.KeyOwner, a.ID)
		}
		fa := a.Avatar(time.Unix(0, 0))
		u, _ := url.Parse(a.ID)
		if fa.ActorURI != a.ID || fa.Host != strings.ToLower(u.Host) || fa.PublicKeyID != a.KeyID {
			t.Fatalf("cached as %+v", fa)
		}
	})
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != ""
}
