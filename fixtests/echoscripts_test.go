package fixtests

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSkipQuickFIXEcho(t *testing.T) {
	dir := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, dir)
	if err != nil {
		t.Fatal(err)
	}
	skip := SkipQuickFIXEcho(rel) // relative spelling of the same folder
	tests := []struct {
		path string
		skip bool
	}{
		{filepath.Join(dir, "2d_GarbledMessage.def"), true},
		{filepath.Join(dir, "8_OnlyApplicationMessages.def"), true},
		{filepath.Join(dir, "2a_MsgSeqNumCorrect.def"), false},
		{filepath.Join(dir, "other", "2d_GarbledMessage.def"), false},
		{filepath.Join("scripts", "session", "2d_GarbledMessage.def"), false},
	}
	for _, tt := range tests {
		if got := skip(tt.path) != ""; got != tt.skip {
			t.Errorf("skip(%s) = %v, want %v", tt.path, got, tt.skip)
		}
	}
	if len(QuickFIXEchoScripts) != 14 {
		t.Fatalf("%d echo scripts listed, the suite has 14", len(QuickFIXEchoScripts))
	}
}
