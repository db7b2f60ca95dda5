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
	// only): on loopback here, more requests per second than
	// EngineGoroutines in a closed loop in 7 of 8 paired rounds (up to
	// 1.2x), for less CPU per request.
	// An address that does not resolve at the start falls back to
	// EngineGoroutines.
	EngineEpoll = "epoll"
)
