//go:build !race

package httpexec_test

import (
	"bufio"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/httpexec"
)

// silentServer reads requests and never answers; each request read is
// signalled on the returned channel. Connections stay open until the
// client closes them or the test ends.
func silentServer(t *testing.T) (string, <-chan struct{}) {
	read := make(chan struct{}, 16)
	url := rawServer(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			if _, _, err := readRequest(br); err != nil {
				return
			}
			read <- struct{}{}
		}
	})
	return url, read
}

// TestTimeout: a request the server never answers fails at Timeout.
func TestTimeout(t *testing.T) {
	url, _ := silentServer(t)
	for _, client := range clients {
		c, err := httpexec.New(httpexec.Config{URL: url, Client: client, Timeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		r := c.Do("", false)
		took := time.Since(start)
		if r.Kind != httpexec.Timeout || r.Attempts != 1 || r.Status != 0 {
			t.Errorf("%s: %+v, want a timeout after one write", client, r)
		}
		if took < 200*time.Millisecond || took > 2*time.Second {
			t.Errorf("%s: failed after %v, want about 200ms", client, took)
		}
		c.Close()
	}
}

// TestAbort: Abort ends the requests in flight at once, those on a
// connection and one waiting for a connection, as Canceled; the later
// ones fail at once, unsent.
func TestAbort(t *testing.T) {
	for _, client := range clients {
		t.Run(client, func(t *testing.T) {
			url, read := silentServer(t)
			c, err := httpexec.New(httpexec.Config{URL: url, Client: client, Connections: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			done := make(chan httpexec.Response, 3)
			for range 3 {
				go func() { done <- c.Do("", false) }()
			}
			recv(t, read)
			recv(t, read) // two requests written; the third waits for a connection
			start := time.Now()
			c.Abort()
			sent := 0
			for range 3 {
				r := recv(t, done)
				if r.Kind != httpexec.Canceled || !errors.Is(r.Err, httpexec.ErrAborted) || r.Status != 0 {
					t.Errorf("in flight: %+v, want canceled", r)
				}
				sent += r.Attempts
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("Abort took %v to end the requests", took)
			}
			if sent != 2 {
				t.Errorf("%d requests counted as sent, want 2", sent)
			}
			dials := c.Dials()
			r := c.Do("", false)
			if r.Kind != httpexec.Canceled || r.Attempts != 0 || c.Dials() != dials {
				t.Errorf("after Abort: %+v, %d dials; want canceled, unsent", r, c.Dials()-dials)
			}
		})
	}
}

// TestMaxWait: a request that finds every connection busy for MaxWait
// fails, unsent.
func TestMaxWait(t *testing.T) {
	for _, client := range clients {
		t.Run(client, func(t *testing.T) {
			url, read := silentServer(t)
			c, err := httpexec.New(httpexec.Config{URL: url, Client: client, Connections: 1, MaxWait: 100 * time.Millisecond, Timeout: wait})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			first := make(chan httpexec.Response, 1)
			go func() { first <- c.Do("", false) }()
			recv(t, read)
			start := time.Now()
			r := c.Do("", false)
			took := time.Since(start)
			if r.Kind != httpexec.Timeout || !errors.Is(r.Err, httpexec.ErrNoFreeConnection) || r.Attempts != 0 {
				t.Errorf("%+v, want no free connection, unsent", r)
			}
			if took < 100*time.Millisecond || took > 2*time.Second {
				t.Errorf("failed after %v, want about 100ms", took)
			}
			c.Abort()
			if r := recv(t, first); r.Kind != httpexec.Canceled {
				t.Errorf("the first request: %+v", r)
			}
		})
	}
}
