package fixtests

import (
	"path/filepath"
	"slices"
	"strings"
)

// QuickFIXEchoScripts are the QuickFIX FIX 4.4 server scripts (file names
// without ".def") that assume QuickFIX's echo test application: it sends a
// NewOrderSingle or SecurityDefinition back as the same message type and
// silently drops a PossResend order it has already seen. A venue answers
// orders with ExecutionReports, so these cannot pass against one; the
// scripts under scripts/session put a venue in the same session-layer
// situations instead. The other 45 QuickFIX scripts are pure session layer.
var QuickFIXEchoScripts = []string{
	"14e_IncorrectEnumValue",
	"15_HeaderAndBodyFieldsOrderedDifferently",
	"19a_PossResendMessageThatHAsAlreadyBeenSent",
	"19b_PossResendMessageThatHasNotBeenSent",
	"20_SimultaneousResendRequest",
	"21_RepeatingGroupSpecifierWithValueOfZero",
	"2d_GarbledMessage",
	"2f_PossDupOrigSendingTimeTooHigh",
	"2g_PossDupNoOrigSendingTime",
	"2m_BodyLengthValueNotCorrect",
	"3b_InvalidChecksum",
	"3c_GarbledMessage",
	"8_AdminAndApplicationMessages",
	"8_OnlyApplicationMessages",
}

// SkipQuickFIXEcho returns an Options.Skip function that skips the
// QuickFIXEchoScripts found directly in dir, and nothing else, so that
// scripts of the same name in other folders still run. Folders are compared
// as absolute paths, so a relative and an absolute spelling agree.
func SkipQuickFIXEcho(dir string) func(path string) string {
	dir = absPath(dir)
	return func(path string) string {
		if absPath(filepath.Dir(path)) != dir {
			return ""
		}
		stem := strings.TrimSuffix(filepath.Base(path), scriptExt)
		if slices.Contains(QuickFIXEchoScripts, stem) {
			return "assumes QuickFIX's echo test application"
		}
		return ""
	}
}

// absPath is filepath.Abs, falling back to the cleaned path when the working
// directory is unknown.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
