// Package lockedbuf is a buffer one goroutine writes while another reads
// it, for the tests that read a venue's log, or a command's output, while
// it is being written (server, market data), so that each does not write
// its own.
//
// Contract: Buffer's Write and String may be called from any goroutine;
// String returns everything written so far. The zero Buffer is empty and
// ready to use; a Buffer must not be copied after first use.
// Limits: none of its own; it holds all that is written, for the length of
// a test.
package lockedbuf
