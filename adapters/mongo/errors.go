package mongo

import (
	"errors"
	"fmt"
	"regexp"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/x/mongo/driver/topology"

	"github.com/heraldfed/herald/domain"
)

// dupRules says what a duplicate key means in one collection: byIndex maps
// the name of a unique index to the sentinel a duplicate in it is; other is
// the sentinel when the index is not listed, or when the server does not say
// which index it was (FerretDB's E11000 names no index).
// A nil *dupRules means every duplicate is domain.ErrAlreadyExists.
type dupRules struct {
	byIndex map[string]error
	other   error
}

// errDupUnnamed is returned (wrapped) when a collection has unique indexes
// of different meanings and the server did not say which one a duplicate
// hit; the store then looks the answer up (see AccountStore.dupMeaning).
var errDupUnnamed = errors.New("duplicate key in an index the server did not name")

// Server error codes that mean "the primary is not there right now": the
// operation may succeed on a retry, so they are domain.ErrUnavailable.
var unavailableCodes = map[int32]bool{
	6:     true, // HostUnreachable
	7:     true, // HostNotFound
	89:    true, // NetworkTimeout
	91:    true, // ShutdownInProgress
	189:   true, // PrimarySteppedDown
	262:   true, // ExceededTimeLimit
	9001:  true, // SocketException
	10107: true, // NotWritablePrimary
	11600: true, // InterruptedAtShutdown
	11602: true, // InterruptedDueToReplStateChange
	13435: true, // NotPrimaryNoSecondaryOk
	13436: true, // NotPrimaryOrSecondary
}

// interpretError is the one place the driver's errors become domain
// sentinels (River's interpretError, GoToSocial's processPostgresError). The
// driver error stays in the chain behind the sentinel, so logs keep the
// server's message and errors.Is works for both.
//
//   - nil → nil
//   - mongodrv.ErrNoDocuments → domain.ErrNotFound
//   - duplicate key (E11000 and its relatives, and FerretDB v1's
//     InternalError for a unique index an update violates) → the sentinel
//     dups gives for the index; domain.ErrAlreadyExists when dups is nil
//   - network errors, server selection failures, timeouts, a disconnected
//     client, "not primary" and shutdown codes → domain.ErrUnavailable
//   - anything else is returned unchanged.
func interpretError(err error, dups *dupRules) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mongodrv.ErrNoDocuments):
		return fmt.Errorf("%w: %w", domain.ErrNotFound, err)
	case mongodrv.IsDuplicateKeyError(err) || ferretUniqueViolation(err):
		sentinel := error(domain.ErrAlreadyExists)
		if dups != nil {
			sentinel = dups.other
			if idx, ok := dupIndex(err); ok {
				if s, listed := dups.byIndex[idx]; listed {
					sentinel = s
				}
			}
		}
		return fmt.Errorf("%w: %w", sentinel, err)
	case isUnavailable(err):
		return fmt.Errorf("%w: %w", domain.ErrUnavailable, err)
	}
	return err
}

// ferretUniqueViolation recognises FerretDB v1's answer to an update (a
// replace of a document that exists) that a unique index refuses: not
// E11000 but InternalError (code 1) carrying its SQLite backend's "UNIQUE
// constraint failed". Inserts get E11000 there.
func ferretUniqueViolation(err error) bool {
	var se mongodrv.ServerError
	return errors.As(err, &se) && se.HasErrorCodeWithMessage(codeInternalError, ferretUniqueMessage)
}

// FerretDB v1's answer to a write a unique index refuses (see
// ferretUniqueViolation): InternalError with its SQLite backend's message.
const (
	codeInternalError   = 1
	ferretUniqueMessage = "UNIQUE constraint failed"
)

// codeBadValue is a server refusing an argument of a command, such as a
// hint that names no index.
const codeBadValue = 2

func isUnavailable(err error) bool {
	var sse topology.ServerSelectionError
	if mongodrv.IsNetworkError(err) || mongodrv.IsTimeout(err) || errors.As(err, &sse) ||
		errors.Is(err, mongodrv.ErrClientDisconnected) || errors.Is(err, topology.ErrServerSelectionTimeout) {
		return true
	}
	var se mongodrv.ServerError
	if errors.As(err, &se) {
		for code := range unavailableCodes {
			if se.HasErrorCode(int(code)) {
				return true
			}
		}
		if se.HasErrorLabel("RetryableWriteError") || se.HasErrorLabel("NetworkError") {
			return true
		}
	}
	return false
}

// indexInMessage finds the index name in MongoDB's E11000 message:
// "E11000 duplicate key error collection: db.c index: name_1 dup key: …",
// and in DocumentDB's (FerretDB v2), which has the same code 11000 but
// another text: "Duplicate key violation on the requested collection:
// Index 'name_1'".
var indexInMessage = regexp.MustCompile(`index: (\S+)|Index '([^']+)'`)

// dupIndex names the unique index a duplicate key error is about, when the
// server says: from the message (every MongoDB version) of the write error,
// write exception or command error.
func dupIndex(err error) (string, bool) {
	var msgs []string
	var we mongodrv.WriteException
	var bwe mongodrv.BulkWriteException
	var ce mongodrv.CommandError
	switch {
	case errors.As(err, &we):
		for _, e := range we.WriteErrors {
			if e.Code == 11000 || e.Code == 11001 {
				msgs = append(msgs, e.Message)
				if name, ok := keyPatternIndex(e.Raw); ok {
					return name, true
				}
			}
		}
	case errors.As(err, &bwe):
		for _, e := range bwe.WriteErrors {
			if e.Code == 11000 || e.Code == 11001 {
				msgs = append(msgs, e.Message)
			}
		}
	case errors.As(err, &ce):
		msgs = append(msgs, ce.Message)
	}
	for _, m := range msgs {
		if name, ok := messageIndex(m); ok {
			return name, true
		}
	}
	return "", false
}

// messageIndex reads the index name out of one E11000 message.
func messageIndex(msg string) (string, bool) {
	if sm := indexInMessage.FindStringSubmatch(msg); sm != nil {
		return sm[1] + sm[2], true // one of the two is empty
	}
	return "", false
}

// keyPatternIndex recognises the _id index from the keyPattern a MongoDB
// write error carries, for a message that was cut short.
func keyPatternIndex(raw bson.Raw) (string, bool) {
	if raw == nil {
		return "", false
	}
	kp, ok := raw.Lookup("keyPattern").DocumentOK()
	if !ok {
		return "", false
	}
	elems, err := kp.Elements()
	if err == nil && len(elems) == 1 && elems[0].Key() == "_id" {
		return "_id_", true
	}
	return "", false
}
