package mongo

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

// keyOwnersVersion is the schema version from which a key id belongs to
// one cached actor (SPEC §10), held by the unique idxForeignKeyOwner in
// place of the plain index. Its up and down files are markers: a JSON
// command cannot compare two fields' hosts nor pick a key id's newest copy
// on every server Herald runs on, so MigrateUp does the work in Go
// (ownKeyIDs) and MigrateDown undoes it (disownKeyIDs).
const keyOwnersVersion = 6

// ownKeyIDs is migration 006's up step, run by MigrateUp under the
// migration lock at every start from version 6 on; once the unique index
// is there it costs one listIndexes. Before it makes the index it deletes
// what the index refuses (a cached actor is fetched again when needed, so
// deleting is safe): an empty or null key id is unset (the stores leave
// the field out; the sparse index leaves such copies out); every copy
// whose key id is not on its actor's own host (keyHost), a claim the
// trust rules refuse; then of the copies still sharing a key id, all but
// the most recently fetched (then the greatest actorUri). Interrupted, it
// runs again at the next start.
func ownKeyIDs(ctx context.Context, db *mongodrv.Database) (forged, duplicates int, err error) {
	foreign := collection(db, collForeignAvatars)
	have, err := listIndexes(ctx, foreign)
	if err != nil {
		return 0, 0, err
	}
	if _, done := have[idxForeignKeyOwner]; done {
		return 0, 0, nil
	}
	if forged, duplicates, err = deleteClaims(ctx, foreign); err != nil {
		return forged, duplicates, err
	}
	if err := dropIndexIfPresent(ctx, db, collForeignAvatars, idxForeignPublicKeyIDPlain); err != nil {
		return forged, duplicates, err
	}
	if _, err := createIndex(ctx, db, keyOwnerIndex); err != nil {
		return forged, duplicates, err
	}
	return forged, duplicates, nil
}

// deleteClaims deletes what idxForeignKeyOwner refuses (see ownKeyIDs);
// its cursor is closed when it returns, before the indexes change.
func deleteClaims(ctx context.Context, foreign *mongodrv.Collection) (forged, duplicates int, err error) {
	for _, empty := range []any{"", nil} {
		if _, err := foreign.UpdateMany(ctx, bson.D{{Key: "publicKeyId", Value: empty}},
			bson.D{{Key: "$unset", Value: bson.D{{Key: "publicKeyId", Value: ""}}}}); err != nil {
			return 0, 0, fmt.Errorf("unset empty key ids: %w", interpretError(err, nil))
		}
	}
	// In key id order, each key id's newest copy first: a key id's first
	// copy on its actor's host is the one kept.
	cur, err := foreign.Find(ctx, bson.D{{Key: "publicKeyId", Value: bson.D{{Key: "$exists", Value: true}}}},
		options.Find().
			SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "actorUri", Value: 1}, {Key: "publicKeyId", Value: 1}}).
			SetSort(bson.D{{Key: "publicKeyId", Value: 1}, {Key: "fetchedAt", Value: -1}, {Key: "actorUri", Value: -1}}).
			SetAllowDiskUse(true))
	if err != nil {
		return 0, 0, fmt.Errorf("read key ids: %w", interpretError(err, nil))
	}
	defer cur.Close(ctx)
	var gone bson.A
	flush := func() error {
		if len(gone) == 0 {
			return nil
		}
		if _, err := foreign.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: gone}}}}); err != nil {
			return fmt.Errorf("delete claims: %w", interpretError(err, nil))
		}
		gone = gone[:0]
		return nil
	}
	kept := ""
	for cur.Next(ctx) {
		var d struct {
			ID       any    `bson:"_id"`
			ActorURI string `bson:"actorUri"`
			KeyID    any    `bson:"publicKeyId"`
		}
		if err := cur.Decode(&d); err != nil {
			return forged, duplicates, fmt.Errorf("read key ids: %w", err)
		}
		key, isString := d.KeyID.(string)
		switch {
		case !isString || keyHost(key) != keyHost(d.ActorURI):
			forged++
			gone = append(gone, d.ID)
		case key == kept:
			duplicates++
			gone = append(gone, d.ID)
		default:
			kept = key
		}
		if len(gone) == deleteChunk {
			if err := flush(); err != nil {
				return forged, duplicates, err
			}
		}
	}
	if err := cur.Err(); err != nil {
		return forged, duplicates, fmt.Errorf("read key ids: %w", interpretError(err, nil))
	}
	return forged, duplicates, flush()
}

// disownKeyIDs is migration 006's down step, run by MigrateDown before
// golang-migrate leaves version 6: the plain index on key ids again in
// place of the unique one. The copies ownKeyIDs deleted are not restored;
// they are fetched again when needed.
func disownKeyIDs(ctx context.Context, db *mongodrv.Database) error {
	if err := dropIndexIfPresent(ctx, db, collForeignAvatars, idxForeignKeyOwner); err != nil {
		return err
	}
	have, err := listIndexes(ctx, collection(db, collForeignAvatars))
	if err != nil {
		return err
	}
	if _, ok := have[idxForeignPublicKeyIDPlain]; ok {
		return nil
	}
	_, err = createIndex(ctx, db, indexSpec{coll: collForeignAvatars, name: idxForeignPublicKeyIDPlain, keys: keys("publicKeyId", 1)})
	return err
}

// keyHost is a URI's host as migration 006 compares an actor's with its
// key id's (SQLite's 011 and PostgreSQL's 020 compare them alike, in
// SQL): the part after the first "://", up to the first "/", "?" or "#",
// after its last "@" (port kept), in lower case; "" without "://".
func keyHost(uri string) string {
	_, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	return strings.ToLower(rest)
}
