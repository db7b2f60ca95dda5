package corpus

import (
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestXTimeRateOutOfOrder: x/time/rate's Limiter decides at the instant
// its caller passes (Allow reads time.Now() before it takes the lock). A
// call admitted at an instant earlier than the last admission's moves
// the limiter's clock back to it, so the next call is credited that time
// twice: callers that reach the lock out of time order, as concurrent
// handlers on a busy host do, get more than a token bucket of its rate
// and burst admits. The same four instants, 10 per second with a burst
// of 2, admit three in time order and four when the second and third
// swap; the probe of the corpus's x/time/rate target from four addresses
// sees it as admissions no bucket predicts.
func TestXTimeRateOutOfOrder(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(1e9, 0).Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name  string
		order []int // ms
		want  int   // admitted
	}{
		{name: "in time order", order: []int{0, 50, 100, 150}, want: 3},
		{name: "50 reaches the lock after 100", order: []int{0, 100, 50, 150}, want: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := rate.NewLimiter(10, 2)
			admitted := 0
			for _, ms := range tc.order {
				if l.AllowN(at(ms), 1) {
					admitted++
				}
			}
			if admitted != tc.want {
				t.Errorf("admitted %d of %v, want %d", admitted, tc.order, tc.want)
			}
		})
	}
}
