package main

import (
	"context"
	"errors"
	"net"

	"github.com/HdrHistogram/hdrhistogram-go"

	"flag"
	"fmt"
	"github.com/fixvenue/fixvenue/marketdata/packet"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
)

const mdUsage = `usage: fixvenue md <command> [options]

commands:
  watch [--symbol SYM] [--feed-addr A] [--feed-b-addr B] [--recovery-addr A]
                  draw the instrument's book and trades from the feed, live, until interrupted
                  (an instrument not listed yet is waited for: one added at runtime appears;
                  with --feed-b-addr, what each line brought)
  book [--symbol SYM] [--feed-addr A] [--feed-b-addr B] [--recovery-addr A] [--timeout D]
                  print the instrument's book once, as JSON
  latency [--feed-addr A] [--duration D]
                  measure order-to-feed latency on the feed (binds the feed address)

Run "fixvenue md <command> -h" for a command's options.
`

func cmdMD(args []string) int {
	if len(args) > 0 && args[0] == "latency" {
		return cmdMDLatency(args[1:])
	}
	sub, fs, exit, ok := subcommand("md", args, mdUsage, "watch", "book", "latency") // latency runs above; listed for unknownCommand
	if !ok {
		return exit
	}
	def, _ := config.Load("")
	symbol := fs.String("symbol", "ACME", "instrument symbol")
	feedAddr := fs.String("feed-addr", def.MarketData.FeedAddr, "UDP address the feed is sent to (unicast or multicast group)")
	feedBAddr := fs.String("feed-b-addr", def.MarketData.FeedBAddr, "UDP address of the feed's B line (marketdata.feed_b_addr), read beside --feed-addr; empty: none")
	recoveryAddr := fs.String("recovery-addr", def.MarketData.RecoveryAddr, "TCP address of the feed's recovery service; several, comma-separated (a cluster's nodes), are tried in turn")
	// Accepted so that command lines written when it was an option still
	// run; it changes nothing.
	jsonHelp := "has no effect, accepted for old command lines (book prints JSON without it)"
	if sub == "watch" {
		jsonHelp = "has no effect, accepted for old command lines (watch draws the book; md book prints it as JSON)"
	}
	fs.Bool("json", false, jsonHelp)
	timeout := 10 * time.Second
	if sub == "book" {
		fs.DurationVar(&timeout, "timeout", timeout, "give up after this long")
	}
	positional, exit, done := parseArgs(fs, args[1:], os.Stdout, os.Stderr)
	if done {
		return exit
	}
	if len(positional) > 0 {
		return refuseArgs(fs, os.Stderr, positional, "md "+sub+" takes no arguments: give the instrument with --symbol")
	}
	// Values that cannot work are refused here, by name: a timeout of zero
	// or less ended the book at once, and no recovery address waited for
	// the whole timeout, both with "is the venue running …?".
	if timeout <= 0 {
		fmt.Fprintf(os.Stderr, "fixvenue md %s: --timeout must be positive, got %v\n", sub, timeout)
		return 2
	}
	if strings.Trim(*recoveryAddr, ", ") == "" {
		fmt.Fprintf(os.Stderr, "fixvenue md %s: --recovery-addr is empty: give the feed's recovery service (marketdata.recovery_addr)\n", sub)
		return 2
	}
	if bad, why := malformedTCPAddr(*recoveryAddr); bad != "" {
		// A dial of it can only fail: watch tried for ever, book for its
		// whole timeout, saying only that it could not join.
		fmt.Fprintf(os.Stderr, "fixvenue md %s: --recovery-addr %q is not a host:port: %s\n", sub, bad, why)
		return 2
	}
	if *feedBAddr != "" && *feedBAddr == *feedAddr {
		fmt.Fprintf(os.Stderr, "fixvenue md %s: --feed-b-addr is --feed-addr (%s): the B line has a destination of its own\n", sub, *feedBAddr)
		return 2
	}
	cfg := feedclient.Config{FeedAddr: *feedAddr, FeedBAddr: *feedBAddr, RecoveryAddr: *recoveryAddr}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch sub {
	case "watch":
		if err := feedclient.Watch(ctx, cfg, *symbol, os.Stdout); err != nil && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "fixvenue md watch: %v\n", err)
			return 1
		}
	case "book":
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		b, err := feedclient.BookJSON(ctx, cfg, *symbol)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fixvenue md book: %v\n", err)
			return 1
		}
		os.Stdout.Write(append(b, '\n'))
	}
	return 0
}

