package packet

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

type capture struct {
	packets [][]byte
	seqs    []uint64
	counts  []int
}

func (c *capture) WritePacket(pkt []byte, seq uint64, count int) error {
	c.packets = append(c.packets, append([]byte(nil), pkt...))
	c.seqs = append(c.seqs, seq)
	c.counts = append(c.counts, count)
	return nil
}

// putHeartbeat reserves and writes one Heartbeat whose nextSeq is v.
func putHeartbeat(t *testing.T, b *Builder, v uint64, timeNs int64) {
	t.Helper()
	buf, off, err := b.Reserve(mdsbe.HeartbeatEncodedLength, timeNs)
	if err != nil {
		t.Fatal(err)
	}
	var m mdsbe.Heartbeat
	if err := m.WrapEncode(buf, off); err != nil {
		t.Fatal(err)
	}
	m.SetNextSeq(v)
}

func TestBuilderPacksAndNumbers(t *testing.T) {
	const msg = mdsbe.HeartbeatEncodedLength // 16 bytes, 18 with its length
	cases := []struct {
		name      string
		bytesMax  int
		sequenced bool
		messages  int
		wantSizes []int // messages per packet
	}{
		{"one packet", 0, true, 3, []int{3}},
		{"exactly full", HeaderSize + 4*(LengthPrefixSize+msg), true, 4, []int{4}},
		{"one over", HeaderSize + 4*(LengthPrefixSize+msg), true, 5, []int{4, 1}},
		{"datagram bound", 0, true, 200, []int{76, 76, 48}},
		{"unsequenced", 0, false, 2, []int{2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &capture{}
			b, err := NewBuilder(BuilderConfig{Channel: 9, BytesMax: tc.bytesMax, Sequenced: tc.sequenced, FirstSeq: 100, Sink: c})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < tc.messages; i++ {
				putHeartbeat(t, b, uint64(i), int64(1000+i))
			}
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := b.Flush(); err != nil || len(c.packets) != len(tc.wantSizes) {
				t.Fatalf("%d packets (err %v), want %d", len(c.packets), err, len(tc.wantSizes))
			}
			next, first := 0, uint64(100)
			for i, pkt := range c.packets {
				limit := tc.bytesMax
				if limit == 0 {
					limit = DatagramBytesMax
				}
				if len(pkt) > limit {
					t.Fatalf("packet %d has %d bytes, bound %d", i, len(pkt), limit)
				}
				var r Reader
				if err := r.Reset(pkt); err != nil {
					t.Fatal(err)
				}
				wantSeq := first
				if !tc.sequenced {
					wantSeq = 0
				}
				if r.Channel != 9 || r.Count != tc.wantSizes[i] || r.Seq != wantSeq || c.seqs[i] != wantSeq ||
					c.counts[i] != r.Count || r.SendingTimeNs != int64(1000+next) {
					t.Fatalf("packet %d header: %+v (sink seq %d)", i, r, c.seqs[i])
				}
				for msg, ok := r.Next(); ok; msg, ok = r.Next() {
					var m mdsbe.Heartbeat
					if err := m.WrapDecode(msg, 0); err != nil || m.NextSeq() != uint64(next) {
						t.Fatalf("message %d: %v nextSeq %d", next, err, m.NextSeq())
					}
					next++
				}
				first += uint64(r.Count)
			}
			if next != tc.messages {
				t.Fatalf("read %d messages, wrote %d", next, tc.messages)
			}
			if tc.sequenced && b.NextSeq() != 100+uint64(tc.messages) {
				t.Fatalf("NextSeq %d", b.NextSeq())
			}
		})
	}
}

