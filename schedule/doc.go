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
// Times are the zone's wall clock: each transition runs at the first
// instant at which the local clock shows its offset or later, in every
// zone. On the day clocks go forward, a time inside the skipped hour
// (02:30 when 02:00 is 03:00) runs at the first instant after it (03:00),
// and of several times inside it each comes a nanosecond after the one
// before, so that every day keeps the configured order of its
// transitions; on the day clocks go back, a time inside the repeated hour
// (02:30 when 03:00 is 02:00) runs at its first occurrence, once. A day
// whose midnight is skipped (America/Santiago) starts at the first instant
// after it. time.Date leaves these choices open and makes them differently
// east and west of UTC, so the plan does not use it for a zone's times
// (Plan.wall).
//
// Limits: days are scanned at most daysScannedMax ahead or back; an
// offset of 24h or more is refused by config validation.
package schedule
