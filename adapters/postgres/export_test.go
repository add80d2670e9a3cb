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

// DedupeColumns is what jobs keeps of a job's dedupe key (migration 016),
// for tests that insert rows by hand.
var DedupeColumns = dedupeColumns
