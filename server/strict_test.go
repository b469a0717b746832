package server

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/gateway/edge"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// A strict FIX client: a QuickFIX/Go initiator that validates every message
// the venue sends against the FIX 4.4 dictionary the venue ships
// (gateway/spec/FIX44.xml), as validating engines do by default (QuickFIX/C++
// and QuickFIX/J both would have refused 103=18). A message that fails is
// answered with a session Reject (35=3), which ToAdmin records: the tests
// below fail on any such Reject, and on any expected message that never
// reaches the application (a refused message never does).

// strictSettings are the initiator's validation settings, the strictest
// QuickFIX/Go has.
var strictSettings = map[string]string{
	"ValidateFieldsOutOfOrder":  "Y",
	"RejectInvalidMessage":      "Y",
	"ValidateFieldsHaveValues":  "Y",
	"ValidateUserDefinedFields": "Y",
	"AllowUnknownMsgFields":     "N",
	"CheckLatency":              "Y",
	"MaxLatency":                "120",
}

// strictMsg is one message the strict client received, as text and fields
// (the first value of each tag, and every tag=value in order for groups).
type strictMsg struct {
	raw    string
	fields map[int]string
}

func (m *strictMsg) get(t int) string { return m.fields[t] }

// strictClient is one strict initiator session.
type strictClient struct {
	t        *testing.T
	id       quickfix.SessionID
	init     *quickfix.Initiator
	mu       sync.Mutex
	inbox    []*strictMsg
	wake     chan struct{}
	logon    chan struct{}
	rejected []string // session Rejects this client sent: each is a test failure
	password string   // sent in the Logon (554) when set
	wire     []string // every message received, admin ones included, as text
}

func parseStrict(raw string) *strictMsg {
	m := &strictMsg{raw: strings.ReplaceAll(raw, "\x01", "|"), fields: map[int]string{}}
	for _, f := range strings.Split(raw, "\x01") {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(k)
		if err != nil {
			continue
		}
		if _, seen := m.fields[n]; !seen {
			m.fields[n] = v
		}
	}
	return m
}

func (c *strictClient) received(m *quickfix.Message) {
	c.mu.Lock()
	c.inbox = append(c.inbox, parseStrict(m.String()))
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *strictClient) OnCreate(quickfix.SessionID) {}
func (c *strictClient) OnLogon(quickfix.SessionID) {
	select {
	case c.logon <- struct{}{}:
	default:
	}
}
func (c *strictClient) OnLogout(quickfix.SessionID) {}
func (c *strictClient) ToAdmin(m *quickfix.Message, _ quickfix.SessionID) {
	if t, _ := m.MsgType(); t == "A" && c.password != "" {
		m.Body.SetString(tag.Password, c.password)
	}
	if t, _ := m.MsgType(); t == "3" {
		c.mu.Lock()
		c.rejected = append(c.rejected, strings.ReplaceAll(m.String(), "\x01", "|"))
		c.mu.Unlock()
	}
}
func (c *strictClient) ToApp(*quickfix.Message, quickfix.SessionID) error { return nil }
func (c *strictClient) FromAdmin(m *quickfix.Message, _ quickfix.SessionID) quickfix.MessageRejectError {
	if t, _ := m.MsgType(); t == "3" || t == "5" {
		c.received(m)
	}
	return nil
}
func (c *strictClient) FromApp(m *quickfix.Message, _ quickfix.SessionID) quickfix.MessageRejectError {
	c.received(m)
	return nil
}

// startStrict logs a strict initiator on as comp to the venue.
func startStrict(t *testing.T, s *Server, comp string) *strictClient {
	t.Helper()
	c := connectStrict(t, s, comp, "")
	select {
	case <-c.logon:
	case <-time.After(readWait):
		t.Fatalf("%s: no logon within %v", comp, readWait)
	}
	return c
}

// connectStrict starts a strict initiator for comp (with a password when
// one is given) without waiting for its logon.
func connectStrict(t *testing.T, s *Server, comp, password string) *strictClient {
	t.Helper()
	host, port, err := net.SplitHostPort(s.FIXAddr())
	if err != nil {
		t.Fatal(err)
	}
	dict, err := filepath.Abs(filepath.Join("..", "gateway", "spec", "FIX44.xml"))
	if err != nil {
		t.Fatal(err)
	}
	c := &strictClient{t: t, id: quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: comp, TargetCompID: s.cfg.Venue.SenderCompID},
		wake: make(chan struct{}, 1), logon: make(chan struct{}, 1), password: password}
	settings := quickfix.NewSettings()
	ss := quickfix.NewSessionSettings()
	for k, v := range map[string]string{"BeginString": "FIX.4.4", "SenderCompID": comp, "TargetCompID": s.cfg.Venue.SenderCompID,
		"SocketConnectHost": host, "SocketConnectPort": port, "HeartBtInt": "30", "ResetOnLogon": "Y",
		"ReconnectInterval": "30", "DataDictionary": dict} {
		ss.Set(k, v)
	}
	for k, v := range strictSettings {
		ss.Set(k, v)
	}
	if _, err := settings.AddSession(ss); err != nil {
		t.Fatal(err)
	}
	c.init, err = quickfix.NewInitiator(c, quickfix.NewMemoryStoreFactory(), settings, strictLog{t, c})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.init.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.init.Stop() })
	return c
}

// send sends an application message of type msgType with the fields given
// as tag, value pairs (in order; a repeating group is written as its count
// tag followed by its members' fields, which QuickFIX/Go keeps in order).
func (c *strictClient) send(msgType string, kv ...string) {
	c.t.Helper()
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, msgType)
	for i := 0; i+1 < len(kv); i += 2 {
		n, err := strconv.Atoi(kv[i])
		if err != nil {
			c.t.Fatal(err)
		}
		m.Body.SetString(quickfix.Tag(n), kv[i+1])
	}
	if err := quickfix.SendToTarget(m, c.id); err != nil {
		c.t.Fatal(err)
	}
}

// sendGroup sends a message whose body has one repeating group.
func (c *strictClient) sendGroup(msgType string, body []string, g *quickfix.RepeatingGroup) {
	c.t.Helper()
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, msgType)
	for i := 0; i+1 < len(body); i += 2 {
		n, _ := strconv.Atoi(body[i])
		m.Body.SetString(quickfix.Tag(n), body[i+1])
	}
	m.Body.SetGroup(g)
	if err := quickfix.SendToTarget(m, c.id); err != nil {
		c.t.Fatal(err)
	}
}

func matches(m *strictMsg, msgType string, want map[int]string) bool {
	if m.get(35) != msgType {
		return false
	}
	for k, v := range want {
		if m.get(k) != v {
			return false
		}
	}
	return true
}

// expect waits for a message of msgType with the given field values (first
// occurrence of each tag), takes it from the inbox and returns it.
func (c *strictClient) expect(msgType string, want map[int]string) *strictMsg {
	c.t.Helper()
	deadline := time.NewTimer(readWait)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for i, m := range c.inbox {
			if matches(m, msgType, want) {
				c.inbox = append(c.inbox[:i], c.inbox[i+1:]...)
				c.mu.Unlock()
				return m
			}
		}
		rejected := append([]string(nil), c.rejected...)
		inbox := make([]string, 0, len(c.inbox))
		for _, m := range c.inbox {
			inbox = append(inbox, m.raw)
		}
		c.mu.Unlock()
		if len(rejected) > 0 {
			c.t.Fatalf("%s rejected messages from the venue:\n%s", c.id.SenderCompID, strings.Join(rejected, "\n"))
		}
		select {
		case <-c.wake:
		case <-deadline.C:
			// A refused message never reaches the inbox, and refusing it
			// wakes nothing: say so if that is why.
			c.mu.Lock()
			rejected = append(rejected[:0], c.rejected...)
			c.mu.Unlock()
			c.t.Fatalf("%s: no %s with %v within %v; unread:\n%s\nrejected:\n%s", c.id.SenderCompID, msgType, want, readWait,
				strings.Join(inbox, "\n"), strings.Join(rejected, "\n"))
		}
	}
}

