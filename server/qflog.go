package server

import (
	"fmt"
	"log/slog"
	"regexp"

	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/gateway"
)

// secretFields matches Password (554) and NewPassword (925) with their values,
// so that no log line ever carries a password.
var secretFields = regexp.MustCompile(`(^|[\x01|])(554|925)=[^\x01|]*`)

// Scrub removes password fields from a FIX message or a text about one.
func Scrub(s string) string {
	return secretFields.ReplaceAllString(s, "${1}${2}=***")
}

// slogLogFactory sends QuickFIX/Go's session events to slog. Message traffic
// is not logged (it is in the journal and the message store), which keeps
// logging off the hot path; events are scrubbed of passwords. A session's
// Log tells arrivals, when set, of each message as QuickFIX/Go reads it
// (gateway.ArrivalCounter: OnIncoming is the one call QuickFIX/Go makes for
// every message it reads, answered by the application or not).
type slogLogFactory struct {
	log      *slog.Logger
	arrivals gateway.ArrivalCounter
}

type slogLog struct {
	log      *slog.Logger
	session  string
	id       quickfix.SessionID
	arrivals gateway.ArrivalCounter
	// arrived is arrivals' count of the session, looked up at its first
	// message (the session's goroutine alone calls OnIncoming).
	arrived func()
}

func (f slogLogFactory) Create() (quickfix.Log, error) { return &slogLog{log: f.log}, nil }

func (f slogLogFactory) CreateSessionLog(id quickfix.SessionID) (quickfix.Log, error) {
	return &slogLog{log: f.log, session: id.String(), id: id, arrivals: f.arrivals}, nil
}

func (l *slogLog) OnIncoming([]byte) {
	if l.arrived == nil {
		if l.arrivals == nil {
			return
		}
		if l.arrived = l.arrivals.Arrival(l.id); l.arrived == nil {
			return
		}
	}
	l.arrived()
}
func (l *slogLog) OnOutgoing([]byte) {}
func (l *slogLog) OnEvent(s string) {
	l.log.Debug("fix session event", "session", l.session, "event", Scrub(s))
}
func (l *slogLog) OnEventf(format string, a ...interface{}) {
	l.OnEvent(fmt.Sprintf(format, a...))
}
