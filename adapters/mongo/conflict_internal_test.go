package mongo

import (
	"errors"
	"fmt"
	"testing"

	mongodrv "go.mongodb.org/mongo-driver/mongo"
)

// insertOne sends a write again only when the server undid it in a
// conflict and nothing else went wrong: a duplicate key, a write concern
// error or any other failure is the caller's.
func TestOnlyConflicts(t *testing.T) {
	we := func(codes ...int) error {
		e := mongodrv.WriteException{}
		for _, c := range codes {
			e.WriteErrors = append(e.WriteErrors, mongodrv.WriteError{Code: c, Message: "x"})
		}
		return fmt.Errorf("follow a → b: %w", e)
	}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"deadlock detected (40P01)", we(codeDeadlockDetected), true},
		{"serialization failure (40001)", we(codeSerializationFailed), true},
		{"write conflict", we(codeWriteConflict), true},
		{"duplicate key", we(11000), false},
		{"a conflict and a duplicate key", we(codeDeadlockDetected, 11000), false},
		{"no write errors", we(), false},
		{"write concern error", mongodrv.WriteException{WriteConcernError: &mongodrv.WriteConcernError{Code: 64}, WriteErrors: []mongodrv.WriteError{{Code: codeDeadlockDetected}}}, false},
		{"another error", errors.New("connection refused"), false},
		{"no error", nil, false},
	} {
		if got := onlyConflicts(c.err); got != c.want {
			t.Errorf("%s: onlyConflicts = %v, want %v", c.name, got, c.want)
		}
	}
}

// updateMany sends an update again when the server undid it in a conflict,
// reported per write or for the whole command, and only then.
func TestUndoneByConflict(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"a write error: deadlock detected", mongodrv.WriteException{WriteErrors: []mongodrv.WriteError{{Code: codeDeadlockDetected}}}, true},
		{"the command: write conflict", mongodrv.CommandError{Code: codeWriteConflict}, true},
		{"the command: serialization failure", fmt.Errorf("mark: %w", mongodrv.CommandError{Code: codeSerializationFailed}), true},
		{"the command: another failure", mongodrv.CommandError{Code: 2}, false},
		{"a duplicate key", mongodrv.WriteException{WriteErrors: []mongodrv.WriteError{{Code: 11000}}}, false},
		{"another error", errors.New("connection refused"), false},
	} {
		if got := undoneByConflict(c.err); got != c.want {
			t.Errorf("%s: undoneByConflict = %v, want %v", c.name, got, c.want)
		}
	}
}
