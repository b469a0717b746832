package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
)

// consoleStreamsMax bounds --console-streams (the venue's own bound,
// admin.console.streams_max, is 32 by default).
const consoleStreamsMax = 256

// consoleLoad holds N console event streams open, as N browsers would,
// while a load run measures the order path: `fixvenue load
// --console-streams 20` compares with the same run without them.
type consoleLoad struct {
	opened, failed, events, bytes atomic.Int64
	firstErr                      atomic.Value // string
	wg                            sync.WaitGroup
	cancel                        context.CancelFunc
}

// startConsoleStreams opens n streams of url; each reads until Stop.
func startConsoleStreams(parent context.Context, url string, n int) *consoleLoad {
	ctx, cancel := context.WithCancel(parent)
	c := &consoleLoad{cancel: cancel}
	for range n {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.read(ctx, url)
		}()
	}
	return c
}

func (c *consoleLoad) read(ctx context.Context, url string) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err == nil {
		var resp *http.Response
		if resp, err = http.DefaultClient.Do(req); err == nil {
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
			} else {
				c.opened.Add(1)
				sc := bufio.NewScanner(resp.Body)
				sc.Buffer(make([]byte, 64<<10), 16<<20)
				for sc.Scan() {
					c.bytes.Add(int64(len(sc.Bytes()) + 1))
					if bytes.HasPrefix(sc.Bytes(), []byte("data: ")) {
						c.events.Add(1)
					}
				}
				return // ended by Stop (or the venue)
			}
		}
	}
	if ctx.Err() == nil {
		c.failed.Add(1)
		c.firstErr.CompareAndSwap(nil, err.Error())
	}
}

// Stop closes the streams and reports what they received.
func (c *consoleLoad) Stop() string {
	c.cancel()
	c.wg.Wait()
	s := fmt.Sprintf("console streams: %d opened, %d failed, %d updates, %d bytes received", c.opened.Load(), c.failed.Load(),
		c.events.Load(), c.bytes.Load())
	if e, ok := c.firstErr.Load().(string); ok {
		s += " (first error: " + e + ")"
	}
	return s
}
