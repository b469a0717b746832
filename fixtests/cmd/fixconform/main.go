package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"

	"github.com/fixvenue/fixvenue/fixtests"
)

// Exit statuses.
const (
	exitPassed = 0
	exitFailed = 1
	exitUsage  = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args, runs the scripts and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fixconform", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:5005", "acceptor host:port")
	scripts := fs.String("scripts", "", "comma-separated folders (their *.def files, not sub-folders) or .def files;\ndefault: the QuickFIX scripts ($"+fixtests.QuickFIXDefsEnv+")")
	filter := fs.String("run", "", "run only scripts whose name (folder/file without .def) matches this regexp")
	deadline := fs.Duration("deadline", fixtests.DefaultDeadline, "how long each expectation waits for its message")
	skipEcho := fs.Bool("skip-echo", false, "skip the 14 QuickFIX scripts that assume QuickFIX's echo application (for a venue)")
	hookAddr := fs.String("hook-addr", "", "the venue's metrics host:port; its "+fixtests.SeqNumsPath+" test hook carries out iSET_SESSION lines")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fixconform: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}

	o := fixtests.Options{Addr: *addr, Deadline: *deadline, Out: stdout}
	if *hookAddr != "" {
		o.Setter = fixtests.HTTPSetter{Addr: *hookAddr}
	}
	if *filter != "" {
		re, err := regexp.Compile(*filter)
		if err != nil {
			fmt.Fprintf(stderr, "fixconform: -run: %v\n", err)
			return exitUsage
		}
		o.Filter = re
	}
	quickfixDir, qerr := fixtests.QuickFIXDefsDir()
	if *scripts == "" {
		if qerr != nil {
			fmt.Fprintf(stderr, "fixconform: QuickFIX scripts: %v\n", qerr)
			return exitUsage
		}
		o.Dirs = []string{quickfixDir}
	} else {
		for _, p := range strings.Split(*scripts, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			if strings.HasSuffix(p, ".def") {
				o.Files = append(o.Files, p)
			} else {
				o.Dirs = append(o.Dirs, p)
			}
		}
	}
	if *skipEcho && qerr == nil {
		o.Skip = fixtests.SkipQuickFIXEcho(quickfixDir)
	}
	for _, d := range o.Dirs {
		if qerr == nil && d == quickfixDir {
			if _, err := os.Stat(d); err != nil {
				fmt.Fprintf(stdout, "The QuickFIX scripts are missing from %s: set %s to a folder holding them "+
					"(QuickFIX/Go's _test/definitions/server/fix44). Only they are skipped.\n", d, fixtests.QuickFIXDefsEnv)
			}
		}
	}

	sum, err := fixtests.RunDir(ctx, o)
	switch {
	case errors.Is(err, fixtests.ErrNoScripts):
		fmt.Fprintln(stderr, "fixconform: no scripts selected")
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "fixconform: %v\n", err)
		return exitUsage
	case sum.Failed > 0:
		return exitFailed
	}
	return exitPassed
}
