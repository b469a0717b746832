package venue_test

import (
	"bytes"
	"testing"

	"github.com/fixvenue/fixvenue/sbe"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestTextGolden prints the golden messages through the package-level
// AppendText and compares with their text written out by hand from the
// golden bytes: every field in schema order with the schema's names, enums
// and sets by name, timestampNs (timeUnit nanosecond) as a UTC time, char
// arrays quoted up to the first NUL.
func TestTextGolden(t *testing.T) {
	tests := []struct {
		name string
		msg  []byte
		want string
	}{
		{"NewOrder", newOrderGolden, "NewOrder seq=72623859790382856 timestampNs=2024-04-05T19:34:38Z " +
			"sessionIdx=4660 side=Sell ordType=Limit instrumentId=305419896 timeInForce=IOC " +
			"flags=PostOnly|PossResend stpMode=CancelResting reserved=0 priceTicks=-100 qty=1000 expireTimeNs=0 " +
			`clOrdId="ORD-1" account="ACC42" stopPxTicks=10000 maxFloorQty=5`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("> ")
			got, err := venue.AppendText(prefix, tt.msg, 0)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "> "+tt.want {
				t.Errorf("text\n got %s\nwant > %s", got, tt.want)
			}
		})
	}
}

// A message read from a damaged or foreign record still prints: values the
// schema does not define by their number, bytes outside printable ASCII
// escaped.
func TestTextOfOddValues(t *testing.T) {
	buf := make([]byte, venue.CancelOrderEncodedLength)
	var m venue.CancelOrder
	if err := m.WrapEncode(buf, 0); err != nil {
		t.Fatal(err)
	}
	m.SetSide(venue.Side(9))
	m.ClOrdIDArray()[0] = '"'
	m.ClOrdIDArray()[1] = 0x80
	m.ClOrdIDArray()[2] = '\\'
	want := `CancelOrder seq=0 timestampNs=1970-01-01T00:00:00Z sessionIdx=0 side=Side(9) checks=0 ` +
		`instrumentId=0 orderId=0 clOrdId="\"\x80\\" origClOrdId=""`
	if got := m.String(); got != want {
		t.Errorf("text\n got %s\nwant %s", got, want)
	}
}

func TestTextRefuses(t *testing.T) {
	unknown := bytes.Clone(newOrderGolden)
	unknown[2] = 99 // template 99: not in the schema
	cut := newOrderGolden[:venue.NewOrderEncodedLength-1]
	for _, tt := range []struct {
		name string
		buf  []byte
		want error
	}{
		{"unknown template", unknown, sbe.ErrUnknownTemplate},
		{"block cut", cut, sbe.ErrShortBuffer},
		{"header cut", newOrderGolden[:3], sbe.ErrShortBuffer},
	} {
		got, err := venue.AppendText([]byte("keep"), tt.buf, 0)
		if err != tt.want || string(got) != "keep" {
			t.Errorf("%s: AppendText = %q, %v; want dst unchanged and %v", tt.name, got, err, tt.want)
		}
	}
}

// TestIsCommand checks the generated IsCommand against the rule the schema
// states: ids 1 to 100 are commands, and only ids the schema defines count.
func TestIsCommand(t *testing.T) {
	commands := 0
	for id := range 1 << 16 {
		name := venue.MessageName(uint16(id))
		want := name != "" && id <= 100
		if got := venue.IsCommand(uint16(id)); got != want {
			t.Errorf("IsCommand(%d) (%q) = %v, want %v", id, name, got, want)
		}
		if want {
			commands++
		}
	}
	if commands == 0 || !venue.IsCommand(venue.NewOrderTemplateID) || venue.IsCommand(venue.FillTemplateID) {
		t.Errorf("%d commands; NewOrder a command %v, Fill %v", commands,
			venue.IsCommand(venue.NewOrderTemplateID), venue.IsCommand(venue.FillTemplateID))
	}
}
