// Package walkthrough runs the walkthroughs of README.md and docs/ exactly
// as a newcomer would: it reads their shell blocks from the markdown, starts
// the servers they start (```sh server blocks, each in a process group of
// its own, as in its own terminal) and runs the other blocks' commands one
// by one in one bash session, so a doc and its test cannot drift apart.
//
// A comment line right under a command is the output the doc promises:
// the command's output must match it, … standing for any text. A command
// with a promised output is asked again, for up to a minute, until it
// matches (the doc's "within a moment"); one without must exit 0.
package walkthrough
