package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/adapters/httpapi/admin"
	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
	"github.com/heraldfed/herald/test/fake"
)

const token = "s3cret-admin-token"

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type bundle struct {
	*httptest.Server
	jobs      *memory.JobStore
	instances *memory.InstanceStore
	names     *memory.NameRegistry
	fanOuts   *memory.FanOutStore
	clock     *fake.Clock
	ids       *fake.IDs
	// Moderation's stores, and the client use cases that sign up.
	moderation *memory.ModerationStore
	reports    *memory.ReportStore
	accounts   *memory.AccountStore
	follows    *memory.FollowerStore
	content    *memory.ContentStore
	app        *application.Application
}

// modes are the federation and registration modes of a setup.
type modes struct {
	federation    domain.FederationMode
	registrations domain.RegistrationMode
}

func setup(t *testing.T, adminToken string, m ...modes) *bundle {
	t.Helper()
	b := &bundle{jobs: memory.NewJobStore(), instances: memory.NewInstanceStore(), names: memory.NewNameRegistry(),
		fanOuts: memory.NewFanOutStore(), clock: fake.NewClock(t0), ids: fake.NewIDs("job"),
		moderation: memory.NewModerationStore(), reports: memory.NewReportStore(), accounts: memory.NewAccountStore(),
		follows: memory.NewFollowerStore(), content: memory.NewContentStore()}
	mode := modes{domain.FederationBlocklist, domain.RegistrationsApproval}
	if len(m) > 0 {
		mode = m[0]
	}
	policy, _ := domain.NewNamePolicy("instance", nil)
	op := application.NewOperator(application.OperatorDeps{JobAdmin: b.jobs, Jobs: b.jobs, Instances: b.instances,
		Names: b.names, FanOuts: b.fanOuts, Policy: policy, InstanceActor: "instance", Clock: b.clock})
	urls := application.NewURLs("local.example")
	moderation := application.NewModeration(application.ModerationDeps{Store: b.moderation, JobAdmin: b.jobs, Foreign: b.content,
		Followers: b.follows, Mode: mode.federation, Clock: b.clock})
	mod := application.NewModerator(application.ModeratorDeps{Moderation: moderation, Users: b.accounts, Actors: b.accounts,
		Names: b.names, Followers: b.follows, Reports: b.reports, Registrations: mode.registrations, URLs: urls, Clock: b.clock})
	b.app = application.New(application.Deps{Users: b.accounts, Tokens: b.accounts, Actors: b.accounts, Names: b.names,
		Followers: b.follows, Foreign: b.content, Posts: b.content, HTML: sanitizer.NewHTMLSanitizer(), Jobs: b.jobs,
		Passwords: fake.Passwords{}, Keys: &fake.Keys{}, Clock: b.clock, IDs: fake.NewIDs("user"), Registrations: mode.registrations,
		NamePolicy: policy, InstanceActor: "instance", URLs: urls,
	})
	r := mux.NewRouter()
	admin.New(op, mod, adminToken, nil).Register(r)
	b.Server = httptest.NewServer(r)
	t.Cleanup(b.Close)
	return b
}

