package periodic

import "time"

// Run calls do(now) every interval until stop is closed.
func Run(stop <-chan struct{}, interval time.Duration, do func(now time.Time)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			select {
			case <-stop: // both ready: stopping wins, so no call follows a close
				return
			default:
			}
			do(now)
		}
	}
}
