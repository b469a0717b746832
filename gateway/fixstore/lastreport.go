package fixstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/internal/fixwire"
	"github.com/fixvenue/fixvenue/internal/regularfile"
)

// LastReport is what a session's store holds of the venue's answers, read
// before the venue starts, so that answers a crash lost can be told from
// those the session was sent (docs/ARCHITECTURE.md, "Answers lost at a
// crash"). A session's answers reach its store in the order of the events
// they answer, so every report of an earlier event is in the store too.
type LastReport struct {
	// ExecID is the highest matcher ExecID (ExecID 17 of digits only; the
	// gateway's own start with a letter) of an ExecutionReport stored since
	// the store's last reset; 0 when there is none.
	ExecID uint64
	// ResetNs is when the store was created or last reset (a logon with
	// ResetSeqNumFlag): a session whose store holds no report was sent
	// nothing of the events after it.
	ResetNs int64
	// Exists is false when the session has no store file.
	Exists bool
}

// ReadLastReport reads the store file of session id in dir without opening
// it for writing (the venue opens it later).
func ReadLastReport(dir string, id quickfix.SessionID) (LastReport, error) {
	var r LastReport
	path := filepath.Join(dir, fileName(id))
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err == nil {
		err = notRegular(path, st)
	}
	if err != nil {
		return r, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	for try := 1; ; try++ {
		var last LastReport
		off, err := walkRecords(data, func(kind byte, a, b uint64, _ int64, _ uint32, payload []byte) error {
			last.record(kind, a, b, payload)
			return nil
		})
		last.Exists = true
		if err != nil {
			return last, err
		}
		// A damaged record with good ones after it hides the reports
		// behind it, and the start refuses the store when it opens it:
		// say so here, where `journal verify` reads it, rather than an
		// ExecID that stops short.
		tail := data[off:]
		if bytes.IndexFunc(tail, func(r rune) bool { return r != 0 }) < 0 {
			return last, nil
		}
		err = damaged(path, data, off)
		if err == nil {
			return last, nil
		}
		// Read beside a running venue, the file may show a record the
		// venue is writing before the one it wrote just before it (the
		// pages read in turn): bytes that change when read again were a
		// write in progress, not damage.
		if try == damageRereads {
			return last, err
		}
		time.Sleep(damageSettle)
		again, rerr := os.ReadFile(path)
		if rerr != nil {
			return last, rerr
		}
		if len(again) >= len(data) && bytes.Equal(again[off:len(data)], tail) {
			return last, err
		}
		data = again
	}
}

// damageRereads and damageSettle bound how often, and after how long,
// ReadLastReport reads again a store that looks damaged, to tell damage
// from a write in progress.
const (
	damageRereads = 5
	damageSettle  = 100 * time.Millisecond
)

// record takes one record into r: a reset record starts again from the
// ExecID it carries (0 for a reset, the last one for a compaction's).
func (r *LastReport) record(kind byte, a, b uint64, payload []byte) {
	switch kind {
	case kindReset:
		r.ExecID, r.ResetNs = b, int64(a)
	case kindMessage:
		if id, ok := matcherExecID(payload); ok && id > r.ExecID {
			r.ExecID = id
		}
	}
}

// matcherExecID is the ExecID (17) of an ExecutionReport (35=8) when it is
// the matcher's (digits only). It looks for the fields' bytes rather than
// walking every field: it runs on every message saved.
func matcherExecID(msg []byte) (uint64, bool) {
	i := bytes.Index(msg, msgTypeMark)
	if i < 0 || i > msgTypeMarkWithin || len(msg) < i+len(msgTypeMark)+2 || msg[i+len(msgTypeMark)] != '8' || msg[i+len(msgTypeMark)+1] != 1 {
		return 0, false
	}
	j := bytes.Index(msg[i:], execIDMark)
	if j < 0 {
		return 0, false
	}
	v := msg[i+j+len(execIDMark):]
	end := bytes.IndexByte(v, 1)
	if end < 0 {
		return 0, false
	}
	return fixwire.ParseUint(v[:end], 19)
}

var (
	msgTypeMark = []byte("\x0135=")
	execIDMark  = []byte("\x0117=")
)

// msgTypeMarkWithin is where MsgType, the third field, starts at the latest
// (after BeginString and a BodyLength of up to 8 digits).
const msgTypeMarkWithin = 32

// notRegular refuses a store file that is not a regular file (a named pipe,
// a directory): reading a named pipe waits for a writer for ever, so the
// venue's start hung without a word.
func notRegular(path string, st fs.FileInfo) error {
	if err := regularfile.Check(path, st); err != nil {
		return fmt.Errorf("fixstore: %w", err)
	}
	return nil
}