func (b *bundle) enqueue(t *testing.T, inbox string) domain.Job {
	t.Helper()
	id := b.ids.NewID()
	j, err := domain.NewJob(contract.JobID(id), "https://local.example/a/"+id, inbox, "s", "https://local.example/users/a#main-key", []byte(`{}`), b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.jobs.Enqueue(context.Background(), []domain.Job{j}); err != nil {
		t.Fatal(err)
	}
	return j
}

// kill makes the only queued job dead.
func (b *bundle) kill(t *testing.T, inbox, reason string) domain.Job {
	t.Helper()
	j := b.enqueue(t, inbox)
	ctx := context.Background()
	got, err := b.jobs.LeaseBatch(ctx, ports.LeaseRequest{Owner: "t", Token: "tok", Now: b.clock.Now(), Until: b.clock.Now().Add(time.Minute)})
	if err != nil || len(got) != 1 || got[0].ID != j.ID {
		t.Fatalf("lease %v %v", got, err)
	}
	lost, err := b.jobs.Settle(ctx, []ports.Settlement{{ID: j.ID, Token: "tok", State: domain.JobDead, Attempts: 16, LastError: reason, FinishedAt: b.clock.Now()}})
	if err != nil || lost[0] != nil {
		t.Fatal(err, lost)
	}
	return j
}

func (b *bundle) quarantine(t *testing.T, host string) {
	t.Helper()
	_, err := b.instances.Update(context.Background(), host, func(r *domain.RemoteInstance) {
		for range domain.BreakerThreshold {
			r.RecordFailure(b.clock.Now(), "503 unavailable")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) call(t *testing.T, method, path, auth, body string) (int, map[string]any, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	code, raw, h := b.send(t, method, path, auth, "", rd)
	var out map[string]any
	_ = json.NewDecoder(bytes.NewReader(raw)).Decode(&out)
	return code, out, h
}

// send sends one request, with the Authorization header auth and the
// content type when given, and returns the status, the body and the
// headers.
func (b *bundle) send(t *testing.T, method, path, auth, contentType string, body io.Reader) (int, []byte, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, b.URL+path, body)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out, resp.Header
}

// apiCall is a call of the operator API, made with the admin token, and
// the status it answers.
type apiCall struct {
	name, method, path, body string
	want                     int
}

// expect makes the calls in order and checks each one's status; a
// refusal (but the router's 405) must say why in "error".
func (b *bundle) expect(t *testing.T, calls []apiCall) {
	t.Helper()
	for _, c := range calls {
		code, body, _ := b.call(t, c.method, c.path, "Bearer "+token, c.body)
		if code != c.want {
			t.Errorf("%s: %d %v, want %d", c.name, code, body, c.want)
		}
		if code >= 400 && code != 405 && (body["error"] == nil || body["error"] == "") {
			t.Errorf("%s: no error message: %v", c.name, body)
		}
	}
}

var endpoints = []struct{ method, path, body string }{
	{"GET", "/admin/api/queue", ""},
	{"GET", "/admin/api/jobs?state=dead", ""},
	{"POST", "/admin/api/jobs/job-000001/retry", ""},
	{"POST", "/admin/api/hosts/a.example/retry-dead", ""},
	{"GET", "/admin/api/instances", ""},
	{"POST", "/admin/api/instances/a.example/lift", ""},
	{"GET", "/admin/api/names", ""},
	{"GET", "/admin/api/fanouts", ""},
	{"POST", "/admin/api/names", `{"name":"ops"}`},
	{"DELETE", "/admin/api/names/ops", ""},
	{"DELETE", "/admin/api/personas/dora", ""},
	{"GET", "/admin/api/domain-blocks", ""},
	{"POST", "/admin/api/domain-blocks", `{"domain":"spam.example","severity":"suspend"}`},
	{"PUT", "/admin/api/domain-blocks/spam.example", `{"severity":"suspend"}`},
	{"DELETE", "/admin/api/domain-blocks/spam.example", ""},
	{"POST", "/admin/api/domain-blocks/import", "#domain\nspam.example\n"},
	{"GET", "/admin/api/domain-blocks/export", ""},
	{"GET", "/admin/api/domain-allows", ""},
	{"POST", "/admin/api/domain-allows", `{"domain":"friends.example"}`},
	{"DELETE", "/admin/api/domain-allows/friends.example", ""},
	{"GET", "/admin/api/registrations", ""},
	{"POST", "/admin/api/registrations/u1/approve", ""},
	{"POST", "/admin/api/registrations/u1/reject", ""},
	{"GET", "/admin/api/reports?state=all", ""},
	{"GET", "/admin/api/reports/r1", ""},
	{"POST", "/admin/api/reports/r1/resolve", `{"note":"x"}`},
}

func TestEveryEndpointRefusesWithoutTheToken(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	b.kill(t, "https://a.example/inbox", "gone")
	for _, e := range endpoints {
		for _, auth := range []string{"", "Bearer wrong", "Bearer " + token + "x", "Basic " + token, "Bearer"} {
			code, body, hdr := b.call(t, e.method, e.path, auth, e.body)
			if code != 401 || body["error"] != "unauthorized" || !strings.Contains(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s with %q: %d %v", e.method, e.path, auth, code, body)
			}
		}
	}
	// Nothing was changed by the refused calls.
	if c, _ := b.jobs.Counts(context.Background()); c[domain.JobDead] != 1 {
		t.Fatalf("a refused retry moved a job: %v", c)
	}
	if _, err := b.names.Get(context.Background(), "ops"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatal("a refused reserve took a name")
	}
	if bs, _ := b.moderation.DomainBlocks(context.Background()); len(bs) != 0 {
		t.Fatalf("a refused call blocked a domain: %+v", bs)
	}
}

func TestOffWithoutAToken(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	for _, e := range append(endpoints, struct{ method, path, body string }{"GET", "/admin", ""}) {
		for _, auth := range []string{"", "Bearer "} {
			if code, _, _ := b.call(t, e.method, e.path, auth, e.body); code != 404 {
				t.Errorf("%s %s: %d, want 404 while HERALD_ADMIN_TOKEN is empty", e.method, e.path, code)
			}
		}
	}
}

func TestQueue(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	b.kill(t, "https://dead.example/inbox", "410 Gone")
	b.enqueue(t, "https://a.example/1")
	b.enqueue(t, "https://a.example/2")
	code, body, _ := b.call(t, "GET", "/admin/api/queue", "Bearer "+token, "")
	if code != 200 {
		t.Fatalf("%d %v", code, body)
	}
	by := body["by_state"].(map[string]any)
	if by["queued"] != 2.0 || by["dead"] != 1.0 || by["leased"] != 0.0 || by["succeeded"] != 0.0 || body["total"] != 3.0 {
		t.Fatalf("by state %v", body)
	}
	hosts := body["by_host"].(map[string]any)
	q := hosts["queued"].([]any)[0].(map[string]any)
	d := hosts["dead"].([]any)[0].(map[string]any)
	if q["host"] != "a.example" || q["count"] != 2.0 || d["host"] != "dead.example" || len(hosts["leased"].([]any)) != 0 {
		t.Fatalf("by host %v", hosts)
	}
}

func TestJobsPagesWithLastError(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	var ids []string
	for i := range 3 {
		ids = append(ids, b.kill(t, fmt.Sprintf("https://h%d.example/inbox", i), fmt.Sprintf("reason %d", i)).ID)
	}
	var seen []string
	after := ""
	for range 5 {
		code, body, _ := b.call(t, "GET", "/admin/api/jobs?state=dead&limit=2&after="+after, "Bearer "+token, "")
		if code != 200 {
			t.Fatalf("%d %v", code, body)
		}
		for i, j := range body["jobs"].([]any) {
			m := j.(map[string]any)
			if m["state"] != "dead" || !strings.HasPrefix(m["last_error"].(string), "reason ") || m["finished_at"] == nil {
				t.Fatalf("job %d: %v", i, m)
			}
			seen = append(seen, m["id"].(string))
		}
		next, _ := body["next"].(string)
		if next == "" {
			break
		}
		after = next
	}
	if fmt.Sprint(seen) != fmt.Sprint(ids) {
		t.Fatalf("paged %v, want %v", seen, ids)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	q := b.enqueue(t, "https://a.example/inbox")
	b.quarantine(t, "q.example")
	b.expect(t, []apiCall{
		{"unknown state", "GET", "/admin/api/jobs?state=zombie", "", 422},
		{"limit not a number", "GET", "/admin/api/jobs?limit=ten", "", 422},
		{"limit zero", "GET", "/admin/api/jobs?limit=0", "", 422},
		{"limit too big", "GET", "/admin/api/jobs?limit=100000", "", 422},
		{"quarantined not a bool", "GET", "/admin/api/instances?quarantined=maybe", "", 422},
		{"retry unknown job", "POST", "/admin/api/jobs/nope/retry", "", 404},
		{"retry a queued job", "POST", "/admin/api/jobs/" + q.ID + "/retry", "", 422},
		{"lift unknown host", "POST", "/admin/api/instances/never.example/lift", "", 404},
		{"reserve malformed", "POST", "/admin/api/names", `{"name":`, 400},
		{"reserve empty body", "POST", "/admin/api/names", ``, 400},
		{"reserve trailing data", "POST", "/admin/api/names", `{"name":"x"} {}`, 400},
		{"reserve wrong type", "POST", "/admin/api/names", `{"name":7}`, 400},
		{"reserve oversized", "POST", "/admin/api/names", `{"name":"` + strings.Repeat("a", 5000) + `"}`, 400},
		{"reserve invalid", "POST", "/admin/api/names", `{"name":"not valid"}`, 422},
		{"reserve fixed", "POST", "/admin/api/names", `{"name":"root"}`, 201},
		{"reserve taken", "POST", "/admin/api/names", `{"name":"root"}`, 409},
		{"release fixed", "DELETE", "/admin/api/names/root", "", 403},
		{"release instance actor", "DELETE", "/admin/api/names/instance", "", 403},
		{"release unknown", "DELETE", "/admin/api/names/carol", "", 404},
		{"release invalid", "DELETE", "/admin/api/names/a%20b", "", 422},
		{"wrong method", "PUT", "/admin/api/queue", "", 405},
	})
	if code, body, _ := b.call(t, "DELETE", "/admin/api/names/root", "Bearer "+token, ""); !strings.Contains(fmt.Sprint(body["error"]), "fixed list") {
		t.Errorf("refusal does not say why: %d %v", code, body)
	}
}

func TestRetryAndLift(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	auth := "Bearer " + token
	d1 := b.kill(t, "https://a.example/1", "x")
	b.kill(t, "https://a.example/2", "x")
	b.kill(t, "https://b.example/1", "x")
	b.clock.Advance(time.Minute)

	code, body, _ := b.call(t, "POST", "/admin/api/jobs/"+d1.ID+"/retry", auth, "")
	job, _ := body["job"].(map[string]any)
	if code != 200 || job["state"] != "queued" || job["attempts"] != 0.0 {
		t.Fatalf("retry %d %v", code, body)
	}
	code, body, _ = b.call(t, "POST", "/admin/api/hosts/A.example/retry-dead", auth, "")
	if code != 200 || body["retried"] != 1.0 || body["host"] != "a.example" {
		t.Fatalf("retry-dead %d %v", code, body)
	}
	if c, _ := b.jobs.Counts(context.Background()); c[domain.JobDead] != 1 || c[domain.JobQueued] != 2 {
		t.Fatalf("counts %v", c)
	}

	b.quarantine(t, "q.example")
	b.quarantine(t, "other.example")
	waiting := b.enqueue(t, "https://q.example/inbox")
	_, _ = b.jobs.DeferHost(context.Background(), "q.example", b.clock.Now().Add(time.Hour))
	code, body, _ = b.call(t, "GET", "/admin/api/instances?quarantined=true", auth, "")
	list := body["instances"].([]any)
	first := list[0].(map[string]any)
	if code != 200 || len(list) != 2 || first["host"] != "other.example" || first["quarantined"] != true ||
		first["quarantine_level"] != 1.0 || first["consecutive_failures"] != 10.0 || first["quarantined_until"] == nil {
		t.Fatalf("instances %d %v", code, body)
	}
	code, body, _ = b.call(t, "POST", "/admin/api/instances/q.example/lift", auth, "")
	inst, _ := body["instance"].(map[string]any)
	if code != 200 || body["resumed"] != 1.0 || inst["quarantined"] != false {
		t.Fatalf("lift %d %v", code, body)
	}
	if j, _ := b.jobs.Get(context.Background(), waiting.ID); !j.RunAt.Equal(b.clock.Now()) {
		t.Fatalf("the host's job still waits until %v", j.RunAt)
	}
	_, body, _ = b.call(t, "GET", "/admin/api/instances?quarantined=true", auth, "")
	if len(body["instances"].([]any)) != 1 {
		t.Fatalf("after lift %v", body)
	}
	_, body, _ = b.call(t, "GET", "/admin/api/instances", auth, "")
	if len(body["instances"].([]any)) != 2 {
		t.Fatalf("all instances %v", body)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	auth := "Bearer " + token
	code, body, _ := b.call(t, "POST", "/admin/api/names", auth, `{"name":"Billing"}`)
	if code != 201 || body["name"] != "billing" || body["kind"] != "system" {
		t.Fatalf("reserve %d %v", code, body)
	}
	rn, err := b.names.Get(context.Background(), "billing")
	if err != nil || rn.Kind != domain.NameKindSystem {
		t.Fatalf("stored %+v %v", rn, err)
	}
	_, body, _ = b.call(t, "GET", "/admin/api/names", auth, "")
	if fmt.Sprint(body["names"]) == "[]" {
		t.Fatalf("list %v", body)
	}
	persona, _ := domain.NewReservedName("alice", domain.NameKindPersona, "a1", t0)
	_ = b.names.Reserve(context.Background(), persona)
	if code, body, _ := b.call(t, "DELETE", "/admin/api/names/alice", auth, ""); code != 403 || !strings.Contains(fmt.Sprint(body["error"]), "persona") {
		t.Fatalf("release a persona's name: %d %v", code, body)
	}
	if code, _, _ := b.call(t, "DELETE", "/admin/api/names/BILLING", auth, ""); code != 204 {
		t.Fatalf("release %d", code)
	}
	if _, err := b.names.Get(context.Background(), "billing"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatal("still reserved")
	}
}

// The operator API's status table is a copy of the rows of httpapi's that
// its use cases can return; both must agree.
func TestStatusAgreesWithHTTPAPI(t *testing.T) {
	t.Parallel()
	for _, err := range []error{domain.ErrNameTaken, domain.ErrAlreadyExists, domain.ErrInvalidName, domain.ErrInvalidInput,
		domain.ErrUnauthorized, domain.ErrForbidden, domain.ErrNotFound, domain.ErrUnavailable, context.DeadlineExceeded,
		fmt.Errorf("wrapped: %w", domain.ErrNotFound), errors.New("boom")} {
		if a, h := admin.Status(err), httpapi.Status(err); a != h {
			t.Errorf("%v: admin %d, httpapi %d", err, a, h)
		}
	}
}

// fanOut records a fan-out of one activity to followers followers, with
// queued jobs enqueued, delivered of them succeeded and one dead.
func (b *bundle) fanOut(t *testing.T, followers, queued, delivered int) domain.FanOut {
	t.Helper()
	return b.fanOutOf(t, "https://local.example/users/a/activities/big", t0, followers, queued, delivered)
}

// fanOutOf is fanOut of the activity act, begun at start.
func (b *bundle) fanOutOf(t *testing.T, act string, start time.Time, followers, queued, delivered int) domain.FanOut {
	t.Helper()
	ctx := context.Background()
	payload := []byte(`{"id":"` + act + `","type":"Create"}`)
	f, err := domain.NewFanOut(act, "https://local.example/users/a", "s", "https://local.example/users/a#main-key", payload, followers, "p1", start, start.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.fanOuts.Create(ctx, f); err != nil {
		t.Fatal(err)
	}
	var jobs []domain.Job
	for i := range queued {
		j, err := domain.NewJob(b.ids.NewID(), act, fmt.Sprintf("https://h%d.example/inbox", i), "s", f.KeyID, payload, t0)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	if _, err := b.jobs.Enqueue(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	if _, err := b.fanOuts.Advance(ctx, ports.FanOutProgress{ID: act, Owner: "p1", Cursor: "https://r.example/u/m", Queued: queued, Now: t0, Until: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	// Lease everything; settle the fan-out's first delivered+1 jobs (one
	// dead) and give every other job back as it was.
	leased, err := b.jobs.LeaseBatch(ctx, ports.LeaseRequest{Owner: "t", Token: "fan", Now: t0, Until: t0.Add(time.Minute), Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var st []ports.Settlement
	n := 0
	for _, j := range leased {
		s := ports.Settlement{ID: j.ID, Token: "fan", State: domain.JobQueued, Attempts: j.Attempts, RunAt: j.RunAt}
		if j.ActivityID == act && n <= delivered {
			s = ports.Settlement{ID: j.ID, Token: "fan", State: domain.JobSucceeded, Attempts: 1, FinishedAt: t0}
			if n == 0 {
				s.State, s.LastError = domain.JobDead, "410 Gone"
			}
			n++
		}
		st = append(st, s)
	}
	if _, err := b.jobs.Settle(ctx, st); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFanOutProgress(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	b.enqueue(t, "https://other.example/inbox") // another activity: not counted
	f := b.fanOut(t, 1000, 40, 10)
	code, body, _ := b.call(t, "GET", "/admin/api/fanouts", "Bearer "+token, "")
	if code != 200 {
		t.Fatalf("%d %v", code, body)
	}
	list := body["fan_outs"].([]any)
	if len(list) != 1 {
		t.Fatalf("fan-outs %v", body)
	}
	got := list[0].(map[string]any)
	for k, want := range map[string]any{"id": f.ID, "followers": 1000.0, "enqueued": 40.0, "recorded": 40.0,
		"delivered": 10.0, "dead": 1.0, "pending": 29.0, "done": false, "owner": "p1"} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v (%v)", k, got[k], want, got)
		}
	}
	if code, body, _ := b.call(t, "GET", "/admin/api/fanouts?limit=0", "Bearer "+token, ""); code != 422 && code != 400 {
		t.Errorf("limit=0: %d %v", code, body)
	}
}
