package fixtests

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// Failure describes the step at which a script failed and why.
type Failure struct {
	// Line is the script line of the failing step (0 when the failure is
	// not tied to a step, such as a parse error without a line or the
	// probe connection).
	Line int
	// Step names the step, e.g. "E on connection 1".
	Step string
	// Reason says what went wrong, in words.
	Reason string
	// Expected is the message the step expected (BodyLength and CheckSum
	// filled, placeholders expanded); nil when the step expected none.
	Expected []byte
	// Received is what arrived instead: a whole message, or the bytes
	// received before the failure; nil when nothing arrived.
	Received []byte
	// Differences lists the differing fields when a message arrived but
	// did not match.
	Differences []Difference
}

// ScriptResult is the outcome of one script.
type ScriptResult struct {
	Name    string
	Path    string
	Passed  bool
	Elapsed time.Duration
	// Failure is set when Passed is false.
	Failure *Failure
}

// connection is one numbered TCP connection of a running script.
type connection struct {
	conn   net.Conn
	reader *messageReader
}

// scriptRun holds the connections of one running script. conns is guarded
// by mu because a cancelled context closes them from another goroutine.
type scriptRun struct {
	opts  *Options
	mu    sync.Mutex
	conns [connectionsMax + 1]*connection
}

// runScript runs one parsed script: the probe connection, then each step in
// order, stopping at the first failure. Every connection the script opened
// is closed when it returns.
func runScript(ctx context.Context, s *Script, o *Options) ScriptResult {
	started := time.Now()
	r := &scriptRun{opts: o}
	stop := context.AfterFunc(ctx, r.closeAll)
	defer func() {
		stop()
		r.closeAll()
	}()
	failure := r.probe(ctx)
	if failure == nil && len(s.Steps) == 0 {
		failure = &Failure{Reason: "the script has no steps, so it proves nothing"}
	}
	for i := 0; failure == nil && i < len(s.Steps); i++ {
		failure = r.step(ctx, &s.Steps[i])
		if failure != nil {
			failure.Line = s.Steps[i].Line
			if ctx.Err() != nil {
				failure.Reason = fmt.Sprintf("interrupted (%v); %s", context.Cause(ctx), failure.Reason)
			}
		}
	}
	return ScriptResult{
		Name:    s.Name,
		Path:    s.Path,
		Passed:  failure == nil,
		Elapsed: time.Since(started),
		Failure: failure,
	}
}

// probe opens and closes an empty connection, as the reference runner does
// before each script; the acceptor must carry on as if nothing happened.
func (r *scriptRun) probe(ctx context.Context) *Failure {
	d := net.Dialer{Timeout: r.opts.Deadline}
	c, err := d.DialContext(ctx, "tcp", r.opts.Addr)
	if err != nil {
		return &Failure{Step: "probe connection", Reason: fmt.Sprintf("cannot connect to %s: %v", r.opts.Addr, err)}
	}
	_ = c.Close()
	return nil
}

func (r *scriptRun) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range r.conns {
		if c != nil {
			_ = c.conn.Close()
			r.conns[i] = nil
		}
	}
}

func (r *scriptRun) get(n int) *connection {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns[n]
}

func (r *scriptRun) set(n int, c *connection) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conns[n] = c
}

// drop closes connection n and forgets it.
func (r *scriptRun) drop(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.conns[n]; c != nil {
		_ = c.conn.Close()
		r.conns[n] = nil
	}
}

// step runs one step and returns nil when it succeeded.
func (r *scriptRun) step(ctx context.Context, st *Step) *Failure {
	name := fmt.Sprintf("%s on connection %d", st.Kind, st.Conn)
	if st.Kind == StepSetSession {
		name = st.Kind.String()
	}
	fail := func(format string, args ...any) *Failure {
		return &Failure{Step: name, Reason: fmt.Sprintf(format, args...)}
	}
	if ctx.Err() != nil {
		return fail("not started")
	}
	c := r.get(st.Conn)
	switch st.Kind {
	case StepConnect:
		if c != nil {
			return fail("connection %d is already open", st.Conn)
		}
		return r.connect(ctx, st.Conn, fail)
	case StepSetSession:
		return r.setSession(ctx, st.SeqNums, fail)
	}
	if c == nil {
		return fail("connection %d is not open", st.Conn)
	}
	switch st.Kind {
	case StepDisconnect:
		r.drop(st.Conn)
		return nil
	case StepExpectDisconnect:
		f := r.expectDisconnect(c)
		r.drop(st.Conn)
		if f != nil {
			f.Step = name
			return f
		}
		settle(ctx, r.opts.PauseAfterDisconnect)
		return nil
	case StepSend:
		return r.send(c, st.Message, fail)
	case StepExpect:
		f := r.expect(c, st.Message)
		if f != nil {
			f.Step = name
		}
		return f
	}
	return fail("unknown step kind %d", st.Kind)
}

