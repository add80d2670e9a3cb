package mongo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/x/mongo/driver/topology"

	"github.com/heraldfed/herald/domain"
)

func dupWrite(msg string, raw bson.Raw) error {
	return mongodrv.WriteException{WriteErrors: []mongodrv.WriteError{{Code: 11000, Message: msg, Raw: raw}}}
}

func TestInterpretError(t *testing.T) {
	t.Parallel()
	const (
		mongoMsg  = `E11000 duplicate key error collection: herald.%s index: %s dup key: { x: "y" }`
		ferretMsg = `E11000 duplicate key error collection: herald.reserved_names` // FerretDB v1 names no index
		// FerretDB v2 (DocumentDB): code 11000, no "E11000", the index quoted
		docdbMsg = `Duplicate key violation on the requested collection: Index '%s'`
	)
	idKeyPattern, _ := bson.Marshal(bson.D{{Key: "index", Value: 0}, {Key: "code", Value: 11000},
		{Key: "keyPattern", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "errmsg", Value: "E11000 duplicate key error"}})
	other := errors.New("something else")
	tests := []struct {
		name  string
		err   error
		dups  *dupRules
		want  error // nil: the error must come back unchanged
		isNil bool
	}{
		{name: "nil stays nil", err: nil, isNil: true},
		{name: "no documents is not found", err: mongodrv.ErrNoDocuments, want: domain.ErrNotFound},
		{name: "wrapped no documents", err: fmt.Errorf("find: %w", mongodrv.ErrNoDocuments), want: domain.ErrNotFound},
		{name: "reserved name duplicate is taken", err: dupWrite(fmt.Sprintf(mongoMsg, "reserved_names", "_id_"), nil), dups: nameDups, want: domain.ErrNameTaken},
		{name: "reserved name duplicate on FerretDB is taken", err: dupWrite(ferretMsg, nil), dups: nameDups, want: domain.ErrNameTaken},
		{name: "duplicate without rules already exists", err: dupWrite(fmt.Sprintf(mongoMsg, "tokens", "_id_"), nil), want: domain.ErrAlreadyExists},
		{name: "token duplicate already exists", err: dupWrite(fmt.Sprintf(mongoMsg, "tokens", "_id_"), nil), dups: tokenDups, want: domain.ErrAlreadyExists},
		{name: "user name index is taken", err: dupWrite(fmt.Sprintf(mongoMsg, "root_users", idxRootUsersUserName), nil), dups: userDups, want: domain.ErrNameTaken},
		{name: "user id needs a lookup", err: dupWrite(fmt.Sprintf(mongoMsg, "root_users", "_id_"), nil), dups: userDups, want: errDupUnnamed},
		{name: "user duplicate on FerretDB needs a lookup", err: dupWrite(ferretMsg, nil), dups: userDups, want: errDupUnnamed},
		{name: "user name index on DocumentDB is taken", err: dupWrite(fmt.Sprintf(docdbMsg, idxRootUsersUserName), nil), dups: userDups, want: domain.ErrNameTaken},
		{name: "user id on DocumentDB needs a lookup", err: dupWrite(fmt.Sprintf(docdbMsg, "_id_"), nil), dups: userDups, want: errDupUnnamed},
		{name: "avatar id on DocumentDB already exists", err: dupWrite(fmt.Sprintf(docdbMsg, "_id_"), nil), dups: actorDups, want: domain.ErrAlreadyExists},
		{name: "reserved name on DocumentDB is taken", err: dupWrite(fmt.Sprintf(docdbMsg, "_id_"), nil), dups: nameDups, want: domain.ErrNameTaken},
		{name: "avatar id already exists", err: dupWrite(fmt.Sprintf(mongoMsg, "avatars", "_id_"), nil), dups: actorDups, want: domain.ErrAlreadyExists},
		{name: "avatar id from keyPattern", err: dupWrite("E11000 duplicate key error", idKeyPattern), dups: actorDups, want: domain.ErrAlreadyExists},
		{name: "avatar name needs a lookup", err: dupWrite(fmt.Sprintf(mongoMsg, "avatars", idxAvatarsName), nil), dups: actorDups, want: errDupUnnamed},
		{name: "key id held by another actor already exists", err: dupWrite(fmt.Sprintf(mongoMsg, "foreign_avatars", idxForeignKeyOwner), nil), want: domain.ErrAlreadyExists},
		{name: "key id held by another actor on DocumentDB already exists", err: dupWrite(fmt.Sprintf(docdbMsg, idxForeignKeyOwner), nil), want: domain.ErrAlreadyExists},
		{name: "unique index refusing an update on FerretDB v1 already exists", err: mongodrv.CommandError{Code: 1, Name: "InternalError",
			Message: "[collection.go:177 sqlite.(*collection).UpdateAll.func1] constraint failed: UNIQUE constraint failed: index 'foreign_avatars_f7ab6afa_" + idxForeignKeyOwner + "' (2067)"},
			want: domain.ErrAlreadyExists},
		{name: "another internal error stays as it is", err: mongodrv.CommandError{Code: 1, Name: "InternalError", Message: "disk I/O error"}},
		{name: "post object uri needs a lookup", err: dupWrite(fmt.Sprintf(mongoMsg, "posts", idxPostsObjectURI), nil), dups: postDups, want: errDupUnnamed},
		{name: "duplicate as a command error", err: mongodrv.CommandError{Code: 11000, Message: fmt.Sprintf(mongoMsg, "root_users", idxRootUsersUserName)}, dups: userDups, want: domain.ErrNameTaken},
		{name: "duplicate in a bulk write", err: mongodrv.BulkWriteException{WriteErrors: []mongodrv.BulkWriteError{{WriteError: mongodrv.WriteError{Code: 11000, Message: fmt.Sprintf(mongoMsg, "reserved_names", idxReservedNamesName)}}}}, dups: nameDups, want: domain.ErrNameTaken},
		{name: "duplicate on update (11001)", err: mongodrv.WriteException{WriteErrors: []mongodrv.WriteError{{Code: 11001, Message: "E11001 duplicate key on update"}}}, want: domain.ErrAlreadyExists},
		{name: "server selection is unavailable", err: topology.ServerSelectionError{Wrapped: errors.New("server selection timeout")}, want: domain.ErrUnavailable},
		{name: "server selection timeout is unavailable", err: fmt.Errorf("ping: %w", topology.ErrServerSelectionTimeout), want: domain.ErrUnavailable},
		{name: "network error label is unavailable", err: mongodrv.CommandError{Code: 0, Labels: []string{"NetworkError"}, Message: "connection reset"}, want: domain.ErrUnavailable},
		{name: "not writable primary is unavailable", err: mongodrv.CommandError{Code: 10107, Name: "NotWritablePrimary"}, want: domain.ErrUnavailable},
		{name: "primary stepped down is unavailable", err: mongodrv.WriteException{WriteConcernError: &mongodrv.WriteConcernError{Code: 189, Name: "PrimarySteppedDown"}}, want: domain.ErrUnavailable},
		{name: "disconnected client is unavailable", err: mongodrv.ErrClientDisconnected, want: domain.ErrUnavailable},
		{name: "deadline is unavailable", err: context.DeadlineExceeded, want: domain.ErrUnavailable},
		{name: "cancel passes unchanged", err: context.Canceled},
		{name: "bad value passes unchanged", err: mongodrv.CommandError{Code: 2, Name: "BadValue", Message: "hint provided does not correspond to an existing index"}},
		{name: "unknown passes unchanged", err: other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := interpretError(tt.err, tt.dups)
			switch {
			case tt.isNil:
				if got != nil {
					t.Fatalf("got %v, want nil", got)
				}
			case tt.want == nil:
				if !reflect.DeepEqual(got, tt.err) {
					t.Fatalf("got %v, want the error unchanged", got)
				}
			default:
				if !errors.Is(got, tt.want) {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
				if !strings.Contains(got.Error(), tt.err.Error()) {
					t.Fatalf("the driver error is lost: %v", got)
				}
				for _, s := range []error{domain.ErrNotFound, domain.ErrNameTaken, domain.ErrAlreadyExists, domain.ErrUnavailable, errDupUnnamed} {
					if s != tt.want && errors.Is(got, s) {
						t.Fatalf("%v also matches %v", got, s)
					}
				}
			}
		})
	}
}

