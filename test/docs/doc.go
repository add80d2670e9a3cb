// Package docs checks that the repository's reference pages say what the
// code does and stay reference: the numbers of docs/rules.md against the
// constants that implement them, every "SPEC §N" of the code against a
// section of that page, table cells of docs/*.md at most 600 characters,
// docs/architecture.md under 2,500 words, README's first screen with its
// two commands, and no file sending its reader outside the repository
// (the project machines' shared directory beside the checkout).
package docs
