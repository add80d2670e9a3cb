package proof_test

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// TestKeyRotatedByAnotherProcessIsUsedForQueuedDeliveries: a worker
// process caches its sender's key (for engine.KeyCacheTTL); another
// process (here the test) rotates the key in the shared store. The next
// delivery the worker signs with the cached old key is refused by the
// remote, which verifies with the key the actor publishes now, and the
// worker sends it again at once with the key read afresh: delivered after
// one attempt, never dead.
func TestKeyRotatedByAnotherProcessIsUsedForQueuedDeliveries(t *testing.T) {
	requirePG(t, "key rotation across processes")
	st := newPGStore(t)
	ctx := testCtx(t)
	keys := func() domain.KeyPair {
		k, err := security.RSAKeys{}.GenerateKeyPair()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	a, err := domain.NewAvatar(system.IDs{}.NewID(), "", "rotating", keys(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.actors().CreateAvatar(ctx, a); err != nil {
		t.Fatal(err)
	}
	rm := &verifyingInbox{actors: st.actors(), sender: a.ID}
	srv := httptest.NewServer(rm)
	t.Cleanup(srv.Close)

	f := newFleet(t, st.workerFlags(), workerArgs(15*time.Second, time.Second)...)
	w := f.start("w1")
	f.waitReady()
	enqueue := func(n int) {
		t.Helper()
		id := activityID(n)
		payload := fmt.Sprintf(`{"id":%q,"type":"Create","actor":"http://proof.invalid/users/rotating"}`, id)
		j, err := domain.NewJob(system.IDs{}.NewID(), id, srv.URL+"/inbox", a.ID, "http://proof.invalid/users/rotating#main-key", []byte(payload), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.jobs().Enqueue(ctx, []domain.Job{j}); err != nil {
			t.Fatal(err)
		}
	}

	enqueue(1) // the worker reads and caches the first key
	waitAllDone(t, st, 1)
	if got := rm.answers(activityID(1)); len(got) != 1 || got[0] != http.StatusAccepted {
		t.Fatalf("first delivery answered %v, want one 202", got)
	}
	// Another process rotates the key; the worker is not told.
	// (An hour ago as far as the engine's rotation grace goes, so the
	// refusal is judged by its key alone.)
	if err := st.actors().SetAvatarKeys(ctx, a.ID, keys(), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	enqueue(2)
	waitAllDone(t, st, 2)
	f.stop()
	got := rm.answers(activityID(2))
	if len(got) != 2 || got[0] != http.StatusUnauthorized || got[1] != http.StatusAccepted {
		t.Fatalf("delivery after the rotation answered %v, want 401 (the worker's cached old key) then 202 (the new key)", got)
	}
	if s := st.states(t); s["succeeded/attempts=1"] != 2 {
		t.Fatalf("jobs %v, want both succeeded after one attempt each (the refused signature spent none)", s)
	}
	if len(w.Logs("signature refused with a replaced key; job sent again with the new one")) != 1 {
		t.Fatal("the worker did not log the re-signed delivery")
	}
}

// verifyingInbox is a remote server that verifies each delivery's
// signature with the public key the sender holds in the store now (what a
// server ends with after refetching the actor), and answers 401 when it
// does not verify, as Mastodon and GoToSocial do.
type verifyingInbox struct {
	actors ports.ActorStore
	sender string

	mu   sync.Mutex
	byID map[string][]int
}

func (v *verifyingInbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	var act struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &act)
	code := http.StatusAccepted
	if err := v.verify(r.Context(), r); err != nil {
		code = http.StatusUnauthorized
	}
	v.mu.Lock()
	if v.byID == nil {
		v.byID = map[string][]int{}
	}
	v.byID[act.ID] = append(v.byID[act.ID], code)
	v.mu.Unlock()
	w.WriteHeader(code)
}

func (v *verifyingInbox) verify(ctx context.Context, r *http.Request) error {
	a, err := v.actors.AvatarByID(ctx, v.sender)
	if err != nil {
		return err
	}
	pub, err := domain.ParsePublicKey(a.Keys.PublicPEM)
	if err != nil {
		return err
	}
	p := map[string]string{}
	for _, kv := range strings.Split(r.Header.Get("Signature"), ",") {
		if k, val, ok := strings.Cut(kv, "="); ok {
			p[k] = strings.Trim(val, `"`)
		}
	}
	sig, err := base64.StdEncoding.DecodeString(p["signature"])
	if err != nil {
		return err
	}
	var lines []string
	for _, h := range strings.Fields(p["headers"]) {
		if h == "(request-target)" {
			lines = append(lines, "(request-target): "+strings.ToLower(r.Method)+" "+r.URL.RequestURI())
			continue
		}
		val := r.Header.Get(h)
		if h == "host" {
			val = r.Host
		}
		lines = append(lines, h+": "+val)
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig)
}

func (v *verifyingInbox) answers(id string) []int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]int(nil), v.byID[id]...)
}
