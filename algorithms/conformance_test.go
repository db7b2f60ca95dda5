package algorithms_test

import (
	"testing"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/algotest"
)

func TestGCRAConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewGCRA(p)
	}})
}

func TestTokenBucketConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewTokenBucket(p)
	}})
}

func TestLeakyBucketConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewLeakyBucket(p)
	}})
}

func TestLeakyQueueConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{Shaper: true, New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewLeakyQueue(p)
	}})
}

func TestFixedWindowConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{IgnoresBurst: true, New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewFixedWindow(p)
	}})
}

func TestSlidingLogConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{IgnoresBurst: true, New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewSlidingLog(p)
	}})
}

func TestSlidingCounterConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{IgnoresBurst: true, New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewSlidingCounter(p)
	}})
}

func TestFixedWindowFirstConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{IgnoresBurst: true, New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewFixedWindowFirst(p)
	}})
}

func TestSlidingLogAllConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{IgnoresBurst: true, CountsDenied: true, New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewSlidingLogAll(p)
	}})
}

func TestSlidingCounterAllConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{IgnoresBurst: true, CountsDenied: true, New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewSlidingCounterAll(p)
	}})
}

func TestTokenBucketDebtConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{CountsDenied: true, New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewTokenBucketDebt(p)
	}})
}

func TestNginxLimitReqConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewNginxLimitReq(p)
	}})
}

func TestHTTPRateConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{IgnoresBurst: true, New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewHTTPRate(p)
	}})
}

func TestHAProxyReqRateConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{IgnoresBurst: true, CountsDenied: true, New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewHAProxyReqRate(p)
	}})
}