// checkNoRejects fails the test if the client refused any message.
func (c *strictClient) checkNoRejects() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.rejected) > 0 {
		c.t.Fatalf("%s rejected messages from the venue:\n%s", c.id.SenderCompID, strings.Join(c.rejected, "\n"))
	}
}

// strictLog writes the strict client's QuickFIX/Go log to the test log
// under -v, so that a refused message can be read with the engine's reason.
type strictLog struct {
	t *testing.T
	c *strictClient
}

func (l strictLog) Create() (quickfix.Log, error)                             { return l, nil }
func (l strictLog) CreateSessionLog(quickfix.SessionID) (quickfix.Log, error) { return l, nil }
func (l strictLog) OnIncoming(b []byte) {
	l.c.mu.Lock()
	l.c.wire = append(l.c.wire, strings.ReplaceAll(string(b), "\x01", "|"))
	l.c.mu.Unlock()
	l.logf("client in: %s", b)
}
func (l strictLog) OnOutgoing(b []byte)                 { l.logf("client out: %s", b) }
func (l strictLog) OnEvent(s string)                    { l.logf("client event: %s", s) }
func (l strictLog) OnEventf(f string, a ...interface{}) { l.logf("client event: "+f, a...) }
func (l strictLog) logf(f string, a ...interface{}) {
	if testing.Verbose() {
		l.t.Logf(strings.ReplaceAll(f, "\x01", "|"), a...)
	}
}

func now() string { return time.Now().UTC().Format("20060102-15:04:05.000") }

// limit is the fields of a DAY limit order.
func limit(id, sym, side, qty, px string, extra ...string) []string {
	return append([]string{"11", id, "55", sym, "54", side, "60", now(), "38", qty, "40", "2", "44", px, "59", "0"}, extra...)
}

// strictInstruments is a halted and a closed instrument, added to testConfig.
var strictInstruments = strictInstrument(3, "HALTD", "halted") + strictInstrument(4, "CLSD", "closed")

// strictInstrument is the TOML of one instrument in the given status.
func strictInstrument(id int, symbol, status string) string {
	return fmt.Sprintf(`
[[instrument]]
id = %d
symbol = %q
tick_size = "0.01"
lot_size = 1
min_qty = 1
max_qty = 1000
ref_price = "10.00"
band_percent = 10
status = %q`, id, symbol, status)
}

// startWithFeed starts a venue with the configuration's extra text and
// market data on, its feed sent to a UDP socket nobody reads.
func startWithFeed(t *testing.T, extra string) *Server {
	t.Helper()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	cfg := testConfig(t, t.TempDir(), extra)
	cfg.MarketData.Enabled = true
	cfg.MarketData.FeedAddr = udp.LocalAddr().String()
	cfg.MarketData.RecoveryAddr = "127.0.0.1:0"
	return startServer(t, cfg, Options{})
}

