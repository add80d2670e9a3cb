// This directory is the Node harness of test/clients (package.json,
// package-lock.json, node_modules after `npm ci`). The go.mod makes it a
// module of its own, so the Go tools of Herald's module never walk
// node_modules.
module github.com/heraldfed/herald/test/clients/harness

go 1.26.0
