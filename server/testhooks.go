package server

import (
	"net/http"
	"strconv"

	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/ops"
)

// handleSetSeqNums serves POST /test/seqnums?session=FIX.4.4:ISLD->TW&next_sender=N&next_target=M
// (either number may be left out). It exists for conformance scripts that set a
// session's sequence numbers (iSET_SESSION) and is only mounted when
// metrics.test_hooks is true. The store serialises the change with QuickFIX/Go's
// own use of it.
func (s *Server) handleSetSeqNums(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	// The hook takes no token: on its loopback listener, a page a browser
	// on the machine shows could call it under its own name resolved to
	// loopback (DNS rebinding; a page of another origin is refused before,
	// ops.CrossOrigin).
	if !ops.LoopbackHost(r.Host) {
		http.Error(w, "the test hook is called by a loopback name (127.0.0.1, [::1], localhost), not "+strconv.Quote(r.Host), http.StatusForbidden)
		return
	}
	q := r.URL.Query()
	var id quickfix.SessionID
	found := false
	for i := range s.cfg.Sessions {
		sc := &s.cfg.Sessions[i]
		cand := quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: s.cfg.VenueCompID(sc), TargetCompID: sc.CompID}
		if cand.String() == q.Get("session") {
			id, found = cand, true
			break
		}
	}
	if !found {
		http.Error(w, "unknown session "+q.Get("session"), http.StatusNotFound)
		return
	}
	st, ok := s.stores.Lookup(id)
	if !ok {
		http.Error(w, "session has no store yet", http.StatusConflict)
		return
	}
	for _, p := range []struct {
		key string
		set func(int) error
	}{{"next_sender", st.SetNextSenderMsgSeqNum}, {"next_target", st.SetNextTargetMsgSeqNum}} {
		v := q.Get(p.key)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			http.Error(w, p.key+": want a positive integer", http.StatusBadRequest)
			return
		}
		if err := p.set(n); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
