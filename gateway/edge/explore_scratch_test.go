package edge

import (
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix/datadictionary"
)

func TestExploreScratch(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	dd, _ := dictionaryPath()
	d, err := datadictionary.Parse(dd)
	if err != nil {
		t.Fatal(err)
	}
	valid := map[string][]string{
		"0": nil, "1": {"112=T"}, "2": {"7=1", "16=0"}, "4": {"123=Y", "36=2"}, "5": nil,
		"A": {"98=0", "108=30"}, "D": {"11=C1", "55=ACME", "54=1", "60=" + sendingTime(), "38=10", "40=2", "44=100"},
		"3": {"45=1"},
	}
	var headerTags []int
	for tag := range d.Header.Fields {
		headerTags = append(headerTags, tag)
	}
	for tag := range d.Trailer.Fields {
		headerTags = append(headerTags, tag)
	}
	sort.Ints(headerTags)
	type combo struct {
		mt  string
		tag int
	}
	var combos []combo
	mode := os.Getenv("EXPLORE")
	for mt := range valid {
		if mode == "logon" && mt != "A" {
			continue
		}
		tags := append([]int(nil), headerTags...)
		for tag := range d.Messages[mt].Fields {
			tags = append(tags, tag)
		}
		for _, tag := range tags {
			switch tag {
			case 8, 9, 10, 35:
				continue
			}
			combos = append(combos, combo{mt, tag})
		}
	}
	var child *rawChild
	var crashes []string
	for _, cb := range combos {
		if child == nil {
			child = startRawChild(t)
		}
		conn, err := net.Dial("tcp", fmt.Sprint("127.0.0.1:", child.port))
		if err != nil {
			t.Fatal(err)
		}
		c := newFixClient(t, conn, "CLIENT1")
		build := func(mt string) []byte {
			fields := c.header(mt)
			empty := fmt.Sprintf("%d=", cb.tag)
			var body []string
			replaced := false
			for _, f := range valid[mt] {
				if strings.HasPrefix(f, empty) {
					body = append(body, empty)
					replaced = true
				} else {
					body = append(body, f)
				}
			}
			if !replaced {
				if _, isHeader := d.Header.Fields[cb.tag]; isHeader {
					fields = append(fields, empty)
				} else {
					body = append(body, empty)
				}
			}
			return fixMsg(append(fields, body...)...)
		}
		var reply string
		if mode == "logon" {
			c.send(build("A"))
		} else {
			c.sendMsg("A", logonFields("")...)
			m, err := c.read(3 * time.Second)
			if err != nil || m.get("35") != "A" {
				t.Fatalf("logon: %v %v", m, err)
			}
			c.send(build(cb.mt))
		}
		m, err := c.read(300 * time.Millisecond)
		reply = fmt.Sprint(m, err)
		conn.Close()
		select {
		case <-child.exited:
			out := child.output()
			i := strings.Index(out, "panic:")
			if i >= 0 {
				out = out[i:]
				if j := strings.Index(out, "\n\n"); j > 0 {
					out = out[:j]
				}
			}
			lines := strings.Split(out, "\n")
			stack := ""
			for _, l := range lines {
				if strings.Contains(l, "quickfix@") {
					stack += strings.TrimSpace(l[strings.LastIndex(l, "/")+1:]) + " "
				}
			}
			crashes = append(crashes, fmt.Sprintf("35=%s empty %d: %s %s", cb.mt, cb.tag, lines[0], stack))
			child = nil
		case <-time.After(50 * time.Millisecond):
			t.Logf("35=%s empty %d: %s", cb.mt, cb.tag, reply)
		}
	}
	if child != nil {
		child.stop()
	}
	for _, c := range crashes {
		t.Log("CRASH", c)
	}
}
