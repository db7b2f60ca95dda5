package live

import "sync"

// dispatch hands the scheduler's jobs to the workers, the most recently
// idle worker first. A channel shared by all workers would wake the one
// idle the longest, whose caches are the coldest; handing each job to the
// last worker that went idle keeps one worker busy with warm caches at
// light load and spreads the jobs only when the load needs more workers.
// Jobs nobody is idle for wait in a FIFO queue, up to a bound. It knows a
// worker only by its inbox, and calls no one. Safe for concurrent use by
// the scheduler and the workers.
type dispatch struct {
	mu     sync.Mutex
	idle   []chan<- liveJob // idle workers' inboxes, a stack: the most recently idle last
	queue  []liveJob        // a ring of jobs waiting for a worker
	head   int              // queue's first job
	n      int              // jobs in queue
	limit  int              // most jobs queued
	closed bool
}

func newDispatch(workers, limit int) *dispatch {
	return &dispatch{idle: make([]chan<- liveJob, 0, workers), queue: make([]liveJob, min(limit, 1024)), limit: limit}
}

// send hands j to the most recently idle worker, or queues it; false when
// the queue is full (the job is dropped).
func (d *dispatch) send(j liveJob) bool {
	d.mu.Lock()
	if k := len(d.idle) - 1; k >= 0 {
		inbox := d.idle[k]
		d.idle = d.idle[:k]
		d.mu.Unlock()
		inbox <- j // never blocks: an idle worker's inbox is empty
		return true
	}
	if d.n == len(d.queue) && !d.grow() {
		d.mu.Unlock()
		return false
	}
	d.queue[(d.head+d.n)%len(d.queue)] = j
	d.n++
	d.mu.Unlock()
	return true
}

// grow doubles the queue, up to the limit; false at the limit. Called with
// mu held and the queue full.
func (d *dispatch) grow() bool {
	if d.n >= d.limit {
		return false
	}
	q := make([]liveJob, min(2*len(d.queue), d.limit))
	k := copy(q, d.queue[d.head:])
	copy(q[k:], d.queue[:d.head])
	d.queue, d.head = q, 0
	return true
}

// take returns the oldest queued job. When none is queued it registers
// inbox, the calling worker's, as idle and returns with ok false and open
// true: the next job then comes through inbox, which must have room for
// one and is closed at the end. After close, with nothing queued, it
// returns false, false.
func (d *dispatch) take(inbox chan<- liveJob) (j liveJob, ok, open bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n > 0 {
		j = d.queue[d.head]
		d.queue[d.head] = liveJob{} // drop the key's reference
		d.head = (d.head + 1) % len(d.queue)
		d.n--
		return j, true, true
	}
	if d.closed {
		return j, false, false
	}
	d.idle = append(d.idle, inbox)
	return j, false, true
}

// close says no job will be sent any more: idle workers' inboxes are
// closed, busy workers find out when the queue is empty.
func (d *dispatch) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	for _, inbox := range d.idle {
		close(inbox)
	}
	d.idle = nil
}
