package edge

import (
	"bytes"
	"crypto/tls"
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

// forEachWritePath runs f with cfg through the writer goroutine only, and
// with direct writes.
func forEachWritePath(t *testing.T, cfg Config, f func(t *testing.T, cfg Config)) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			t.Parallel()
			cfg.DirectWrites = direct
			f(t, cfg)
		})
	}
}

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

// TestWriteDirectThenBuffered: on an idle plain TCP connection a write
// reaches the socket before Write returns (no writer goroutine); once the
// client stops reading, writes queue behind what the socket did not take;
// the client then reads every byte in order, and after the flush writes go
// straight to the socket again, also after the writer's deadline would
// have expired.
func TestWriteDirectThenBuffered(t *testing.T) {
	t.Parallel()
	const writeTimeout = 2 * time.Second
	c, client := acceptedConn(t, Config{DirectWrites: true, SocketWriteBufferBytes: 4096, WriteTimeout: writeTimeout, OutboundBytesMax: 4 << 20}, dialSmallReceiveBuffer)
	st := c.l.Stats()
	var want []byte
	write := func(m []byte) {
		t.Helper()
		if n, err := c.Write(m); err != nil || n != len(m) {
			t.Fatalf("write: n=%d err=%v", n, err)
		}
		want = append(want, m...)
	}
	// Idle socket: written by Write itself.
	m := numbered(0, 300)
	write(m)
	if got := st.BytesOut.Load(); got != uint64(len(m)) {
		t.Fatalf("BytesOut right after a write to an idle socket = %d, want %d (written directly)", got, len(m))
	}
	readExactly(t, client, want)
	want = want[:0]
	// The client stops reading: the socket fills and writes queue
	// (bounded: the socket takes a few tens of KiB at most).
	i := 1
	for ; i < 2000; i++ {
		write(numbered(i, 300))
		if b, _ := c.queued(); b > 0 {
			break
		}
	}
	if b, _ := c.queued(); b == 0 {
		t.Fatalf("nothing queued after %d writes to a client that does not read", i)
	}
	direct := st.BytesOut.Load()
	// Writes behind the queue keep their order even when the socket has
	// room again: queue some more, then read everything.
	for j := 0; j < 50; j++ {
		i++
		write(numbered(i, 300))
	}
	readExactly(t, client, want)
	waitQueuedEmpty(t, c)
	if st.BytesOut.Load() != uint64(len(want))+uint64(len(m)) {
		t.Fatalf("BytesOut = %d, want %d", st.BytesOut.Load(), len(want)+len(m))
	}
	if direct <= uint64(len(m)) {
		t.Fatalf("no direct write before the socket filled (BytesOut %d)", direct)
	}
	// Past the writer's deadline, the socket is written directly again.
	time.Sleep(writeTimeout + 200*time.Millisecond)
	before := st.BytesOut.Load()
	want = want[:0]
	write(numbered(i+1, 300))
	if got := st.BytesOut.Load() - before; got != 300 {
		t.Fatalf("after the flush, a write's bytes out before it returned = %d, want 300", got)
	}
	readExactly(t, client, want)
	if got, want := st.MessagesOut.Load(), uint64(i+2); got != want {
		t.Fatalf("MessagesOut = %d, want %d", got, want)
	}
}

// TestWriteDirectOff: without Config.DirectWrites (the default) every
// write goes through the writer goroutine.
func TestWriteDirectOff(t *testing.T) {
	t.Parallel()
	c, client := acceptedConn(t, Config{}, dialPlain)
	if c.rc != nil {
		t.Fatal("direct writes on by default")
	}
	m := numbered(0, 300)
	if _, err := c.Write(m); err != nil {
		t.Fatal(err)
	}
	readExactly(t, client, m)
}

