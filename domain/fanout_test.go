package domain_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/heraldfed/herald/domain"
)

func TestSpreadHosts(t *testing.T) {
	// Each job is written host/inbox; the spread order is compared as such.
	for _, tc := range []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", ""},
		{"one host", "a/1 a/2 a/3", "a/1 a/2 a/3"},
		{"one job a host", "a/1 b/1 c/1", "a/1 b/1 c/1"},
		{"hosts side by side", "a/1 a/2 a/3 b/1 b/2 c/1", "a/1 b/1 c/1 a/2 b/2 a/3"},
		{"hosts mixed", "a/1 b/1 a/2 c/1 b/2 a/3", "a/1 b/1 c/1 a/2 b/2 a/3"},
		{"a host appearing late", "a/1 a/2 a/3 a/4 b/1", "a/1 b/1 a/2 a/3 a/4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var jobs []domain.Job
			for _, f := range strings.Fields(tc.in) {
				host, _, _ := strings.Cut(f, "/")
				jobs = append(jobs, domain.Job{Host: host, Inbox: f})
			}
			domain.SpreadHosts(jobs)
			var got []string
			for _, j := range jobs {
				got = append(got, j.Inbox)
			}
			if want := strings.Fields(tc.want); !slices.Equal(got, want) {
				t.Errorf("SpreadHosts(%s) = %v, want %v", tc.in, got, want)
			}
		})
	}
}
