package postgres

// Hooks for the black-box tests in package postgres_test.
var InterpretError = interpretError

// The lease's two statements as sent without the lease function.
var (
	ReadyPlainSQL = readyPlainSQL
	LeasePlainSQL = leasePlainSQL
)

var (
	SettleSQL     = settleSQL
	ReapSQL       = reapSQL
	PurgeSQL      = purgeSQL
	DeferHostSQL  = deferHostSQL
	ResumeHostSQL = resumeHostSQL
)

// EndDomainJobsSQL is the statement EndDomainJobs sends for domain d,
// with the values of its two cover parameters.
func EndDomainJobsSQL(d string) (sql, v1, v2 string) { return endDomainJobsSQL(d) }

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

// The readings of job_counts and their fold (migration 028).
var (
	CountsSQL       = countsSQL
	CountsByHostSQL = countsByHostSQL
	FoldCountsSQL   = foldCountsSQL
)
