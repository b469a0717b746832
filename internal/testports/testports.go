package testports

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// handedOut holds every port Reserve returned in this test binary: a
// port released to a venue stays free while that venue is down, and must
// not be given to another address meanwhile.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// Reserve returns n distinct loopback ports of network ("tcp" or "udp"),
// none returned before in this binary, bound until release.
func Reserve(t testing.TB, network string, n int) (ports []int, release func()) {
	t.Helper()
	var held []io.Closer
	release = func() {
		for _, c := range held {
			c.Close()
		}
	}
	lo, hi := portsOutsideEphemeral()
	for attempt := 0; len(ports) < n; attempt++ {
		if attempt == 10*n+1000 {
			release()
			t.Fatalf("no free %s port in %d..%d after %d attempts", network, lo, hi, attempt)
		}
		port := 0 // the OS chooses when no range is outside the ephemeral one
		if lo > 0 {
			port = lo + rand.IntN(hi-lo+1)
		}
		handedOut.Lock()
		taken := port != 0 && handedOut.ports[port]
		handedOut.Unlock()
		if taken {
			continue
		}
		c, got, err := bindPort(network, port)
		if err != nil {
			if port == 0 {
				release()
				t.Fatal(err)
			}
			continue // taken: try another
		}
		held, ports = append(held, c), append(ports, got)
		handedOut.Lock()
		handedOut.ports[got] = true
		handedOut.Unlock()
	}
	return ports, release
}

func bindPort(network string, port int) (io.Closer, int, error) {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if network == "tcp" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, 0, err
		}
		return l, l.Addr().(*net.TCPAddr).Port, nil
	}
	c, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, 0, err
	}
	return c, c.LocalAddr().(*net.UDPAddr).Port, nil
}

// portsOutsideEphemeral returns a range of unprivileged ports the kernel
// does not use as ephemeral ports: below the ephemeral range (from 10000,
// above the usual fixed service ports) or else above it; 0, 0 when neither
// leaves a thousand ports.
func portsOutsideEphemeral() (lo, hi int) {
	elo, ehi := 32768, 60999 // Linux's default
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &elo, &ehi); err != nil {
			elo, ehi = 32768, 60999
		}
	}
	switch {
	case elo-10000 >= 1000:
		return 10000, elo - 1
	case 65535-ehi >= 1000:
		return ehi + 1, 65535
	}
	return 0, 0
}
