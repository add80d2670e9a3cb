// Package walkthrough runs the walkthroughs of README.md and docs/ exactly
// as a newcomer would: it reads their shell blocks from the markdown, starts
// the servers they start (```sh server blocks, each in a process group of
// its own, as in its own terminal) and runs the other blocks' commands one
// by one in one bash session, so a doc and its test cannot drift apart.
//
// A comment line right under a command is the output the doc promises:
// the command's output must match it, … standing for any text, and the
// command must exit 0. A promise that ends "(ask again until it does)" may
// take a moment (a delivery to another server): the command is run again,
// for up to a minute, until it holds.
package walkthrough
