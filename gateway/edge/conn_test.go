package edge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// acceptedConn logs a client on through a real listener on 127.0.0.1 and
// returns the Conn QuickFIX/Go would get, with the client's socket, so a
// test can play QuickFIX/Go's writer itself. dial connects to the address.
func acceptedConn(t testing.TB, cfg Config, dial func(testing.TB, string) net.Conn) (*Conn, net.Conn) {
	t.Helper()
	cfg.Address = "127.0.0.1:0"
	cfg.Authenticator = testCredentials("CLIENT1")
	l, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	client := dial(t, l.Addr().String())
	newFixClient(t, client, "CLIENT1").sendMsg("A", logonBody(testPassword("CLIENT1"))...)
	nc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := nc.(*Conn)
	t.Cleanup(func() { _ = c.Close() })
	return c, client
}

func dialPlain(t testing.TB, addr string) net.Conn { return dialFrom(t, "127.0.0.1", addr) }

// numbered returns message i of a test stream: its number, then filler,
// size bytes in all, so any loss, repetition or reordering shows.
func numbered(i, size int) []byte {
	m := []byte(fmt.Sprintf("<%08d>", i))
	for len(m) < size {
		m = append(m, byte('a'+i%26))
	}
	return m
}

// queued returns the bytes and writes waiting for the writer goroutine.
func (c *Conn) queued() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queuedBytes, c.queuedWrites
}

// waitQueuedEmpty waits until the writer goroutine has flushed everything.
func waitQueuedEmpty(t *testing.T, c *Conn) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, w := c.queued(); b == 0 && w == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("outbound buffer not flushed")
		}
		time.Sleep(time.Millisecond)
	}
}

// readExactly reads len(want) bytes from client and compares them.
func readExactly(t *testing.T, client net.Conn, want []byte) {
	t.Helper()
	_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(client, got); err != nil {
		t.Fatalf("read %d bytes: %v", len(want), err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && got[i] == want[i] {
			i++
		}
		t.Fatalf("bytes differ from offset %d of %d: got %q…, want %q…", i, len(want), got[i:min(i+20, len(got))], want[i:min(i+20, len(want))])
	}
}

// TestWriteBoundsCloseNonReader: a client that never reads is disconnected
// with ErrOutboundFull when the bytes or the writes waiting for it reach
// their bound.
func TestWriteBoundsCloseNonReader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  Config
		size int
	}{
		{"bytes", Config{OutboundBytesMax: 64 << 10, OutboundQueueMax: 1 << 20}, 1000},
		{"writes", Config{OutboundBytesMax: 4 << 20, OutboundQueueMax: 16}, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.cfg.SocketWriteBufferBytes = 4096
			tc.cfg.WriteTimeout = time.Minute
			testBoundsCloseNonReader(t, tc.cfg, tc.size)
		})
	}
}

func testBoundsCloseNonReader(t *testing.T, cfg Config, size int) {
	c, client := acceptedConn(t, cfg, dialSmallReceiveBuffer)
	var err error
	i := 0
	for ; i < 10000 && err == nil; i++ {
		_, err = c.Write(numbered(i, size))
	}
	if !errors.Is(err, ErrOutboundFull) {
		t.Fatalf("after %d writes: err %v, want ErrOutboundFull", i, err)
	}
	if got := c.l.Stats().Count(ReasonOutboundFull); got != 1 {
		t.Fatalf("ReasonOutboundFull counted %d times", got)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("connection not closed")
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after the close: %v, want net.ErrClosed", err)
	}
	_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, client); err != nil && isTimeout(err) {
		t.Fatal("client's connection still open")
	}
}

// TestCloseFlushes: Close while the client is not reading waits until the
// queued bytes are written, then closes: the client reads every byte, then
// the end of the stream.
func TestCloseFlushes(t *testing.T) {
	t.Parallel()
	testCloseFlushes(t, Config{SocketWriteBufferBytes: 4096, WriteTimeout: time.Minute})
}

func testCloseFlushes(t *testing.T, cfg Config) {
	c, client := acceptedConn(t, cfg, dialSmallReceiveBuffer)
	var want []byte
	for i := 0; i < 2000; i++ {
		m := numbered(i, 500)
		if _, err := c.Write(m); err != nil {
			t.Fatal(err)
		}
		want = append(want, m...)
		if b, _ := c.queued(); b > 32<<10 {
			break
		}
	}
	if b, _ := c.queued(); b == 0 {
		t.Fatal("nothing queued")
	}
	closed := make(chan struct{})
	go func() {
		_ = c.Close()
		close(closed)
	}()
	readExactly(t, client, want)
	_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := client.Read(make([]byte, 1)); n != 0 || err == nil || isTimeout(err) {
		t.Fatalf("after the flushed bytes: n=%d err=%v, want the end of the stream", n, err)
	}
	<-closed
	if got := c.l.Stats().BytesOut.Load(); got != uint64(len(want)) {
		t.Fatalf("BytesOut = %d, want %d", got, len(want))
	}
}

