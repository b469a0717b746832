// Package durable replaces the venue's small state files (the schedule's
// progress, the operator's phases, the disabled sessions, the terms
// record, a cluster node's identity and voters) so that a crash at any
// point leaves either the old content or the new, never a mix, and a write
// that fails leaves nothing of its own behind.
//
// Limits: the whole content is written at once (small files only); the
// temporary file is the path with ".tmp" appended, so two writers of one
// path must not run at once (each of these files has one owner).
package durable
