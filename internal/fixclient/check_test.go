package fixclient

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// TestCheckFailsTheRead: a message Check refuses fails the read that meets
// it, naming the message and the reason; one it accepts is read.
func TestCheckFailsTheRead(t *testing.T) {
	Check = func(raw []byte) error {
		if strings.Contains(string(raw), "\x0158=bad\x01") {
			return errors.New("refused")
		}
		return nil
	}
	defer func() { Check = nil }()
	venue, client := net.Pipe()
	defer venue.Close()
	c := New(client, "C", "V")
	defer c.Close()
	go func() {
		for _, text := range []string{"good", "bad"} {
			venue.Write(Build(F(35, "3"), F(49, "V"), F(56, "C"), F(34, "1"), F(52, Timestamp(time.Now())), F(45, "1"), F(58, text)))
		}
	}()
	if m, err := c.ReadAny(5 * time.Second); err != nil || m.Get(58) != "good" {
		t.Fatalf("accepted message: %v, %v", m, err)
	}
	_, err := c.ReadAny(5 * time.Second)
	if err == nil || !strings.Contains(err.Error(), "|58=bad|") || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("refused message: %v", err)
	}
}
