package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/algotest"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/sqlite"
)

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "limits.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var scopes atomic.Int64

func newWindow(t *testing.T, db *sql.DB, p algorithms.Policy) (*sqlite.FixedWindow, error) {
	return sqlite.NewFixedWindow(db, "s"+strconv.FormatInt(scopes.Add(1), 10), p, sqlite.Options{Timeout: 10 * time.Second})
}

// TestConformance: the suite every in-memory limiter passes, on a real
// SQLite file.
func TestConformance(t *testing.T) {
	db := openDB(t)
	e, err := all.Lookup("fixed-window")
	if err != nil {
		t.Fatal(err)
	}
	cfg := algotest.ForEntry(e)
	cfg.New = func(p algorithms.Policy) (algorithms.Limiter, error) {
		l, err := newWindow(t, db, p)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	algotest.Run(t, cfg)
}

// TestSameAsMemory: on random traces (steps back, jumps, costs above the
// limit, instants near a century or negative) every Decision equals
// algorithms.FixedWindow's.
func TestSameAsMemory(t *testing.T) {
	db := openDB(t)
	r := rand.New(rand.NewPCG(7, 8))
	for _, p := range []algorithms.Policy{
		{Limit: 10, Window: time.Second},
		{Limit: 7, Window: time.Second + 3},
		{Limit: 1000, Window: time.Hour},
	} {
		for _, origin := range []time.Duration{0, -5*time.Second - 7, 100*365*24*time.Hour + 3, math.MaxInt64 / 2} {
			mem, err := algorithms.NewFixedWindow(p)
			if err != nil {
				t.Fatal(err)
			}
			l, err := newWindow(t, db, p)
			if err != nil {
				t.Fatal(err)
			}
			at := origin
			for i := range 200 {
				switch k := r.IntN(10); {
				case k < 4:
					at += time.Duration(r.Int64N(int64(p.Interval()) * 2))
				case k < 6:
				case k < 7:
					at += time.Duration(r.Int64N(30)+1) * p.Window
				case k < 9:
					at -= time.Duration(r.Int64N(int64(p.Window) * 2))
				default:
					at = at - at%p.Window + p.Window
				}
				cost := int64(1)
				if r.IntN(4) == 0 {
					cost = r.Int64N(2*p.Limit) + 1
				}
				want, _ := mem.Allow(at, "k", cost)
				got, err := l.Allow(at, "k", cost)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("%v step %d: Allow(%v, k, %d)\n sqlite %+v\n memory %+v", p, i, at, cost, got, want)
				}
			}
		}
	}
}

// TestPrune: rows older than the previous window go, except each key's
// latest one.
func TestPrune(t *testing.T) {
	db := openDB(t)
	p := algorithms.Policy{Limit: 5, Window: time.Second}
	l, err := sqlite.NewFixedWindow(db, "prune", p, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		for _, key := range []string{"busy", "busy2"} {
			if _, err := l.Allow(time.Duration(i)*p.Window, key, 1); err != nil {
				t.Fatal(err)
			}
		}
		if i == 3 {
			if _, err := l.Allow(time.Duration(i)*p.Window, "idle", 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM ratebench_fixed_window WHERE scope = 'prune'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	// busy and busy2: the current and previous windows (and one more cut
	// at the previous prune); idle: its latest.
	if n > 7 {
		t.Fatalf("%d rows after 50 windows, want at most 7", n)
	}
	if err := sqlite.Forget(context.Background(), db, "prune"); err != nil {
		t.Fatal(err)
	}
}

// TestProcesses: several processes (this test binary run again) and
// several goroutines in each decide on one file at one instant, and
// exactly L are admitted in all.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := filepath.Join(t.TempDir(), "shared.db")
	const procs, limit = 3, 200
	db, err := sqlite.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.NewFixedWindow(db, "shared", algorithms.Policy{Limit: limit, Window: time.Hour}, sqlite.Options{}); err != nil {
		t.Fatal(err) // creates the table before the race
	}
	db.Close()
	var wg sync.WaitGroup
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	for i := range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
			cmd.Env = append(os.Environ(), "RATEBENCH_SQLITE_HELPER="+path)
			outs[i], errs[i] = cmd.CombinedOutput()
		})
	}
	wg.Wait()
	var total int
	for i := range procs {
		if errs[i] != nil {
			t.Fatalf("process %d: %v: %s", i, errs[i], outs[i])
		}
		_, after, ok := strings.Cut(string(outs[i]), "admitted=")
		if !ok {
			t.Fatalf("process %d said %q", i, outs[i])
		}
		n, err := strconv.Atoi(strings.Fields(after)[0])
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if total != limit {
		t.Fatalf("%d processes admitted %d in all at one instant, want exactly %d", procs, total, limit)
	}
}

// TestHelperProcess is one of TestProcesses' processes: 4 goroutines, each
// with its own connection (database handle), 100 requests each.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv("RATEBENCH_SQLITE_HELPER")
	if path == "" {
		t.Skip("helper for TestProcesses")
	}
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		db, err := sqlite.Open(path, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		l, err := sqlite.NewFixedWindow(db, "shared", algorithms.Policy{Limit: 200, Window: time.Hour}, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for range 100 {
				d, err := l.Allow(time.Minute, "k", 1)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	fmt.Printf("admitted=%d\n", admitted.Load())
}

func TestOpenErrors(t *testing.T) {
	for _, path := range []string{"", "a?b", filepath.Join(t.TempDir(), "missing", "dir", "x.db")} {
		if db, err := sqlite.Open(path, 0); err == nil {
			db.Close()
			t.Errorf("Open(%q): no error", path)
		}
	}
}
