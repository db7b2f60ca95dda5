//go:build !linux

package httpload

import (
	"errors"
	"time"
)

// epollSupported: the epoll engine is Linux's.
const epollSupported = false

// epollEngine is never made off Linux: Config.resolve refuses EngineEpoll.
type epollEngine struct{}

func newEpollEngine(*pass) (*epollEngine, error) {
	return nil, errors.New("httpload: no epoll off Linux")
}

func (*epollEngine) start(*keySource, time.Time) {}
func (*epollEngine) dispatch(job)                {}
func (*epollEngine) wakeAll()                    {}
func (*epollEngine) close()                      {}
func (*epollEngine) connections() int            { return 0 }