// TestStrictClientAcceptsEveryMessage drives the venue through every kind of
// message it sends, each received by a strict QuickFIX/Go client.
func TestStrictClientAcceptsEveryMessage(t *testing.T) {
	t.Parallel()
	s := startWithFeed(t, strictInstruments)
	a := startStrict(t, s, "CLIENT3")
	b := startStrict(t, s, "CLIENT4")

	run := func(name string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			a.t, b.t = t, t
			f(t)
		})
	}
	run("fills", func(t *testing.T) {
		a.send("D", limit("a1", "ACME", "2", "10", "100.10", "1", "ACC-A")...)
		a.expect("8", map[int]string{11: "a1", 150: "0", 39: "0"})
		b.send("D", limit("b1", "ACME", "1", "4", "100.20")...)
		b.expect("8", map[int]string{11: "b1", 150: "0"})
		b.expect("8", map[int]string{11: "b1", 150: "F", 39: "2"})
		a.expect("8", map[int]string{11: "a1", 150: "F", 39: "1"})
		b.send("D", limit("b2", "ACME", "1", "6", "100.10")...)
		a.expect("8", map[int]string{11: "a1", 150: "F", 39: "2", 151: "0"})
		b.expect("8", map[int]string{11: "b2", 150: "F", 39: "2"})
		// A market order takes what rests, then its remainder is cancelled.
		a.send("D", limit("a1m", "ACME", "2", "3", "100.00")...)
		a.expect("8", map[int]string{11: "a1m", 150: "0"})
		b.send("D", "11", "b3", "55", "ACME", "54", "1", "60", now(), "38", "5", "40", "1", "59", "3")
		b.expect("8", map[int]string{11: "b3", 150: "F", 39: "1"})
		b.expect("8", map[int]string{11: "b3", 150: "4", 39: "4"})
	})

	run("stop triggered by an iceberg's trade", func(t *testing.T) {
		// The last trade is 100.00: a buy stop at 100.20 waits.
		b.send("D", "11", "bs1", "55", "ACME", "54", "1", "60", now(), "38", "2", "40", "3", "99", "100.20", "59", "0")
		b.expect("8", map[int]string{11: "bs1", 150: "0", 39: "0", 40: "3", 99: "100.20"})
		a.send("D", limit("ai1", "ACME", "2", "6", "100.20", "111", "2")...)
		a.expect("8", map[int]string{11: "ai1", 150: "0", 111: "2"})
		b.send("D", limit("bl1", "ACME", "1", "2", "100.20")...)
		b.expect("8", map[int]string{11: "bl1", 150: "0"})
		b.expect("8", map[int]string{11: "bl1", 150: "F", 39: "2"})
		a.expect("8", map[int]string{11: "ai1", 150: "F", 39: "1"})
		// The trade at 100.20 elects the stop: a Restated report, then its fill
		// against the iceberg's next slice.
		b.expect("8", map[int]string{11: "bs1", 150: "D", 378: "99", 39: "0", 99: "100.20"})
		b.expect("8", map[int]string{11: "bs1", 150: "F", 39: "2", 40: "3", 99: "100.20"}) // every report echoes StopPx
		a.expect("8", map[int]string{11: "ai1", 150: "F", 39: "1"})
		a.send("F", "11", "ai2", "41", "ai1", "55", "ACME", "54", "2", "60", now())
		a.expect("8", map[int]string{11: "ai2", 150: "4"})
	})

	run("GTD reports echo the expiry", func(t *testing.T) {
		const expire = "20991231-23:59:59.000"
		gtd := func(id, side, qty string) []string {
			return []string{"11", id, "55", "ACME", "54", side, "60", now(), "38", qty, "40", "2", "44", "105.00", "59", "6", "126", expire}
		}
		a.send("D", gtd("ag1", "2", "4")...)
		a.expect("8", map[int]string{11: "ag1", 150: "0", 126: expire})
		// bg1's accept and fill are built in one chunk of answers, before
		// the open-order view has it.
		b.send("D", gtd("bg1", "1", "6")...)
		b.expect("8", map[int]string{11: "bg1", 150: "0", 126: expire})
		b.expect("8", map[int]string{11: "bg1", 150: "F", 39: "1", 126: expire})
		a.expect("8", map[int]string{11: "ag1", 150: "F", 39: "2", 126: expire})
		b.send("F", "11", "bg2", "41", "bg1", "55", "ACME", "54", "1", "60", now())
		b.expect("8", map[int]string{11: "bg2", 150: "4", 126: expire})
	})

	run("replace status cancel", func(t *testing.T) {
		a.send("D", limit("a2", "ACME", "1", "5", "99.00")...)
		a.expect("8", map[int]string{11: "a2", 150: "0"})
		a.send("G", "11", "a3", "41", "a2", "55", "ACME", "54", "1", "60", now(), "38", "4", "40", "2", "44", "99.00")
		a.expect("8", map[int]string{11: "a3", 41: "a2", 150: "5", 39: "0"})
		a.send("H", "11", "a3", "55", "ACME", "54", "1", "790", "st1")
		a.expect("8", map[int]string{11: "a3", 150: "I", 39: "0", 790: "st1"})
		a.send("H", "11", "nosuch", "55", "ACME", "54", "1")
		a.expect("8", map[int]string{11: "nosuch", 150: "I", 39: "8", 103: "5"})
		a.send("F", "11", "a4", "41", "a3", "55", "ACME", "54", "1", "60", now())
		a.expect("8", map[int]string{11: "a4", 150: "4", 39: "4"})
	})

	run("cancel rejects", func(t *testing.T) {
		a.send("F", "11", "c1", "41", "a3", "55", "ACME", "54", "1", "60", now())
		a.expect("9", map[int]string{11: "c1", 434: "1", 102: "0"})
		a.send("F", "11", "c2", "41", "never", "55", "ACME", "54", "1", "60", now())
		a.expect("9", map[int]string{11: "c2", 434: "1", 102: "1"})
		// Refused by the gateway for its Symbol, naming an order ended
		// today: the answer names the order, cancelled (39=4), not 37=NONE.
		a.send("F", "11", "c3", "41", "a3", "55", "NOPE", "54", "1", "60", now())
		a.expect("9", map[int]string{11: "c3", 434: "1", 102: "99", 39: "4", 58: "unknown symbol NOPE"})
		a.send("D", limit("a5", "ACME", "1", "5", "98.00")...)
		a.expect("8", map[int]string{11: "a5", 150: "0"})
		a.send("G", "11", "a1", "41", "a5", "55", "ACME", "54", "1", "60", now(), "38", "4", "40", "2", "44", "98.00")
		a.expect("9", map[int]string{11: "a1", 434: "2", 102: "6"})
		a.send("G", "11", "a6", "41", "a5", "55", "ACME", "54", "2", "60", now(), "38", "4", "40", "2", "44", "98.00")
		a.expect("9", map[int]string{11: "a6", 434: "2", 102: "99"})
		a.send("G", "11", "a7", "41", "a5", "55", "ACME", "54", "1", "60", now(), "38", "4", "40", "2", "44", "98.001")
		a.expect("9", map[int]string{11: "a7", 434: "2", 102: "99"})
		a.send("F", "11", "a7b", "41", "a5", "37", "999999", "55", "ACME", "54", "1", "60", now())
		a.expect("9", map[int]string{11: "a7b", 434: "1", 102: "99", 58: "OrderID does not match OrigClOrdID"})
		a.send("F", "11", "a8", "41", "a5", "55", "ACME", "54", "1", "60", now())
		a.expect("8", map[int]string{11: "a8", 150: "4"})
	})

	run("order rejects", func(t *testing.T) {
		past := time.Now().Add(-time.Hour).UTC().Format("20060102-15:04:05")
		future := time.Now().Add(time.Hour).UTC().Format("20060102-15:04:05")
		cases := []struct {
			name   string
			fields []string
			reason string
			text   string
		}{
			{"unknown symbol", limit("r1", "NOPE", "1", "1", "1.00"), "1", "unknown symbol NOPE"},
			{"instrument halted", limit("r2", "HALTD", "1", "1", "10.00"), "2", "instrument halted: cancels only"},
			{"instrument closed", limit("r3", "CLSD", "1", "1", "10.00"), "2", "instrument closed"},
			{"duplicate ClOrdID", limit("a1", "ACME", "1", "1", "99.00"), "6", "duplicate ClOrdID"},
			{"unsupported side", limit("r4", "ACME", "5", "1", "99.00"), "11", "unsupported side 5"},
			{"unsupported order type", append(limit("r5", "ACME", "1", "1", "99.00")[:10], "40", "6", "44", "99.00", "59", "0"), "11", "unsupported order type 6"},
			{"stop-limit price on the wrong side", append(limit("r5s", "ACME", "1", "1", "99.00")[:10], "40", "4", "44", "98.00", "99", "99.00", "59", "0"), "99",
				"stop-limit Price is on the wrong side of StopPx: a buy needs Price >= StopPx, a sell Price <= StopPx"},
			{"stop without StopPx", append(limit("r5t", "ACME", "1", "1", "99.00")[:10], "40", "3", "59", "0"), "99", "stop order without StopPx (99)"},
			{"MaxFloor above OrderQty", limit("r5m", "ACME", "1", "5", "99.00", "111", "10"), "13", "MaxFloor (111) is larger than OrderQty"},
			{"unsupported time in force", append(limit("r6", "ACME", "1", "1", "99.00")[:14], "59", "5"), "11", "unsupported time in force 5"},
			{"unsupported ExecInst", limit("r7", "ACME", "1", "1", "99.00", "18", "1"), "11", "unsupported ExecInst 1"},
			{"quantity zero", limit("r8", "ACME", "1", "0", "99.00"), "13", "OrderQty must be a positive whole number"},
			{"quantity not a lot multiple", limit("r9", "LOTS", "1", "15", "50.00"), "13", "quantity is not a multiple of the lot size"},
			{"quantity above maximum", limit("r10", "ACME", "1", "200000", "99.00"), "13", "quantity outside the instrument's minimum and maximum"},
			{"account too long", limit("r11", "ACME", "1", "1", "99.00", "1", "ACCOUNT-NAME-TOO-LONG"), "15", "Account longer than 16 characters"},
			{"price off tick", limit("r12", "ACME", "1", "1", "100.005"), "99", "price 100.005 is not a multiple of the tick size 0.01"},
			{"price outside band", limit("r13", "ACME", "1", "1", "150.00"), "99", "price outside the instrument's price band 90.00 to 110.00"},
			{"limit without price", append(limit("r14", "ACME", "1", "1", "99.00")[:12], "59", "0"), "99", "limit order without Price"},
			{"GTD without ExpireTime", append(limit("r15", "ACME", "1", "1", "99.00")[:14], "59", "6"), "99", "GTD order without ExpireTime (126) or ExpireDate (432)"},
			{"GTD expire time in past", append(limit("r16", "ACME", "1", "1", "99.00")[:14], "59", "6", "126", past), "99", "expire time is in the past"},
			{"post-only would take", limit("r17", "ACME", "1", "1", "100.00", "18", "6"), "99", "post-only order would take liquidity"},
			{"MinQty above the lot", limit("r18", "ACME", "1", "5", "99.00", "110", "2"), "11", "unsupported MinQty (110) 2: no minimum fill beyond the lot of 1"},
			{"MinQty above the lot of LOTS", limit("r18b", "LOTS", "1", "20", "50.00", "110", "11"), "11", "unsupported MinQty (110) 11: no minimum fill beyond the lot of 10"},
			{"MinQty negative", limit("r18c", "ACME", "1", "5", "99.00", "110", "-1"), "11", "MinQty (110) must be a whole number from 0 to the lot of 1, not -1"},
			{"MaxFloor negative", limit("r18e", "ACME", "1", "5", "99.00", "111", "-2"), "13", "MaxFloor (111) must be a whole number, 0 or more, not -2"},
			{"MaxShow", limit("r19", "ACME", "1", "5", "99.00", "210", "1"), "11", "unsupported MaxShow (210): use MaxFloor (111) for an iceberg"},
			{"EffectiveTime", limit("r20", "ACME", "1", "5", "99.00", "168", past), "11", "unsupported EffectiveTime (168): orders are active on arrival"},
			{"PriceType percentage", limit("r21", "ACME", "1", "5", "99.00", "423", "1"), "11", "unsupported PriceType (423) 1: prices are per unit (2)"},
			{"CashOrderQty", limit("r22", "ACME", "1", "5", "99.00", "152", "1000"), "11", "unsupported CashOrderQty (152): give OrderQty (38)"},
			{"pegged", limit("r23", "ACME", "1", "5", "99.00", "211", "0.01"), "11", "unsupported PegOffsetValue (211): no pegged orders"},
			{"discretion", limit("r24", "ACME", "1", "5", "99.00", "388", "0"), "11", "unsupported DiscretionInst (388): no discretion"},
			// A Price on a market or stop order, or an expiry on an order that is not GTD, would be a
			// limit or an expiry the order does not keep: refused, never dropped.
			{"market with Price", append(limit("r25", "ACME", "1", "1", "99.00")[:10], "40", "1", "44", "99.00", "59", "0"), "11",
				"Price (44) is only allowed on limit (40=2) and stop-limit (40=4) orders"},
			{"stop with Price", append(limit("r26", "ACME", "1", "1", "99.00")[:10], "40", "3", "44", "101.00", "99", "101.00", "59", "0"), "11",
				"Price (44) is only allowed on limit (40=2) and stop-limit (40=4) orders"},
			{"GTC with ExpireTime", append(limit("r27", "ACME", "1", "1", "99.00")[:14], "59", "1", "126", future), "11",
				"ExpireTime (126) and ExpireDate (432) are only allowed on GTD (59=6) orders"},
			{"DAY with ExpireDate", limit("r28", "ACME", "1", "1", "99.00", "432", "20300101"), "11",
				"ExpireTime (126) and ExpireDate (432) are only allowed on GTD (59=6) orders"},
		}
		// Liquidity for the post-only case.
		b.send("D", limit("liq1", "ACME", "2", "1", "100.00")...)
		b.expect("8", map[int]string{11: "liq1", 150: "0"})
		for _, c := range cases {
			a.send("D", c.fields...)
			m := a.expect("8", map[int]string{11: c.fields[1], 150: "8", 39: "8"})
			if m.get(103) != c.reason || m.get(58) != c.text {
				t.Errorf("%s: 103=%s 58=%q, want 103=%s 58=%q", c.name, m.get(103), m.get(58), c.reason, c.text)
			}
			// A StopPx the order gave is echoed (FIX 4.4 requires it of
			// every report of the order), whoever refused it.
			for i := 0; i+1 < len(c.fields); i += 2 {
				if c.fields[i] == "99" && m.get(99) != c.fields[i+1] {
					t.Errorf("%s: StopPx %q, want the order's %s: %s", c.name, m.get(99), c.fields[i+1], m.raw)
				}
			}
		}
		b.send("F", "11", "liq1c", "41", "liq1", "55", "ACME", "54", "2", "60", now())
		b.expect("8", map[int]string{11: "liq1c", 150: "4"})
		// A GTD order's reject echoes its expiry: FIX 4.4 requires a GTD
		// report's ExpireTime unless it has an ExpireDate. The matcher's
		// rejects give ExpireTime (for an ExpireDate, the end of that date),
		// the gateway's echo what the order gave.
		for _, c := range []struct {
			fields           []string
			expTime, expDate string
		}{
			{append(limit("x1", "ACME", "1", "1", "99.00")[:14], "59", "6", "126", past), past + ".000", ""},
			{append(limit("x2", "ACME", "1", "1", "150.00")[:14], "59", "6", "432", "20991231"), "20991231-23:59:59.999", ""},
			{append(limit("x3", "ACME", "1", "1", "100.005")[:14], "59", "6", "126", future), future, ""},
			{append(limit("x4", "ACME", "1", "1", "100.005")[:14], "59", "6", "432", "20991231"), "", "20991231"},
		} {
			a.send("D", c.fields...)
			m := a.expect("8", map[int]string{11: c.fields[1], 150: "8", 59: "6"})
			if m.get(126) != c.expTime || m.get(432) != c.expDate {
				t.Errorf("reject of GTD order %s: 126=%q 432=%q, want %q and %q: %s", c.fields[1], m.get(126), m.get(432), c.expTime, c.expDate, m.raw)
			}
		}
		// What asks nothing is taken: a MinQty up to the lot, PriceType 2 (per unit).
		a.send("D", limit("u1", "LOTS", "1", "20", "50.00", "110", "10", "423", "2")...)
		a.expect("8", map[int]string{11: "u1", 150: "0"})
		// A replace with an unsupported field is refused and the order stays as it was.
		a.send("G", "11", "u2", "41", "u1", "55", "LOTS", "54", "1", "60", now(), "38", "20", "40", "2", "44", "50.00", "110", "20")
		m := a.expect("9", map[int]string{11: "u2", 41: "u1", 434: "2", 102: "99"})
		if want := "unsupported MinQty (110) 20: no minimum fill beyond the lot of 10"; m.get(58) != want {
			t.Errorf("replace with MinQty: 58=%q, want %q", m.get(58), want)
		}
		a.send("G", "11", "u2b", "41", "u1", "55", "LOTS", "54", "1", "60", now(), "38", "20", "40", "2", "44", "50.00", "59", "0", "126", future)
		m = a.expect("9", map[int]string{11: "u2b", 41: "u1", 434: "2", 102: "99"})
		if want := "ExpireTime (126) and ExpireDate (432) are only allowed on GTD (59=6) orders"; m.get(58) != want {
			t.Errorf("replace of a DAY order with ExpireTime: 58=%q, want %q", m.get(58), want)
		}
		a.send("F", "11", "u3", "41", "u1", "55", "LOTS", "54", "1", "60", now())
		a.expect("8", map[int]string{11: "u3", 150: "4", 151: "0", 14: "0"})
	})

	run("fill or kill and expiry", func(t *testing.T) {
		a.send("D", append(limit("k1", "ACME", "1", "1", "99.00")[:14], "59", "4")...)
		a.expect("8", map[int]string{11: "k1", 39: "4"})
		// GTD one second ahead, expired by the first command after that time.
		expire := time.Now().Add(time.Second).UTC().Format("20060102-15:04:05.000")
		a.send("D", append(limit("g1", "ACME", "1", "1", "97.00")[:14], "59", "6", "126", expire)...)
		a.expect("8", map[int]string{11: "g1", 150: "0"})
		time.Sleep(1200 * time.Millisecond)
		a.send("H", "11", "g1", "55", "ACME", "54", "1")
		a.expect("8", map[int]string{11: "g1", 150: "C", 39: "C"})
		a.expect("8", map[int]string{11: "g1", 150: "I", 39: "C"})
	})

	run("mass cancel", func(t *testing.T) {
		a.send("D", limit("m1", "ACME", "1", "1", "95.00")...)
		a.expect("8", map[int]string{11: "m1", 150: "0"})
		a.send("q", "11", "mc1", "530", "7", "60", now())
		a.expect("8", map[int]string{11: "m1", 150: "4"})
		a.expect("r", map[int]string{11: "mc1", 530: "7", 531: "7", 533: "1"})
		a.send("q", "11", "mc2", "530", "1", "55", "NOPE", "60", now())
		a.expect("r", map[int]string{11: "mc2", 531: "0", 532: "1"})
		a.send("q", "11", "mc3", "530", "3", "60", now())
		a.expect("r", map[int]string{11: "mc3", 531: "0", 532: "0"})
		// A Side the venue has no orders of, or 530=1 without a Symbol, cancels nothing: read
		// as "any" they would cancel both sides, every instrument.
		a.send("D", limit("m2", "ACME", "1", "1", "95.00")...)
		a.expect("8", map[int]string{11: "m2", 150: "0"})
		a.send("D", limit("m3", "ACME", "2", "1", "105.00")...)
		a.expect("8", map[int]string{11: "m3", 150: "0"})
		a.send("q", "11", "mc4", "530", "1", "55", "ACME", "54", "5", "60", now())
		a.expect("r", map[int]string{11: "mc4", 531: "0", 532: "99",
			58: "unsupported side 5: a mass cancel's Side (54) is 1 (buy) or 2 (sell), or absent for both"})
		a.send("q", "11", "mc5", "530", "1", "60", now())
		a.expect("r", map[int]string{11: "mc5", 531: "0", 532: "1", 58: "MassCancelRequestType 1 needs a Symbol (55)"})
		a.send("q", "11", "mc6", "530", "1", "55", "ACME", "54", "1", "60", now())
		a.expect("8", map[int]string{11: "m2", 150: "4"})
		a.expect("r", map[int]string{11: "mc6", 531: "1", 533: "1"})
		a.send("q", "11", "mc7", "530", "7", "60", now())
		a.expect("8", map[int]string{11: "m3", 150: "4"})
		a.expect("r", map[int]string{11: "mc7", 531: "7", 533: "1"})
	})

	run("security list", func(t *testing.T) {
		a.send("x", "320", "sl1", "559", "4")
		m := a.expect("y", map[int]string{320: "sl1", 560: "0", 146: "4"})
		if !strings.Contains(m.raw, "55=ACME|15=USD|232=3|233=MININCR|234=0.01|233=MINQTY|234=1|233=PRICE|234=90.00-110.00|561=1|562=1|") {
			t.Errorf("security list: %s", m.raw)
		}
		a.send("x", "320", "sl2", "559", "0", "55", "NOPE")
		a.expect("y", map[int]string{320: "sl2", 560: "2"})
		a.send("x", "320", "sl3", "559", "1")
		a.expect("y", map[int]string{320: "sl3", 560: "1"})
	})

	run("market data", func(t *testing.T) {
		types := quickfix.NewRepeatingGroup(tag.NoMDEntryTypes, quickfix.GroupTemplate{quickfix.GroupElement(tag.MDEntryType)})
		types.Add().SetString(tag.MDEntryType, "0")
		types.Add().SetString(tag.MDEntryType, "1")
		syms := func(sym string) *quickfix.RepeatingGroup {
			g := quickfix.NewRepeatingGroup(tag.NoRelatedSym, quickfix.GroupTemplate{quickfix.GroupElement(tag.Symbol)})
			g.Add().SetString(tag.Symbol, sym)
			return g
		}
		mdReqOf := func(id, sym, subscription string) {
			m := quickfix.NewMessage()
			m.Header.SetString(tag.MsgType, "V")
			m.Body.SetString(tag.MDReqID, id)
			m.Body.SetString(tag.SubscriptionRequestType, subscription)
			m.Body.SetString(tag.MarketDepth, "5")
			m.Body.SetString(tag.MDUpdateType, "1")
			m.Body.SetGroup(types)
			m.Body.SetGroup(syms(sym))
			if err := quickfix.SendToTarget(m, a.id); err != nil {
				t.Fatal(err)
			}
		}
		mdReq := func(id, sym string) { mdReqOf(id, sym, "1") }
		// The W and X come from the feed's depth cache, which applies the
		// durable events on the feed's goroutine: an ExecutionReport can reach
		// the client before the cache has the same event (the mass cancel
		// above). Subscribed then, the W would show the cancelled level and a
		// later X would delete it, first in the same X as the new order's level
		// when both changes are sent together. So wait (bounded) until the
		// feed has applied every event the matcher has published (the cache
		// changes with the tracker, under the feed's lock) and the cache shows
		// ACME's book empty, as the matcher has it: the W is then empty and
		// each X carries only the change this subtest makes. An empty book
		// alone is not enough: it is also what the cache shows before the
		// order the mass cancel removed has reached it.
		acme, _ := s.fixmd.Cache().Lookup("ACME")
		published := uint64(s.pipe.EventsPublished())
		var d marketdata.Depth
		for deadline := time.Now().Add(readWait); ; time.Sleep(5 * time.Millisecond) {
			applied := s.feed.Stats().Tracker.EventsApplied
			if err := s.fixmd.Cache().Depth(acme.ID, 0, &d); err != nil {
				t.Fatal(err)
			}
			if applied >= published && len(d.Bids)+len(d.Asks) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after %v the feed applied %d of %d events, the depth cache shows ACME bids %v asks %v", readWait, applied, published, d.Bids, d.Asks)
			}
		}
		mdReq("md1", "ACME")
		a.expect("W", map[int]string{262: "md1", 55: "ACME", 268: "0"})
		b.send("D", limit("mdo", "ACME", "1", "7", "99.50")...)
		b.expect("8", map[int]string{11: "mdo", 150: "0"})
		a.expect("X", map[int]string{262: "md1", 279: "0", 270: "99.50"})
		// A snapshot with entries (MDFullGrp), two levels of one side.
		b.send("D", limit("mdo2", "ACME", "1", "3", "99.40")...)
		b.expect("8", map[int]string{11: "mdo2", 150: "0"})
		a.expect("X", map[int]string{262: "md1", 279: "0", 270: "99.40"})
		mdReqOf("md3", "ACME", "0")
		w := a.expect("W", map[int]string{262: "md3", 55: "ACME", 268: "2"})
		if !strings.Contains(w.raw, "|268=2|269=0|270=99.50|271=7|346=1|269=0|270=99.40|271=3|346=1|") {
			t.Errorf("snapshot: %s", w.raw)
		}
		// An unsubscribe of a request never made: a MarketDataRequestReject
		// with a Text and no reason.
		mdReqOf("md4", "ACME", "2")
		if y := a.expect("Y", map[int]string{262: "md4"}); y.get(281) != "" || y.get(58) == "" {
			t.Errorf("unsubscribe of an unknown MDReqID: %s", y.raw)
		}
		b.send("F", "11", "mdc2", "41", "mdo2", "55", "ACME", "54", "1", "60", now())
		b.expect("8", map[int]string{11: "mdc2", 150: "4"})
		a.expect("X", map[int]string{262: "md1", 279: "2", 270: "99.40"})
		mdReq("md2", "NOPE")
		a.expect("Y", map[int]string{262: "md2", 281: "0"})
		b.send("F", "11", "mdc", "41", "mdo", "55", "ACME", "54", "1", "60", now())
		b.expect("8", map[int]string{11: "mdc", 150: "4"})
		a.expect("X", map[int]string{262: "md1", 279: "2"})
	})

	run("market data trades", func(t *testing.T) {
		// The last trade (269=2) and the day's volume (269=B), in a W and
		// an X a strict client takes. ACME's book is empty after the
		// subtest before; b trades with itself (no Account, so no
		// self-trade prevention).
		types := quickfix.NewRepeatingGroup(tag.NoMDEntryTypes, quickfix.GroupTemplate{quickfix.GroupElement(tag.MDEntryType)})
		types.Add().SetString(tag.MDEntryType, "2")
		types.Add().SetString(tag.MDEntryType, "B")
		syms := quickfix.NewRepeatingGroup(tag.NoRelatedSym, quickfix.GroupTemplate{quickfix.GroupElement(tag.Symbol)})
		syms.Add().SetString(tag.Symbol, "ACME")
		m := quickfix.NewMessage()
		m.Header.SetString(tag.MsgType, "V")
		m.Body.SetString(tag.MDReqID, "mdt")
		m.Body.SetString(tag.SubscriptionRequestType, "1")
		m.Body.SetString(tag.MarketDepth, "0")
		m.Body.SetString(tag.MDUpdateType, "1")
		m.Body.SetGroup(types)
		m.Body.SetGroup(syms)
		if err := quickfix.SendToTarget(m, a.id); err != nil {
			t.Fatal(err)
		}
		w := a.expect("W", map[int]string{262: "mdt", 55: "ACME"})
		if !strings.Contains(w.raw, "|269=B|271=") {
			t.Errorf("snapshot without the day's volume: %s", w.raw)
		}
		b.send("D", limit("mdt-b", "ACME", "1", "3", "99.00")...)
		b.expect("8", map[int]string{11: "mdt-b", 150: "0"})
		b.send("D", limit("mdt-s", "ACME", "2", "3", "99.00")...)
		b.expect("8", map[int]string{11: "mdt-s", 150: "F"})
		b.expect("8", map[int]string{11: "mdt-b", 150: "F"})
		x := a.expect("X", map[int]string{262: "mdt", 279: "0", 269: "2", 270: "99.00", 271: "3"})
		if !strings.Contains(x.raw, "|279=1|269=B|55=ACME|271=") {
			t.Errorf("a trade's refresh without the day's volume: %s", x.raw)
		}
	})

	run("business and session rejects", func(t *testing.T) {
		// A type the venue does not take: its ID field echoed as
		// BusinessRejectRefID (379), which FIX 4.4 requires when the
		// message has one; an ExecutionReport from a client has none.
		a.send("c", "320", "sd1", "321", "0")
		a.expect("j", map[int]string{372: "c", 380: "3", 379: "sd1", 58: "Unsupported Message Type"})
		a.send("8", "37", "x1", "17", "x1", "150", "0", "39", "0", "55", "ACME", "54", "1", "151", "1", "14", "0", "6", "0")
		if j := a.expect("j", map[int]string{372: "8", 380: "3"}); j.get(379) != "" {
			t.Errorf("BusinessRejectRefID of a type with no ID field: %s", j.raw)
		}
		// An invalid Side value is refused by the venue's own dictionary check.
		a.send("D", limit("bad1", "ACME", "Z", "1", "99.00")...)
		a.expect("3", map[int]string{371: "54", 373: "5"})
	})

	run("mass status", func(t *testing.T) {
		a.send("AF", "584", "ms0", "585", "7")
		none := a.expect("8", map[int]string{584: "ms0", 150: "I", 37: "NONE", 911: "0", 912: "Y"})
		if none.get(58) != "no open orders" {
			t.Errorf("empty mass status: %s", none.raw)
		}
		a.send("D", limit("ms1", "ACME", "1", "5", "96.00", "1", "ACC-M")...)
		a.expect("8", map[int]string{11: "ms1", 150: "0"})
		a.send("D", limit("ms2", "LOTS", "2", "20", "52.00")...)
		a.expect("8", map[int]string{11: "ms2", 150: "0"})
		b.send("D", limit("ms3", "LOTS", "1", "10", "52.00")...)
		b.expect("8", map[int]string{11: "ms3", 150: "F"})
		a.expect("8", map[int]string{11: "ms2", 150: "F", 39: "1"})
		a.send("AF", "584", "ms-all", "585", "7")
		r1 := a.expect("8", map[int]string{584: "ms-all", 11: "ms1"})
		r2 := a.expect("8", map[int]string{584: "ms-all", 11: "ms2"})
		if r1.get(150) != "I" || r1.get(39) != "0" || r1.get(911) != "2" || r1.get(912) != "" || r1.get(1) != "ACC-M" || r1.get(151) != "5" {
			t.Errorf("first report: %s", r1.raw)
		}
		if r2.get(39) != "1" || r2.get(14) != "10" || r2.get(151) != "10" || r2.get(912) != "Y" || r2.get(6) != "52.000000" {
			t.Errorf("last report: %s", r2.raw)
		}
		a.send("AF", "584", "ms-sec", "585", "1", "55", "LOTS")
		a.expect("8", map[int]string{584: "ms-sec", 11: "ms2", 911: "1", 912: "Y"})
		a.send("AF", "584", "ms-acc", "585", "7", "1", "ACC-M")
		a.expect("8", map[int]string{584: "ms-acc", 11: "ms1", 911: "1", 912: "Y"})
		// What the venue cannot serve is refused, never ignored.
		a.send("AF", "584", "ms-bad1", "585", "1", "55", "NOPE")
		a.expect("j", map[int]string{372: "AF", 379: "ms-bad1", 380: "2"})
		a.send("AF", "584", "ms-bad2", "585", "1")
		a.expect("j", map[int]string{372: "AF", 379: "ms-bad2", 380: "5"})
		a.send("AF", "584", "ms-bad3", "585", "3")
		a.expect("j", map[int]string{372: "AF", 379: "ms-bad3", 380: "0"})
		a.send("AF", "585", "7")
		a.expect("3", map[int]string{371: "584", 373: "1"})
		a.send("q", "11", "ms-mc", "530", "7", "60", now())
		a.expect("r", map[int]string{11: "ms-mc", 533: "2"})
	})

	run("auction market data", func(t *testing.T) {
		// An opening call on LOTS: a subscription to MDEntryType A (IMBALANCE)
		// gets the indicative uncross as it changes, then its deletion.
		if err := s.Gateway().SetTradingStatus("LOTS", venue.TradingStatusOpeningCall, time.Second); err != nil {
			t.Fatal(err)
		}
		a.expect("h", map[int]string{325: "Y", 336: "LOTS"})
		m := quickfix.NewMessage()
		m.Header.SetString(tag.MsgType, "V")
		m.Body.SetString(tag.MDReqID, "imb1")
		m.Body.SetString(tag.SubscriptionRequestType, "1")
		m.Body.SetString(tag.MarketDepth, "0")
		m.Body.SetString(tag.MDUpdateType, "1")
		types := quickfix.NewRepeatingGroup(tag.NoMDEntryTypes, quickfix.GroupTemplate{quickfix.GroupElement(tag.MDEntryType)})
		types.Add().SetString(tag.MDEntryType, "A")
		m.Body.SetGroup(types)
		g := quickfix.NewRepeatingGroup(tag.NoRelatedSym, quickfix.GroupTemplate{quickfix.GroupElement(tag.Symbol)})
		g.Add().SetString(tag.Symbol, "LOTS")
		m.Body.SetGroup(g)
		if err := quickfix.SendToTarget(m, a.id); err != nil {
			t.Fatal(err)
		}
		a.expect("W", map[int]string{262: "imb1", 55: "LOTS"})
		b.send("D", limit("au1", "LOTS", "1", "20", "52.00")...)
		b.expect("8", map[int]string{11: "au1", 150: "0"})
		b.send("D", limit("au2", "LOTS", "2", "10", "51.50")...)
		b.expect("8", map[int]string{11: "au2", 150: "0"})
		// 51.50 and 52.00 both trade 10 with 10 bought over: market pressure
		// takes the higher.
		x := a.expect("X", map[int]string{262: "imb1", 269: "A", 55: "LOTS", 270: "52.00", 271: "10", 277: "P"})
		if x.get(58) != "imbalance buy 10; rule MarketPressure" {
			t.Errorf("indicative: %s", x.raw)
		}
		if err := s.Gateway().SetTradingStatus("LOTS", venue.TradingStatusOpen, time.Second); err != nil {
			t.Fatal(err)
		}
		b.expect("8", map[int]string{11: "au2", 150: "F", 31: "52.00"})
		a.expect("X", map[int]string{262: "imb1", 279: "2", 269: "A", 270: "52.00"})
		b.send("F", "11", "au1c", "41", "au1", "55", "LOTS", "54", "1", "60", now())
		b.expect("8", map[int]string{11: "au1c", 150: "4"})
	})

	run("trading session status", func(t *testing.T) {
		a.send("g", "335", "ts1", "263", "0")
		a.expect("h", map[int]string{335: "ts1", 336: "ALL", 340: "2"})
		a.send("g", "335", "ts2", "263", "0", "336", "HALTD")
		a.expect("h", map[int]string{335: "ts2", 336: "HALTD", 340: "1"})
		a.send("g", "335", "ts3", "263", "1", "336", "CLSD")
		a.expect("h", map[int]string{335: "ts3", 336: "CLSD", 340: "3"})
		a.send("g", "335", "ts4", "263", "0", "336", "NOPE")
		a.expect("h", map[int]string{335: "ts4", 336: "NOPE", 340: "6", 567: "1"})
		a.send("g", "263", "0")
		a.expect("3", map[int]string{371: "335", 373: "1"})
		// Halting an instrument tells every logged-on session, unasked.
		if err := s.Gateway().SetTradingStatus("ACME", venue.TradingStatusHalted, time.Second); err != nil {
			t.Fatal(err)
		}
		a.expect("h", map[int]string{325: "Y", 336: "ACME", 340: "1"})
		b.expect("h", map[int]string{325: "Y", 336: "ACME", 340: "1"})
		a.send("D", limit("h1", "ACME", "1", "1", "99.00")...)
		a.expect("8", map[int]string{11: "h1", 150: "8", 103: "2"})
		a.send("g", "335", "ts5", "263", "0", "336", "ACME")
		a.expect("h", map[int]string{335: "ts5", 336: "ACME", 340: "1"})
		if err := s.Gateway().SetTradingStatus("ACME", venue.TradingStatusOpen, time.Second); err != nil {
			t.Fatal(err)
		}
		a.expect("h", map[int]string{325: "Y", 336: "ACME", 340: "2"})
		b.expect("h", map[int]string{325: "Y", 336: "ACME", 340: "2"})
		if err := s.Gateway().SetTradingStatus("ACME", venue.TradingStatusClosed, time.Second); err != nil {
			t.Fatal(err)
		}
		a.expect("h", map[int]string{325: "Y", 336: "ACME", 340: "3"})
		b.expect("h", map[int]string{325: "Y", 336: "ACME", 340: "3"})
	})

	a.t, b.t = t, t
	a.checkNoRejects()
	b.checkNoRejects()
}

