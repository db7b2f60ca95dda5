package sqlite_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/sqlite"
)

// A fixed window of 3 per second whose counts live in a file: every
// process that opens the file shares them.
func ExampleNewFixedWindow() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(filepath.Join(dir, "limits.db"), 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	l, err := sqlite.NewFixedWindow(db, "api", algorithms.Policy{Limit: 3, Window: time.Second}, sqlite.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, at := range []time.Duration{0, 0, 0, 400 * time.Millisecond, time.Second} {
		d, _ := l.Allow(at, "user-42", 1)
		fmt.Printf("at %v: allowed=%v remaining=%d retry-after=%v\n", at, d.Allowed, d.Remaining, d.RetryAfter)
	}
	// Output:
	// at 0s: allowed=true remaining=2 retry-after=0s
	// at 0s: allowed=true remaining=1 retry-after=0s
	// at 0s: allowed=true remaining=0 retry-after=0s
	// at 400ms: allowed=false remaining=0 retry-after=600ms
	// at 1s: allowed=true remaining=2 retry-after=0s
}
