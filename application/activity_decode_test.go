package application_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

func TestDecodeActivityForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want application.Incoming
	}{
		{"uris", `{"id":"https://r.example/a/1","type":"Follow","actor":"https://r.example/u/bob","object":"https://l.example/users/alice"}`,
			application.Incoming{ID: "https://r.example/a/1", Type: "Follow", Actor: "https://r.example/u/bob",
				Object: application.IncomingObject{ID: "https://l.example/users/alice"}}},
		{"actor as object, type as array, audience from every property", `{"type":["Create","Extra"],"actor":{"id":"https://r.example/u/bob","type":"Person"},
			"to":"https://www.w3.org/ns/activitystreams#Public","cc":["https://r.example/u/bob/followers",{"id":"https://l.example/users/alice"}],
			"bto":[],"audience":"https://l.example/groups/club","object":{"id":"https://r.example/n/1","type":"Note","attributedTo":"https://r.example/u/bob",
			"content":"<p>hi</p>","inReplyTo":{"id":"https://x.example/n/0"},"published":"2026-01-02T03:04:05Z","to":["https://l.example/users/alice"]}}`,
			application.Incoming{Type: "Create", Actor: "https://r.example/u/bob",
				Audience: []string{"https://www.w3.org/ns/activitystreams#Public", "https://r.example/u/bob/followers", "https://l.example/users/alice", "https://l.example/groups/club"},
				Object: application.IncomingObject{ID: "https://r.example/n/1", Type: "Note", Author: "https://r.example/u/bob", Content: "<p>hi</p>",
					Reply: "https://x.example/n/0", Audience: []string{"https://l.example/users/alice"}}}},
		{"embedded follow in an undo", `{"type":"Undo","actor":"https://r.example/u/bob","object":{"id":"https://r.example/f/1","type":"Follow","actor":"https://r.example/u/bob","object":"https://l.example/users/alice"}}`,
			application.Incoming{Type: "Undo", Actor: "https://r.example/u/bob",
				Object: application.IncomingObject{ID: "https://r.example/f/1", Type: "Follow", Actor: "https://r.example/u/bob", Object: "https://l.example/users/alice"}}},
		{"object array: the first", `{"type":"Delete","actor":"https://r.example/u/bob","object":["https://r.example/n/1","https://r.example/n/2"]}`,
			application.Incoming{Type: "Delete", Actor: "https://r.example/u/bob", Object: application.IncomingObject{ID: "https://r.example/n/1"}}},
		{"untyped object is a reference", `{"type":"Delete","actor":"https://r.example/u/bob","object":{"id":"https://r.example/n/1","content":"x"}}`,
			application.Incoming{Type: "Delete", Actor: "https://r.example/u/bob", Object: application.IncomingObject{ID: "https://r.example/n/1"}}},
		{"mention tags as GoToSocial sends them, among other tags", `{"type":"Create","actor":"https://r.example/u/bob","object":{"id":"https://r.example/n/2","type":"Note","published":"2026-01-02T03:04:05Z",
			"tag":[{"type":"Mention","href":"https://l.example/users/alice","name":"@alice@l.example"},{"type":"Hashtag","href":"https://r.example/tags/x","name":"#x"},
			{"type":"Mention","href":"https://l.example/users/alice"},{"type":"Mention","href":"not a url"},{"type":"Mention","href":{"id":"https://s.example/u/cat"}}]}}`,
			application.Incoming{Type: "Create", Actor: "https://r.example/u/bob", Object: application.IncomingObject{ID: "https://r.example/n/2", Type: "Note",
				Mentions: []string{"https://l.example/users/alice", "https://s.example/u/cat"}}}},
		{"one mention tag, not an array", `{"type":"Create","actor":"https://r.example/u/bob","object":{"id":"https://r.example/n/3","type":"Note","published":"2026-01-02T03:04:05Z",
			"tag":{"type":"Mention","href":"https://l.example/users/alice"}}}`,
			application.Incoming{Type: "Create", Actor: "https://r.example/u/bob", Object: application.IncomingObject{ID: "https://r.example/n/3", Type: "Note",
				Mentions: []string{"https://l.example/users/alice"}}}},
		{"null object", `{"type":"Like","actor":"https://r.example/u/bob","object":null}`,
			application.Incoming{Type: "Like", Actor: "https://r.example/u/bob"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := application.DecodeActivity([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			got.Object.Raw = nil
			got.Object.Publish = got.Object.Publish.UTC()
			if tt.want.Object.Type == "Note" && got.Object.Publish.Format("2006-01-02T15:04:05Z") != "2026-01-02T03:04:05Z" {
				t.Errorf("published %v", got.Object.Publish)
			}
			got.Object.Publish = tt.want.Object.Publish
			if got.ID != tt.want.ID || got.Type != tt.want.Type || got.Actor != tt.want.Actor || !slices.Equal(got.Audience, tt.want.Audience) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			o, w := got.Object, tt.want.Object
			if o.ID != w.ID || o.Type != w.Type || o.Actor != w.Actor || o.Object != w.Object || o.Author != w.Author ||
				o.Content != w.Content || o.Reply != w.Reply || !slices.Equal(o.Audience, w.Audience) || !slices.Equal(o.Mentions, w.Mentions) {
				t.Errorf("object %+v\nwant %+v", o, w)
			}
		})
	}
}

func TestDecodeActivityRejects(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in string }{
		{"empty", ``},
		{"not JSON", `hello`},
		{"truncated", `{"type":"Follow","actor":"https://r.example/u/bob"`},
		{"array", `[{"type":"Follow"}]`},
		{"string", `"Follow"`},
		{"no type", `{"actor":"https://r.example/u/bob"}`},
		{"type not a string", `{"type":5,"actor":"https://r.example/u/bob"}`},
		{"no actor", `{"type":"Follow"}`},
		{"actor not http", `{"type":"Follow","actor":"javascript:alert(1)"}`},
		{"actor without host", `{"type":"Follow","actor":"https:///u/bob"}`},
		{"object nested arrays", `{"type":"Create","actor":"https://r.example/u/bob","object":[[{"type":"Note"}]]}`},
		{"wrong property type", `{"type":"Create","actor":"https://r.example/u/bob","object":{"type":"Note","content":{"x":1},"to":5}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := application.DecodeActivity([]byte(tt.in))
			if tt.name == "wrong property type" {
				// Tolerated: wrong-typed properties read as absent.
				if err != nil {
					t.Fatalf("err %v", err)
				}
				return
			}
			if !errors.Is(err, domain.ErrInvalidInput) {
				t.Fatalf("err %v, want ErrInvalidInput", err)
			}
		})
	}
}

// FuzzDecodeActivity: whatever the bytes, the decoder returns (never
// panics), errors are ErrInvalidInput, and a decoded activity has a type
// and an http(s) actor. The seeds run on every `go test`; `go test -fuzz
// FuzzDecodeActivity ./application` explores further.
func FuzzDecodeActivity(f *testing.F) {
	seeds := []string{
		`{"id":"https://r.example/a/1","type":"Follow","actor":"https://r.example/u/bob","object":"https://l.example/users/alice"}`,
		`{"type":"Create","actor":{"id":"https://r.example/u/bob"},"to":["https://www.w3.org/ns/activitystreams#Public"],"object":{"id":"https://r.example/n/1","type":"Note","content":"hi","published":"2026-01-02T03:04:05Z"}}`,
		`{"type":"Undo","actor":"https://r.example/u/bob","object":{"type":"Follow","actor":"https://r.example/u/bob","object":"https://l.example/users/alice"}}`,
		`{"type":"Update","actor":"https://r.example/u/bob","object":{"id":"https://r.example/u/bob","type":"Person","inbox":"https://r.example/inbox","publicKey":[{"id":"k","publicKeyPem":"x"}]}}`,
		`{"type":["Delete"],"actor":["https://r.example/u/bob"],"object":[{"id":"https://r.example/n/1","type":"Tombstone"}]}`,
		`{"type":"Create","actor":"https://r.example/u/bob","object":[[[]]],"to":[[["x"]]],"cc":{"id":{"id":"x"}}}`,
		`{"type":"A","actor":"http://h","object":{"type":"B","object":{"type":"C","object":{}}}}`,
		`{}`, `[]`, `null`, `{"type":"\u0000","actor":"https://\u00ff"}`, "\xff\xfe",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := application.DecodeActivity(data)
		if err != nil {
			if !errors.Is(err, domain.ErrInvalidInput) {
				t.Fatalf("error %v is not ErrInvalidInput", err)
			}
			return
		}
		if a.Type == "" || !(strings.HasPrefix(a.Actor, "http://") || strings.HasPrefix(a.Actor, "https://")) {
			t.Fatalf("decoded %+v without type or http(s) actor", a)
		}
		if !utf8.ValidString(a.Type) || len(a.Audience) > 5000 {
			t.Fatalf("decoded %+v", a)
		}
		// The embedded object decodes as an actor or fails cleanly too.
		if len(a.Object.Raw) > 0 {
			_, _ = application.DecodeActor(a.Object.Raw, "")
		}
	})
}

func TestDecodeActor(t *testing.T) {
	t.Parallel()
	k := realKeys(t)
	pem0 := strings.ReplaceAll(k[0].PublicPEM, "\n", `\n`)
	pem1 := strings.ReplaceAll(k[1].PublicPEM, "\n", `\n`)
	actor := func(extra string) []byte {
		return []byte(`{"id":"https://r.example/u/bob","type":"Person","preferredUsername":"bob","inbox":"https://r.example/u/bob/inbox",
			"endpoints":{"sharedInbox":"https://r.example/inbox"}` + extra + `}`)
	}
	tests := []struct {
		name    string
		doc     []byte
		keyID   string
		wantKey string
		wantErr error
	}{
		{"one key", actor(`,"publicKey":{"id":"https://r.example/u/bob#main-key","owner":"https://r.example/u/bob","publicKeyPem":"` + pem0 + `"}`), "", k[0].PublicPEM, nil},
		{"the key asked for among several", actor(`,"publicKey":[{"id":"https://r.example/u/bob#k0","publicKeyPem":"` + pem0 + `"},{"id":"https://r.example/u/bob#k1","publicKeyPem":"` + pem1 + `"}]`), "https://r.example/u/bob#k1", k[1].PublicPEM, nil},
		{"key asked for is not published", actor(`,"publicKey":{"id":"https://r.example/u/bob#k0","publicKeyPem":"` + pem0 + `"}`), "https://r.example/u/bob#other", "", domain.ErrUnauthorized},
		{"key owned by someone else", actor(`,"publicKey":{"id":"https://r.example/u/bob#k0","owner":"https://r.example/u/eve","publicKeyPem":"` + pem0 + `"}`), "", "", domain.ErrUnauthorized},
		{"no key", actor(``), "", "", domain.ErrInvalidInput},
		{"garbage key", actor(`,"publicKey":{"id":"https://r.example/u/bob#k0","publicKeyPem":"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"}`), "", "", domain.ErrInvalidInput},
		{"not an actor type", []byte(`{"id":"https://r.example/n/1","type":"Note","inbox":"https://r.example/inbox"}`), "", "", domain.ErrInvalidInput},
		{"no inbox", []byte(`{"id":"https://r.example/u/bob","type":"Person","publicKey":{"publicKeyPem":"` + pem0 + `"}}`), "", "", domain.ErrInvalidInput},
		{"not JSON", []byte(`<html>`), "", "", domain.ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := application.DecodeActor(tt.doc, tt.keyID)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.PublicKeyPEM != strings.TrimSpace(tt.wantKey) || a.Inbox != "https://r.example/u/bob/inbox" || a.SharedInbox != "https://r.example/inbox" || a.PreferredUsername != "bob" {
				t.Fatalf("actor %+v", a)
			}
			if fa := a.Avatar(t0); fa.Host != "r.example" || fa.DeliveryInbox() != "https://r.example/inbox" || fa.PublicKeyID != a.KeyID {
				t.Fatalf("avatar %+v", fa)
			}
		})
	}
}
