//go:build linux

package httpload

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratebench/ratebench/workload"
)

// TestEpollLoops: one loop or more than the connections allow, open and
// closed, the connections are shared out and capped, every arrival is
// answered, and the loops' records reach the collector in order (the
// floor protocol holds across loops).
func TestEpollLoops(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	defer func(n int) { loopsOverride = n }(loopsOverride)
	for _, loops := range []int{1, 3, 8} {
		loopsOverride = loops
		res, err := Attack(context.Background(), Config{URL: srv.URL, Engine: EngineEpoll, Connections: 4,
			Workload: workload.Spec{Name: "poisson", Rate: 3000, Duration: 100 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		run := res.Run
		if run.Admitted != run.Offered || run.Errors != 0 || run.Live.Workers > 4 || run.HTTP.Connections > 4 || run.Live.Dropped != 0 ||
			run.Live.Reordered != 0 {
			t.Errorf("%d loops, open: admitted %d of %d, errors %v, %d workers, %d connections, %d reordered", loops,
				run.Admitted, run.Offered, run.ErrorKinds, run.Live.Workers, run.HTTP.Connections, run.Live.Reordered)
		}
		res, err = Attack(context.Background(), Config{URL: srv.URL, Engine: EngineEpoll, Connections: 4, Closed: true,
			Workload: workload.Spec{Name: "constant", Duration: 100 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		if run := res.Run; run.Admitted == 0 || run.Errors != 0 || run.Live.Workers != 4 || run.HTTP.Connections != 4 ||
			run.Live.Reordered != 0 {
			t.Errorf("%d loops, closed: admitted %d, errors %v, %d workers, %d connections, %d reordered", loops,
				run.Admitted, run.ErrorKinds, run.Live.Workers, run.HTTP.Connections, run.Live.Reordered)
		}
	}
}
