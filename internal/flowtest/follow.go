package flowtest

import "github.com/fixvenue/fixvenue/sbe/venue"

// Follow keeps l as a client would, from one event of the matcher's: an
// OrderAccepted adds what accept makes of it (unless accept says no), an
// OrderReplaced is handed to replaced (when not nil) with the live order it
// changes, and a Fill that leaves nothing or an OrderCancelled drops the
// order. It returns the event's template ID, for the caller's own checks,
// and the error of an event that does not decode (l is then unchanged).
func (l *Live[T]) Follow(ev []byte, accept func(e *venue.OrderAccepted) (T, bool),
	replaced func(o *T, e *venue.OrderReplaced)) (uint16, error) {
	tid, err := venue.TemplateIDOf(ev, 0)
	if err != nil {
		return 0, err
	}
	switch tid {
	case venue.OrderAcceptedTemplateID:
		var e venue.OrderAccepted
		if err := e.WrapDecode(ev, 0); err != nil {
			return tid, err
		}
		if o, ok := accept(&e); ok {
			l.Add(e.OrderID(), o)
		}
	case venue.OrderReplacedTemplateID:
		var e venue.OrderReplaced
		if err := e.WrapDecode(ev, 0); err != nil {
			return tid, err
		}
		if o := l.Find(e.OrderID()); o != nil && replaced != nil {
			replaced(o, &e)
		}
	case venue.FillTemplateID:
		var e venue.Fill
		if err := e.WrapDecode(ev, 0); err != nil {
			return tid, err
		}
		if e.LeavesQty() == 0 {
			l.Drop(e.OrderID())
		}
	case venue.OrderCancelledTemplateID:
		var e venue.OrderCancelled
		if err := e.WrapDecode(ev, 0); err != nil {
			return tid, err
		}
		l.Drop(e.OrderID())
	}
	return tid, nil
}