// TestStrictClientThrottleAndLogout: the throttle's reject and the Logout of
// a session over its message rate reach a strict client intact.
func TestStrictClientThrottleAndLogout(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := startStrict(t, s, "SLOW")
	for i := range 4 { // 3 orders a second are allowed
		c.send("D", limit("t"+strconv.Itoa(i), "ACME", "1", "1", "90.00")...)
	}
	c.expect("8", map[int]string{11: "t3", 150: "8", 103: "99"})
	for i := range 6 { // 8 messages a second
		c.send("H", "11", "t0", "55", "ACME", "54", "1", "790", strconv.Itoa(i))
	}
	c.expect("5", map[int]string{58: "message rate limit exceeded"})
	c.checkNoRejects()
}

// TestStrictClientLogonRefused: the Logout the FIX edge writes itself when it
// refuses a Logon (wrong password) reaches a strict client intact, with its
// Text, and the client refuses nothing.
func TestStrictClientLogonRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), `
[[session]]
comp_id = "LOCKED"
password = "secret"
`), Options{})
	c := connectStrict(t, s, "LOCKED", "wrong")
	deadline := time.Now().Add(readWait)
	for {
		c.mu.Lock()
		var logout string
		for _, m := range c.wire {
			if strings.Contains(m, "|35=5|") {
				logout = m
			}
		}
		c.mu.Unlock()
		if logout != "" {
			if !strings.Contains(logout, "|58=Logon refused|") {
				t.Fatalf("refusal: %s", logout)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Logout within %v", readWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.checkNoRejects()
}

// TestStrictClientCapacityReject: an order past the matcher's order pool is
// rejected with a FIX 4.4 OrdRejReason (99) that a strict client accepts.
func TestStrictClientCapacityReject(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), "")
	cfg.Engine.OrdersMax = 2
	none := 0 // the pool's bound, not the session's (openbound_test.go)
	cfg.SessionDefaults.OpenOrdersMax = &none
	s := startServer(t, cfg, Options{})
	c := startStrict(t, s, "CLIENT3")
	for _, id := range []string{"cap1", "cap2"} {
		c.send("D", limit(id, "ACME", "1", "1", "95.00")...)
		c.expect("8", map[int]string{11: id, 150: "0"})
	}
	c.send("D", limit("cap3", "ACME", "1", "1", "95.00")...)
	c.expect("8", map[int]string{11: "cap3", 150: "8", 103: "99", 58: gateway.CapacityText})
	c.checkNoRejects()
}

