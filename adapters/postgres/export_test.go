package postgres

// Hooks for the black-box tests in package postgres_test.
var InterpretError = interpretError

var LeaseSQL = leaseSQL