// The bulkWrite failures a lease passes over and a settlement sends again:
// only those where another writer won or a conflict undid the write.
func TestConcurrencyLossesOfABulkWrite(t *testing.T) {
	t.Parallel()
	bulk := func(codes ...int) error {
		var bwe mongodrv.BulkWriteException
		for i, c := range codes {
			bwe.WriteErrors = append(bwe.WriteErrors, mongodrv.BulkWriteError{WriteError: mongodrv.WriteError{Index: i * 2, Code: c}})
		}
		return bwe
	}
	for _, c := range []struct {
		name      string
		err       error
		losses    bool
		undone    []int
		conflicts bool
	}{
		// DocumentDB reports a PostgreSQL error as its packed SQLSTATE:
		// 40P01 is 16908292, 40001 is 16777220.
		{"deadlock (DocumentDB)", bulk(16908292), true, []int{0}, true},
		{"serialization failure (DocumentDB)", bulk(16777220), true, []int{0}, true},
		{"write conflict", bulk(112, 16908292), true, []int{0, 2}, true},
		{"slot taken", bulk(11000), true, nil, false},
		{"slot taken (FerretDB v1)", mongodrv.BulkWriteException{WriteErrors: []mongodrv.BulkWriteError{{WriteError: mongodrv.WriteError{
			Code: 1, Message: "UNIQUE constraint failed: index 'jobs_slot'"}}}}, true, nil, false},
		{"another internal error", mongodrv.BulkWriteException{WriteErrors: []mongodrv.BulkWriteError{{WriteError: mongodrv.WriteError{
			Code: 1, Message: "disk I/O error"}}}}, false, nil, false},
		{"slot taken and a deadlock", bulk(11000, 16908292), true, nil, false},
		{"a validation failure", bulk(16908292, 121), false, nil, false},
		{"no write error", mongodrv.BulkWriteException{}, false, nil, false},
		{"network", errors.New("connection reset by peer"), false, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := onlyConcurrencyLosses(c.err); got != c.losses {
				t.Errorf("onlyConcurrencyLosses = %v, want %v", got, c.losses)
			}
			undone, ok := conflicted(c.err)
			if ok != c.conflicts || fmt.Sprint(undone) != fmt.Sprint(c.undone) {
				t.Errorf("conflicted = %v %v, want %v %v", undone, ok, c.undone, c.conflicts)
			}
		})
	}
}
