package contract

import (
	"testing"

	"github.com/heraldfed/herald/ports"
)

// Accounts is an account store: users, their tokens and their actors (one
// store implements the three ports on the same data).
type Accounts interface {
	ports.UserStore
	ports.TokenStore
	ports.ActorStore
}

// Content is a content store: cached remote actors, posts and their polls,
// tombstones (one store implements the ports on the same data).
type Content interface {
	ports.ForeignActorStore
	PostsAndPolls
	ports.TombstoneStore
}

// Stores opens a fresh, empty store of each port of one technology; each
// call is one case's. Every runs each port's suites on them, so a suite
// added there runs on every store, and a store that leaves a port out
// fails rather than goes untested.
type Stores struct {
	Jobs          func(t *testing.T) Jobs
	Names         func(t *testing.T) ports.NameRegistry
	Instances     func(t *testing.T) ports.InstanceStore
	Followers     func(t *testing.T) ports.FollowerStore
	FanOuts       func(t *testing.T) ports.FanOutStore
	Accounts      func(t *testing.T) Accounts
	Content       func(t *testing.T) Content
	Moderation    func(t *testing.T) ports.ModerationStore
	Reports       func(t *testing.T) ports.ReportStore
	Blocks        func(t *testing.T) ports.BlockStore
	OAuth         func(t *testing.T) ports.OAuthStore
	AccountIDs    func(t *testing.T) ports.AccountIDStore
	Notifications func(t *testing.T) ports.NotificationStore

	// JobOptions go to the job store's suites only (SecondHandle,
	// KeptCounts), beside the options given to Every.
	JobOptions []Option
	// Parallel runs the ports' suites side by side.
	Parallel bool
}

// Every runs every port's contract suites on s, each port a subtest named
// after it. opts go to every suite: a skip names a case of any of them.
func Every(t *testing.T, s Stores, opts ...Option) {
	t.Helper()
	ports := []struct {
		name string
		has  bool // the store was given
		run  func(t *testing.T)
	}{
		{"JobStore", s.Jobs != nil, func(t *testing.T) {
			o := append(append([]Option(nil), s.JobOptions...), opts...)
			JobStore(t, s.Jobs, o...)
			JobStoreReadyHosts(t, s.Jobs, o...)
		}},
		{"NameRegistry", s.Names != nil, func(t *testing.T) { NameRegistry(t, s.Names, opts...) }},
		{"InstanceStore", s.Instances != nil, func(t *testing.T) { InstanceStore(t, s.Instances, opts...) }},
		{"FollowerStore", s.Followers != nil, func(t *testing.T) { FollowerStore(t, s.Followers, opts...) }},
		{"FanOutStore", s.FanOuts != nil, func(t *testing.T) { FanOutStore(t, s.FanOuts, opts...) }},
		{"UserStore", s.Accounts != nil, func(t *testing.T) { UserStore(t, as[ports.UserStore](s.Accounts), opts...) }},
		{"TokenStore", s.Accounts != nil, func(t *testing.T) { TokenStore(t, as[ports.TokenStore](s.Accounts), opts...) }},
		{"ActorStore", s.Accounts != nil, func(t *testing.T) {
			ActorStore(t, as[ports.ActorStore](s.Accounts), opts...)
			ActorSettings(t, as[ports.ActorStore](s.Accounts), opts...)
		}},
		{"ForeignActorStore", s.Content != nil, func(t *testing.T) { ForeignActorStore(t, as[ports.ForeignActorStore](s.Content), opts...) }},
		{"PostStore", s.Content != nil, func(t *testing.T) {
			PostStore(t, as[ports.PostStore](s.Content), opts...)
			PostExtras(t, as[ports.PostStore](s.Content), opts...)
		}},
		{"PollStore", s.Content != nil, func(t *testing.T) { PollStore(t, as[PostsAndPolls](s.Content), opts...) }},
		{"TombstoneStore", s.Content != nil, func(t *testing.T) { TombstoneStore(t, as[ports.TombstoneStore](s.Content), opts...) }},
		{"ModerationStore", s.Moderation != nil, func(t *testing.T) { ModerationStore(t, s.Moderation, opts...) }},
		{"ReportStore", s.Reports != nil, func(t *testing.T) { ReportStore(t, s.Reports, opts...) }},
		{"BlockStore", s.Blocks != nil, func(t *testing.T) { BlockStore(t, s.Blocks, opts...) }},
		{"OAuthStore", s.OAuth != nil, func(t *testing.T) { OAuthStore(t, s.OAuth, opts...) }},
		{"AccountIDStore", s.AccountIDs != nil, func(t *testing.T) { AccountIDStore(t, s.AccountIDs, opts...) }},
		{"NotificationStore", s.Notifications != nil, func(t *testing.T) { NotificationStore(t, s.Notifications, opts...) }},
	}
	for _, p := range ports {
		t.Run(p.name, func(t *testing.T) {
			if s.Parallel {
				t.Parallel()
			}
			if !p.has {
				t.Fatalf("contract.Stores has no store for %s: every store implements every port", p.name)
			}
			p.run(t)
		})
	}
}

// as narrows a store opener to one of the ports its store implements.
func as[P, S any](open func(t *testing.T) S) func(t *testing.T) P {
	return func(t *testing.T) P { return any(open(t)).(P) }
}
