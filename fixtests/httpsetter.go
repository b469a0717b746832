package fixtests

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// SeqNumsPath is the venue's test hook that sets a session's next sequence
// numbers. The venue mounts it on its metrics listener only when the
// configuration says metrics.test_hooks = true.
const SeqNumsPath = "/test/seqnums"

// hookErrorBytesMax bounds how much of a refusal's body an error quotes.
const hookErrorBytesMax = 512

// HTTPSetter carries out iSET_SESSION through the venue's test hook:
//
//	POST http://<Addr>/test/seqnums?session=FIX.4.4:ISLD->TW&next_sender=N&next_target=M
//
// A zero sequence number is left out of the request, so the venue leaves
// that counter unchanged. The venue answers 204 No Content on success; any
// other answer is an error that quotes the venue's reason.
type HTTPSetter struct {
	// Addr is the venue's metrics listener, host:port.
	Addr string
	// Client sends the request; nil means http.DefaultClient. The
	// context given to SetNextSeqNums bounds each request.
	Client *http.Client
}

// SetNextSeqNums implements SessionSetter.
func (h HTTPSetter) SetNextSeqNums(ctx context.Context, s SessionSeqNums) error {
	if h.Addr == "" {
		return errors.New("fixtests: HTTPSetter.Addr is empty")
	}
	if s.NextSenderSeqNum < 0 || s.NextTargetSeqNum < 0 {
		return fmt.Errorf("fixtests: negative sequence number in %v", s)
	}
	q := url.Values{}
	q.Set("session", s.BeginString+":"+s.SenderCompID+"->"+s.TargetCompID)
	if s.NextSenderSeqNum > 0 {
		q.Set("next_sender", strconv.Itoa(s.NextSenderSeqNum))
	}
	if s.NextTargetSeqNum > 0 {
		q.Set("next_target", strconv.Itoa(s.NextTargetSeqNum))
	}
	u := url.URL{Scheme: "http", Host: h.Addr, Path: SeqNumsPath, RawQuery: q.Encode()}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), nil)
	if err != nil {
		return err
	}
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("fixtests: sequence-number hook: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, hookErrorBytesMax))
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("fixtests: sequence-number hook answered %s: %s (is metrics.test_hooks on?)",
			resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
