package fixstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixMsg frames body (from MsgType on, '|' for SOH) with a BodyLength that
// stands for any: the store does not check it.
func fixMsg(body string) []byte {
	b := []byte("8=FIX.4.4\x019=100\x01" + body)
	for i := range b {
		if b[i] == '|' {
			b[i] = 1
		}
	}
	return b
}

// TestLastReport: the highest matcher ExecID of an ExecutionReport since
// the last reset, read from the file as the venue reads it before it
// starts: the gateway's own ExecIDs, other messages and tag 17 elsewhere do
// not count; a reset starts again from none (with its time); a compaction
// that drops the report keeps it.
func TestLastReport(t *testing.T) {
	dir := t.TempDir()
	if r, err := ReadLastReport(dir, sid); err != nil || r.Exists {
		t.Fatalf("no file: %+v %v", r, err)
	}
	f, err := NewFactory(Options{Dir: dir, MessagesMax: 4, FileBytesMax: 2048})
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := f.Create(sid)
	s := ms.(*Store)
	seq := 0
	save := func(body string) {
		t.Helper()
		seq++
		if err := s.SaveMessageAndIncrNextSenderMsgSeqNum(seq, fixMsg(fmt.Sprintf("35=%s|34=%d|", body[:1], seq)+body[1:])); err != nil {
			t.Fatal(err)
		}
	}
	read := func(want uint64) LastReport {
		t.Helper()
		r, err := ReadLastReport(dir, sid)
		if err != nil || !r.Exists || r.ExecID != want || r.ResetNs == 0 {
			t.Fatalf("ReadLastReport = %+v, %v; want ExecID %d", r, err, want)
		}
		return r
	}
	read(0)
	save("8|6=0|11=a|17=41|150=0|")
	save("8|6=0|11=b|17=G1x-2|150=8|") // the gateway's
	save("9|11=c|41=a|")
	save("0|")
	save("j|17=99|") // not a report
	first := read(41)
	save("8|6=0|11=d|17=40|150=0|") // lower: the highest counts
	read(41)
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	if r := read(0); r.ResetNs <= first.ResetNs {
		t.Fatalf("reset at %d, not after the store's creation at %d", r.ResetNs, first.ResetNs)
	}
	save("8|6=0|11=e|17=57|150=0|")
	for range 200 { // heartbeats push the report out of the window and compact the file
		save("0|")
	}
	read(57)
	if st := s.lastExecID; st != 57 {
		t.Fatalf("the open store says %d", st)
	}
	r := open(t, dir, 4) // reopened: the compaction's record carries it
	if r.lastExecID != 57 {
		t.Fatalf("reopened store says %d", r.lastExecID)
	}
}

// BenchmarkMatcherExecID: what a save pays to keep LastReport, on a New
// report as the venue sends it.
func BenchmarkMatcherExecID(b *testing.B) {
	m := fixMsg("35=8|34=1234|49=VENUE|52=20261203-07:50:43.076|56=CLIENT1|1=ACC1|6=0|11=ORD-000000001234|14=0|17=123456789|" +
		"37=98765|38=100|39=0|40=2|44=101.25|54=1|55=ACME|59=0|60=20261203-07:50:42.004|150=0|151=100|10=161|")
	for b.Loop() {
		if _, ok := matcherExecID(m); !ok {
			b.Fatal("no ExecID")
		}
	}
}

// TestLastReportRefusesDamage: a store with a damaged record before good
// ones, which the start refuses to open, is refused by ReadLastReport too
// (what `journal verify` checks a copy's stores with), naming both offsets,
// rather than read up to the damage; a torn tail, which a start cuts, is not.
func TestLastReportRefusesDamage(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 100)
	saveMsgs(t, s, 1, 20)
	path := filepath.Join(dir, fileName(sid))
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	full = full[:s.size]
	torn := append([]byte(nil), full[:len(full)-5]...)
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLastReport(dir, sid); err != nil {
		t.Fatalf("a torn tail: %v", err)
	}
	damaged := append([]byte(nil), full...)
	damaged[len(damaged)/2] ^= 0xff
	if err := os.WriteFile(path, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLastReport(dir, sid); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "a good record follows at offset") {
		t.Fatalf("a damaged record before good ones: %v, want ErrDamaged", err)
	}
}
