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
