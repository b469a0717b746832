package main

import (
	"bytes"
	"errors"
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
	"backup":  cmdBackup,
	"md":      cmdMD,
	"admin":   cmdAdmin,
	"load":    cmdLoad,
	"bench":   cmdBench,
	"events":  cmdEvents,
	"risk":    cmdRisk,
	"cluster": cmdCluster,
	"version": cmdVersion,
}

func cmdVersion(args []string) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), "usage: fixvenue version\n\nprints the version of this binary\n") }
	if exit, done := parseFlags(fs, args, os.Stdout, os.Stderr); done {
		return exit
	}
	fmt.Println("fixvenue", version)
	return 0
}

// usage prints the commands to w.
func usage(w io.Writer) {
	fmt.Fprint(w, `usage: fixvenue <command> [options]

commands:
  serve     run the venue (embedded demo config unless --config is given)
  journal   verify, dump or print the books of the journal (journal verify|dump|book --data DIR)
  backup    copy a running venue's data directory as a set a venue starts from (backup --to DIR)
  md        watch or print a book from the market data feed, or measure its latency (md watch|book|latency)
  admin     operate a running venue over its admin API (admin -h)
  load      open-loop FIX load generator
  bench     the latency lab: pipeline harness, echo venue, plots, tables (bench pipeline|echo|plot|table)
  events    tail or verify the event stream on NATS JetStream (events tail|verify)
  risk      limits, kill switch and limit changes on the running venue (risk show|kill|reset|limits)
  cluster   status of a Raft cluster's nodes, leader transfer
  version   print the version

Run "fixvenue <command> -h" (or "fixvenue help <command>") for a command's options.
`)
}

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	if os.Args[1] == "help" && len(os.Args) > 2 {
		// "fixvenue help load" is "fixvenue load -h" (and "help journal
		// dump" "journal dump -h"): it printed the list of commands,
		// the one named passed over.
		if cmd, ok := commands[os.Args[2]]; ok {
			os.Exit(cmd(append(slices.Clone(os.Args[3:]), "-h")))
		}
		fmt.Fprintf(os.Stderr, "fixvenue help: unknown command %q\n\n", os.Args[2])
		usage(os.Stderr)
		os.Exit(2)
	}
	if asksHelp(os.Args[1]) {
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

// asksHelp reports whether a command's first argument asks for its usage.
func asksHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

// subcommand picks the subcommand of `fixvenue cmd`: args[0] when it is one
// of subs, with a flag set named after both for the rest of args. Otherwise
// ok is false and the command exits with exit: 0 after printing usage on
// standard output when args[0] asks for it, else 2 after printing it on
// standard error.
func subcommand(cmd string, args []string, usage string, subs ...string) (sub string, fs *flag.FlagSet, exit int, ok bool) {
	switch {
	case len(args) > 0 && asksHelp(args[0]):
		fmt.Fprint(os.Stdout, usage)
		return "", nil, 0, false
	case len(args) > 0 && !slices.Contains(subs, args[0]):
		fmt.Fprint(os.Stderr, unknownCommand("fixvenue "+cmd, args, subs))
		fallthrough
	case len(args) == 0:
		fmt.Fprint(os.Stderr, usage)
		return "", nil, 2, false
	}
	fs = flag.NewFlagSet(cmd+" "+args[0], flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: fixvenue %s [options]\n\noptions:\n", fs.Name())
		fs.PrintDefaults()
	}
	return args[0], fs, 0, true
}

// unknownCommand says why args[0] is not one of prog's commands subs. Options
// belong to the command the word picks, so they come after it: a line that
// starts with one (`fixvenue admin --addr A status`) is told so, with the
// command it names in the example (the line itself is not echoed, as it may
// hold a token).
func unknownCommand(prog string, args, subs []string) string {
	if !strings.HasPrefix(args[0], "-") {
		return fmt.Sprintf("%s: unknown command %q\n\n", prog, args[0])
	}
	example := "COMMAND"
	for _, a := range args[1:] {
		if slices.Contains(subs, a) {
			example = a
			break
		}
	}
	return fmt.Sprintf("%s: the command comes first, then its options (%s %s %s …): got %q where a command was expected\n\n",
		prog, prog, example, args[0], args[0])
}

// parseArgs parses a command's args with fs, flags before, between and
// after the positional arguments, which it returns: the flag package alone
// stops at the first word that is not a flag and leaves every flag after it
// unread. After "--" every argument is positional. Asked for help (-h,
// --help) it prints fs's usage on stdout and the command exits 0; a bad flag
// prints why and the usage on stderr and the command exits 2 (done is then
// true and exit the code).
func parseArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (positional []string, exit int, done bool) {
	// The flag package prints its errors and the usage on its output, the
	// same for -h as for a bad flag: which stream it goes to is decided
	// once the error is known.
	var out bytes.Buffer
	fs.SetOutput(&out)
	defer fs.SetOutput(stderr)
	for {
		err := fs.Parse(args)
		switch {
		case errors.Is(err, flag.ErrHelp):
			stdout.Write(out.Bytes())
			return nil, 0, true
		case err != nil:
			stderr.Write(out.Bytes())
			return nil, 2, true
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, 0, false
		}
		if read := args[:len(args)-len(rest)]; len(read) > 0 && read[len(read)-1] == "--" {
			return append(positional, rest...), 0, false
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// parseFlags parses the args of a command that takes no positional
// argument (parseArgs): a word among them is refused, as a bad flag is.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (exit int, done bool) {
	positional, exit, done := parseArgs(fs, args, stdout, stderr)
	if done {
		return exit, done
	}
	if len(positional) > 0 {
		return refuseArgs(fs, stderr, positional, fs.Name()+" takes no arguments, only options"), true
	}
	return 0, false
}

// refuseArgs prints that the command of fs does not take the positional
// arguments it was given, why, and its usage, on stderr; it returns 2, the
// exit code of a usage error.
func refuseArgs(fs *flag.FlagSet, stderr io.Writer, positional []string, why string) int {
	quoted := make([]string, len(positional))
	for i, a := range positional {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	what := "argument"
	if len(positional) > 1 {
		what = "arguments"
	}
	fmt.Fprintf(stderr, "fixvenue %s: unexpected %s %s: %s\n", fs.Name(), what, strings.Join(quoted, " "), why)
	fs.SetOutput(stderr)
	fs.Usage()
	return 2
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

// parseWithConfig parses the args of a subcommand that takes no positional
// argument with fs (parseFlags), then loads the configuration its --config
// flag (cfgPath) names; when cfg is nil the command exits with exit (0 after
// -h, else 2).
func parseWithConfig(cmd string, fs *flag.FlagSet, args []string, cfgPath *string) (cfg *config.Config, exit int) {
	if exit, done := parseFlags(fs, args, os.Stdout, os.Stderr); done {
		return nil, exit
	}
	if cfg = loadConfig(cmd, *cfgPath); cfg == nil {
		return nil, 2
	}
	return cfg, 0
}
