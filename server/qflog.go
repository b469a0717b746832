package server

import (
	"fmt"
	"log/slog"
	"regexp"

	"github.com/quickfixgo/quickfix"
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
// logging off the hot path; events are scrubbed of passwords.
type slogLogFactory struct{ log *slog.Logger }

type slogLog struct {
	log     *slog.Logger
	session string
}

func (f slogLogFactory) Create() (quickfix.Log, error) { return slogLog{log: f.log}, nil }

func (f slogLogFactory) CreateSessionLog(id quickfix.SessionID) (quickfix.Log, error) {
	return slogLog{log: f.log, session: id.String()}, nil
}

func (l slogLog) OnIncoming([]byte) {}
func (l slogLog) OnOutgoing([]byte) {}
func (l slogLog) OnEvent(s string) {
	l.log.Debug("fix session event", "session", l.session, "event", Scrub(s))
}
func (l slogLog) OnEventf(format string, a ...interface{}) {
	l.OnEvent(fmt.Sprintf(format, a...))
}