func (r *scriptRun) connect(ctx context.Context, n int, fail func(string, ...any) *Failure) *Failure {
	d := net.Dialer{Timeout: r.opts.Deadline}
	nc, err := d.DialContext(ctx, "tcp", r.opts.Addr)
	if err != nil {
		return fail("cannot connect to %s: %v", r.opts.Addr, err)
	}
	r.set(n, &connection{conn: nc, reader: newMessageReader(nc)})
	return nil
}

func (r *scriptRun) setSession(ctx context.Context, seq SessionSeqNums, fail func(string, ...any) *Failure) *Failure {
	if r.opts.Setter == nil {
		return fail("the script sets sequence numbers (%v) but no SessionSetter is configured", seq)
	}
	sctx, cancel := context.WithTimeout(ctx, r.opts.Deadline)
	defer cancel()
	if err := r.opts.Setter.SetNextSeqNums(sctx, seq); err != nil {
		return fail("setting %v: %v", seq, err)
	}
	return nil
}

func (r *scriptRun) send(c *connection, raw []byte, fail func(string, ...any) *Failure) *Failure {
	msg, err := prepareSend(raw, time.Now())
	if err != nil {
		return fail("%v", err)
	}
	if err := c.conn.SetWriteDeadline(time.Now().Add(r.opts.Deadline)); err != nil {
		return fail("%v", err)
	}
	if _, err := c.conn.Write(msg); err != nil {
		return fail("sending %s failed: %v", showMessage(msg), err)
	}
	return nil
}

// expect reads the next message and compares it with the expectation.
func (r *scriptRun) expect(c *connection, raw []byte) *Failure {
	want, err := prepareExpected(raw, time.Now())
	if err != nil {
		return &Failure{Reason: err.Error()}
	}
	got, err := c.reader.next(time.Now().Add(r.opts.Deadline))
	if err != nil {
		f := &Failure{Expected: want, Received: copyOrNil(c.reader.buffered())}
		switch {
		case errors.Is(err, errReadTimeout):
			f.Reason = fmt.Sprintf("no complete message within the %v deadline", r.opts.Deadline)
		case errors.Is(err, errPeerClosed):
			f.Reason = "the acceptor closed the connection instead of sending the expected message"
		case errors.Is(err, fixwire.ErrTooLarge):
			f.Reason = fmt.Sprintf("received bytes are %v (%d bytes)", err, MessageBytesMax)
		case errors.Is(err, fixwire.ErrFrame):
			f.Reason = "received bytes are " + err.Error()
		default:
			f.Reason = fmt.Sprintf("reading failed: %v", err)
		}
		return f
	}
	if err := verifyChecksum(got); err != nil {
		return &Failure{Reason: err.Error(), Expected: want, Received: got}
	}
	if r.opts.Check != nil {
		if err := r.opts.Check(got); err != nil {
			return &Failure{Reason: "received message refused by the check: " + err.Error(), Expected: want, Received: got}
		}
	}
	if diffs := compareMessages(want, got); diffs != nil {
		return &Failure{Reason: "received message differs", Expected: want, Received: got, Differences: diffs}
	}
	return nil
}

// expectDisconnect waits up to DisconnectTimeout for the acceptor to close
// the connection and fails if any byte arrives first (including bytes
// already received and not yet consumed by an expectation).
func (r *scriptRun) expectDisconnect(c *connection) *Failure {
	if b := c.reader.buffered(); len(b) > 0 {
		return &Failure{Reason: "the acceptor sent bytes that no expectation consumed before it was to disconnect", Received: copyOrNil(b)}
	}
	err := c.reader.fill(time.Now().Add(r.opts.DisconnectTimeout))
	switch {
	case err == nil:
		return &Failure{Reason: "the acceptor sent bytes instead of disconnecting", Received: copyOrNil(c.reader.buffered())}
	case errors.Is(err, errPeerClosed):
		return nil
	case errors.Is(err, errReadTimeout):
		return &Failure{Reason: fmt.Sprintf("the acceptor did not close the connection within %v", r.opts.DisconnectTimeout)}
	}
	return &Failure{Reason: fmt.Sprintf("reading failed: %v", err)}
}

// isPeerClosed reports whether a read error means the other side closed
// or reset the connection.
func isPeerClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func copyOrNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}
