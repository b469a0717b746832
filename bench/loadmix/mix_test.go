package loadmix

import "testing"

func TestParseReadsWhatStringWrites(t *testing.T) {
	for _, m := range []Mix{Passive, Cross, Mixed} {
		got, err := Parse(m.String())
		if err != nil || got != m {
			t.Errorf("Parse(%q) = %v, %v; want %v", m.String(), got, err, m)
		}
	}
	if _, err := Parse("aggressive"); err == nil {
		t.Error("an unknown name was accepted")
	}
	if got := Mix(7).String(); got != "mix(7)" {
		t.Errorf("Mix(7) = %q", got)
	}
}
