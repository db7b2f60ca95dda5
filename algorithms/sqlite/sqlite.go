// Package sqlite keeps a fixed-window limiter's counts in a SQLite file
// (modernc.org/sqlite: pure Go, no cgo), shared by every goroutine and
// every process that opens the same file on one host.
//
// One table, ratebench_fixed_window, holds a row per (scope, key, window
// start). A decision is one statement, atomic under SQLite's write lock:
// an INSERT ... SELECT that finds the key's latest window (a request whose
// instant is in an earlier window, a clock that went backwards, counts
// against it), upserted with ON CONFLICT DO UPDATE SET count = count + cost
// when the cost fits, and count unchanged when it does not (a rejected
// request is not counted), RETURNING the window, its count and whether the
// cost was admitted. Rows older than the previous window are pruned at
// most once per window per limiter, except a key's latest row (which the
// clock-backwards rule needs). Decisions, Remaining, RetryAfter and
// ResetAfter are algorithms.FixedWindow's to the nanosecond.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/ratebench/ratebench/algorithms"
)

// Open opens, creating it if needed, the SQLite database at path for
// limiters: WAL journal (readers never block the writer), synchronous
// NORMAL (no fsync per commit; a power loss may lose the last decisions,
// never corrupt the file), a busy timeout of busy (0 means 5s) for the write
// lock when other processes hold it, and one connection (decisions are
// writes: they queue in database/sql rather than on the file lock). path
// must not contain '?'. Close the *sql.DB when done.
func Open(path string, busy time.Duration) (*sql.DB, error) {
	if path == "" || strings.Contains(path, "?") {
		return nil, fmt.Errorf("sqlite: bad path %q", path)
	}
	if busy <= 0 {
		busy = 5 * time.Second
	}
	dsn := fmt.Sprintf("%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)",
		path, busy.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w: %w", algorithms.ErrBackend, err)
	}
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w: %w", path, algorithms.ErrBackend, err)
	}
	return db, nil
}

// Options tune a SQLite limiter. The zero value is usable.
type Options struct {
	// Timeout bounds each Allow (a context deadline, which interrupts the
	// statement); 0 means none beyond the busy timeout.
	Timeout time.Duration
}

const schema = `
CREATE TABLE IF NOT EXISTS ratebench_fixed_window (
	scope TEXT NOT NULL,
	key   TEXT NOT NULL,
	start INTEGER NOT NULL, -- window start, ns since the clock's zero
	count INTEGER NOT NULL, -- cost admitted in the window
	ok    INTEGER NOT NULL, -- whether the last request was admitted
	PRIMARY KEY (scope, key, start)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ratebench_fixed_window_start ON ratebench_fixed_window (scope, start);
`

// decide is one decision: ?1 scope, ?2 key, ?3 start of now's window, ?4
// cost (clamped to L+1), ?5 L. The window is the later of now's and the
// key's latest; a new row is inserted with the cost if it fits, else 0.
const decide = `
INSERT INTO ratebench_fixed_window (scope, key, start, count, ok)
SELECT ?1, ?2,
	max(?3, coalesce((SELECT max(start) FROM ratebench_fixed_window WHERE scope = ?1 AND key = ?2), ?3)),
	CASE WHEN ?4 <= ?5 THEN ?4 ELSE 0 END, ?4 <= ?5
WHERE true
ON CONFLICT (scope, key, start) DO UPDATE SET
	count = CASE WHEN count + ?4 <= ?5 THEN count + ?4 ELSE count END,
	ok = count + ?4 <= ?5
RETURNING start, count, ok`

// prune deletes the scope's rows that started before ?2, but not a key's
// latest row.
const prune = `
DELETE FROM ratebench_fixed_window AS w
WHERE scope = ?1 AND start < ?2 AND EXISTS (
	SELECT 1 FROM ratebench_fixed_window AS n
	WHERE n.scope = ?1 AND n.key = w.key AND n.start > w.start)`

// FixedWindow is algorithms.FixedWindow with its counts in SQLite, one
// latest window per key. The zero value is not usable; use
// NewFixedWindow. Safe for concurrent use, and any number of FixedWindows
// on the same file and scope, in any number of processes, share quota.
type FixedWindow struct {
	db      *sql.DB
	decide  *sql.Stmt
	prune   *sql.Stmt
	scope   string
	window  int64 // W, ns
	limit   int64 // L
	timeout time.Duration
	pruned  atomic.Int64 // the last cut pruned below
}

