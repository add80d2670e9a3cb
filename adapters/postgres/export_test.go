package postgres

// Hooks for the black-box tests in package postgres_test.
var InterpretError = interpretError

var LeaseSQL = leaseSQL

var (
	SettleSQL     = settleSQL
	ReapSQL       = reapSQL
	PurgeSQL      = purgeSQL
	DeferHostSQL  = deferHostSQL
	ResumeHostSQL = resumeHostSQL
)

var BodySQL = bodySQL

var ByKeyIDSQL = byKeyIDSQL

// DedupeColumns is what jobs keeps of a job's dedupe key (migration 016),
// for tests that insert rows by hand.
var DedupeColumns = dedupeColumns

// WithCopyMin sets the smallest batch s.Enqueue tries by COPY, so the
// contract suite can run every batch through it.
func WithCopyMin(s *JobStore, n int) *JobStore {
	s.copyMin = n
	return s
}
