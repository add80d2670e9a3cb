// Package ferret runs adapters/mongo against embedded FerretDB v1 (SQLite
// backend, in a temporary directory, on 127.0.0.1), for machines with no
// MongoDB server and no Docker engine. It is a module of its own so the
// production binary never depends on FerretDB.
//
// FerretDB speaks the wire protocol and has unique and compound unique
// indexes with E11000, which is what these tests use. It cannot prove
// atomicity (findAndModify is not atomic under concurrency there), and it
// has no TTL indexes, no $merge, no $group $first and no pipeline updates;
// every contract or migration case that needs one of those is skipped by
// name with the reason, and stays to be verified against real MongoDB
// (MONGODB_URI, or a Docker engine for testcontainers) by adapters/mongo's
// own tests.
package ferret
