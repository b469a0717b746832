// Package regularfile refuses, naming it, a file the venue reads that is
// not a regular file (a named pipe, a directory, a socket, a device), for
// the packages that read files of the data directory (fixstore, server,
// journal) and for the files the configuration names (the configuration
// itself, the cluster secret, TLS and credentials files: config, server), so
// that each does not write its own. Reading a named pipe
// waits for a writer for ever: the start and the journal tools hung on one
// without a word (journal/doc.go, "Segment files").
//
// Contract: Check is nil for a regular file and otherwise an error
// "PATH is KIND, not a regular file: move it out of DIR"; Stat is os.Stat
// followed by Check (it follows a symbolic link); Kind names a file mode
// for such an error. StatMax refuses what is not a regular file
// (*NotRegularError) or is larger than a bound (*TooLargeError); ReadMax
// reads such a file whole, at most that bound, the check made before it
// opens the file.
// Limits: Check and StatMax read nothing but the file's mode and size; a
// file that turns into something else after the check is not caught
// (ReadMax still reads at most its bound).
package regularfile