// TestWriteDirectPartial: a write larger than the socket can take is
// written in part directly and the rest by the writer goroutine.
func TestWriteDirectPartial(t *testing.T) {
	t.Parallel()
	c, client := acceptedConn(t, Config{DirectWrites: true, SocketWriteBufferBytes: 4096, OutboundBytesMax: 4 << 20}, dialSmallReceiveBuffer)
	big := make([]byte, 256<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	if n, err := c.Write(big); err != nil || n != len(big) {
		t.Fatalf("write: n=%d err=%v", n, err)
	}
	// The client is not reading, so the writer cannot have taken much.
	out := c.l.Stats().BytesOut.Load()
	if b, w := c.queued(); out == 0 || b == 0 || w != 1 || int(out)+b > len(big) {
		t.Fatalf("after a 256 KiB write: %d bytes out, %d bytes in %d writes queued: want part written, the rest queued", out, b, w)
	}
	readExactly(t, client, big)
	waitQueuedEmpty(t, c)
	if got := c.l.Stats().BytesOut.Load(); got != uint64(len(big)) {
		t.Fatalf("BytesOut = %d, want %d", got, len(big))
	}
}

// TestWriteBoundsCloseNonReader: a client that never reads is disconnected
// with ErrOutboundFull when the bytes or the writes waiting for it reach
// their bound, direct writes or not.
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
			forEachWritePath(t, tc.cfg, func(t *testing.T, cfg Config) {
				testBoundsCloseNonReader(t, cfg, tc.size)
			})
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
	forEachWritePath(t, Config{SocketWriteBufferBytes: 4096, WriteTimeout: time.Minute}, testCloseFlushes)
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
// while the client reads at its own pace, so writes go direct, in part and
// behind the queue in turn; Backlogged is polled meanwhile (the race
// detector checks the shared state). Every byte arrives, in order.
func TestWriteConcurrentReader(t *testing.T) {
	t.Parallel()
	forEachWritePath(t, Config{SocketWriteBufferBytes: 4096, WriteTimeout: 10 * time.Second, OutboundBytesMax: 16 << 20, OutboundQueueMax: 1 << 20},
		testWriteConcurrentReader)
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

// TestTLSKeepsWriterGoroutine: over TLS, Write never touches the socket
// itself (the TLS layer frames records), DirectWrites or not; the writer
// goroutine delivers.
func TestTLSKeepsWriterGoroutine(t *testing.T) {
	t.Parallel()
	s := newTLSSetup(t)
	dial := func(tb testing.TB, addr string) net.Conn {
		conn := tls.Client(dialPlain(tb, addr), &tls.Config{RootCAs: s.roots, ServerName: "127.0.0.1"})
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		if err := conn.Handshake(); err != nil {
			tb.Fatal(err)
		}
		_ = conn.SetDeadline(time.Time{})
		return conn
	}
	c, client := acceptedConn(t, Config{DirectWrites: true, TLSCertFile: s.certFile, TLSKeyFile: s.keyFile}, dial)
	if c.rc != nil {
		t.Fatal("a TLS connection writes to the socket directly")
	}
	var want []byte
	for i := 0; i < 100; i++ {
		m := numbered(i, 300)
		if _, err := c.Write(m); err != nil {
			t.Fatal(err)
		}
		want = append(want, m...)
	}
	readExactly(t, client, want)
}

// BenchmarkConnWrite: one 300-byte message written and received, then
// acknowledged by the client with one byte (read from the socket beneath the
// Conn), as under the gateway's pacing, where a message is rarely written
// while the previous one is still queued; through the writer goroutine and
// with direct writes.
func BenchmarkConnWrite(b *testing.B) {
	for _, direct := range []bool{false, true} {
		b.Run(fmt.Sprintf("direct=%v", direct), func(b *testing.B) { benchmarkConnWrite(b, Config{DirectWrites: direct}) })
	}
}

func benchmarkConnWrite(b *testing.B, cfg Config) {
	c, client := acceptedConn(b, cfg, dialPlain)
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
