package httpload

// Engines Config.Engine may name.
const (
	// EngineAuto is EngineEpoll for the fast client on Linux, else
	// EngineGoroutines.
	EngineAuto = ""
	// EngineGoroutines gives each connection a goroutine on Go's net
	// package (its netpoller): the engine of the net/http client, and of
	// the fast client off Linux.
	EngineGoroutines = "goroutines"
	// EngineEpoll drives the fast client's connections from a few event
	// loops over raw non-blocking sockets and epoll, as wrk does (Linux
	// only): on loopback here, 5-15% more requests per second than
	// EngineGoroutines in a closed loop, in every one of 5 paired rounds.
	// An address that does not resolve at the start falls back to
	// EngineGoroutines.
	EngineEpoll = "epoll"
)
