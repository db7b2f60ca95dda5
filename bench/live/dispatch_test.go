package live

import (
	"testing"
	"time"
)

func TestDispatch(t *testing.T) {
	// A worker is known to the dispatch by its inbox alone.
	inboxes := []chan liveJob{make(chan liveJob, 1), make(chan liveJob, 1), make(chan liveJob, 1)}
	job := func(at time.Duration) liveJob { return liveJob{at: at} }
	d := newDispatch(3, 3)
	w0, w1 := inboxes[0], inboxes[1]

	// Nothing queued: each take registers its worker as idle.
	for id, w := range inboxes {
		if _, ok, open := d.take(w); ok || !open {
			t.Fatalf("take(w%d) on an empty dispatch = ok %v, open %v; want false, true", id, ok, open)
		}
	}
	// The most recently idle worker gets the first job, then the next.
	for i, want := range []int{2, 1} {
		if !d.send(job(time.Duration(i))) {
			t.Fatalf("send %d dropped with idle workers", i)
		}
		select {
		case j := <-inboxes[want]:
			if j.at != time.Duration(i) {
				t.Fatalf("w%d got job %v, want %d", want, j.at, i)
			}
		default:
			t.Fatalf("job %d did not go to w%d, the most recently idle", i, want)
		}
	}
	// w0 takes the third; then no one is idle: three are queued, the
	// fourth dropped, and they come out in order.
	if !d.send(job(2)) || len(w0) != 1 {
		t.Fatal("job 2 did not go to w0")
	}
	<-w0
	for i := 3; i < 6; i++ {
		if !d.send(job(time.Duration(i))) {
			t.Fatalf("send %d dropped below the queue's limit", i)
		}
	}
	if d.send(job(6)) {
		t.Fatal("send above the queue's limit was not dropped")
	}
	for i := 3; i < 6; i++ {
		j, ok, open := d.take(w1)
		if !ok || !open || j.at != time.Duration(i) {
			t.Fatalf("take = %v, %v, %v; want job %d", j.at, ok, open, i)
		}
	}
	// Close: an idle worker's inbox is closed; a busy one finds out at
	// its next take.
	if _, ok, _ := d.take(w0); ok {
		t.Fatal("take on an empty queue returned a job")
	}
	d.close()
	if _, open := <-w0; open {
		t.Fatal("close left an idle worker's inbox open")
	}
	if _, ok, open := d.take(w1); ok || open {
		t.Fatalf("take after close = ok %v, open %v; want false, false", ok, open)
	}
}

func TestDispatchGrows(t *testing.T) {
	d := newDispatch(1, 5000) // starts with room for 1024
	for i := range 5000 {
		if !d.send(liveJob{at: time.Duration(i)}) {
			t.Fatalf("send %d dropped below the limit of 5000", i)
		}
		if i%3 == 0 { // wrap the ring before it grows
			j, ok, _ := d.take(nil)
			if !ok || j.at != time.Duration(i/3) {
				t.Fatalf("take after send %d = %v, %v; want job %d", i, j.at, ok, i/3)
			}
		}
	}
	want := time.Duration(1667)
	for {
		j, ok, _ := d.take(make(chan liveJob, 1))
		if !ok {
			break
		}
		if j.at != want {
			t.Fatalf("job %v out of order, want %v", j.at, want)
		}
		want++
	}
	if want != 5000 {
		t.Fatalf("took jobs up to %v, want all 5000", want)
	}
}
