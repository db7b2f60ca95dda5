package httpexec_test

import (
	"net"
	"strconv"
	"testing"

	"github.com/ratebench/ratebench/bench/httpexec"
	"github.com/valyala/fasthttp"
)

// fastServer serves on 127.0.0.1 with fasthttp, which allocates nothing
// per request once warm, so that allocation counts are the client's: a
// 200 with a RateLimit-Policy field and a short body, or a 429 with
// Retry-After for a key ending in 9. It returns the server's URL.
func fastServer(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.Set("RateLimit-Policy", `"default";q=100;w=60`)
		ctx.Response.Header.Set("RateLimit", `"default";r=42;t=3`)
		if k := ctx.Request.Header.Peek("X-Key"); len(k) > 0 && k[len(k)-1] == '9' {
			ctx.Response.Header.Set("Retry-After", "7")
			ctx.SetStatusCode(fasthttp.StatusTooManyRequests)
			return
		}
		ctx.SetBodyString("ok")
	}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(ln)
	}()
	tb.Cleanup(func() {
		_ = s.Shutdown()
		<-done
	})
	return "http://" + ln.Addr().String()
}

// keys are the keys the benchmarks send, made before they run.
var keys = func() []string {
	k := make([]string, 1000)
	for i := range k {
		k[i] = "k" + strconv.Itoa(i)
	}
	return k
}()

// BenchmarkDo: one request after the other, each with its key, on a kept
// connection. allocs/op counts the client's allocations (the server's are
// none).
func BenchmarkDo(b *testing.B) {
	url := fastServer(b)
	for _, client := range clients {
		b.Run("client="+client, func(b *testing.B) {
			c, err := httpexec.New(httpexec.Config{URL: url, Client: client, KeyHeader: "X-Key"})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if r := c.Do(keys[i%len(keys)], false); r.Kind != httpexec.None {
					b.Fatal(r.Err)
				}
				i++
			}
		})
	}
}

// BenchmarkDoParallel: requests from GOMAXPROCS goroutines at once.
func BenchmarkDoParallel(b *testing.B) {
	url := fastServer(b)
	for _, client := range clients {
		b.Run("client="+client, func(b *testing.B) {
			c, err := httpexec.New(httpexec.Config{URL: url, Client: client, KeyHeader: "X-Key"})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if r := c.Do(keys[i%len(keys)], false); r.Kind != httpexec.None {
						b.Error(r.Err)
						return
					}
					i++
				}
			})
		})
	}
}
