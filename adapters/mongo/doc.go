// Package mongo implements Herald's repository ports on MongoDB (driver v1,
// the one golang-migrate's mongodb driver uses). It is the production store
// of the design card: leasing takes a batch in a fixed number of round
// trips (candidates from the (state, runAt) index, one bulkWrite of
// conditional updates, read back by the batch's token), the per-host cap is
// arbitrated across processes by a unique host slot in each leased job
// (jobs_batch.go), names are arbitrated by unique indexes (E11000 →
// domain.ErrNameTaken), retention is a TTL index, and every write goes with
// majority write concern and every read to the primary (SPEC §9).
//
// Start-up order (SPEC §4), called by bootstrap:
//
//	client, err := mongo.Connect(ctx, uri)
//	db := client.Database(name)
//	err = mongo.Touch(ctx, db)                        // one collection at a time
//	err = mongo.MigrateUp(ctx, client, name, log)     // golang-migrate, locked
//	ttl, err := mongo.EnsureIndexes(ctx, db, log)     // every start; ttl=false → run the purge loop
//
// # Collections and fields
//
// The collections are the legacy ones of the old serial-worker application
// plus the new ones of the delivery engine; the migrations in
// migrations/mongo and the stores here read and write the same fields. _id
// is the entity's string id unless noted. Times are BSON dates (UTC,
// millisecond precision); a zero time is an absent field.
//
//	root_users       _id, userName, passwordHash, createdAt, status ("active" or "pending";
//	                 absent: active), reason
//	tokens           _id (the token's hash), userId, createdAt
//	avatars          _id, rootUserId (absent for the instance actor), name, displayName,
//	                 publicKeyPem, privateKeyPem, createdAt, note (the bio, plain text)
//	groups           _id, ownerId, name, displayName, publicKeyPem, privateKeyPem, createdAt
//	reserved_names   _id (= name), name, kind, ownerId ("" for system names), createdAt
//	                 [seededBy: "001" on rows migration 001 wrote]
//	foreign_avatars  _id (ObjectId), actorUri, publicKeyId, publicKeyPem, inbox, sharedInbox,
//	                 preferredUsername, host, fetchedAt
//	posts            _id, objectUri, authorUri, groupUri, content, visibility, inReplyTo,
//	                 published, local
//	dm_posts         _id, objectUri, authorUri, participants, participantsKey, content,
//	                 published, local
//	boosts           _id (= actorUri, newline, objectUri: one per actor and post), actorUri,
//	                 objectUri, activityUri, createdAt
//	followers        _id (ObjectId), follower, followed, state, activityId, createdAt, updatedAt
//	remote_instances _id (= host), host, consecutiveFailures, quarantineLevel,
//	                 quarantinedUntil, lastSuccessAt, lastFailureAt, lastError, version
//	jobs             _id, dedupeKey, activityId, inbox, host, senderId, keyId, payload (binary),
//	                 state, attempts, runAt, leaseOwner, leaseToken, leaseUntil, lastError,
//	                 createdAt, finishedAt, bodyId, slot ("host#k" while leased by LeaseBatch),
//	                 settleMarks (the markers of the last 8 settlements) [legacyDeliveryId on jobs
//	                 migration 004 moved]
//	bodies           _id (domain.BodyOf), body, gen, touchedAt
//	tombstones       _id (the deleted object's or actor's URI), actorUri, deletedAt
//	domain_blocks    _id (the normalized domain), severity, reason, publicComment,
//	                 rejectMedia, rejectReports, obfuscate, createdAt
//	domain_allows    _id (the normalized domain), createdAt
//	reports          _id, activityId (the Flag's id; unique), reporterUri, targets, objects,
//	                 comment, createdAt, resolvedAt and resolution (absent while open)
//	job_signals      _id "enqueued", n: bumped by Enqueue, RetryDead and ResumeHost; what
//	                 other processes' Wakers watch (change stream) or poll
//	deliveries       legacy, read only by migration 004: _id, activity (embedded document,
//	                 or a JSON string, with an "id" and an "actor"), inbox, actor (id of the
//	                 local avatar or group that signs), attempts, created, state
//	                 ("pending", …); 004 sets state "abandoned" with movedAt and dedupeKey,
//	                 or "unmovable" with moveError
//
// The migration bookkeeping of golang-migrate lives in schema_migrations and
// its advisory lock in migrate_advisory_lock.
package mongo
