// Package regularfile refuses, naming it, a file the venue reads that is
// not a regular file (a named pipe, a directory, a socket, a device), for
// the packages that read files of the data directory (fixstore, server,
// journal), so that each does not write its own. Reading a named pipe
// waits for a writer for ever: the start and the journal tools hung on one
// without a word (journal/doc.go, "Segment files").
//
// Contract: Check is nil for a regular file and otherwise an error
// "PATH is KIND, not a regular file: move it out of DIR"; Stat is os.Stat
// followed by Check (it follows a symbolic link); Kind names a file mode
// for such an error.
// Limits: it reads nothing but the file's mode; a file that turns into
// something else after the check is not caught.
package regularfile
