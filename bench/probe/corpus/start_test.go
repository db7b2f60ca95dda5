package corpus

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestStart: every target starts, answers a first request with 200 on
// 127.0.0.1, from 127.0.0.2 too, and stops cleanly. A target whose
// program is missing is skipped, or failed under its RequireEnv.
func TestStart(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			tg, err := Start(context.Background(), name, t.TempDir())
			if errors.Is(err, ErrMissing) {
				if env := RequireEnv(name); env != "" && os.Getenv(env) == "1" {
					t.Fatalf("%s=1 but %v", env, err)
				}
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(tg.URL, "http://127.0.0.1:") || tg.Name != name {
				t.Errorf("target %q at %s", tg.Name, tg.URL)
			}
			for _, from := range []string{"127.0.0.1", "127.0.0.2"} {
				if status, err := get(tg.URL, from); err != nil || status != http.StatusOK {
					t.Errorf("GET %s from %s: %d, %v; want 200", tg.URL, from, status, err)
				}
			}
			if err := tg.Stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
			if err := tg.Stop(); err != nil {
				t.Errorf("second stop: %v, want the first's nil", err)
			}
		})
	}
	if _, err := Start(context.Background(), "nope", t.TempDir()); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown target: %v, want an error that names it", err)
	}
}

// get sends one GET to url from the local address from, on a connection
// of its own, and returns the status.
func get(url, from string) (int, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}