// NewFixedWindow creates the table if needed and returns a fixed window for
// p whose rows are under scope (limiters that share a scope share quota;
// give different policies different scopes). Errors wrap
// algorithms.ErrInvalidPolicy or algorithms.ErrBackend.
func NewFixedWindow(db *sql.DB, scope string, p algorithms.Policy, opts Options) (*FixedWindow, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("sqlite: fixed-window: %w", err)
	}
	if db == nil {
		return nil, fmt.Errorf("sqlite: fixed-window: nil db")
	}
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return nil, fmt.Errorf("sqlite: fixed-window: create table: %w: %w", algorithms.ErrBackend, err)
	}
	w := &FixedWindow{db: db, scope: scope, window: int64(p.Window), limit: p.Limit, timeout: opts.Timeout}
	w.pruned.Store(math.MinInt64)
	if w.decide, err = db.PrepareContext(ctx, decide); err != nil {
		return nil, fmt.Errorf("sqlite: fixed-window: %w: %w", algorithms.ErrBackend, err)
	}
	if w.prune, err = db.PrepareContext(ctx, prune); err != nil {
		w.decide.Close()
		return nil, fmt.Errorf("sqlite: fixed-window: %w: %w", algorithms.ErrBackend, err)
	}
	return w, nil
}

// Close releases the prepared statements (not the database).
func (w *FixedWindow) Close() error {
	return errors.Join(w.decide.Close(), w.prune.Close())
}

// Allow implements algorithms.Limiter: one statement, plus a prune when
// now's window is one this limiter has not pruned for.
func (w *FixedWindow) Allow(now time.Duration, key string, cost int64) (algorithms.Decision, error) {
	if cost < 1 {
		return algorithms.Decision{}, fmt.Errorf("sqlite: fixed-window: %w: %d", algorithms.ErrInvalidCost, cost)
	}
	ctx := context.Background()
	if w.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.timeout)
		defer cancel()
	}
	t := int64(now)
	ws := windowStart(t, w.window)
	if err := w.maybePrune(ctx, ws); err != nil {
		return algorithms.Decision{}, err
	}
	var start, count int64
	var ok bool
	err := w.decide.QueryRowContext(ctx, w.scope, key, ws, min(cost, w.limit+1), w.limit).Scan(&start, &count, &ok)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return algorithms.Decision{}, fmt.Errorf("sqlite: fixed-window: %w: %w", algorithms.ErrBackend, err)
	}
	end := start + w.window - t // time to the next window start
	d := algorithms.Decision{Allowed: ok, Remaining: w.limit - count}
	switch {
	case ok:
		d.ResetAfter = time.Duration(end)
	case cost <= w.limit:
		d.RetryAfter = time.Duration(end)
	default:
		d.RetryAfter = algorithms.Never
	}
	if !ok && count > 0 {
		d.ResetAfter = time.Duration(end)
	}
	return d, nil
}

// maybePrune deletes the rows that started before the previous window, once
// per window.
func (w *FixedWindow) maybePrune(ctx context.Context, ws int64) error {
	cut := ws - w.window
	last := w.pruned.Load()
	if cut <= last || !w.pruned.CompareAndSwap(last, cut) {
		return nil
	}
	if _, err := w.prune.ExecContext(ctx, w.scope, cut); err != nil {
		return fmt.Errorf("sqlite: fixed-window: prune: %w: %w", algorithms.ErrBackend, err)
	}
	return nil
}

// Forget deletes every row of scope, e.g. when a run that used a fresh
// scope ends.
func Forget(ctx context.Context, db *sql.DB, scope string) error {
	if _, err := db.ExecContext(ctx, `DELETE FROM ratebench_fixed_window WHERE scope = ?`, scope); err != nil {
		return fmt.Errorf("sqlite: %w: %w", algorithms.ErrBackend, err)
	}
	return nil
}

// windowStart is floor(t/w)*w, also for a negative t.
func windowStart(t, w int64) int64 {
	r := t % w
	if r < 0 {
		r += w
	}
	return t - r
}
