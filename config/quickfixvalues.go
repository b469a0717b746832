package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// QuickFIX/Go reads a session's settings only when the venue builds its
// acceptor, after the data directory is locked and the journal replayed: a
// value it cannot parse stopped the start there, with QuickFIX/Go's words
// and no key ("quickfix acceptor: "maybe" is invalid for ResetOnLogon").
// The values are checked here instead, as QuickFIX/Go v0.9 parses them for
// an acceptor (session_factory.go), so that Load names the key.

// quickFIXBoolKeys are read as Y or N.
var quickFIXBoolKeys = map[string]bool{
	"ValidateFieldsOutOfOrder": true, "ValidateFieldsHaveValues": true, "RejectInvalidMessage": true,
	"AllowUnknownMessageFields": true, "CheckUserDefinedFields": true, "ResetOnLogon": true,
	"RefreshOnLogon": true, "ResetOnLogout": true, "ResetOnDisconnect": true,
	"EnableLastMsgSeqNumProcessed": true, "EnableNextExpectedMsgSeqNum": true, "CheckLatency": true,
	"PersistMessages": true, "HeartBtIntOverride": true,
}

// quickFIXIntMin gives the settings read as whole numbers, with the least
// QuickFIX/Go takes.
var quickFIXIntMin = map[string]int{
	"MaxLatency": 1, "InChanCapacity": 0, "ResendRequestChunkSize": 0, "HeartBtInt": 1,
}

// quickFIXWeekdays are the day names QuickFIX/Go takes (its dayLookup).
var quickFIXWeekdays = map[string]bool{
	"Sunday": true, "Monday": true, "Tuesday": true, "Wednesday": true, "Thursday": true, "Friday": true, "Saturday": true,
	"Sun": true, "Mon": true, "Tue": true, "Wed": true, "Thu": true, "Fri": true, "Sat": true,
}

// quickFIXValueError says why v cannot be QuickFIX/Go setting k, or "".
func quickFIXValueError(k, v string) string {
	switch {
	case quickFIXBoolKeys[k]:
		if v != "Y" && v != "y" && v != "N" && v != "n" {
			return fmt.Sprintf("%q is not Y or N", v)
		}
	case k == "TimeStampPrecision":
		if v != "SECONDS" && v != "MILLIS" && v != "MICROS" && v != "NANOS" {
			return fmt.Sprintf("%q is not SECONDS, MILLIS, MICROS or NANOS", v)
		}
	case k == "StartTime" || k == "EndTime" || k == "ResetSeqTime":
		if _, err := time.Parse(time.TimeOnly, v); err != nil {
			return fmt.Sprintf("%q is not a time of day HH:MM:SS", v)
		}
	case k == "TimeZone":
		if _, err := time.LoadLocation(v); err != nil {
			return fmt.Sprintf("%q is not a known IANA time zone", v)
		}
	case k == "StartDay" || k == "EndDay":
		if !quickFIXWeekdays[v] {
			return fmt.Sprintf("%q is not a day of the week (Mon or Monday, …)", v)
		}
	case k == "Weekdays":
		for _, d := range strings.Split(v, ",") {
			if !quickFIXWeekdays[d] {
				return fmt.Sprintf("%q is not a comma-separated list of days of the week (Mon,Tue or Monday,Tuesday, …)", v)
			}
		}
	default:
		if least, ok := quickFIXIntMin[k]; ok {
			if n, err := strconv.Atoi(v); err != nil || n < least {
				return fmt.Sprintf("%q is not a whole number of at least %d", v, least)
			}
		}
	}
	return ""
}

// quickFIXValueErrors checks the values of one [quickfix] table (key names
// it), in the order of its settings' names.
func quickFIXValueErrors(key string, q QuickFIXSettings) []error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if why := quickFIXValueError(k, q[k]); why != "" {
			errs = append(errs, fmt.Errorf("%s.quickfix.%s: %s", key, k, why))
		}
	}
	return errs
}

// quickFIXPairErrors checks settings as QuickFIX/Go combines them (a
// session's defaults overlaid by its own): those that go together. A
// session is checked only when its own table (own) sets one of a pair, so
// that a fault of session_defaults is told once, under its own key (all
// checks every pair: session_defaults itself).
func quickFIXPairErrors(key string, q map[string]string, own QuickFIXSettings, all bool) []error {
	var errs []error
	has := func(k string) bool { _, ok := q[k]; return ok }
	concerns := func(keys ...string) bool {
		if all {
			return true
		}
		for _, k := range keys {
			if _, ok := own[k]; ok {
				return true
			}
		}
		return false
	}
	for _, p := range [][2]string{{"StartTime", "EndTime"}, {"StartDay", "EndDay"}} {
		if has(p[0]) != has(p[1]) && concerns(p[0], p[1]) {
			errs = append(errs, fmt.Errorf("%s.quickfix: %s and %s are given together or not at all", key, p[0], p[1]))
		}
	}
	if has("Weekdays") && (has("StartDay") || has("EndDay")) && concerns("Weekdays", "StartDay", "EndDay") {
		errs = append(errs, fmt.Errorf("%s.quickfix: Weekdays cannot be given with StartDay and EndDay", key))
	}
	if v := q["HeartBtIntOverride"]; (v == "Y" || v == "y") && !has("HeartBtInt") && concerns("HeartBtIntOverride", "HeartBtInt") {
		errs = append(errs, fmt.Errorf("%s.quickfix: HeartBtIntOverride = \"Y\" needs HeartBtInt", key))
	}
	return errs
}
