package feedclient

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// bytesRecoverer is a recovery service whose every answer is the same
// TCP byte stream: its frames are handed to the client as they come, as
// far as they are whole, whatever they hold.
type bytesRecoverer struct{ stream []byte }

func (r *bytesRecoverer) frames(fn func(pkt []byte) error) error {
	br := bufio.NewReader(bytes.NewReader(r.stream))
	buf := make([]byte, packet.FrameBytesMax)
	for {
		pkt, err := packet.ReadFrame(br, buf)
		if err != nil {
			return err // io.EOF at the end of the stream: the service closed
		}
		if err := fn(pkt); err != nil {
			return err
		}
	}
}

func (r *bytesRecoverer) Retransmit(_ uint64, _ uint32, fn func(pkt []byte) error) (mdsbe.RetransmitRejectReason, error) {
	return 0, r.frames(fn)
}

func (r *bytesRecoverer) Snapshot(_ uint32, fn func(pkt []byte) error) (mdsbe.SnapshotRejectReason, error) {
	err := r.frames(fn)
	if errors.Is(err, io.EOF) {
		err = nil // the client decides whether the snapshot was whole
	}
	return 0, err
}

func (r *bytesRecoverer) Close() error { return nil }

// framedSnapshot is the script feed's snapshot as the TCP service sends it
// in answer to request 1.
func framedSnapshot(tb testing.TB, f *scriptFeed) []byte {
	tb.Helper()
	var out []byte
	_, err := f.Snapshot(0, func(pkt []byte) error {
		var rd packet.Reader
		if err := rd.Reset(pkt); err != nil {
			return err
		}
		for msg, ok := rd.Next(); ok; msg, ok = rd.Next() {
			switch tid, _ := mdsbe.TemplateIDOf(msg, 0); tid {
			case mdsbe.SnapshotStartTemplateID:
				var m mdsbe.SnapshotStart
				if m.WrapDecode(msg, 0) == nil {
					m.SetRequestID(1)
				}
			case mdsbe.SnapshotEndTemplateID:
				var m mdsbe.SnapshotEnd
				if m.WrapDecode(msg, 0) == nil {
					m.SetRequestID(1)
				}
			}
		}
		out = append(out, frame(tb, pkt)...)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// frame is pkt as a TCP frame.
func frame(tb testing.TB, pkt []byte) []byte {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := packet.WriteFrame(w, pkt); err != nil {
		tb.Fatal(err)
	}
	_ = w.Flush()
	return b.Bytes()
}

// FuzzRecoveryAnswers: whatever packets a recovery service answers with
// (a feed client may be pointed at any address), as a snapshot or as a
// retransmission, the client never panics and its books stay well formed. The seeds are the script feed's snapshot as the
// service frames it, and cut or changed forms of it.
func FuzzRecoveryAnswers(f *testing.F) {
	seedFeed := newScriptFeed(f, 1)
	for range 4 {
		seedFeed.step()
	}
	snap := framedSnapshot(f, seedFeed)
	f.Add(snap)
	var sequenced []byte // the feed's packets, as a retransmission
	for _, p := range seedFeed.packets {
		sequenced = append(sequenced, frame(f, p)...)
	}
	f.Add(sequenced)
	f.Add(snap[:len(snap)/2])
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, answer []byte) {
		feed := newScriptFeed(t, 1)
		clock := &fakeClock{now: time.Unix(1, 0)}
		c, err := New(Config{Recoverer: &bytesRecoverer{stream: answer}, Clock: clock.Now, ReorderPacketsMax: 8, LevelsMax: 64, InstrumentsMax: 8})
		if err != nil {
			t.Fatal(err)
		}
		for range 6 {
			for _, p := range feed.step() {
				c.HandlePacket(p)
			}
		}
		clock.advance(time.Minute)
		c.Poll()
		c.HandlePacket(feed.heartbeat())
		c.Books(func(b *Book) { checkWellFormed(t, b, 64) })
	})
}
