package fixtests

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// MaxScriptBytes bounds one script file; the largest QuickFIX script is
// about 5 KB.
const MaxScriptBytes = 1 << 20

// connectionsMax is the number of connections a script can name: one digit,
// 1 to 9.
const connectionsMax = 9

// StepKind is what one script line asks for.
type StepKind uint8

// The step kinds, one per line form of the format.
const (
	StepConnect          StepKind = iota + 1 // iCONNECT
	StepDisconnect                           // iDISCONNECT
	StepExpectDisconnect                     // eDISCONNECT
	StepSend                                 // I<message>
	StepExpect                               // E<message>
	StepSetSession                           // iSET_SESSION
)

func (k StepKind) String() string {
	switch k {
	case StepConnect:
		return "iCONNECT"
	case StepDisconnect:
		return "iDISCONNECT"
	case StepExpectDisconnect:
		return "eDISCONNECT"
	case StepSend:
		return "I"
	case StepExpect:
		return "E"
	case StepSetSession:
		return "iSET_SESSION"
	}
	return "unknown step"
}

// Step is one action of a script.
type Step struct {
	// Line is the 1-based line number in the file.
	Line int
	Kind StepKind
	// Conn is the connection number, 1 to 9 (1 when the line names none).
	Conn int
	// Message is the raw message of an I or E line, placeholders not yet
	// expanded, BodyLength and CheckSum not yet filled. It aliases the
	// script's bytes.
	Message []byte
	// SeqNums is the request of an iSET_SESSION line.
	SeqNums SessionSeqNums
}

// Script is a parsed .def file.
type Script struct {
	// Name identifies the script in reports and filters: the parent
	// folder's name, '/', and the file name without ".def".
	Name string
	// Path is the file the script was read from ("" when parsed from memory).
	Path  string
	Steps []Step
}

// ParseScript parses a script in the .def format. data is read as bytes:
// lines end in LF or CRLF (the CR is dropped), fields are separated by real
// SOH bytes, and nothing else is rewritten. Empty lines, lines of blanks and
// lines starting with '#' are skipped. Any other line that is not one of the
// forms listed in the package documentation is an error naming its line.
func ParseScript(name string, data []byte) (*Script, error) {
	if len(data) > MaxScriptBytes {
		return nil, fmt.Errorf("script %s: %d bytes is over the %d byte limit", name, len(data), MaxScriptBytes)
	}
	s := &Script{Name: name}
	lineNo := 0
	for rest := data; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		lineNo++
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.Trim(line, " \t")) == 0 || line[0] == '#' {
			continue
		}
		step, err := parseStep(line)
		if err != nil {
			return nil, fmt.Errorf("script %s line %d: %w", name, lineNo, err)
		}
		step.Line = lineNo
		s.Steps = append(s.Steps, step)
	}
	return s, nil
}

// parseStep parses one non-comment line.
func parseStep(line []byte) (Step, error) {
	kind := line[0]
	rest := line[1:]
	step := Step{Conn: 1}
	if len(rest) >= 2 && isDigit(rest[0]) && rest[1] == ',' {
		step.Conn = int(rest[0] - '0')
		if step.Conn < 1 || step.Conn > connectionsMax {
			return Step{}, fmt.Errorf("connection number %d is outside 1..%d", step.Conn, connectionsMax)
		}
		rest = rest[2:]
	}
	hasConn := len(rest) != len(line)-1
	switch kind {
	case 'i':
		switch {
		case string(rest) == "CONNECT":
			step.Kind = StepConnect
		case string(rest) == "DISCONNECT":
			step.Kind = StepDisconnect
		case bytes.HasPrefix(rest, []byte("SET_SESSION ")):
			if hasConn {
				return Step{}, fmt.Errorf("SET_SESSION takes no connection number")
			}
			seq, err := parseSetSession(string(rest[len("SET_SESSION "):]))
			if err != nil {
				return Step{}, err
			}
			step.Kind = StepSetSession
			step.SeqNums = seq
		default:
			return Step{}, fmt.Errorf("unknown action i%s", showMessage(rest))
		}
	case 'e':
		if string(rest) != "DISCONNECT" {
			return Step{}, fmt.Errorf("unknown expectation e%s", showMessage(rest))
		}
		step.Kind = StepExpectDisconnect
	case 'I', 'E':
		if len(rest) == 0 {
			return Step{}, fmt.Errorf("%c line without a message", kind)
		}
		if err := checkPlaceholders(rest); err != nil {
			return Step{}, err
		}
		if kind == 'I' && bytes.Contains(rest, []byte(anyValue)) {
			return Step{}, fmt.Errorf("%s may only stand for a value in an E line", anyValue)
		}
		step.Kind = StepSend
		if kind == 'E' {
			step.Kind = StepExpect
		}
		step.Message = rest
	default:
		return Step{}, fmt.Errorf("line starts with %q, not one of i, e, I, E", kind)
	}
	return step, nil
}

// parseSetSession parses the arguments of iSET_SESSION:
// "BEGIN:SENDER->TARGET KEY=n ...", with keys NEXTSENDERSEQNUM and
// NEXTTARGETSEQNUM. The session is named from the acceptor's side.
func parseSetSession(args string) (SessionSeqNums, error) {
	words := strings.Fields(args)
	if len(words) < 2 {
		return SessionSeqNums{}, fmt.Errorf("SET_SESSION needs a session and at least one KEY=n")
	}
	begin, pair, ok := strings.Cut(words[0], ":")
	sender, target, ok2 := strings.Cut(pair, "->")
	if !ok || !ok2 || begin == "" || sender == "" || target == "" {
		return SessionSeqNums{}, fmt.Errorf("SET_SESSION session %q is not BEGINSTRING:SENDER->TARGET", words[0])
	}
	seq := SessionSeqNums{BeginString: begin, SenderCompID: sender, TargetCompID: target}
	for _, w := range words[1:] {
		key, val, _ := strings.Cut(w, "=")
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 {
			return SessionSeqNums{}, fmt.Errorf("SET_SESSION %s: %q is not a positive sequence number", key, val)
		}
		switch key {
		case "NEXTSENDERSEQNUM":
			seq.NextSenderSeqNum = n
		case "NEXTTARGETSEQNUM":
			seq.NextTargetSeqNum = n
		default:
			return SessionSeqNums{}, fmt.Errorf("SET_SESSION: unknown key %q", key)
		}
	}
	return seq, nil
}
