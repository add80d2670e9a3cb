package application_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

func TestReportRemoteSendsAFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, target string
		objects      []string
		wantTarget   string
		wantInbox    string
		wantObject   []string
	}{
		{"URI with posts: to the shared inbox", bob, []string{bob + "/statuses/1", bob + "/statuses/1", bob}, bob, shared, []string{bob, bob + "/statuses/1"}},
		{"user@host", "@bob@remote.example", nil, bob, shared, []string{bob}},
		{"no shared inbox: the actor's inbox", dave, nil, dave, dave + "/inbox", []string{dave}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFed(t)
			b.webfinger("bob@remote.example", bob)
			res, err := b.fed.Report.Handle(t.Context(), application.ReportRemote{UserID: b.userID, As: "alice",
				Target: tt.target, Comment: " spam, again ", Objects: tt.objects})
			if err != nil {
				t.Fatal(err)
			}
			if res.Target != tt.wantTarget || res.Inbox != tt.wantInbox || res.Queued != 1 || !strings.HasPrefix(res.ActivityID, local+"/actor/activities/") {
				t.Fatalf("reported %+v", res)
			}
			jobs := b.allJobs()
			if len(jobs) != 1 || jobs[0].Inbox != tt.wantInbox || jobs[0].KeyID != local+"/actor#main-key" {
				t.Fatalf("jobs %+v", jobs)
			}
			p := payload(t, jobs[0])
			// Mastodon's shape: from the instance actor, never the persona.
			if p["type"] != "Flag" || p["actor"] != local+"/actor" || p["id"] != res.ActivityID || p["content"] != "spam, again" ||
				fmt.Sprint(p["object"]) != fmt.Sprint(tt.wantObject) || strings.Contains(string(jobs[0].Payload), alice) {
				t.Fatalf("flag %s", jobs[0].Payload)
			}
		})
	}
}

func TestReportRemoteRefusals(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	other := signUp(t, b.app.SignUp, "mallory")
	many := make([]string, domain.MaxReportURIs)
	for i := range many {
		many[i] = fmt.Sprintf("%s/statuses/%d", bob, i)
	}
	tests := []struct {
		name    string
		cmd     application.ReportRemote
		want    error
		message string
	}{
		{"someone else's persona", application.ReportRemote{UserID: other.User.ID, As: "alice", Target: bob}, domain.ErrForbidden, "not yours"},
		{"empty target", application.ReportRemote{UserID: b.userID, As: "alice", Target: " "}, domain.ErrInvalidInput, "no target"},
		{"a local actor", application.ReportRemote{UserID: b.userID, As: "alice", Target: club}, domain.ErrInvalidInput, "this server"},
		{"a local account", application.ReportRemote{UserID: b.userID, As: "alice", Target: "mallory@local.example"}, domain.ErrInvalidInput, "this server"},
		{"neither URI nor account", application.ReportRemote{UserID: b.userID, As: "alice", Target: "bob"}, domain.ErrInvalidInput, "neither"},
		{"unknown actor", application.ReportRemote{UserID: b.userID, As: "alice", Target: "https://remote.example/users/nobody"}, domain.ErrNotFound, ""},
		{"a post of another host", application.ReportRemote{UserID: b.userID, As: "alice", Target: bob, Objects: []string{dave + "/statuses/1"}}, domain.ErrInvalidInput, "remote.example"},
		{"a post that is not a URI", application.ReportRemote{UserID: b.userID, As: "alice", Target: bob, Objects: []string{"statuses/1"}}, domain.ErrInvalidInput, "not a URI"},
		{"too many posts", application.ReportRemote{UserID: b.userID, As: "alice", Target: bob, Objects: many}, domain.ErrInvalidInput, "at most"},
		{"comment too long", application.ReportRemote{UserID: b.userID, As: "alice", Target: bob, Comment: strings.Repeat("c", domain.MaxReportComment+1)}, domain.ErrInvalidInput, "at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.fed.Report.Handle(ctx, tt.cmd)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("err %v, want %v saying %q", err, tt.want, tt.message)
			}
			if len(b.allJobs()) != 0 {
				t.Fatal("a Flag was queued")
			}
		})
	}
}
