package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/fixvenue/fixvenue/config"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// commands are the commands usage lists, each with the function that runs
// it (its arguments after the command's name; its result the exit code).
var commands = map[string]func(args []string) int{
	"serve":   cmdServe,
	"journal": cmdJournal,
	"md":      cmdMD,
	"admin":   cmdAdmin,
	"load":    cmdLoad,
	"bench":   cmdBench,
	"events":  cmdEvents,
	"risk":    cmdRisk,
	"cluster": cmdCluster,
	"version": func([]string) int { fmt.Println("fixvenue", version); return 0 },
}

// usage prints the commands to w.
func usage(w io.Writer) {
	fmt.Fprint(w, `usage: fixvenue <command> [options]

commands:
  serve     run the venue (embedded demo config unless --config is given)
  journal   verify or dump the journal (journal verify --data DIR)
  md        watch or print a book from the market data feed
  admin     operate a running venue over its admin API (admin -h)
  load      open-loop FIX load generator
  bench     open-loop pipeline latency harness (bench pipeline)
  events    tail or verify the event stream on NATS JetStream (events tail|verify)
  risk      kill switch and limit changes on the running venue (risk kill|reset|limits)
  cluster   status of a Raft cluster's nodes, leader transfer
  version   print the version

Run "fixvenue <command> -h" for a command's options.
`)
}

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "help", "-h", "-help", "--help":
		// Asked for: the usage is the answer, on standard output.
		usage(os.Stdout)
		os.Exit(0)
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "fixvenue: unknown command %q\n\n", os.Args[1])
		usage(os.Stderr)
		os.Exit(2)
	}
	os.Exit(cmd(os.Args[2:]))
}

// subcommand picks the subcommand of `fixvenue cmd`: args[0] when it is one
// of subs, with a flag set named after both for the rest of args; otherwise
// it prints usage and ok is false (the command then exits 2).
func subcommand(cmd string, args []string, usage string, subs ...string) (sub string, fs *flag.FlagSet, ok bool) {
	if len(args) == 0 || !slices.Contains(subs, args[0]) {
		fmt.Fprintln(os.Stderr, strings.TrimSuffix(usage, "\n"))
		return "", nil, false
	}
	return args[0], flag.NewFlagSet(cmd+" "+args[0], flag.ContinueOnError), true
}

// loadConfig loads the configuration file at path (the built-in defaults
// when path is empty); on error it prints "fixvenue cmd: error" and
// returns nil (the command then exits 2).
func loadConfig(cmd, path string) *config.Config {
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue %s: %v\n", cmd, err)
		return nil
	}
	return cfg
}

// parseWithConfig parses a subcommand's args with fs, then loads the
// configuration its --config flag (cfgPath) names; on either error it
// returns nil (the command then exits 2).
func parseWithConfig(cmd string, fs *flag.FlagSet, args []string, cfgPath *string) *config.Config {
	if err := fs.Parse(args); err != nil {
		return nil
	}
	return loadConfig(cmd, *cfgPath)
}
