package journal

import (
	"bytes"
	"testing"
)

// FuzzFrameScan runs the frame scanner over arbitrary segment bodies held
// in memory (thousands of times faster than FuzzSegment, which goes through
// files): it must never panic, every frame it accepts must be a complete
// frame with a good CRC and the next seq, and the tail report must stay
// inside the segment and point only at real frames.
func FuzzFrameScan(f *testing.F) {
	frame := func(seq uint64, p string) []byte {
		b := make([]byte, FrameHeaderBytes+len(p))
		putFrame(b, seq, []byte(p))
		return b
	}
	valid := bytes.Join([][]byte{frame(0, "a"), frame(1, "bb"), frame(2, "ccc")}, nil)
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(append(append([]byte(nil), valid...), 0, 0, 0, 0, 0, 1))
	f.Add(append(frame(0, "x"), frame(3, "y")...))
	f.Add(bytes.Join([][]byte{frame(0, "a"), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, frame(2, "c")}, nil))
	buf := make([]byte, readBufferBytes)
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 1<<18 {
			return
		}
		size := max(int64(SegmentHeaderBytes+len(body)), minSegmentBytes(1))
		file := make([]byte, size)
		encodeSegmentHeader(file, segmentHeader{firstSeq: 0, segmentBytes: size})
		copy(file[SegmentHeaderBytes:], body)
		s, err := newSegmentScan(bytes.NewReader(file), size, segmentFile{path: "fuzz"}, buf)
		if err != nil {
			t.Fatalf("valid header refused: %v", err)
		}
		for want := uint64(0); ; want++ {
			st, err := s.next()
			if err != nil {
				t.Fatalf("in-memory scan failed: %v", err)
			}
			if st != frameOK {
				break
			}
			n, ok := validFrameAt(file[s.frameOff:])
			if !ok || s.seq != want || int64(n) != s.off-s.frameOff || !bytes.Equal(s.payload, file[s.frameOff+FrameHeaderBytes:s.off]) {
				t.Fatalf("accepted a bad frame at %d (seq %d, want %d)", s.frameOff, s.seq, want)
			}
		}
		end := s.off
		rep, err := s.inspectTail(end)
		if err != nil {
			t.Fatal(err)
		}
		if rep.dirtyEnd < end || rep.dirtyEnd > size {
			t.Fatalf("dirty end %d outside [%d, %d]", rep.dirtyEnd, end, size)
		}
		if rep.dirtyEnd > end && file[rep.dirtyEnd-1] == 0 {
			t.Fatalf("dirty end %d follows a zero byte", rep.dirtyEnd)
		}
		for i := rep.dirtyEnd; i < size; i++ {
			if file[i] != 0 {
				t.Fatalf("non-zero byte at %d after dirty end %d", i, rep.dirtyEnd)
			}
		}
		if rep.validOff >= 0 {
			if rep.validOff <= end {
				t.Fatalf("valid frame reported at %d, not after the end %d", rep.validOff, end)
			}
			if _, ok := validFrameAt(file[rep.validOff:]); !ok {
				t.Fatalf("reported a valid frame at %d that is not", rep.validOff)
			}
		}
	})
}