func TestBuilderRefusesOversizedMessage(t *testing.T) {
	b, err := NewBuilder(BuilderConfig{Sink: &capture{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Reserve(DatagramBytesMax, 0); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("got %v", err)
	}
	if _, _, err := b.Reserve(4, 0); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("a message shorter than its header: got %v", err)
	}
	if _, err := NewBuilder(BuilderConfig{BytesMax: 10, Sink: &capture{}}); err == nil {
		t.Fatal("a 10-byte packet bound was accepted")
	}
	if _, err := NewBuilder(BuilderConfig{}); err == nil {
		t.Fatal("a builder without sink was accepted")
	}
}

func TestReaderRejectsMalformed(t *testing.T) {
	c := &capture{}
	b, _ := NewBuilder(BuilderConfig{Sequenced: true, Sink: c})
	putHeartbeat(t, b, 1, 0)
	putHeartbeat(t, b, 2, 0)
	_ = b.Flush()
	good := c.packets[0]
	mutate := func(f func(p []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := []struct {
		name string
		pkt  []byte
	}{
		{"empty", nil},
		{"short header", good[:HeaderSize-1]},
		{"count too high", mutate(func(p []byte) []byte { binary.LittleEndian.PutUint16(p[2:], 3); return p })},
		{"count too low: trailing bytes", mutate(func(p []byte) []byte { binary.LittleEndian.PutUint16(p[2:], 1); return p })},
		{"truncated message", good[:len(good)-1]},
		{"length below a header", mutate(func(p []byte) []byte { binary.LittleEndian.PutUint16(p[HeaderSize:], 7); return p })},
		{"length past the end", mutate(func(p []byte) []byte { binary.LittleEndian.PutUint16(p[HeaderSize:], 60000); return p })},
		{"sequence wraps", mutate(func(p []byte) []byte { binary.LittleEndian.PutUint64(p[8:], ^uint64(0)); return p })},
	}
	for _, tc := range cases {
		var r Reader
		if err := r.Reset(tc.pkt); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: got %v", tc.name, err)
		}
		if _, ok := r.Next(); ok {
			t.Errorf("%s: a message came out of a rejected packet", tc.name)
		}
	}
	var r Reader
	if err := r.Reset(good); err != nil || r.Count != 2 {
		t.Fatalf("good packet: %v", err)
	}
}

func TestFrames(t *testing.T) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	for _, p := range [][]byte{[]byte("first"), {}, bytes.Repeat([]byte{7}, 3000)} {
		if err := WriteFrame(w, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFrame(w, make([]byte, FrameBytesMax+1)); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("oversized frame: %v", err)
	}
	_ = w.Flush()
	r := bufio.NewReader(bytes.NewReader(buf.Bytes()))
	frame := make([]byte, 4096)
	for _, want := range []int{5, 0, 3000} {
		p, err := ReadFrame(r, frame)
		if err != nil || len(p) != want {
			t.Fatalf("frame of %d: %d bytes, %v", want, len(p), err)
		}
	}
	if _, err := ReadFrame(r, frame); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
	small := bufio.NewReader(bytes.NewReader([]byte{10, 0, 1, 2}))
	if _, err := ReadFrame(small, make([]byte, 4)); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("frame larger than the buffer: %v", err)
	}
	torn := bufio.NewReader(bytes.NewReader([]byte{10, 0, 1, 2}))
	if _, err := ReadFrame(torn, frame); err != io.ErrUnexpectedEOF {
		t.Fatalf("torn frame: %v", err)
	}
}

func TestBuilderAllocatesNothing(t *testing.T) {
	b, _ := NewBuilder(BuilderConfig{Sequenced: true, Sink: discard{}})
	allocs := testing.AllocsPerRun(1000, func() {
		buf, off, _ := b.Reserve(mdsbe.HeartbeatEncodedLength, 1)
		var m mdsbe.Heartbeat
		_ = m.WrapEncode(buf, off)
		m.SetNextSeq(1)
		if b.Pending() == 50 {
			_ = b.Flush()
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per message", allocs)
	}
}

type discard struct{}

func (discard) WritePacket([]byte, uint64, int) error { return nil }

// FuzzReader: arbitrary bytes never panic the reader, and a packet it
// accepts yields exactly Count messages that lie inside it.
func FuzzReader(f *testing.F) {
	c := &capture{}
	b, _ := NewBuilder(BuilderConfig{Sequenced: true, Sink: c})
	putHeartbeat(&testing.T{}, b, 5, 1)
	putHeartbeat(&testing.T{}, b, 6, 2)
	_ = b.Flush()
	f.Add(c.packets[0])
	f.Add([]byte{})
	f.Add(make([]byte, HeaderSize))
	f.Fuzz(func(t *testing.T, pkt []byte) {
		var r Reader
		if r.Reset(pkt) != nil {
			return
		}
		n, total := 0, HeaderSize
		for msg, ok := r.Next(); ok; msg, ok = r.Next() {
			if len(msg) < mdsbe.MessageHeaderSize {
				t.Fatalf("message of %d bytes", len(msg))
			}
			n++
			total += LengthPrefixSize + len(msg)
		}
		if n != r.Count || total != len(pkt) {
			t.Fatalf("%d messages of %d, %d bytes of %d", n, r.Count, total, len(pkt))
		}
	})
}