// TestSessionMessagesAreBounded: session messages count in a session's
// message rate as application messages do (Heartbeats at any rate went
// unbounded); a burst of ResendRequests is refused beyond
// gateway.ResendRequestsPerSecondMax a second (each had QuickFIX/Go send
// the whole store again); a ResendRequest from BeginSeqNo 0 is refused
// (its gap fill was numbered 0), as is one whose EndSeqNo is below its
// BeginSeqNo (it was answered with nothing at all).
func TestSessionMessagesAreBounded(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	slow := logon(t, s, "SLOW", true)
	for i := range 12 { // 8 messages a second
		if err := slow.Send("0"); err != nil {
			t.Fatalf("heartbeat %d: %v", i, err)
		}
	}
	if _, err := slow.Expect(readWait, "5", map[int]string{58: "message rate limit exceeded"}); err != nil {
		t.Fatalf("no Logout for a session over its rate in Heartbeats: %v", err)
	}

	c := logon(t, s, "CLIENT1", true)
	if err := c.Send("2", fixclient.F(7, "0"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(readWait, "3", map[int]string{373: "5", 371: "7", 372: "2"}); err != nil {
		t.Fatalf("a ResendRequest from 0 not refused: %v", err)
	}
	if err := c.Send("2", fixclient.F(7, "3"), fixclient.F(16, "2")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(readWait, "3", map[int]string{373: "5", 371: "16", 372: "2"}); err != nil {
		t.Fatalf("a ResendRequest whose EndSeqNo is below its BeginSeqNo not refused: %v", err)
	}
	for range gateway.ResendRequestsPerSecondMax + 2 {
		if err := c.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
			t.Fatal(err)
		}
	}
	r, err := c.Expect(readWait, "3", map[int]string{373: "99", 372: "2"})
	if err != nil {
		t.Fatalf("a burst of ResendRequests not bounded: %v", err)
	}
	if !strings.Contains(r.Get(58), "ResendRequests in a second") {
		t.Fatalf("Reject text %q", r.Get(58))
	}
}

// TestRefusedMessagesCountInRate: every message a session sends counts in
// its message rate, whatever becomes of it. A burst of messages that are
// all refused (an order without its Side, which the Validator refuses; a
// PossDupFlag message below the expected MsgSeqNum without
// OrigSendingTime, which QuickFIX/Go refuses itself before any callback)
// drew a session Reject for every one; now the session is logged out at
// its limit, once, and nothing beyond the limit is answered.
func TestRefusedMessagesCountInRate(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	slow := logon(t, s, "SLOW", true) // 8 messages a second
	const burst = 40
	var raw []byte
	for i := range burst {
		if i%2 == 0 {
			raw = append(raw, fixclient.Build(fixclient.F(35, "D"), fixclient.F(49, slow.Sender), fixclient.F(56, slow.Target),
				fixclient.F(34, strconv.Itoa(slow.NextOut)), fixclient.F(52, fixclient.Timestamp(time.Now())),
				fixclient.F(11, "nos"+strconv.Itoa(i)), fixclient.F(21, "1"), fixclient.F(38, "1"), fixclient.F(40, "2"),
				fixclient.F(44, "90.00"), fixclient.F(55, "ACME"), fixclient.F(60, fixclient.Timestamp(time.Now())))...)
			slow.NextOut++
			continue
		}
		raw = append(raw, fixclient.Build(fixclient.F(35, "0"), fixclient.F(49, slow.Sender), fixclient.F(56, slow.Target),
			fixclient.F(34, "1"), fixclient.F(43, "Y"), fixclient.F(52, fixclient.Timestamp(time.Now())))...)
	}
	if err := slow.SendRaw(raw); err != nil {
		t.Fatal(err)
	}
	var rejects, logouts int
	for {
		m, err := slow.ReadAny(readWait)
		if err != nil {
			break // closed by the venue after its Logout, or the wait ran out
		}
		switch m.Type() {
		case "3":
			rejects++
		case "5":
			logouts++
			if m.Get(58) != "message rate limit exceeded" {
				t.Fatalf("Logout: %q", m.Get(58))
			}
		default:
			t.Fatalf("unexpected %s: %v", m.Type(), m)
		}
	}
	// The 8 within the rate, and what QuickFIX/Go had read when the ninth
	// went over it: the ninth, the one queued behind it (InChanCapacity 1)
	// and the one its reader holds, which it still answers itself if they
	// are PossDupFlag Heartbeats. The FIX edge drops the rest.
	const answeredMax = 8 + 3
	if logouts != 1 || rejects > answeredMax {
		t.Fatalf("%d refused messages drew %d Rejects and %d Logouts; want at most %d and one", burst, rejects, logouts, answeredMax)
	}
	if s.edge.Stats().Count(edge.ReasonSessionEnding) == 0 {
		t.Fatal("the FIX edge dropped nothing the session sent once logged out")
	}

	// What the edge dropped consumed no MsgSeqNum: a logon without a
	// reset is asked for it, as FIX asks for a message not received.
	waitReleased(t, s, "SLOW")
	again, err := fixclient.Dial(s.FIXAddr(), "SLOW", s.cfg.Venue.SenderCompID)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	again.NextOut = slow.NextOut
	if err := again.Send("A", fixclient.F(98, "0"), fixclient.F(108, "30")); err != nil {
		t.Fatal(err)
	}
	if m, err := again.ReadAny(readWait); err != nil || m.Type() != "A" {
		t.Fatalf("logon again: %v %v", m, err)
	}
	m, err := again.ReadAny(readWait)
	if err != nil || m.Type() != "2" {
		t.Fatalf("after a logon past the dropped messages: %v %v, want a ResendRequest", m, err)
	}
	if begin, _ := strconv.Atoi(m.Get(7)); begin < 2 || begin >= slow.NextOut {
		t.Fatalf("ResendRequest from %d; the dropped messages are among 2..%d", begin, slow.NextOut-1)
	}
}

// TestStopRefusesNewOrders: once a stop begins, a new order or replace is
// refused (it could fill a session the stop has already logged out, whose
// report would then be neither sent nor stored); a cancel is still taken.
func TestStopRefusesNewOrders(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "rest", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "rest", 150: "0"})
	s.Gateway().BeginStop(func() bool { return true }, time.Second)
	sendOrder(t, c, order{id: "late", side: "2", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "late", 150: "8", 58: "venue stopping: new orders and replaces are refused; cancels are taken"})
	if err := c.Send("F", fixclient.F(11, "cxl"), fixclient.F(41, "rest"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "cxl", 150: "4"})
}

