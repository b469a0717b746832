// Package fixstore is a QuickFIX/Go MessageStore that keeps FIX sequence numbers
// and sent messages across a crash without one fsync per message.
//
// Each session has one append-only file of CRC-framed records:
//
//	offset  size  field
//	0       4     length of kind+a+b+payload (little endian uint32)
//	4       4     CRC32C (Castagnoli) of kind+a+b+payload
//	8       1     kind: 1 message (a = MsgSeqNum), 2 sequence numbers
//	              (a = next sender, b = next target), 3 reset (a = creation time, Unix ns)
//	9       8     a
//	17      8     b
//	25      n     payload (the FIX message bytes for kind 1)
//
// Every change is written with one write(2) as it happens. Data written this way
// is in the kernel's page cache the moment write returns, so it survives the
// process being killed (kill -9, a panic, an OOM kill): that is the crash this
// store is built for. Surviving a power cut needs the data on disk; instead of an
// fsync per message, a Syncer fdatasyncs every file written since its last pass,
// once per interval (group commit: one fsync covers every message of every
// session in that interval). The window of loss on a power cut is that interval.
// Sent messages are also recoverable from the journal: every ExecutionReport is
// derived from a journaled command.
//
// On open, the file is scanned; a torn or corrupt tail (the last write of a
// killed process) is cut at the last good record. The newest sequence-number
// record and every later message rebuild the state.
//
// Limits: the store indexes the last MessagesMax sent messages per session for
// resend; a ResendRequest for anything older is answered by QuickFIX/Go with a
// gap fill (it fills every sequence number the store does not return). A file
// is compacted (rewritten with only the indexed window) when it grows past
// FileBytesMax.
package fixstore