// malformedTCPAddr returns the first of the comma-separated addresses
// (feedclient.NewTCPRecoverer's list) that no dial could use, and why; ""
// when each is a host and a port. A host that does not resolve is left to
// the dial, as it may resolve later.
func malformedTCPAddr(list string) (string, string) {
	for a := range strings.SplitSeq(list, ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		if why := notHostPort(a); why != "" {
			return a, why
		}
	}
	return "", ""
}

// notHostPort says why a, one address, is not a host and a port a dial
// could use; "" when it is.
func notHostPort(a string) string {
	_, port, err := net.SplitHostPort(a)
	if err != nil {
		var addrErr *net.AddrError
		if errors.As(err, &addrErr) {
			return addrErr.Err
		}
		return err.Error()
	}
	if n, err := net.LookupPort("tcp", port); err != nil || n == 0 {
		return "port " + strconv.Quote(port) + " is not a port number (1 to 65535) or service name"
	}
	return ""
}

// cmdMDLatency listens to the UDP feed and measures, for every sequenced
// packet, the time from the FIX arrival of the command it reflects (the
// packet's sending time is the event time, which is the gateway's receive
// stamp) to the packet's receipt: order-to-feed latency.
func cmdMDLatency(args []string) int {
	def, _ := config.Load("")
	fs := flag.NewFlagSet("md latency", flag.ContinueOnError)
	feedAddr := fs.String("feed-addr", def.MarketData.FeedAddr, "UDP address the feed is sent to (this process binds it)")
	duration := fs.Duration("duration", 10*time.Second, "how long to listen")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: fixvenue md latency [options]\n\nListens to the feed (binding its address) and prints order-to-feed latency.\n\noptions:\n")
		fs.PrintDefaults()
	}
	if exit, done := parseFlags(fs, args, os.Stdout, os.Stderr); done {
		return exit
	}
	if *duration <= 0 {
		// It listened for nothing and printed "0 packets" as a measurement.
		fmt.Fprintf(os.Stderr, "fixvenue md latency: --duration must be positive, got %v\n", *duration)
		return 2
	}
	addr, err := net.ResolveUDPAddr("udp", *feedAddr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue md latency: %v\n", err)
		return 2
	}
	conn, err := net.ListenUDP("udp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue md latency: %v\n", err)
		return 1
	}
	defer conn.Close()
	_ = conn.SetReadBuffer(8 << 20)
	h := hdrhistogram.New(1, 60_000_000, 3) // µs
	var r packet.Reader
	buf := make([]byte, 65536)
	end := time.Now().Add(*duration)
	packets, msgs := 0, 0
	for time.Now().Before(end) {
		_ = conn.SetReadDeadline(end)
		n, err := conn.Read(buf)
		if err != nil {
			break
		}
		now := time.Now().UnixNano()
		if r.Reset(buf[:n]) != nil || r.Seq == 0 {
			continue
		}
		packets++
		msgs += r.Count
		_ = h.RecordValue(max(1, (now-r.SendingTimeNs)/1000))
	}
	us := func(q float64) string { return (time.Duration(h.ValueAtQuantile(q)) * time.Microsecond).String() }
	fmt.Printf("order-to-feed: %d packets, %d messages; p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		packets, msgs, us(50), us(90), us(99), us(99.9), (time.Duration(h.Max()) * time.Microsecond).String())
	return 0
}