// TestStrictClientLaxSession: a session configured with
// RejectInvalidMessage=N passes the gateway values the dictionary does not
// allow. Those the venue's answers echo (an order's Side, OrdType,
// OrderQty…, a status request's Side, a mass cancel's
// MassCancelRequestType) made answers a strict client refuses (an
// ExecutionReport with 54=Z); each now gets the session Reject a validating
// session gives it, and the session stays as lax as configured for the
// rest (a tag the dictionary does not define on an order is taken).
func TestStrictClientLaxSession(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), `
[[session]]
comp_id = "LAX"
[session.quickfix]
RejectInvalidMessage = "N"
`), Options{})
	lax := startStrict(t, s, "LAX")
	strict := startStrict(t, s, "CLIENT3")
	cases := []struct {
		msgType string
		fields  []string
	}{
		{"D", limit("z1", "ACME", "Z", "1", "99.00")},
		{"D", append(limit("z2", "ACME", "1", "1", "99.00")[:10], "40", "Z", "44", "99.00", "59", "0")},
		{"D", append(limit("z3", "ACME", "1", "1", "99.00")[:14], "59", "Z")},
		{"D", limit("z4", "ACME", "1", "1x", "99.00")},
		{"D", limit("z5", "ACME", "1", "1", "9x9.00")},
		{"D", append(limit("z6", "ACME", "1", "1", "99.00")[:10], "40", "3", "99", "1e2", "59", "0")},
		{"D", limit("z7", "ACME", "1", "1", "99.00", "111", "abc")},
		{"D", limit("z8", "ACME", "1", "1", "99.00", "18", "6 !")},
		{"D", append(limit("z9", "ACME", "1", "1", "99.00")[:14], "59", "6", "126", "tomorrow")},
		{"H", []string{"11", "z10", "55", "ACME", "54", "Z"}},
		{"q", []string{"11", "z11", "530", "Z", "60", now()}},
		{"AD", []string{"568", "z12", "569", "9"}},
	}
	for _, c := range cases {
		var want *strictMsg
		for _, cl := range []*strictClient{strict, lax} {
			cl.send(c.msgType, c.fields...)
			got := cl.expect("3", map[int]string{372: c.msgType})
			if want == nil {
				want = got
				continue
			}
			for _, k := range []int{371, 373, 58} {
				if got.get(k) != want.get(k) {
					t.Errorf("%s %v: the lax session's Reject %s, a validating session's %s", c.msgType, c.fields, got.raw, want.raw)
					break
				}
			}
		}
	}
	// What the session is lax about is taken: a tag NewOrderSingle does not
	// define.
	lax.send("D", limit("z13", "ACME", "1", "1", "99.00", "9999", "x")...)
	lax.expect("8", map[int]string{11: "z13", 150: "0"})
	// A cancel's Side the dictionary does not allow, which its answer does
	// not echo: refused naming it, where the order's side was compared
	// with none ("Side (54) 1, not 1").
	lax.send("F", "11", "z14", "41", "z13", "55", "ACME", "54", "Z", "60", now())
	lax.expect("9", map[int]string{11: "z14", 41: "z13", 39: "0", 58: `Side (54) must be 1 (buy) or 2 (sell), not "Z"`})
	lax.checkNoRejects()
	strict.checkNoRejects()
}
