package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
)

func init() { commands["md"] = cmdMD }

func cmdMD(args []string) int {
	if len(args) == 0 || (args[0] != "watch" && args[0] != "book") {
		fmt.Fprintln(os.Stderr, "usage: fixvenue md watch|book --symbol SYM [--feed-addr A] [--recovery-addr A] [--json] [--timeout D]")
		return 2
	}
	sub := args[0]
	def, _ := config.Load("")
	fs := flag.NewFlagSet("md "+sub, flag.ContinueOnError)
	symbol := fs.String("symbol", "ACME", "instrument symbol")
	feedAddr := fs.String("feed-addr", def.MarketData.FeedAddr, "UDP address the feed is sent to (unicast or multicast group)")
	recoveryAddr := fs.String("recovery-addr", def.MarketData.RecoveryAddr, "TCP address of the feed's recovery service")
	asJSON := fs.Bool("json", true, "book: print JSON (the only format)")
	timeout := fs.Duration("timeout", 10*time.Second, "book: give up after this long")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	_ = asJSON
	cfg := feedclient.Config{FeedAddr: *feedAddr, RecoveryAddr: *recoveryAddr}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch sub {
	case "watch":
		if err := marketdata.Watch(ctx, cfg, *symbol, os.Stdout); err != nil && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "fixvenue md watch: %v\n", err)
			return 1
		}
	case "book":
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		b, err := marketdata.BookJSON(ctx, cfg, *symbol)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fixvenue md book: %v\n", err)
			return 1
		}
		os.Stdout.Write(append(b, '\n'))
	}
	return 0
}
