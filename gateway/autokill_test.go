package gateway

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestAutoKillLoggedLiveOnly: an automatic kill's RiskControlResult is
// logged by the live gateway and kept in its view, with the limit it knows
// and the reject that tripped a breach count; a gateway rendering reports
// again from the journal (a drop-copy replay, the reports lost at a crash)
// keeps it in its own view but logs nothing: the kill is old news.
func TestAutoKillLoggedLiveOnly(t *testing.T) {
	breach := make([]byte, venue.RiskBreachEncodedLength)
	var b venue.RiskBreach
	_ = b.WrapEncode(breach, 0)
	b.SetCauseSeq(7)
	b.SetLimit(venue.RiskLimitMaxOrderQty)
	b.SetLimitValue(100)
	b.SetRequestValue(102)
	kill := make([]byte, venue.RiskControlResultEncodedLength)
	var k venue.RiskControlResult
	_ = k.WrapEncode(kill, 0)
	k.SetCauseSeq(7)
	k.SetAction(venue.RiskActionAutoKill)
	k.SetResult(venue.RiskResultApplied)
	k.SetLimit(venue.RiskLimitKillAfterBreaches)
	k.SetCancelledCount(1)
	for _, replay := range []bool{false, true} {
		var logs bytes.Buffer
		g := &Gateway{log: slog.New(slog.NewTextHandler(&logs, nil)), metrics: NewMetrics(nil), replay: replay}
		g.instruments.Store(newInstrumentTable(nil))
		g.riskSeen.limits = map[RiskLimitKey]int64{{Subject: "session:0", Limit: venue.RiskLimitKillAfterBreaches}: 2}
		g.dispatch(breach)
		// As onRejected notes the reject it answers the breach with.
		g.breachAnswered(venue.RejectReasonRiskLimitExceeded, []byte("q2"), g.riskText(7, venue.RejectReasonRiskLimitExceeded))
		g.dispatch(kill)
		a := g.riskSeen.reports["session:0"].AutoKill
		if a == nil || !g.riskSeen.reports["session:0"].Killed || a.Limit != 2 || a.Figure != 2 || a.Seq != 7 || a.Cancelled != 1 ||
			a.TrippedBy != "session:0 ClOrdID q2: order exceeds limit: max order quantity of session:0: 102 > 100" {
			t.Errorf("replay %v: view %+v", replay, a)
		}
		logged := strings.Contains(logs.String(), "automatic kill switch tripped")
		if logged == replay {
			t.Errorf("replay %v: logged %v: %q", replay, logged, logs.String())
		}
	}
}