// TestWriteConcurrentReader: one goroutine writes messages of varied sizes
// while the client reads at its own pace, so the buffer fills and drains in
// turn; Backlogged is polled meanwhile (the race
// detector checks the shared state). Every byte arrives, in order.
func TestWriteConcurrentReader(t *testing.T) {
	t.Parallel()
	testWriteConcurrentReader(t, Config{SocketWriteBufferBytes: 4096, WriteTimeout: 10 * time.Second, OutboundBytesMax: 16 << 20, OutboundQueueMax: 1 << 20})
}

func testWriteConcurrentReader(t *testing.T, cfg Config) {
	c, client := acceptedConn(t, cfg, dialSmallReceiveBuffer)
	var want []byte
	for i := 0; i < 3000; i++ {
		want = append(want, numbered(i, 50+(i*389)%3000)...)
	}
	got := make(chan []byte, 1)
	go func() {
		_ = client.SetReadDeadline(time.Now().Add(20 * time.Second))
		b := make([]byte, len(want))
		n, _ := io.ReadFull(client, b)
		got <- b[:n]
	}()
	for i, off := 0, 0; i < 3000; i++ {
		size := 50 + (i*389)%3000
		if _, err := c.Write(want[off : off+size]); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		off += size
		_ = c.Backlogged()
		if i%100 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("client read %d bytes, want %d, or they differ", len(b), len(want))
	}
}

// BenchmarkConnWrite: one 300-byte message written and received, then
// acknowledged by the client with one byte (read from the socket beneath the
// Conn), as under the gateway's pacing, where a message is rarely written
// while the previous one is still queued.
func BenchmarkConnWrite(b *testing.B) {
	c, client := acceptedConn(b, Config{}, dialPlain)
	m := numbered(0, 300)
	go func() {
		buf := make([]byte, len(m))
		for {
			if _, err := io.ReadFull(client, buf); err != nil {
				return
			}
			if _, err := client.Write(buf[:1]); err != nil {
				return
			}
		}
	}()
	var ack [1]byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Write(m); err != nil {
			b.Fatal(err)
		}
		if _, err := c.raw.Read(ack[:]); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAheadOfGapCountStartsAgainWhenFilled: the bytes read ahead of a gap
// count until the session's expected MsgSeqNum reaches the last message
// counted (the gap filled, the messages behind it handled), the moment
// QuickFIX/Go has answered the last of them: a client that reads that
// answer and opens the next gap at once starts a new count. The count
// went on while the expected number stood at the last message (it moves
// after the answer), and two gaps of two thirds of the bound, filled one
// after the other, logged the session out.
func TestAheadOfGapCountStartsAgainWhenFilled(t *testing.T) {
	const queue = 4
	msg := stashCost(1000, 10)
	expected := 1
	c := &Conn{l: &Listener{cfg: Config{SessionInboundQueue: queue, AheadBytesMax: 3 * msg}}, fr: &framer{},
		targetLooked: true, nextTarget: func() int { return expected }}
	read := func(seq uint64) bool {
		c.fr.seqNumValue = seq
		return c.aheadOfGap(msg)
	}
	// A gap at 1; messages 2 to 11 read, the first queue+aheadSlack not
	// counted: two messages ahead, within the bound of three.
	for seq := uint64(2); seq <= 11; seq++ {
		if read(seq) {
			t.Fatalf("message %d ahead of the first gap over the bound", seq)
		}
	}
	// The gap filled: QuickFIX/Go handled 1 to 10 and answers 11, the
	// expected number still at 11. The next gap, at 12: 13 to 22 read.
	expected = 11
	for seq := uint64(13); seq <= 22; seq++ {
		if read(seq) {
			t.Fatalf("message %d ahead of the second gap over the bound: the first gap's count went on", seq)
		}
	}
	// Unfilled, the second gap's count reaches the bound.
	over := false
	for seq := uint64(23); seq <= 30 && !over; seq++ {
		over = read(seq)
	}
	if !over {
		t.Fatal("messages ahead of an unfilled gap never reached the bound")
	}
}
