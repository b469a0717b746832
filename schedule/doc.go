// Package schedule computes the venue's trading day from the [schedule]
// configuration: for each group of instruments a pre-open (the opening
// call), an open, an optional closing call and a close, and for the venue
// an end of day, as offsets from the start of the
// day in the venue's IANA time zone. Days that are not trading days
// (weekends by default) and holidays have no transitions. A compressed day
// ("day" shorter than 24h) repeats back to back from the Unix epoch, for
// tests and demonstrations.
//
// A Plan is a pure function of the configuration and the times it is asked
// about: it reads no clock and keeps no state. The ops package turns each
// transition into journaled commands at its time, and after a restart (or
// when a clock stepped ahead finds several due at once) asks
// Between(last applied, now) for the transitions it missed, which it runs
// once, in order (bounded: only the last ones when a venue was down for
// long, see Between), after ending the day of the last one run when the
// configuration no longer trades it (Unended: a holiday added after the
// day began). Times changed in the configuration may give a transition of
// a day already begun that its group went past (pre_open moved later after
// the open ran): ops passes it over (PhaseOrder orders a group's day), so
// the new times apply from the group's next phase, or the next day.
//
// Limits: days are scanned at most daysScannedMax ahead or back; an
// offset of 24h or more is refused by config validation; on a day a
// clock change skips, an offset inside the skipped hour moves with the
// clock (time.Date's normalisation: 02:30 is 03:30), and a later offset it
// passes (03:15) comes a nanosecond after it, so that every day keeps the
// configured order of its transitions.
package schedule
