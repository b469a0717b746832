// Command fixconform runs FIX conformance scripts (.def files) against a
// running acceptor and exits non-zero when any script fails.
//
//	fixconform -addr 127.0.0.1:5001 [-scripts dir1,dir2,file.def] [-run regexp] [-deadline 20s]
//
// Without -scripts it runs the QuickFIX FIX 4.4 server scripts from
// $FIXVENUE_QUICKFIX_DEFS, or ../shared/conformance/quickfix-fix44 next to the
// module root. All logic lives in package fixtests; this is flag parsing.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"time"

	"github.com/fixvenue/fixvenue/fixtests"
)

// Exit codes: 0 all passed, 1 a script failed, 2 the run could not start or
// selected nothing.
const (
	exitFailed = 1
	exitUsage  = 2
)

func main() {
	os.Exit(run())
}

func run() int {
	addr := flag.String("addr", "127.0.0.1:5005", "acceptor host:port")
	scripts := flag.String("scripts", "", "comma-separated folders (their *.def files) or .def files; default: the QuickFIX scripts ($"+fixtests.QuickFIXDefsEnv+")")
	filter := flag.String("run", "", "run only scripts whose name (folder/file without .def) matches this regexp")
	deadline := flag.Duration("deadline", fixtests.DefaultDeadline, "how long each expectation waits for its message")
	flag.Parse()

	o := fixtests.Options{Addr: *addr, Deadline: *deadline, Out: os.Stdout}
	if *filter != "" {
		re, err := regexp.Compile(*filter)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fixconform: -run: %v\n", err)
			return exitUsage
		}
		o.Filter = re
	}
	quickfixDir, qerr := fixtests.QuickFIXDefsDir()
	if *scripts == "" {
		if qerr != nil {
			fmt.Fprintf(os.Stderr, "fixconform: QuickFIX scripts: %v\n", qerr)
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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	started := time.Now()
	sum, err := fixtests.RunDir(ctx, o)
	for _, m := range sum.Missing {
		if m == quickfixDir {
			fmt.Printf("The QuickFIX scripts are missing from %s; set %s to a folder holding them (QuickFIX/Go _test/definitions/server/fix44).\n",
				m, fixtests.QuickFIXDefsEnv)
		}
	}
	fmt.Fprintf(os.Stderr, "fixconform: ran %d scripts in %v\n", sum.Passed+sum.Failed, time.Since(started).Round(time.Millisecond))
	switch {
	case errors.Is(err, fixtests.ErrNoScripts):
		fmt.Fprintln(os.Stderr, "fixconform: no scripts selected")
		return exitUsage
	case err != nil:
		fmt.Fprintf(os.Stderr, "fixconform: %v\n", err)
		return exitUsage
	case sum.Failed > 0:
		return exitFailed
	}
	return 0
}
