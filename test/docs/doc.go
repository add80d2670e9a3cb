// Package docs checks that the repository's reference pages say what the
// code does: the numbers of docs/rules.md against the constants that
// implement them, every "SPEC §N" of the code against a section of that
// page, and that no page sends its reader outside the repository for a
// rule.
package docs
